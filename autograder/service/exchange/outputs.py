"""The output folder of a service that takes hand-ins from nbgrader's exchange: ``Outputs``,
plus what a hand-in's result needs.

A hand-in on time is written as an upload is (the student's latest result, ``history/``,
``grades.csv``). A late one (after the student's deadline, ``deadlines``) is graded for
feedback only: its result, with a warning saying so, goes to ``history/<student>/<id>`` and
nowhere else, so the result that counts stays the student's last hand-in before the deadline.
Either way the exchange is then told (``Exchange.graded``), and writes the page into the
exchange where ``fetch_feedback`` finds it.
"""
import shutil
from pathlib import Path

from ...files import write_atomically
from ...grading.task import RunSettings
from ...submissions.ids import file_stem
from ...results import Issue, SubmissionResult, text
from ...outputs.store import OutputFolder
from ..deadlines import Deadlines
from .poll import late_notice
from .ledger import Entry, Ledger
from ..outputs import Outputs

LATE = ".late"   # under DIR/.service/: where a late result is drawn before it is kept in history/


class ExchangeOutputs(Outputs):
    def __init__(self, folder: OutputFolder, settings: RunSettings, ledger: Ledger, deadlines: Deadlines,
                 state: Path):
        super().__init__(folder, settings)
        self.ledger, self.deadlines = ledger, deadlines
        self.scratch = OutputFolder(state / LATE, folder.assignment, folder.language)
        self.exchange = None   # the Exchange, told of each hand-in graded

    def write(self, submission_id: str, result: SubmissionResult) -> SubmissionResult:
        entry = self.ledger.get(submission_id)
        if entry is None:   # an upload
            return super().write(submission_id, result)
        if entry.notebook != self.settings.spec.notebook:
            result.notebook = entry.notebook
            result.warnings.insert(0, Issue(code="other_notebook", text=text(
                "issue.other_notebook", name=entry.notebook, expected=self.settings.spec.notebook)))
        written = self._late(submission_id, result, entry) if entry.late else super().write(submission_id, result)
        if self.exchange is not None:
            self.exchange.graded(submission_id)
        return written

    def _late(self, submission_id: str, result: SubmissionResult, entry: Entry) -> SubmissionResult:
        """The result and its pages, drawn as ``save`` draws them, kept in history/ only."""
        result.warnings.insert(0, Issue(code="late_handin", text=late_notice(entry, self.deadlines)))
        with self._lock:
            written = self.scratch.save(result)
            stem = file_stem(result.student_id)
            drawn = {".json": self.scratch.result_path(result.student_id),
                     ".md": self.scratch.path / "feedback" / f"{stem}.md",
                     ".html": self.scratch.path / "feedback" / f"{stem}.html"}
            for suffix, path in drawn.items():
                write_atomically(self.kept(result.student_id, submission_id, suffix), path.read_text(encoding="utf-8"))
            shutil.rmtree(self.scratch.path, ignore_errors=True)
        return written

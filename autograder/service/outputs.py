"""What the service writes into ``DIR``: the batch's files, through the batch's store, and
the history.

Each graded submission becomes the student's ``DIR/<student_id>.json``, feedback and row of
``grades.csv``, as ``autograder grade`` writes them (``OutputFolder``), and is kept as
``DIR/history/<student_id>/<submission id>.json`` with its feedback beside it; the latest
submission is kept there too, so every submission's result has one address. ``grades.csv``
holds every student whose result is in ``DIR``, graded by the service or by a batch.
"""
import threading
import time
from pathlib import Path

from pydantic import ValidationError

from ..config import ConfigError
from ..gradebook import CourseError
from ..grading.task import RunSettings
from ..outputs.manual_points import Tasks
from ..outputs.totals import Entered, entered_in
from ..report import write_class_report
from ..results import SubmissionResult
from ..outputs.store import OutputFolder
from .log import log

REPORT_EVERY_S = 60.0  # the class report is drawn at most this often while results come in


class Outputs:
    def __init__(self, folder: OutputFolder, settings: RunSettings):
        self.folder, self.settings = folder, settings
        self.latest = _stored(folder)
        self._lock = threading.Lock()
        self._report_at = 0.0
        for leftover in folder.path.glob("history/*/.*.tmp"):
            leftover.unlink()  # a copy cut short by a killed service

    def write(self, submission_id: str, result: SubmissionResult) -> SubmissionResult:
        """The student's latest result (its feedback with the written answers' points entered so
        far), its history copy and grades.csv; returns it as written."""
        with self._lock:
            entered = self._entered()
            written = self.folder.save(result, entered=entered)
            self.folder.keep(result.student_id, submission_id)
            self.latest[written.student_id] = written
            self.write_grades(entered)
        return written

    def write_grades(self, entered: Entered | None = None) -> None:
        """grades.csv of every latest result (at start too: a batch may have left fewer rows)."""
        if self.latest:
            self.folder.write_grades(list(self.latest.values()), list(self.settings.spec.tasks),
                                     self._entered() if entered is None else entered)

    def _entered(self) -> Entered:
        """The written answers' points known now, read at each writing (the TA may enter them in
        manual_points.csv or formgrader while the service runs), as the batch reads them."""
        tasks = Tasks.of(self.settings.assignment, self.settings.spec)
        try:
            return entered_in(self.folder.path, self.settings.assignment, tasks)
        except (ConfigError, CourseError) as error:
            log.warning("the written answers' points could not be read, so grades.csv and the report show "
                        "none: %s", str(error).splitlines()[0])
            return {}

    def kept(self, student_id: str, submission_id: str, suffix: str = ".json") -> Path:
        return self.folder.kept_path(student_id, submission_id, suffix)

    def report(self, throttled: bool = False) -> Path | None:
        """The class report of every latest result (``throttled``: unless one was drawn less
        than ``REPORT_EVERY_S`` ago)."""
        with self._lock:
            now = time.monotonic()
            if not self.latest or throttled and now - self._report_at < REPORT_EVERY_S:
                return None
            self._report_at = now
            return write_class_report(list(self.latest.values()), self.folder.path, self.folder.language,
                                      self.settings.task_checks, self._entered())[0]


def _stored(folder: OutputFolder) -> dict[str, SubmissionResult]:
    """The results already in the folder (a batch's, an earlier service's), by student."""
    found: dict[str, SubmissionResult] = {}
    for path in sorted(folder.path.glob("*.json")):
        try:
            student_id = SubmissionResult.model_validate_json(path.read_bytes()).student_id
        except (ValidationError, ValueError, OSError):
            continue  # not a result: the batch would note it when grading that student
        result = folder.load(student_id) if folder.result_path(student_id) == path else None
        if result is not None:
            found[student_id] = result
    return found

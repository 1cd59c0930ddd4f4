"""The output folder: results written atomically, read back with validation, grades.csv.

One folder holds one assignment. For each student: ``<id>.json`` (SPEC §3, texts rendered
in the configured language, and the structured findings that the pages re-render),
``feedback/<id>.md``, ``timing/<id>.json`` (seconds per phase and per check: kept out of the
result so that a result is byte-identical however often it is graded) and
``solutions/<id>.json`` (the solution cells it was graded from, for the class report's
similar solutions: ``autograder.outputs.solutions``) and ``answers/<id>.json`` (its written
answers, for the TA's ``answers.html``: ``autograder.outputs.answers``).

Every string written passes ``clean_text``, one rule for text that is not valid UTF-8:
each undecodable byte becomes ``\\xNN`` (so a cp1251 file name unpacked on Linux keeps a
readable, stable text). File names come from ``ids.file_stem``, one-to-one; the full id
stays inside the JSON and in grades.csv. No text cell of grades.csv starts a
spreadsheet formula.
"""
import contextlib
import fcntl
import json
import os
import tempfile
from pathlib import Path

from pydantic import ValidationError

from . import answers, solutions
from ..config import ConfigError
from ..feedback import FeedbackView, Say
from ..feedback.markdown import feedback_markdown
from ..feedback.plain import check_message
from ..feedback.view import issue_message
from ..files import clean, clean_text, csv_text, write_atomically
from ..submissions.ids import file_stem
from .totals import Entered, total_of
from ..pages import write_student_page
from ..results import SubmissionResult

MARKER = ".autograder-assignment"
SERVICE_LOCK = Path(".service") / "lock"   # held by `autograder serve` while it serves the folder


class OutputFolder:
    """Where one assignment's results live; ``notes`` collects what the TA should read."""

    def __init__(self, path: Path, assignment: str, language: str):
        self.path, self.assignment, self.language = path, assignment, language
        self.say = Say(language)
        self.notes: list[str] = []

    @classmethod
    def existing(cls, path: Path) -> "OutputFolder":
        """A folder that ``autograder grade`` (or ``serve``) wrote, for reading (``show``,
        ``export``); ``ConfigError`` when it is not one."""
        marker = path / MARKER
        if not marker.is_file():
            raise ConfigError(f"{path}: not a results folder of autograder grade (it has no {MARKER}); "
                              "give the --output folder that autograder grade wrote")
        return cls(path, marker.read_text(encoding="utf-8").strip(), "en")

    def check_usable(self) -> None:
        """Before any grading: a folder we can write, holding no other assignment."""
        if self.path.exists() and not self.path.is_dir():
            raise ConfigError(f"--output {self.path}: is a file, not a folder; name a folder")
        try:
            self.path.mkdir(parents=True, exist_ok=True)
            with tempfile.NamedTemporaryFile(dir=self.path, prefix=".probe."):
                pass
        except OSError as error:
            raise ConfigError(f"--output {self.path}: cannot write there ({error.strerror})") from None
        marker = self.path / MARKER
        held = marker.read_text(encoding="utf-8").strip() if marker.is_file() else self.assignment
        if held != self.assignment:
            raise ConfigError(f"--output {self.path}: holds the results of {held!r}; "
                              f"use another folder for {self.assignment!r}")
        marker.write_text(self.assignment + "\n", encoding="utf-8")
        self._remove_leftovers()

    def hold_unless_served(self) -> int | None:
        """Refuse a folder that a running ``autograder serve`` holds (``.service/lock``): its next
        result rewrites grades.csv from the results it holds in memory, and this run's students
        would leave it for good (red team 13). A folder a service served once is held for this
        run (the returned descriptor, kept open), so that none starts on it meanwhile."""
        lock = self.path / SERVICE_LOCK
        try:
            fd = os.open(lock, os.O_RDWR | os.O_NOFOLLOW)
        except OSError:
            return None   # never served
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise ConfigError(f"--output {self.path}: `autograder serve` is serving from this folder, and its next "
                              f"result would write grades.csv without this run's students; stop the service "
                              f"first, or give another --output") from None
        return fd

    def _remove_leftovers(self) -> None:
        for folder in (self.path, self.path / "feedback", self.path / "timing", self.path / solutions.FOLDER,
                       self.path / answers.FOLDER):
            for leftover in folder.glob(".*.tmp"):
                leftover.unlink()  # a write cut short by a killed run

    def result_path(self, student_id: str) -> Path:
        return self.path / f"{file_stem(student_id)}.json"

    def load(self, student_id: str) -> SubmissionResult | None:
        """The stored result, validated; a malformed one is noted and ignored (not a crash)."""
        path = self.result_path(student_id)
        if not path.is_file():
            return None
        try:
            result = SubmissionResult.model_validate_json(path.read_bytes())
        except (ValidationError, ValueError, OSError) as error:
            first = str(error).splitlines()[0][:200]
            self.notes.append(f"{path}: not a result this grader wrote ({first}); it is graded again")
            return None
        if result.assignment != self.assignment or result.student_id != student_id:
            self.notes.append(f"{path}: holds {result.student_id!r} of {result.assignment!r}; graded again")
            return None
        timing = self.path / "timing" / path.name
        if timing.is_file():
            with contextlib.suppress(ValueError, KeyError, TypeError, AttributeError):  # for the report only
                _apply_timing(result, json.loads(timing.read_text(encoding="utf-8")))
        return result

    def load_all(self) -> list[SubmissionResult]:
        """Every result in the folder, validated, by student id; a JSON that is not a result of
        this folder's assignment is noted and left out."""
        found = []
        for path in sorted(self.path.glob("*.json")):
            try:
                result = SubmissionResult.model_validate_json(path.read_bytes())
            except (ValidationError, ValueError, OSError) as error:
                self.notes.append(f"{path}: not a result this grader wrote ({str(error).splitlines()[0][:200]}); "
                                  "left out")
                continue
            if result.assignment != self.assignment or path != self.result_path(result.student_id):
                self.notes.append(f"{path}: holds {result.student_id!r} of {result.assignment!r}; left out")
                continue
            found.append(result)
        return sorted(found, key=lambda r: r.student_id)

    def save(self, result: SubmissionResult, pages: bool = True, entered: Entered | None = None) -> SubmissionResult:
        """The result, its feedback (Markdown and HTML, with the written answers' points
        ``entered`` so far; not with ``pages=False``), its timings, solution cells and written
        answers, each written atomically; returns the result as written (rendered, clean text)."""
        stem, result = file_stem(result.student_id), self.rendered(result)
        if pages:
            self._write_feedback(result, self._feedback_view(result, entered or {}))
        write_atomically(self.path / "timing" / f"{stem}.json", json.dumps(_timing(result), indent=1))
        solutions.save(self.path, result.student_id, result.solutions)
        answers.save(self.path, result.student_id, result.answers)
        data = result.model_dump(mode="json", exclude=_KEPT_APART)
        write_atomically(self.path / f"{stem}.json", json.dumps(data, indent=1, ensure_ascii=False))
        return result

    def refresh_feedback(self, result: SubmissionResult, entered: Entered) -> bool:
        """Rewrite ``result``'s feedback where the written answers' points ``entered`` now change
        what it says (the TA entered or corrected them since it was written; a result as stored,
        reused or kept, is not graded again for that). True when it was rewritten."""
        view = self._feedback_view(result, entered)
        markdown = self.path / "feedback" / f"{file_stem(result.student_id)}.md"
        try:
            if markdown.read_text(encoding="utf-8") == clean_text(feedback_markdown(view)):
                return False
        except (OSError, UnicodeDecodeError):
            pass  # none yet, or not ours: written afresh
        self._write_feedback(result, view)
        return True

    def _feedback_view(self, result: SubmissionResult, entered: Entered) -> FeedbackView:
        total = total_of(result, entered)
        return FeedbackView.of(result, self.say, total.written, total.score)

    def _write_feedback(self, result: SubmissionResult, view: FeedbackView) -> None:
        stem = file_stem(result.student_id)
        write_atomically(self.path / "feedback" / f"{stem}.md", clean_text(feedback_markdown(view)))
        write_student_page(view, self.path / "feedback" / f"{stem}.html")

    def keep(self, student_id: str, name: str) -> Path:
        """A copy of the student's latest result and its feedback, as ``save`` wrote them, kept
        as ``history/<stem>/<name>.json`` with ``.md`` and ``.html`` beside it (``autograder
        serve`` keeps every submission so, by its id). Returns the kept JSON's path."""
        stem = file_stem(student_id)
        for source, suffix in ((self.path / "feedback" / f"{stem}.md", ".md"),
                               (self.path / "feedback" / f"{stem}.html", ".html"),
                               (self.result_path(student_id), ".json")):
            write_atomically(self.kept_path(student_id, name, suffix), source.read_text(encoding="utf-8"))
        return self.kept_path(student_id, name)

    def kept_path(self, student_id: str, name: str, suffix: str = ".json") -> Path:
        return self.path / "history" / file_stem(student_id) / f"{name}{suffix}"

    def rendered(self, result: SubmissionResult) -> SubmissionResult:
        """A copy with every ``message`` rendered in the folder's language, and every string
        passed through ``clean_text``: what every file of this student is written from."""
        copy = result.model_copy(deep=True)
        copy.language = self.language
        for issue in (*copy.warnings, *copy.errors):
            issue.message = str(issue_message(issue, self.say))
        for task in copy.tasks:
            for check in task.checks:
                check.message = check_message(check, self.say)
        return SubmissionResult.model_validate(clean(copy.model_dump(mode="json")))

    def write_grades(self, results: list[SubmissionResult], task_ids: list[str],
                     entered: Entered | None = None) -> Path:
        """grades.csv: student_id, assignment, score, max_score, then one column per task. ``score``
        is what the student has so far (SPEC §3: the autograded points plus the written answers'
        points entered, ``entered``, through ``totals.total_of``), so ``score / max_score`` reads
        right; a written task's column holds the points entered for it, empty until then. The
        result's JSON keeps its own ``score``, the autograded sum."""
        rows = []
        for result in sorted(results, key=lambda r: r.student_id):
            total = total_of(result, entered or {})
            scores = {task.id: task.score for task in result.tasks} | total.written
            rows.append([result.student_id, result.assignment, total.score, result.max_score,
                         *(scores.get(t) for t in task_ids)])
        path = self.path / "grades.csv"
        write_atomically(path, csv_text(["student_id", "assignment", "score", "max_score", *task_ids], rows))
        return path


# Kept beside the result, not in it: timings (a result is byte-identical however often it is
# graded), the solution cells (outputs/solutions.py) and the written answers (outputs/answers.py).
_KEPT_APART = {"timing": True, "solutions": True, "answers": True,
               "tasks": {"__all__": {"seconds": True, "checks": {"__all__": {"seconds", "again_on_cpu"}}}}}


def _timing(result: SubmissionResult) -> dict:
    return {"phases": result.timing,
            "tasks": {task.id: {"seconds": task.seconds, "checks": {c.name: c.seconds for c in task.checks},
                                "again_on_cpu": [c.name for c in task.checks if c.again_on_cpu]}
                      for task in result.tasks}}


def _apply_timing(result: SubmissionResult, timing: dict) -> None:
    result.timing = {str(k): float(v) for k, v in timing["phases"].items()}
    for task in result.tasks:
        saved = timing["tasks"].get(task.id, {})
        task.seconds = float(saved.get("seconds", 0.0))
        again = saved.get("again_on_cpu", [])
        for check in task.checks:
            check.seconds = float(saved.get("checks", {}).get(check.name, 0.0))
            check.again_on_cpu = check.name in again

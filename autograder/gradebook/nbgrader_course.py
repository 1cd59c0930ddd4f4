"""One nbgrader course: finding it, checking it before grading, recording each result into it."""
from __future__ import annotations

import contextlib
import logging
import os
import sys
import warnings
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path

from nbgrader.api import Gradebook, MissingEntry
from nbgrader.apps.autogradeapp import AutogradeApp
from nbgrader.converters import Autograde, NbGraderException
from nbgrader.preprocessors import Execute
from nbgrader.utils import parse_utc
from sqlalchemy.exc import SAWarning
from traitlets import Unicode
from traitlets.utils.importstring import import_item

from ..results import SubmissionResult, text
from ..texts import render
from .report import notes_report, task_report
from .steps import RestoreCellRoles, WriteAutograderOutputs
from .where import CourseError, RecordError, course_root

TESTS_SUFFIX = "_tests"  # SPEC §1: a task's one graded test cell is "<task>_tests"


class NbgraderCourse:
    """One nbgrader course: its root holds ``submitted/`` and its config or gradebook."""

    def __init__(self, root: Path):
        self.root = root
        self._app: AutogradeApp | None = None
        self._log = _Collect()

    @classmethod
    def detect(cls, paths: Iterable[Path]) -> NbgraderCourse | None:
        """The course every PATH lies in, or None (``where.course_root``)."""
        root = course_root(paths)
        return None if root is None else cls(root)

    def check(self, assignment: str, notebook: str, points: Mapping[str, float]) -> None:
        """Before grading: the gradebook knows ``assignment`` and its ``notebook``, and its test
        cells are exactly ``<task>_tests`` of the autograded tasks in ``points`` (task -> points)."""
        name, where = Path(notebook).stem, self._source_notebook(assignment, notebook)
        self._converter(writer=None)  # the course's autograde steps have an Execute to swap
        with self._gradebook() as gradebook:
            try:
                source = gradebook.find_notebook(name, assignment)
            except MissingEntry:
                raise CourseError(
                    f"{self.root}: nbgrader's gradebook has no notebook {notebook} in assignment "
                    f"{assignment!r}; run `nbgrader generate_assignment {assignment}` in {self.root} first") from None
            answers = {cell.name for cell in source.solution_cells}
            cells = {cell.name: cell.max_score for cell in source.grade_cells
                     if cell.cell_type == "code" and cell.name not in answers}
        expected = {f"{task}{TESTS_SUFFIX}": float(max_score) for task, max_score in points.items()}
        for cell in sorted(cells.keys() ^ expected.keys()):
            side = "the course's notebook" if cell in cells else "grader.yml"
            raise CourseError(f"{where}: test cell {cell!r} is only in {side}; the course's source notebook "
                              "and grader.yml must grade the same tasks (then run generate_assignment again)")
        for cell, max_score in sorted(cells.items()):
            if float(max_score) != expected[cell]:
                raise CourseError(f"{where}: {cell!r} has {max_score:g} points, grader.yml {expected[cell]:g}; "
                                  "make them equal and run generate_assignment again")

    def record(self, result: SubmissionResult, submitted_notebook: Path) -> Path:
        """Write ``result`` into the course as ``nbgrader autograde`` would; return the autograded
        notebook. The student id is nbgrader's: the folder under ``submitted/``. While it runs,
        the process's working directory is the course root (nbgrader's converter changes it):
        call it from one thread, with no other thread resolving relative paths."""
        student, assignment, notebook = self._locate(submitted_notebook)
        if result.assignment != assignment:
            raise RecordError(f"{submitted_notebook}: lies under assignment {assignment!r} "
                              f"but was graded as {result.assignment!r}")
        known = self._notebooks(assignment)
        if known and Path(notebook).stem not in known:
            raise RecordError(f"{submitted_notebook}: nbgrader knows the notebook of {assignment!r} as "
                              f"{', '.join(f'{name}.ipynb' for name in known)}; rename the file and grade again")
        tasks = [task for task in result.tasks if not task.manual and task.score is not None]
        try:
            self.check(assignment, notebook, {task.id: task.max_score for task in tasks})
        except CourseError as error:
            raise RecordError(str(error)) from None
        writer = WriteAutograderOutputs(
            outputs={f"{task.id}{TESTS_SUFFIX}": {"score": float(min(task.score, task.max_score)),
                                                   "text": task_report(task, result)} for task in tasks},
            notes=notes_report(result, {task.id for task in tasks}),
            hidden_note=render(text("gradebook.hidden_tests"), result.language))
        self._autograde(student, assignment, Path(notebook).stem, writer)
        coursedir = self._coursedir()
        return Path(coursedir.format_path(coursedir.autograded_directory, student, assignment)) / notebook

    def recorded(self, submitted_notebook: Path) -> bool:
        """Whether the course already holds this submission's autograded notebook (a result
        the autograder reuses is recorded again only when it does not)."""
        try:
            student, assignment, notebook = self._locate(submitted_notebook)
        except RecordError:
            return True  # not a submission of this course: nothing to record
        coursedir = self._coursedir()
        return (Path(coursedir.format_path(coursedir.autograded_directory, student, assignment)) / notebook).exists()

    def manual_scores(self, assignment: str, tasks: Iterable[str]) -> dict[str, dict[str, float]]:
        """The written answers' points the gradebook holds, per student and task: the TA's from
        formgrader, or nbgrader's 0 for an untouched answer; an answer waiting for the TA is absent.
        The TA's points count though nbgrader flags them for review again after every autograde
        (its SaveAutoGrades does, for any grade with a manual score), as ``nbgrader export``
        counts them: a regrade never hides them."""
        wanted, found = set(tasks), {}
        with self._gradebook() as gradebook:
            try:
                submissions = gradebook.find_assignment(assignment).submissions
            except MissingEntry:
                return {}
            for submission in submissions:
                grades = [grade for notebook in submission.notebooks for grade in notebook.grades]
                for grade in grades:
                    entered = grade.manual_score is not None or not grade.needs_manual_grade
                    if grade.name in wanted and entered and grade.score is not None:
                        found.setdefault(submission.student.id, {})[grade.name] = float(grade.score)
        return found

    def _autograde(self, student: str, assignment: str, notebook_id: str, writer) -> None:
        """nbgrader's Autograde converter for one notebook, ``writer`` in place of Execute."""
        coursedir = self._coursedir()
        coursedir.assignment_id, coursedir.student_id, coursedir.notebook_id = assignment, student, notebook_id
        converter = self._converter(writer)
        folder = coursedir.format_path(coursedir.submitted_directory, student, assignment)
        converter.notebook_path = os.path.join(folder, f"{notebook_id}.ipynb")
        self._log.records.clear()
        try:
            with warnings.catch_warnings():
                # nbgrader's own update_or_create_submission trips SQLAlchemy's autoflush warning
                # on every new submission; it would interleave with the grader's progress lines.
                warnings.simplefilter("ignore", SAWarning)
                converter.start()
        except NbGraderException:
            raise RecordError(f"{folder}: nbgrader could not record it ({self._log.reason()}); "
                              "formgrader shows it as ungraded") from None

    def _converter(self, writer: WriteAutograderOutputs | None) -> "OneNotebook":
        """nbgrader's Autograde converter with the course's steps: cell roles restored from the
        gradebook first, ``writer`` in place of Execute."""
        converter = OneNotebook(coursedir=self._coursedir(), parent=self._app)
        converter.force = True  # the autograder's cache decides what is graded again, not nbgrader's
        converter.sanitize_preprocessors = [RestoreCellRoles, *converter.sanitize_preprocessors]
        converter.autograde_preprocessors = swap_execute(converter.autograde_preprocessors, writer)
        return converter

    def _notebooks(self, assignment: str) -> list[str]:
        """The names nbgrader knows the assignment's notebooks by ([] for an unknown assignment)."""
        with self._gradebook() as gradebook:
            try:
                return sorted(notebook.name for notebook in gradebook.find_assignment(assignment).notebooks)
            except MissingEntry:
                return []

    def _source_notebook(self, assignment: str, notebook: str) -> Path:
        coursedir = self._coursedir()
        return Path(coursedir.format_path(coursedir.source_directory, ".", assignment)) / notebook

    def _locate(self, path: Path) -> tuple[str, str, str]:
        """(student, assignment, notebook file name) of a notebook in the course's submitted/."""
        coursedir = self._coursedir()
        submitted = Path(coursedir.root) / coursedir.submitted_directory
        try:
            student, assignment, notebook = Path(os.path.abspath(path)).relative_to(submitted).parts
        except ValueError:
            raise RecordError(f"{path}: not a notebook of {submitted}/<student>/<assignment>/") from None
        folder = submitted / student / assignment
        # nbgrader copies every file of the folder into autograded/: nothing may be read through a link.
        odd = next((p for p in [folder.parent, folder, *folder.rglob("*")]
                    if p.is_symlink() or not (p.is_file() or p.is_dir())), None)
        if odd is not None:
            raise RecordError(f"{odd}: a symbolic link or another non-regular file; nothing of "
                              f"{student}'s {assignment} was recorded (remove it and grade again)")
        return student, assignment, notebook

    def _coursedir(self):
        if self._app is None:
            self._app = self._load_app()
        return self._app.coursedir

    def _load_app(self) -> AutogradeApp:
        """nbgrader's autograde application, configured as ``nbgrader autograde`` run in the
        course root would be (its nbgrader_config.py and the user's Jupyter config)."""
        app = AutogradeApp()
        saved_path = list(sys.path)
        try:
            with _working_directory(self.root):
                app.initialize([])
        except SystemExit:
            raise CourseError(f"{self.root}/nbgrader_config.py: nbgrader could not load the course's "
                              "configuration; run `nbgrader autograde --help` there to see why") from None
        finally:
            sys.path[:] = saved_path  # nbgrader puts the course root on sys.path; keep the grader's own
        app.log.handlers = [self._log]
        app.log.propagate = False
        _bounded_timestamps(app.coursedir)
        if Path(app.coursedir.root) != self.root:
            raise CourseError(f"{self.root}/nbgrader_config.py sets CourseDirectory.root to "
                              f"{app.coursedir.root}; point the autograder at that folder instead")
        return app

    def _gradebook(self) -> Gradebook:
        return Gradebook(self._coursedir().db_url, self._coursedir().course_id)


TIMESTAMP_BYTES = 1024  # a submission's timestamp.txt holds one date and time


def _bounded_timestamps(coursedir) -> None:
    """nbgrader reads a submission's timestamp.txt whole, in the grading process (red team 3: a
    student's 800 MB file took it to 4.4 GB), and on text that is not a time it fails with its
    own AttributeError, leaving the student without a gradebook row. Here at most
    ``TIMESTAMP_BYTES`` are read, and a file that does not hold a time is no timestamp, as
    nbgrader takes an empty one: the submission is recorded without a time."""
    def get_existing_timestamp(dest_path: str):
        path = os.path.join(dest_path, "timestamp.txt")
        if not os.path.isfile(path):
            return None
        with open(path, "rb") as handle:
            raw = handle.read(TIMESTAMP_BYTES + 1)
        try:
            if len(raw) > TIMESTAMP_BYTES:
                raise ValueError(f"more than {TIMESTAMP_BYTES} bytes")
            return parse_utc(raw.decode("utf-8").strip()) if raw.strip() else None
        except Exception as error:  # noqa: BLE001 - the student's text: whatever dateutil makes of it
            coursedir.log.warning("%s: not a time (%s); recorded without a submission time", path, error)
            return None
    coursedir.get_existing_timestamp = get_existing_timestamp


class OneNotebook(Autograde):
    """nbgrader's Autograde for the one submitted notebook at ``notebook_path``. nbgrader's own
    search globs the student's folder name, twice (the folder, then the notebook in the folder
    it matched), so a folder named `s100[12]`, `s100?` or `*` would reach other students'
    notebooks and record the attacker's scores in their rows: the autograder names the file."""
    notebook_path = Unicode("", help="the submitted notebook to record")

    def init_notebooks(self) -> None:
        self.assignments = {os.path.dirname(self.notebook_path): [self.notebook_path]}
        self.notebooks = []


class _Collect(logging.Handler):
    """Keeps nbgrader's warnings and errors (its log would interleave with the progress bar)."""

    def __init__(self):
        super().__init__(logging.WARNING)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)

    def reason(self) -> str:
        """One line: the exception nbgrader logged last (its traceback's last line), or its first error."""
        errors = [r.getMessage().strip() for r in self.records if r.levelno >= logging.ERROR]
        tracebacks = [m for m in errors if m.startswith("Traceback")]
        if tracebacks:
            return tracebacks[-1].splitlines()[-1]
        return errors[0].splitlines()[0] if errors else "no reason given"


def swap_execute(preprocessors: list, writer: WriteAutograderOutputs | None) -> list:
    """The course's autograde steps with ``writer`` where nbgrader's Execute (or a subclass) was."""
    steps = [import_item(step) if isinstance(step, str) else step for step in preprocessors]
    executes = [i for i, step in enumerate(steps) if isinstance(step, type) and issubclass(step, Execute)]
    if len(executes) != 1:
        raise CourseError("the course's Autograde.autograde_preprocessors must hold nbgrader's Execute step "
                          f"once (found {len(executes)}); the autograder takes its place")
    steps[executes[0]] = writer
    return steps


@contextlib.contextmanager
def _working_directory(folder: Path) -> Iterator[None]:
    saved = os.getcwd()
    os.chdir(folder)
    try:
        yield
    finally:
        os.chdir(saved)

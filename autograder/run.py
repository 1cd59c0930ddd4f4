"""The ``grade`` verb: every usage check before any work, then the batch, then the summary.

``prepare`` turns the command line into a ``GradeRun`` or raises ``ConfigError`` (exit 2);
``GradeRun.execute`` grades what is not already graded, writes every result as it comes
back, then grades.csv, and returns the exit status (0 the batch ran, 1 the grader failed
on some submission, 130/143 stopped by SIGINT/SIGTERM with the finished results kept).
"""
import os
import signal
import uuid
from importlib import import_module
from collections.abc import Callable
from typing import TYPE_CHECKING
from dataclasses import dataclass, field
from pathlib import Path

from .checks.kept_runs import forget_other_versions
from .config import ConfigError, parse_config, read_config
from .course import COURSE, Course
from .gradebook import CourseError, RecordError, course_root, has_gradebook, remember_course

from .executors.base import Executor, Progress, Stopped
from .executors.choice import LOCAL, executor_named
from .executors.runmarker import RUN_MARKER
from .grading.pipeline import Batch, read_submission
from .outputs import answers
from .outputs.manual_points import ManualPoints, Tasks, read_manual_points, write_blank
from .outputs.store import OutputFolder
from .outputs.totals import Entered, Total, entered_in, total_of
from .report import write_class_report
from .results import Issue, SubmissionResult, text
from .sandbox import set_up_torch
from .submissions.find import Submission, find_submissions, select

if TYPE_CHECKING:
    from .executors.early import EarlySlots
    from .gradebook import NbgraderCourse


@dataclass
class Options:
    paths: list[Path]
    assignment: str
    output: Path
    jobs: int | None = None
    seed: int | None = None
    force: bool = False
    config: Path | None = None
    device: str | None = None
    students: list[str] = field(default_factory=list)
    executor: str = LOCAL               # local (this machine's processes) or ray (a Ray cluster)
    address: str | None = None          # the Ray cluster's address, for --executor ray


@dataclass
class GradeRun:
    batch: Batch
    folder: OutputFolder
    submissions: list[Submission]         # every submission found under the PATHs
    jobs: int
    nbgrader: "NbgraderCourse | None" = None
    selected: set[str] | None = None      # --student: only these are graded; the others' results are kept
    not_graded: list[tuple[str, str]] = field(default_factory=list)   # notebooks found and not graded, why
    results: dict[str, SubmissionResult] = field(default_factory=dict)
    reused: set[str] = field(default_factory=set)
    kept: set[str] = field(default_factory=set)   # not selected: their stored results, as they are
    earlier: set[str] = field(default_factory=set)   # results in DIR this run did not grade (not under
    #                                                  its PATHs, or stopped before): kept in grades.csv
    stopped_by: int | None = None
    report: Path | None = None
    report_failed: bool = False
    executor: Executor | None = None
    manual: ManualPoints | None = None          # DIR/manual_points.csv, read before grading
    totals: list[Total] = field(default_factory=list)   # this run's results with their written answers
    answers: Path | None = None                 # DIR/answers.html, where no gradebook holds the written answers
    blank_points: Path | None = None            # DIR/manual_points.csv, when this run wrote it for the TA
    held: int | None = None                     # the service's lock of DIR, held for the run (once served)

    def execute(self, on_done: Callable[[SubmissionResult, bool], None] = lambda r, cached: None,
                on_progress: Progress | None = None) -> int:
        pending = self._pending(on_done)

        def deliver(submission: Submission, result: SubmissionResult) -> None:
            result = self._keep(submission, result)
            self.results[submission.student_id] = result
            on_done(result, False)
        try:
            if pending:
                self.executor.grade_all(self.batch, pending, self.jobs, deliver, on_progress, _import_drawing)
        except Stopped as stop:
            self.stopped_by = stop.signum
        finally:
            self.executor.close()  # what was launched for the batch and is unused (nothing to grade)
        self._write_summaries()
        if self.stopped_by is not None:
            return 128 + self.stopped_by
        return 1 if self.failed or self.report_failed else 0

    def _pending(self, on_done) -> list[Submission]:
        """The submissions to grade; the others' results (unchanged, or not selected) are taken
        as stored."""
        pending, outdated = [], []
        for submission in self.submissions:
            if self.selected is not None and submission.student_id not in self.selected:
                stored = self.folder.load(submission.student_id)
                if stored is not None:
                    self.results[submission.student_id] = stored
                    self.kept.add(submission.student_id)
                    if not self._current(submission, stored):
                        outdated.append(submission.student_id)
                continue
            cached = self._cached(submission)
            if cached is None:
                pending.append(submission)
                continue
            self.results[submission.student_id] = cached
            self.reused.add(submission.student_id)
            if self.nbgrader is not None and not self.nbgrader.recorded(submission.path):
                self._record(submission, cached)  # e.g. autograded/ was deleted since
            on_done(cached, True)
        if outdated:
            shown = ", ".join(sorted(outdated)[:20]) + (f" and {len(outdated) - 20} more" if len(outdated) > 20 else "")
            self.folder.notes.append(
                f"{len(outdated)} results kept as they are (not selected by --student) were graded from another "
                f"notebook, grader.yml, seed or grader version than this run would use: {shown}; run without "
                "--student to grade them again")
        return pending

    def _keep(self, submission: Submission, result: SubmissionResult) -> SubmissionResult:
        """Write one result (JSON, pages, timing; the gradebook row): whatever fails here fails
        only this student, whose result then says what could not be written."""
        try:
            saved = self.folder.save(result, entered=self.manual.points if self.manual is not None else None)
        except Exception as error:  # noqa: BLE001 - a page drawn from the student's values, say
            result.errors.append(Issue(code="output_failed", text=text(
                "issue.output_failed", detail=f"{type(error).__name__}: {error}"[:300])))
            try:
                saved = self.folder.save(result, pages=False)
            except OSError as again:
                self.folder.notes.append(f"{submission.shown}: its result could not be written ({again})")
                return result
        if self._record(submission, saved):
            return saved
        saved.errors.append(Issue(code="gradebook_failed", text=text("issue.gradebook_failed")))
        return self.folder.save(saved, pages=False)

    def _write_summaries(self) -> None:
        """grades.csv and the class report, with the written answers' points known now; a report
        that cannot be written is a note (grades.csv and every result are written already)."""
        if self.manual is not None:
            self.folder.notes += self.manual.unknown_students(lambda sid: self.folder.result_path(sid).is_file())
        self._add_earlier_results()
        results, entered = list(self.results.values()), self._entered()
        self.totals = [total_of(result, entered) for result in results]
        self.folder.write_grades(results, list(self.batch.settings.spec.tasks), entered)
        self._refresh_feedback(results, entered)
        if not has_gradebook(self.folder.path):
            self._write_answers(results, entered)
        try:
            self.report = write_class_report(results, self.folder.path, self.folder.language,
                                             self.batch.settings.task_checks, entered)[0]
        except Exception as error:  # noqa: BLE001 - a failure here loses nothing already written
            self.report_failed = True
            self.folder.notes.append(f"the class report could not be written: {type(error).__name__}: {error}")

    def _refresh_feedback(self, results: list[SubmissionResult], entered: Entered) -> None:
        """Each feedback page that the written answers' points entered since it was written
        change (a reused or kept result is not graded again): the student reads them at once."""
        for result in results:
            try:
                self.folder.refresh_feedback(result, entered)
            except Exception as error:  # noqa: BLE001 - a page drawn from one student's values
                self.folder.notes.append(f"{result.student_id}: its feedback could not be written with the "
                                         f"written answers' points ({type(error).__name__}: {error})"[:400])

    def _write_answers(self, results: list[SubmissionResult], entered: Entered) -> None:
        """DIR/answers.html for the TA who grades the written answers outside nbgrader, and a
        manual_points.csv to fill where the folder has none (SPEC §6)."""
        settings = self.batch.settings
        if not settings.written:
            return
        tasks = Tasks.of(settings.assignment, settings.spec)
        try:
            self.answers = answers.write_page(self.folder.path, results, entered,
                                              answers.questions_of(self.batch.source, tasks.manual),
                                              self.folder.language)
            self.blank_points = write_blank(self.folder.path, [r.student_id for r in results], tasks)
        except Exception as error:  # noqa: BLE001 - a failure here loses nothing already written
            self.folder.notes.append(f"the written answers' page could not be written: {type(error).__name__}: "
                                     f"{error}")

    def _add_earlier_results(self) -> None:
        """Every other result DIR holds, as stored: a student not under this run's PATHs (one
        resubmitted notebook graded into the class's folder), or not regraded before a stop.
        grades.csv and the report list the whole folder, never only what this run touched."""
        for result in self.folder.load_all():
            if result.student_id not in self.results:
                self.results[result.student_id] = result
                self.earlier.add(result.student_id)

    def _entered(self) -> Entered:
        """The written answers' points known now: the course's gradebook, manual_points.csv over it."""
        tasks = Tasks.of(self.batch.settings.assignment, self.batch.settings.spec)
        try:
            return entered_in(self.folder.path, self.batch.settings.assignment, tasks, self.manual)
        except CourseError as error:
            self.folder.notes.append(f"nbgrader: {error}")
            return self.manual.points if self.manual is not None else {}

    def _record(self, submission: Submission, result: SubmissionResult) -> bool:
        """Into the nbgrader course's gradebook and autograded/, when grading one; False when
        nbgrader could not record it (the TA's note says why)."""
        if self.nbgrader is None or submission.problem is not None:
            return True
        try:
            self.nbgrader.record(result, submission.path)
        except RecordError as error:
            self.folder.notes.append(f"nbgrader: {error}")
            return False
        except Exception as error:  # noqa: BLE001 - nbgrader's own failure on this student's files
            self.folder.notes.append(f"nbgrader: {submission.shown}: {type(error).__name__}: {error}")
            return False
        return True

    @property
    def failed(self) -> list[str]:
        """Students on whom the grader itself failed (their results say so)."""
        return [sid for sid, r in self.results.items()
                if sid not in self.earlier and any(e.code == "grader_failed" for e in r.errors)]

    @property
    def to_grade(self) -> list[Submission]:
        """The submissions this run grades (all of them, or the ``--student`` ones)."""
        return [s for s in self.submissions if self.selected is None or s.student_id in self.selected]

    @property
    def missing(self) -> list[str]:
        return [s.student_id for s in self.to_grade if s.student_id not in self.results or s.student_id in self.earlier]

    def _cached(self, submission: Submission) -> SubmissionResult | None:
        if self.batch.force:
            return None
        stored = self.folder.load(submission.student_id)
        return stored if stored is not None and self._current(submission, stored) else None

    def _current(self, submission: Submission, stored: SubmissionResult) -> bool:
        """Whether ``stored`` is this run's grade of ``submission``: the same notebook, source,
        grader.yml, seed and grader version."""
        if not stored.fingerprint:
            return False
        data, _ = read_submission(submission, self.batch)
        return stored.fingerprint == self.batch.fingerprint(data)


def _import_drawing() -> None:
    """matplotlib, for the pages and the class report, imported while the slots grade (half a
    second that a run of one notebook would otherwise wait for at its end)."""
    import_module("autograder.pages.figures")


def prepare(options: Options, course: Course = COURSE, early: "EarlySlots | None" = None) -> GradeRun:
    """Every check that can fail before grading starts; ``ConfigError`` says what to fix.
    ``early``: slots launched before the imports (``early.launch_early``), kept if they fit."""
    set_up_torch()
    os.environ.setdefault(RUN_MARKER, uuid.uuid4().hex)
    config_path = options.config or course.config_path
    config_bytes = read_config(config_path, given=options.config is not None)
    config = parse_config(config_bytes, config_path, course)
    executor = executor_named(options.executor, options.address, early)
    try:
        return _prepared(options, course, config_bytes, config, executor)
    except BaseException:
        executor.close()
        raise


def _prepared(options: Options, course: Course, config_bytes: bytes, config, executor: Executor) -> GradeRun:
    settings, jobs = executor.plan(config, options, course)  # a cluster's devices and CPUs, not this machine's
    found = find_submissions(options.paths, options.assignment, settings.spec.notebook,
                             course.helper_archive(options.assignment))
    if not found.submissions:
        skipped = "".join(f"\n  not graded: {shown} ({why})" for shown, why in found.not_graded)
        raise ConfigError(f"no submissions of {options.assignment} found under "
                          f"{', '.join(map(str, options.paths))}{skipped}")
    selected = {s.student_id for s in select(found.submissions, options.students, options.paths)} \
        if options.students else None
    nbgrader = None
    if course_root(options.paths) is not None:
        from .gradebook import NbgraderCourse  # nbgrader's import takes seconds: only for a course
        nbgrader = NbgraderCourse.detect(options.paths)
        nbgrader.check(options.assignment, settings.spec.notebook,
                       {task: settings.spec.points(task) for task in settings.autograded})
    folder = OutputFolder(options.output, options.assignment, config.language)
    held = folder.hold_unless_served()
    folder.check_usable()
    manual = read_manual_points(folder.path, Tasks.of(options.assignment, settings.spec))
    if nbgrader is not None:
        remember_course(folder.path, nbgrader.root)
    batch = Batch(settings, config, config_bytes, course, options.force, results=folder.path)
    forget_other_versions(folder.path, batch.version)
    return GradeRun(batch, folder, found.submissions, jobs, nbgrader, selected, found.not_graded,
                    executor=executor, manual=manual, held=held)


def signal_name(status: int) -> str:
    return signal.Signals(status - 128).name if status > 128 else ""

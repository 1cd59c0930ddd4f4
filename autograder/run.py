"""The ``grade`` verb: every usage check before any work, then the batch, then the summary.

``prepare`` turns the command line into a ``GradeRun`` or raises ``ConfigError`` (exit 2);
``GradeRun.execute`` grades what is not already graded, writes every result as it comes
back, then grades.csv, and returns the exit status (0 the batch ran, 1 the grader failed
on some submission, 130/143 stopped by SIGINT/SIGTERM with the finished results kept).
"""
import os
import signal
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from .config import ConfigError, parse_config, read_config
from .course import COURSE, Course
from .gradebook import NbgraderCourse, RecordError
from .grading import RunSettings
from .pages import write_class_report
from .pipeline import Batch, read_submission
from .pool import Stopped, grade_all
from .results import SubmissionResult
from .runmarker import RUN_MARKER
from .sandbox import set_up_torch
from .store import OutputFolder
from .submissions import Submission, find_submissions


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
    executor: str = "local"             # local (this machine's processes) or ray (a Ray cluster)
    address: str | None = None          # the Ray cluster's address, for --executor ray


@dataclass
class GradeRun:
    batch: Batch
    folder: OutputFolder
    submissions: list[Submission]
    jobs: int
    nbgrader: NbgraderCourse | None = None
    results: dict[str, SubmissionResult] = field(default_factory=dict)
    reused: set[str] = field(default_factory=set)
    stopped_by: int | None = None
    report: Path | None = None
    executor: str = "local"

    def execute(self, on_done: Callable[[SubmissionResult, bool], None] = lambda r, cached: None) -> int:
        pending = []
        for submission in self.submissions:
            cached = self._cached(submission)
            if cached is None:
                pending.append(submission)
            else:
                self.results[submission.student_id] = cached
                self.reused.add(submission.student_id)
                if self.nbgrader is not None and not self.nbgrader.recorded(submission.path):
                    self._record(submission, cached)  # e.g. autograded/ was deleted since
                on_done(cached, True)

        def deliver(submission: Submission, result: SubmissionResult) -> None:
            result = self.folder.save(result)
            self._record(submission, result)
            self.results[submission.student_id] = result
            on_done(result, False)
        try:
            if pending:
                self._grade_all()(self.batch, pending, self.jobs, deliver)
        except Stopped as stop:
            self.stopped_by = stop.signum
        self.folder.write_grades(list(self.results.values()), list(self.batch.settings.spec.tasks))
        self.report = write_class_report(list(self.results.values()), self.folder.path, self.folder.language,
                                         self.batch.settings.task_checks)[0]
        if self.stopped_by is not None:
            return 128 + self.stopped_by
        return 1 if self.failed else 0

    def _record(self, submission: Submission, result: SubmissionResult) -> None:
        """Into the nbgrader course's gradebook and autograded/, when grading one."""
        if self.nbgrader is None or submission.problem is not None:
            return
        try:
            self.nbgrader.record(result, submission.path)
        except RecordError as error:
            self.folder.notes.append(f"nbgrader: {error}")

    def _grade_all(self):
        if self.executor == "ray":
            from .ray_pool import grade_all as on_cluster
            return on_cluster
        return grade_all

    @property
    def failed(self) -> list[str]:
        """Students on whom the grader itself failed (their results say so)."""
        return [sid for sid, r in self.results.items() if any(e.code == "grader_failed" for e in r.errors)]

    @property
    def missing(self) -> list[str]:
        return [s.student_id for s in self.submissions if s.student_id not in self.results]

    def _cached(self, submission: Submission) -> SubmissionResult | None:
        if self.batch.force:
            return None
        stored = self.folder.load(submission.student_id)
        if stored is None or not stored.fingerprint:
            return None
        data, _ = read_submission(submission, self.batch.config.max_notebook_mb << 20)
        return stored if stored.fingerprint == self.batch.fingerprint(data) else None


def prepare(options: Options, course: Course = COURSE) -> GradeRun:
    """Every check that can fail before grading starts; ``ConfigError`` says what to fix."""
    set_up_torch()
    os.environ.setdefault(RUN_MARKER, uuid.uuid4().hex)
    config_path = options.config or course.config_path
    config_bytes = read_config(config_path)
    config = parse_config(config_bytes, config_path, course)
    check_executor(options)
    if options.executor == "ray":  # the cluster's devices and CPUs, not this machine's
        from .ray_pool import plan
        settings, jobs = plan(config, options, course)
    else:
        settings = RunSettings.resolve(config, options.assignment, options.seed, options.device, course)
        jobs = resolve_jobs(options.jobs, settings.device)
    submissions = find_submissions(options.paths, options.assignment, settings.spec.notebook,
                                   options.students)
    if not submissions:
        raise ConfigError(f"no submissions of {options.assignment} found under "
                          f"{', '.join(map(str, options.paths))}")
    if options.executor == "local":  # on a cluster, each node's slots check their own
        check_sandbox()
    nbgrader = NbgraderCourse.detect(options.paths)
    if nbgrader is not None:
        nbgrader.check(options.assignment, settings.spec.notebook,
                       {task: settings.spec.points(task) for task in settings.autograded})
    folder = OutputFolder(options.output, options.assignment, config.language)
    folder.check_usable()
    batch = Batch(settings, config, config_bytes, course, options.force)
    return GradeRun(batch, folder, submissions, jobs, nbgrader, executor=options.executor)


def check_executor(options: Options) -> None:
    if options.executor not in ("local", "ray"):
        raise ConfigError(f"--executor {options.executor}: use local (this machine) or ray (a Ray cluster)")
    if options.address is not None and options.executor != "ray":
        raise ConfigError(f"--address {options.address}: only a Ray cluster has an address; add --executor ray")


def resolve_jobs(jobs: int | None, device: str) -> int:
    if jobs is not None and jobs < 1:
        raise ConfigError(f"--jobs {jobs}: give at least 1 (or leave it out: one per core)")
    from .sandbox.preflight import gpu_slots
    cap = gpu_slots(device)  # on CUDA, one slot per GPU: each slot's GPU memory is its own
    wanted = jobs or cap or os.cpu_count() or 1
    return min(wanted, cap) if cap else wanted


def check_sandbox() -> None:
    """This machine can run the sandbox (bubblewrap, Linux, ...), checked before forking."""
    from .sandbox.preflight import check_available
    problem = check_available()
    if problem:
        raise ConfigError(problem)


def signal_name(status: int) -> str:
    return signal.Signals(status - 128).name if status > 128 else ""

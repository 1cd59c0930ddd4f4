"""Grading a batch: each submission in a sandboxed worker, results back to one writer.

The flow of a submission: ``submissions`` finds it; ``grade_submission`` reads it (size
capped, no links followed), ``assemble`` plans its cells against the TA's source, a
``Session`` runs them in the sandbox and ``grading`` runs each task's checks; the pool
returns the ``SubmissionResult`` to this process, where ``store`` writes it atomically.
A result is reused while the submission, the source notebook, the grader.yml that was
used, the seed and the grader's version are all unchanged, so a batch killed half-way
and started again grades only what is missing.
"""
import hashlib
import os
import resource
import stat
import time
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from . import __version__
from .assemble import CellPlan, assemble, grade_id, read_notebook
from .checks.core import lost_reason
from .config import GraderConfig
from .course import COURSE, Course
from .grading import RunSettings
from .results import Issue, SubmissionResult, TaskResult, text
from .sandbox.proxy import WorkerLost
from .session import Session
from .submissions import Submission


def grader_version(course: Course = COURSE) -> str:
    """The package version and a digest of the grading code, so a changed check re-grades."""
    digest = hashlib.sha256()
    for path in sorted([*(course.root / "autograder").rglob("*.py"), *course.reference_dir.glob("*.py")]):
        digest.update(path.read_bytes())
    return f"{__version__}+{digest.hexdigest()[:12]}"


@dataclass
class Batch:
    """Everything one run needs that does not change between submissions."""
    settings: RunSettings
    config: GraderConfig
    config_bytes: bytes                       # the grader.yml that was used, as read
    course: Course = COURSE
    force: bool = False
    source: object = field(init=False, repr=False)
    others: dict[str, set[str]] = field(init=False, repr=False)   # other assignments' grade ids
    fingerprint_base: str = field(init=False)

    def __post_init__(self):
        name, spec = self.settings.assignment, self.settings.spec
        source_path = self.course.source_notebook(name, spec.notebook)
        self.source = nbformat.read(source_path, as_version=4)
        self.others = {other: {gid for c in nbformat.read(self.course.source_notebook(other, s.notebook),
                                                           as_version=4).cells if (gid := grade_id(c))}
                       for other, s in self.config.assignments.items() if other != name}
        fixed = [source_path.read_bytes(), self.config_bytes, str(self.settings.seed).encode(),
                 grader_version(self.course).encode(), self.settings.device.encode()]
        self.fingerprint_base = hashlib.sha256(b"\0".join(fixed)).hexdigest()

    @property
    def language(self) -> str:
        return self.config.language

    @property
    def helpers(self) -> Path:
        return self.course.helper_package(self.settings.assignment)

    def fingerprint(self, data: bytes | None) -> str:
        return hashlib.sha256(self.fingerprint_base.encode() + (data or b"<unreadable>")).hexdigest()


def read_submission(submission: Submission, limit_bytes: int) -> tuple[bytes | None, Issue | None]:
    """The notebook's bytes, read without following a link, or why not."""
    if submission.problem is not None:
        return None, Issue(code="not_regular_file", text=submission.problem)
    try:
        fd = os.open(submission.path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        return None, Issue(code="missing", text=text("issue.missing", path=submission.path.name))
    except OSError:
        return None, Issue(code="not_regular_file", text=text("issue.not_regular", path=submission.path.name))
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            return None, Issue(code="not_regular_file", text=text("issue.not_regular", path=submission.path.name))
        if info.st_size > limit_bytes:
            return None, Issue(code="too_large", text=text("issue.too_large", name=submission.path.name,
                                                          size=f"{info.st_size / 2**20:.1f}",
                                                          limit=f"{limit_bytes / 2**20:g}"))
        return handle.read(limit_bytes + 1), None


def empty_result(batch: Batch, submission: Submission, fingerprint: str = "") -> SubmissionResult:
    spec = batch.settings.spec
    tasks = [TaskResult(id=t, score=None if spec.is_manual(t) else 0.0, max_score=spec.points(t),
                        manual=spec.is_manual(t)) for t in spec.tasks]
    return SubmissionResult(student_id=submission.student_id, assignment=batch.settings.assignment,
                            score=0.0, max_score=sum(t.max_score for t in tasks), tasks=tasks,
                            seed=batch.settings.seed, fingerprint=fingerprint, language=batch.language)


def grade_submission(sandbox, batch: Batch, submission: Submission) -> SubmissionResult:
    """Grade one submission; whatever the student's notebook holds, a result comes back."""
    started = time.monotonic()
    data, problem = read_submission(submission, batch.config.max_notebook_mb << 20)
    result = empty_result(batch, submission, batch.fingerprint(data))
    if problem is not None:
        result.errors.append(problem)
        return result
    plan = CellPlan()
    notebook = read_notebook(submission.path, data, plan)
    if notebook is not None and (other := _other_assignment(batch, notebook)) is not None:
        plan.error("wrong_assignment", text("issue.wrong_assignment", other=other,
                                            assignment=batch.settings.assignment))
        notebook = None
    if notebook is not None:
        assemble(notebook, batch.source, batch.settings.autograded, plan)
        result.solutions = solution_cells(plan, batch.settings.autograded)
    result.warnings += plan.warnings
    result.errors += plan.errors
    result.timing["read"] = round(time.monotonic() - started, 4)
    if notebook is not None and plan.cells:
        _run(sandbox, batch, plan, result, started)
    result.score = round(sum(t.score or 0.0 for t in result.tasks), 6)
    _cap_issues(result)
    result.timing["total"] = round(time.monotonic() - started, 4)
    result.timing["grader_peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    return result


MAX_SOLUTION_CHARS = 64 * 1024  # per task: far above any real answer, a bound on what is kept


def solution_cells(plan: CellPlan, tasks: list[str]) -> dict[str, str]:
    """Each task's solution cell as the student wrote it (magics removed), for the class
    report's similarity; a notebook without nbgrader metadata has none by grade id."""
    return {label: source[:MAX_SOLUTION_CHARS] for label, source in plan.cells if label in tasks}


def _other_assignment(batch: Batch, notebook) -> str | None:
    """The other assignment whose grade ids this notebook carries, when it has none of ours."""
    ours = {gid for c in batch.source.cells if (gid := grade_id(c))}
    found = {gid for c in notebook.cells if (gid := grade_id(c))}
    if found & ours:
        return None
    return next((other for other, gids in batch.others.items() if found & gids), None)


def _run(sandbox, batch: Batch, plan: CellPlan, result: SubmissionResult, started: float) -> None:
    limits = batch.config.sandbox
    session = Session(sandbox, batch.settings, plan.cells,
                      deadline=started + limits.submission_timeout_s, output_limit=limits.max_printed_kb * 1024)
    try:
        session.start()
        result.timing["cells"] = round(time.monotonic() - started, 4)
        graded = session.grade(batch.settings.autograded)
        result.tasks = [graded.get(task.id, task) for task in result.tasks]
    except WorkerLost as lost:  # even the cells could not run to the end
        code = "too_many_crashes" if lost.why == "too_many_crashes" else "worker_lost"
        result.errors.append(Issue(code=code, text=text("issue.worker_lost", reason=lost_reason(lost))))
    finally:
        session.close()
        requests, waited_s = session.requests()
        result.timing["worker_requests"], result.timing["worker_s"] = requests, round(waited_s, 4)
        result.warnings += session.warnings
        result.errors += session.errors
        if session.student is not None and session.student.printed:
            result.output = session.student.output()


MAX_ISSUES = 50  # of each kind per submission: a flood of warnings says no more than fifty


def _cap_issues(result: SubmissionResult) -> None:
    for key in ("warnings", "errors"):
        issues: list[Issue] = getattr(result, key)
        if len(issues) > MAX_ISSUES:
            dropped = len(issues) - MAX_ISSUES
            setattr(result, key, issues[:MAX_ISSUES] + [Issue(code="more_issues", text=text(
                "issue.more_issues", count=dropped))])

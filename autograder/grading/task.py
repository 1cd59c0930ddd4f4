"""Grading one task: bind the other tasks' names to the book, run the checks, add points."""
import contextlib
import zlib
from dataclasses import dataclass, field

from ..checks import TASKS, book_without, names_to_bind
from ..checks.core import Context, PerStudent, run_check
from ..config import AssignmentConfig, ConfigError, GraderConfig
from ..course import BOOK_CONTEXT, COURSE, Course
from ..results import CheckResult, Finding, Issue, TaskResult, text
from ..sandbox.client import Student, StudentError


@dataclass(frozen=True)
class RunSettings:
    """What every task of a run is graded with: derived once, from grader.yml and the CLI."""
    assignment: str
    spec: AssignmentConfig
    seed: int
    device: str = "cpu"
    book_source: str = field(default_factory=COURSE.book_source, repr=False)

    @classmethod
    def resolve(cls, config: GraderConfig, assignment: str, seed: int | None = None,
                device: str | None = None, course: Course = COURSE) -> "RunSettings":
        """``seed`` and ``device`` override grader.yml's; raises ``ConfigError`` when unusable."""
        seed = seed if seed is not None else config.seed
        return cls(assignment, config.assignment(assignment), assignment_seed(assignment, seed),
                   resolve_device(device or config.device), _checked_book(course, assignment))

    @property
    def autograded(self) -> list[str]:
        return [task_id for task_id in self.spec.tasks if not self.spec.is_manual(task_id)]

    @property
    def written(self) -> frozenset[str]:
        """The written answers' task ids (graded by the TA; their text is kept for answers.html)."""
        return frozenset(task_id for task_id in self.spec.tasks if self.spec.is_manual(task_id))

    @property
    def task_checks(self) -> dict[str, list[str]]:
        """Every task with its check names, in grader.yml's order (a manual task: none)."""
        return {task_id: [] if self.spec.is_manual(task_id) else list(self.spec.tasks[task_id])
                for task_id in self.spec.tasks}


def _checked_book(course: Course, assignment: str) -> str:
    """The book's source, once run here: a broken book is the course's error (exit 2), not
    every student's (workers build it per task, without the task being graded)."""
    from reference import seq2seq
    source = course.book_source(assignment)
    context = {name: getattr(seq2seq, name) for name in BOOK_CONTEXT}  # the notebook's, in the worker
    try:
        exec(compile(source, str(course.reference_dir / "book.py"), "exec"), context)  # noqa: S102 - the TA's code
    except Exception as error:
        raise ConfigError(f"{course.reference_dir / 'book.py'}: the book's code raises "
                          f"{type(error).__name__}: {error}; fix it before grading") from None
    return source


def assignment_seed(assignment: str, override: int | None) -> int:
    """The hypothesis seed: from the assignment (never the student), unless overridden."""
    return override if override is not None else zlib.crc32(assignment.encode())


def resolve_device(wanted: str) -> str:
    """``auto`` is cuda when a GPU is there; ``cuda`` without one is a usage error."""
    import torch
    if wanted not in ("auto", "cpu", "cuda"):
        raise ConfigError(f"device {wanted!r}: use cpu, cuda or auto")
    if wanted == "cuda" and not torch.cuda.is_available():
        raise ConfigError("device cuda: no CUDA device is visible here; use --device cpu (or auto)")
    return "cuda" if wanted == "cuda" or (wanted == "auto" and torch.cuda.is_available()) else "cpu"


@dataclass
class TaskGrade:
    """A task's result, with what the submission's result must also learn."""
    result: TaskResult
    warnings: list[Issue] = field(default_factory=list)
    errors: list[Issue] = field(default_factory=list)
    lost_worker: bool = False


def grade_task(student: Student, settings: RunSettings, task_id: str) -> TaskGrade:
    """Run ``task_id``'s checks on the student's code; every check ends with a verdict."""
    points, task = settings.spec.tasks[task_id], TASKS[task_id]
    grade = TaskGrade(TaskResult(id=task_id, score=0.0, max_score=settings.spec.points(task_id)))
    try:
        defined = student.kind(task.defines) is not None
        if defined:
            student.bind_book_versions(names_to_bind(task_id), book_without(settings.book_source, task.defines),
                                       BOOK_CONTEXT)
    except StudentError:  # the name's own type query ran student code, which raised
        defined = False
    if not defined:
        problem = text("task.not_defined", name=task.defines, task=task_id)
        grade.result.checks = [_not_run(check.name, points[check.name], problem) for check in task.checks]
        return grade
    try:
        grade = _graded(student, settings, task, points)
        if grade.result.score < grade.result.max_score and not grade.lost_worker and _rebased(student, task):
            PerStudent.forget(student)  # what the checks kept was made by the class on the student's base
            on_book = _graded(student, settings, task, points)
            lost = on_book.lost_worker  # the worker is gone: the next task needs a fresh one
            if on_book.result.score > grade.result.score and not lost:
                on_book.warnings.append(Issue(code="graded_on_book_base", task=task_id,
                                              text=text("issue.graded_on_book_base", name=task.defines)))
                grade = on_book
            grade.lost_worker = grade.lost_worker or lost
    finally:
        if not grade.lost_worker:
            with contextlib.suppress(StudentError):  # the next task binds afresh, unbinding first
                student.unbind()
    return grade


def _rebased(student: Student, task) -> bool:
    """Whether the task's class, built on another task's class of the student's, was built
    again on the book's (SPEC §3: one mistake, in the base, costs points once)."""
    try:
        return student.rebase(task.defines)
    except StudentError:  # defining the class again raised: graded on the student's base only
        return False


def _graded(student: Student, settings: RunSettings, task, points: dict) -> TaskGrade:
    """One run of the task's checks, scored."""
    grade = TaskGrade(TaskResult(id=task.id, score=0.0, max_score=settings.spec.points(task.id)))
    ctx = Context(settings.assignment, task.id, settings.seed, device=settings.device)
    _run_checks(student, task, points, ctx, grade)
    done = {c.name for c in grade.result.checks}
    grade.result.checks += [_not_run(check.name, points[check.name], text("task.not_finished"))
                            for check in task.checks if check.name not in done]
    grade.result.score = round(sum(c.score for c in grade.result.checks), 6)
    grade.result.seconds = round(sum(c.seconds for c in grade.result.checks), 4)
    grade.warnings = [Issue(code=code, task=task.id, text=message) for code, message in ctx.warnings]
    return grade


def _run_checks(student: Student, task, points: dict, ctx: Context, grade: TaskGrade) -> None:
    """Each check in order, until one loses the worker; then the task's remarks."""
    for check in task.checks:
        outcome = run_check(check, student, ctx, points[check.name])
        grade.result.checks.append(outcome.result)
        if outcome.grader_error:
            grade.errors.append(Issue(code="grader_error", task=task.id,
                                      text=text("issue.grader_error", detail=outcome.grader_error)))
        if outcome.worker_lost:
            grade.lost_worker = True
            return
    if task.remarks is not None:
        with contextlib.suppress(StudentError):  # a remark that could not run: the checks have judged
            task.remarks(student, ctx)


def _not_run(name: str, points: float, problem) -> CheckResult:
    return CheckResult(name=name, passed=False, score=0.0, max_score=points,
                       finding=Finding(problem=problem))

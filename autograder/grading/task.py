"""Grading one task: bind the other tasks' names to the book, run the checks, add points; a
task whose cell is still the released template's is then said to be not attempted yet."""
import contextlib
import zlib
from dataclasses import dataclass, field

from ..checks import TASKS, book_without, names_to_bind
from ..checks.core import Context, PerStudent, run_check
from ..config import AssignmentConfig, ConfigError, GraderConfig
from ..course import BOOK_CONTEXT, COURSE, Course
from ..results import NOT_ATTEMPTED, CheckResult, Finding, Issue, TaskResult, Text, text
from ..sandbox.client import Student, StudentError


@dataclass(frozen=True)
class RunSettings:
    """What every task of a run is graded with: derived once, from grader.yml and the CLI."""
    assignment: str
    spec: AssignmentConfig
    seed: int
    device: str = "cpu"
    book_source: str = field(default_factory=COURSE.book_source, repr=False)
    templates: dict[str, str] = field(default_factory=dict, repr=False)  # task -> its cell as released

    @classmethod
    def resolve(cls, config: GraderConfig, assignment: str, seed: int | None = None,
                device: str | None = None, course: Course = COURSE) -> "RunSettings":
        """``seed`` and ``device`` override grader.yml's; raises ``ConfigError`` when unusable."""
        seed = seed if seed is not None else config.seed
        spec = config.assignment(assignment)
        return cls(assignment, spec, assignment_seed(assignment, seed), resolve_device(device or config.device),
                   _checked_book(course, assignment), course.released_cells(assignment, spec.notebook))

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


def grade_task(student: Student, settings: RunSettings, task_id: str, cell: str | None = None) -> TaskGrade:
    """Run ``task_id``'s checks on the student's code; every check ends with a verdict. ``cell``:
    the task's solution cell as handed in, where this process read it (``not_attempted``)."""
    grade = _task_grade(student, settings, task_id)
    reason = not_attempted(grade.result, cell, settings.templates.get(task_id))
    if reason is not None:
        for check in grade.result.checks:  # each check still recorded, failed, with the one line
            check.finding, check.blocked_by, check.note = Finding(problem=reason), None, None
    return grade


def _task_grade(student: Student, settings: RunSettings, task_id: str) -> TaskGrade:
    points, task = settings.spec.tasks[task_id], TASKS[task_id]
    grade = TaskGrade(TaskResult(id=task_id, score=0.0, max_score=settings.spec.points(task_id)))
    try:
        defined = student.kind(task.defines) is not None
        if defined:
            student.bind_book_versions(names_to_bind(task_id), book_without(settings.book_source, task.defines),
                                       BOOK_CONTEXT, own=task.defines)
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


STUB = "raise NotImplementedError()"  # what nbgrader puts in place of each solution in the release
UNTOUCHED = "NotImplementedError"     # what it raises


def not_attempted(task: TaskResult, cell: str | None, template: str | None) -> Text | None:
    """The one line for a task left as released, or None. Decided here, never by the worker:
    no check passed, and either the cell handed in is the template's (``cell`` and ``template``,
    both read by this process, alike but for blank lines, comments and spaces), or every check
    failed on the template's own ``raise NotImplementedError()`` (the worker's word for which
    line raised, held to ``cell`` where this process has it)."""
    if not task.checks or any(check.passed for check in task.checks):
        return None
    if cell is not None and template is not None and _code(cell) == _code(template):
        return text(NOT_ATTEMPTED)
    line = _stub_raised(task)
    lines = cell.splitlines() if cell is not None else None
    if line is None or (lines is not None and (line > len(lines) or lines[line - 1].strip() != STUB)):
        return None  # not the stub, or the worker named a line of the cell that is no stub
    return text(f"{NOT_ATTEMPTED}_line", line=line)


def _code(source: str) -> list[str]:
    """A cell's code lines, without blank lines, comments and trailing spaces."""
    return [line.rstrip() for line in source.splitlines() if line.strip() and not line.lstrip().startswith("#")]


def _stub_raised(task: TaskResult) -> int | None:
    """The line of the task's cell whose template stub every judged check raised, else None."""
    lines = {_stub_line(check, task.id) for check in task.checks if not _raises_anywhere(check)}
    line = lines.pop() if len(lines) == 1 else None
    return int(line) if line is not None and line.isdigit() else None


def _raises_anywhere(check: CheckResult) -> bool:
    """Not judged, or the device check of code that raises on every input (``runs_nowhere``):
    what it says follows from the other checks'."""
    problem = check.finding.problem if check.finding is not None else None
    return check.blocked_by is not None or (problem is not None and problem.id == "devices.runs_nowhere"
                                            and problem.params.get("type") == UNTOUCHED)


def _stub_line(check: CheckResult, task_id: str) -> str | None:
    """The line of the task's cell at which the check's code raised the template's stub, else None."""
    problem = check.finding.problem if check.finding is not None else None
    if (problem is None or problem.id != "check.raised" or problem.params.get("type") != UNTOUCHED
            or problem.params.get("message")):
        return None
    where = problem.params.get("where")
    if not isinstance(where, Text) or where.id != "check.where_line" or where.params.get("cell") != task_id:
        return None
    return str(where.params.get("line")) if str(where.params.get("code", "")).strip() == STUB else None


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

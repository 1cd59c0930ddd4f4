"""Grading one task: bind the other tasks' names to the book, run the checks, add points."""
import zlib
from dataclasses import dataclass, field

from .checks import TASKS, names_to_bind
from .checks.core import Context, Outcome, run_check
from .checks.softmax import warn_if_writes_input
from .config import AssignmentConfig
from .report import render_finding
from .sandbox.proxy import Student, StudentError


@dataclass
class TaskResult:
    id: str
    score: float | None
    max_score: float
    checks: list[dict] = field(default_factory=list)
    warnings: list[dict] = field(default_factory=list)
    errors: list[dict] = field(default_factory=list)
    lost_worker: bool = False

    def to_json(self) -> dict:
        return {"id": self.id, "score": self.score, "max_score": self.max_score, "checks": self.checks}


def assignment_seed(assignment: str, override: int | None) -> int:
    """The hypothesis seed: from the assignment (never the student), unless overridden."""
    return override if override is not None else zlib.crc32(assignment.encode())


def grade_task(student: Student, assignment_name: str, assignment: AssignmentConfig, task_id: str,
               seed: int, device: str = "cpu", language: str = "en") -> TaskResult:
    points = assignment.tasks[task_id]
    task = TASKS[task_id]
    result = TaskResult(task_id, 0.0, assignment.points(task_id))
    kind = student.kind(task.defines)
    if kind is None:
        message = (f"{task.defines} is not defined: run its cell (grade id {task_id}) without errors",
                   f"{task.defines} не определено: ячейка {task_id} должна выполняться без ошибок")
        result.checks = [_check_json(check.name, False, points[check.name], message[language == "ru"])
                         for check in task.checks]
        return result
    ctx = Context(assignment_name, task_id, seed, device=device)
    student.bind_book_versions(names_to_bind(task_id))
    try:
        for check in task.checks:
            outcome = run_check(check, student, ctx)
            result.checks.append(_outcome_json(outcome, points[check.name], language))
            if outcome.grader_error:
                result.errors.append({"code": "grader_error", "task": task_id, "message": outcome.grader_error})
            if outcome.worker_lost:
                result.lost_worker = True
                break
        if task_id == "masked_softmax" and not result.lost_worker:
            warn_if_writes_input(student, ctx)
    except StudentError:
        pass  # a non-scoring warning that could not run
    finally:
        if not result.lost_worker:
            student.unbind()
    done = {c["name"] for c in result.checks}
    result.checks += [_check_json(check.name, False, points[check.name], "not run: the code did not finish")
                      for check in task.checks if check.name not in done]
    result.score = round(sum(c["score"] for c in result.checks), 6)
    result.warnings = [{"code": code, "task": task_id, "message": text[language == "ru"]}
                       for code, text in ctx.warnings]
    return result


def _check_json(name: str, passed: bool, points: float, message: str) -> dict:
    return {"name": name, "passed": passed, "score": points if passed else 0.0,
            "max_score": points, "message": message}


def _outcome_json(outcome: Outcome, points: float, language: str) -> dict:
    message = ""
    if outcome.finding is not None:
        message = render_finding(outcome.what, outcome.finding, language)
    elif outcome.note is not None:
        message = outcome.note[language == "ru"]
    return _check_json(outcome.name, outcome.passed, points, message)

"""Shared unknown mistakes (SPEC §6): failed checks that no catalogued mistake explains,
grouped by behaviour.

Every student meets the same replayed examples (SPEC §3), so two students whose code fails a
check the same way fail it on the same shrunk example with the same output: a group is the
task, the failing check, the example's code and what the code gave (the ``got`` value; for
code that raised, the error's type and message, not the line it raised at, which is each
student's own). Largest group first, numbered within its task and check. A task left as the
template has it (not attempted yet: grading says so, ``TaskResult.not_attempted``) is not a
mistake, nor is one whose solution cell raised, crashed or was deleted (the student's result
says so), and a task in which a check named a catalogued mistake is explained: all their
failures are left out. A group a TA
recognises is a candidate for the catalogue of mistakes.
"""
import json
from collections import defaultdict
from dataclasses import dataclass, field

from ..results import Finding, SubmissionResult, TaskResult, Text

@dataclass
class Group:
    task: str
    check: str
    finding: Finding | None          # the first student's: the example, what was expected and got
    message: str = ""                # a failed check with no finding: its message
    students: list[str] = field(default_factory=list)
    number: int = 0                  # within task and check, 1 for the largest group


def unexplained_groups(results: list[SubmissionResult], task_checks: dict[str, list[str]]) -> list[Group]:
    """The groups, by task and check in grader.yml's order (``task_checks``), then largest first."""
    groups: dict[tuple, Group] = {}
    for result in sorted(results, key=lambda r: r.student_id):
        broken = _cells_broken(result)
        for task in result.tasks:
            if left_as_released(task) or _diagnosed(task) or task.id in broken:
                continue
            for check in task.checks:
                if check.passed or check.blocked_by is not None:  # not judged: the blocking check's group says why
                    continue
                key = (task.id, check.name, *_behaviour(check.finding, check.message))
                group = groups.setdefault(key, Group(task.id, check.name, check.finding, check.message))
                group.students.append(result.student_id)
    return _numbered(list(groups.values()), task_checks)


def _behaviour(finding: Finding | None, message: str) -> tuple[str, str]:
    if finding is None:
        return "", message
    if finding.got is not None:
        return finding.case_code or "", _canonical(finding.got)
    problem = finding.problem.model_copy(update={"params": {
        name: value for name, value in finding.problem.params.items() if name != "where"}})
    return finding.case_code or "", _canonical(problem)


def _canonical(value: Text | str) -> str:
    return value if isinstance(value, str) else json.dumps(value.model_dump(mode="json"), sort_keys=True)


def _diagnosed(task: TaskResult) -> bool:
    """A task in which some check named a catalogued mistake: the student's mistake is known
    (the report ranks it), and the task's other failures are its consequences."""
    return any(check.finding is not None and check.finding.mistake is not None for check in task.checks)


CELL_BROKEN = {"cell_error", "cell_crashed", "deleted_cell"}  # the task's own solution cell did not run whole


def _cells_broken(result: SubmissionResult) -> set[str]:
    """The tasks whose solution cell raised, crashed or was deleted: their checks fail for that
    reason, which the student's result names; no behaviour to group."""
    return {issue.task for issue in [*result.errors, *result.warnings] if issue.code in CELL_BROKEN and issue.task}


def left_as_released(task: TaskResult) -> bool:
    """A task left as the template has it: grading said it was not attempted yet (its cell is the
    template's, or every check met the template's own ``raise NotImplementedError()``), as the
    student's feedback says it."""
    return task.not_attempted is not None


def _numbered(groups: list[Group], task_checks: dict[str, list[str]]) -> list[Group]:
    order = {place: i for i, place in enumerate((t, c) for t, checks in task_checks.items() for c in checks)}
    places = sorted(dict.fromkeys((g.task, g.check) for g in groups), key=lambda p: (order.get(p, len(order)), p))
    by_place: dict[tuple[str, str], list[Group]] = defaultdict(list)
    for group in groups:
        by_place[(group.task, group.check)].append(group)
    ordered = []
    for place in places:
        ranked = sorted(by_place[place], key=lambda g: (-len(g.students), g.students[0]))
        for number, group in enumerate(ranked, start=1):
            group.number = number
        ordered += ranked
    return ordered

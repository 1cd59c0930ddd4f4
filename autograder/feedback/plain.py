"""The feedback as plain text: one task's block is what a ``<task>_tests`` cell outputs (the
plain nbgrader path, ``in_kernel.py``, and the autograded notebook of an nbgrader course,
``gradebook/``); one check's finding is the JSON's ``message``. Formats a view; decides nothing.
"""
from ..results import CheckResult
from ..texts.say import Say
from .view import Code, Failure, IssueLine, Row, TaskView, check_line, failure

INDENT = "    "


def task_text(task: TaskView) -> str:
    """``masked_softmax: 1,5 / 3``, each failure once, then the other checks, one a line."""
    lines = [f"{task.id}: {task.score}"]
    lines += [INDENT + str(said) for said in (task.manual, task.summary) if said]
    for each in task.failures:
        lines += _failure(each)
    for check in task.others:
        lines.append(f"{check.verdict} {check.title} ({check.points})")
        lines += [INDENT + str(check.note)] if check.note else []
    return "\n".join(lines)


def _failure(each: Failure) -> list[str]:
    first = each.checks[0]
    if len(each.checks) == 1:
        head = [f"{first.verdict} {first.title} ({first.points})"]
    else:
        head = [f"{first.verdict} {each.heading}",
                *(f"{INDENT}- {check.title} ({check.points})" for check in each.checks)]
    return head + [INDENT + line for line in finding_lines(each)]


def finding_lines(each: Failure) -> list[str]:
    """The problem, then each row (and the likely mistake last)."""
    lines = [str(each.problem)] if each.problem else []
    for row in (*each.rows, *([each.mistake] if each.mistake else [])):
        lines += _row(row)
    return lines


def _row(row: Row) -> list[str]:
    if isinstance(row.value, Code) and row.value.block:
        return [f"{row.label}:", *(INDENT + line for line in row.value.text.splitlines())]
    value = row.value.text if isinstance(row.value, Code) else str(row.value)
    return [f"{row.label}: {value}"]


def check_message(check: CheckResult, say: Say) -> str:
    """One check's own finding in full (never merged with another's), or its note."""
    if check.passed or check.blocked_by is not None:
        return str(check_line(check, say).note)
    return "\n".join(finding_lines(failure([check], say, set())))


def issue_lines(lines: list[IssueLine]) -> list[str]:
    """``warning: message`` for each (the test cell's labels)."""
    return [f"{line.kind}: {line.message}" for line in lines]

"""The feedback as Markdown: ``DIR/feedback/<student_id>.md``. Formats a ``FeedbackView``;
decides nothing. Words are escaped and code is set in spans and fences (``..markdown``), so
no text from a submission can format anything.
"""
from .escape import fenced, inline_code, words
from ..texts.say import Prose
from .view import FAILED, NOT_JUDGED, PASSED, CheckLine, Code, FeedbackView, Failure, Issues, Row, TaskView

MARKS = {PASSED: "✔", FAILED: "✘", NOT_JUDGED: "–"}


def prose(said: Prose) -> str:
    return "".join(inline_code(part) if is_code else words(part) for is_code, part in said.pieces())


def feedback_markdown(view: FeedbackView) -> str:
    """The score, an overview of the tasks, each task's failures and checks, then the issues."""
    lines = [f"# {prose(view.title)}", "", f"**{prose(view.score)}**", "", prose(view.note), ""]
    if view.tasks:
        lines += [f"| {prose(view.columns[0])} | {prose(view.columns[1])} |", "|---|---:|",
                  *(f"| {inline_code(task.id)} | {prose(task.score)} |" for task in view.tasks), ""]
    lines += [prose(view.not_graded), ""] if view.not_graded else []
    for task in view.sections:
        lines += _task(task)
    for issues in (view.warnings, view.errors):
        lines += _issues(issues)
    return "\n".join(lines).rstrip("\n") + "\n"


def _task(task: TaskView) -> list[str]:
    if task.manual:
        return [f"## {inline_code(task.id)}", "", prose(task.manual), ""]
    lines = [f"## {inline_code(task.id)}: {prose(task.score)}", ""]
    lines += [prose(task.summary), ""] if task.summary else []
    for each in task.failures:
        lines += _failure(each)
    if task.others:
        lines += [_check(check) for check in task.others] + [""]
    return lines


def _check(check: CheckLine) -> str:
    note = f": {prose(check.note)}" if check.note else ""
    return f"- {MARKS[check.status]} {prose(check.title)} ({prose(check.points)}){note}"


def _failure(each: Failure) -> list[str]:
    first = each.checks[0]
    if len(each.checks) == 1:
        lines = [f"### {MARKS[first.status]} {prose(first.title)} ({prose(first.points)})", ""]
    else:
        lines = [f"### {MARKS[first.status]} {prose(each.heading)}", "",
                 *(f"- {prose(check.title)} ({prose(check.points)})" for check in each.checks), ""]
    lines += [prose(each.problem), ""] if each.problem else []
    rows = [*each.rows, *([each.mistake] if each.mistake else [])]
    for row in rows:
        lines += _row(row)
    return lines + ([""] if rows else [])


def _row(row: Row) -> list[str]:
    label = f"- {prose(row.label)}:"
    if isinstance(row.value, Code) and row.value.block:  # a fence inside the list item
        return [label, *("  " + line if line else "" for line in fenced(row.value.text))]
    value = inline_code(row.value.text) if isinstance(row.value, Code) else prose(row.value)
    return [f"{label} {value}"]


def _issues(issues: Issues) -> list[str]:
    if not issues.lines:
        return []
    items = [f"- {inline_code(line.code)}{f' ({inline_code(line.task)})' if line.task else ''}: "
             f"{prose(line.message)}" for line in issues.lines]
    return [f"## {prose(issues.heading)}", "", *items, ""]

"""What the autograded notebook says to the student: the text of each test cell's output.

A task's block is ``report.render_task_text``, the very text the plain nbgrader path's test
cell prints, so both paths show the same report; then the task's own errors and warnings.
Everything is rendered in the result's language and made valid UTF-8 (a student's exception
text may not be), as the autograder's own files are.
"""
from ..report import issue_message, render_task_text
from ..results import SubmissionResult, TaskResult, text
from ..store import clean_text
from ..texts import render


def task_report(task: TaskResult, result: SubmissionResult) -> str:
    """A task's test cell output: its score and checks, then the task's own errors and warnings."""
    lines = [render_task_text(task, result.language), *_issue_lines(result, lambda issue: issue.task == task.id)]
    return clean_text("\n".join(lines) + "\n")


def notes_report(result: SubmissionResult, test_tasks: set[str]) -> str:
    """The errors and warnings that belong to no test cell, or '' when there are none."""
    lines = _issue_lines(result, lambda issue: issue.task not in test_tasks)
    if not lines:
        return ""
    return clean_text("\n".join([render(text("gradebook.notes"), result.language), *lines]) + "\n")


def _issue_lines(result: SubmissionResult, wanted) -> list[str]:
    kinds = [("gradebook.error", issue) for issue in result.errors]
    kinds += [("gradebook.warning", issue) for issue in result.warnings]
    return [f"{render(text(kind), result.language)}: {issue_message(issue, result.language)}"
            for kind, issue in kinds if wanted(issue)]

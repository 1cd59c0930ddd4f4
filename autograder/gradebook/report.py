"""What the autograded notebook says to the student: the text of each test cell's output.

A task's block is ``feedback.plain.task_text``, the very text the plain nbgrader path's test
cell prints, so both paths show the same report; then the task's own errors and warnings.
Everything is rendered in the result's language and made valid UTF-8 (a student's exception
text may not be), as the autograder's own files are.
"""
from ..feedback import FeedbackView, Say
from ..feedback.plain import issue_lines, task_text
from ..results import SubmissionResult, TaskResult
from ..files import clean_text


def _view(result: SubmissionResult) -> FeedbackView:
    return FeedbackView.of(result, Say(result.language))


def task_report(task: TaskResult, result: SubmissionResult) -> str:
    """A task's test cell output: its score and checks, then the task's own errors and warnings."""
    view = _view(result)
    lines = [task_text(view.task(task.id)), *_issue_lines(view, lambda line: line.task == task.id)]
    return clean_text("\n".join(lines) + "\n")


def notes_report(result: SubmissionResult, test_tasks: set[str]) -> str:
    """The errors and warnings that belong to no test cell, or '' when there are none."""
    view = _view(result)
    lines = _issue_lines(view, lambda line: line.task not in test_tasks)
    if not lines:
        return ""
    return clean_text("\n".join([str(Say(result.language).text("gradebook.notes")), *lines]) + "\n")


def _issue_lines(view: FeedbackView, wanted) -> list[str]:
    return issue_lines([line for line in (*view.errors.lines, *view.warnings.lines) if wanted(line)])

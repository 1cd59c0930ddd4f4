"""What the autograded notebook says to the student: the text of each test cell's output.

Every word comes from the text catalogue (``autograder/texts/gradebook.py``), in the
language the result was graded in; check messages arrive already rendered in it.
"""
from ..results import SubmissionResult, TaskResult, text
from ..texts import render


def task_report(task: TaskResult, result: SubmissionResult) -> str:
    """A task's test cell output: its score, each check, then the task's own errors and warnings."""
    language = result.language
    lines = [render(text("gradebook.task_score", task=task.id, score=f"{task.score:g}",
                         max_score=f"{task.max_score:g}"), language)]
    for check in task.checks:
        lines.append(render(text("gradebook.check", mark="✔" if check.passed else "✘", name=check.name,
                                 score=f"{check.score:g}", max_score=f"{check.max_score:g}"), language))
        lines += ["    " + line for line in check.message.splitlines()]
    lines += _issue_lines(result, lambda issue: issue.task == task.id)
    return "\n".join(lines) + "\n"


def notes_report(result: SubmissionResult, test_tasks: set[str]) -> str:
    """The errors and warnings that belong to no test cell, or '' when there are none."""
    lines = _issue_lines(result, lambda issue: issue.task not in test_tasks)
    return "\n".join([render(text("gradebook.notes"), result.language), *lines]) + "\n" if lines else ""


def _issue_lines(result: SubmissionResult, wanted) -> list[str]:
    kinds = [("gradebook.error", issue) for issue in result.errors]
    kinds += [("gradebook.warning", issue) for issue in result.warnings]
    return [f"{render(text(kind), result.language)}: {issue.message}" for kind, issue in kinds if wanted(issue)]



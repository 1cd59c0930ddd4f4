"""The student's feedback page: ``DIR/feedback/<student_id>.html``. Formats a ``FeedbackView``
(``autograder/feedback/view.py``), as the Markdown and the test cell do; decides nothing.

The score, an overview of the tasks, each task's failures (each said once, in full) and then
its other checks as a short list, the warnings and errors; a failure that recorded attention
weights shows them as heatmaps, with the likely mistake under them.
"""
from pathlib import Path

from ..feedback.view import (FAILED, NOT_JUDGED, PASSED, CheckLine, Code, FeedbackView, Failure,
                             Figure, IssueLine, Issues, Row, TaskView, issue_message)
from ..results import Issue
from ..texts.say import Prose, Say
from .markup import code_block, document, esc, ident, image, prose, table, write_atomically

MARKS = {PASSED: '<span class="ok">✔</span>', FAILED: '<span class="bad">✘</span>',
         NOT_JUDGED: '<span class="none">–</span>'}


def write_student_page(view: FeedbackView, path: Path) -> Path:
    """Write ``view`` as one self-contained HTML page at ``path``."""
    write_atomically(path, student_page(view))
    return path


def student_page(view: FeedbackView) -> str:
    parts = [f"<header><h1>{prose(view.title)}</h1>",
             f'<p class="score">{prose(view.score)}</p>',
             f'<p class="note">{prose(view.note)}</p></header>']
    if view.tasks:
        said = {task.id for task in view.sections}   # a link only to a section there is
        rows = [[f'<a href="#task-{esc(task.id)}">{ident(task.id)}</a>' if task.id in said else ident(task.id),
                 prose(task.score)] for task in view.tasks]
        parts.append(table([prose(heading) for heading in view.columns], rows, (70, 30), numeric={1}))
    if view.not_graded:
        parts.append(f"<p>{prose(view.not_graded)}</p>")
    parts += [_task(task) for task in view.sections]
    parts += [_issues(issues) for issues in (view.warnings, view.errors)]
    return document(str(view.title), "".join(parts), view.language)


def _points(points: Prose) -> str:
    return f'<span class="pts">{prose(points)}</span>'


def _task(task: TaskView) -> str:
    head = f'<h2 id="task-{esc(task.id)}">{ident(task.id)}'
    if task.manual:
        return f"<section>{head}</h2><p>{prose(task.manual)}</p></section>"
    body = f"<p>{prose(task.summary)}</p>" if task.summary else ""
    body += "".join(_failure(each) for each in task.failures)
    if task.others:
        body += f'<ul class="passed">{"".join(_other(check) for check in task.others)}</ul>'
    return f"<section>{head} {_points(task.score)}</h2>{body}</section>"


def _failure(each: Failure) -> str:
    first = each.checks[0]
    if len(each.checks) == 1:
        head = f"<h3>{MARKS[first.status]} {prose(first.title)} {_points(first.points)}</h3>"
    else:
        items = "".join(f"<li>{prose(check.title)} {_points(check.points)}</li>" for check in each.checks)
        head = f"<h3>{MARKS[first.status]} {prose(each.heading)}</h3><ul>{items}</ul>"
    pictures = _pictures(each.figure)
    items = "".join(f"<dt>{prose(row.label)}</dt><dd>{_value(row)}</dd>" for row in each.rows)
    if each.mistake and pictures is None:  # else it is said under the pictures
        items += f'<dt>{prose(each.mistake.label)}</dt><dd><span class="mistake">{_value(each.mistake)}</span></dd>'
    problem = f'<p class="problem">{prose(each.problem)}</p>' if each.problem else ""
    figure = _figure(each.figure, pictures, each.mistake) if each.figure is not None else ""
    return f'<article class="check">{head}{problem}{f"<dl>{items}</dl>" if items else ""}{figure}</article>'


def _value(row: Row) -> str:
    if isinstance(row.value, Code):
        return code_block(row.value.text) if row.value.block else f"<code>{esc(row.value.text)}</code>"
    return prose(row.value)


def _pictures(figure: Figure | None) -> tuple[bytes, bytes] | None:
    if figure is None or figure.heatmap is None:
        return None
    from . import figures  # matplotlib on first use (a run imports it while its slots grade)
    return figures.attention_heatmaps(figure.heatmap, figure.titles, figure.axes, figure.colour)


def _figure(figure: Figure, pictures: tuple[bytes, bytes] | None, mistake: Row | None) -> str:
    """The student's weights beside the reference's, the likely mistake named under them; only
    the caption where they are not drawn here (drawn above, or not drawable)."""
    if pictures is None:
        return f'<p class="note">{prose(figure.caption)}</p>'
    verdict = (f'{prose(mistake.label)}: <span class="mistake">{_value(mistake)}</span>' if mistake
               else prose(figure.no_mistake))  # neither: the mistake was named above
    images = "".join(image(png, title) for png, title in zip(pictures, figure.titles, strict=True))
    return (f'<figure><div class="pair">{images}</div>'
            f"<figcaption>{prose(figure.caption)}{f'<br>{verdict}' if verdict else ''}</figcaption></figure>")


def _other(check: CheckLine) -> str:
    note = f' <span class="note">({prose(check.note)})</span>' if check.note else ""
    return f"<li>{MARKS[check.status]} {prose(check.title)} {_points(check.points)}{note}</li>"


def _issues(issues: Issues) -> str:
    if not issues.lines:
        return ""
    items = "".join(f"<li>{_issue(line)}</li>" for line in issues.lines)
    return f'<section><h2>{prose(issues.heading)}</h2><ul class="issues">{items}</ul></section>'


def _issue(line: IssueLine) -> str:
    task = f" (<code>{esc(line.task)}</code>)" if line.task else ""
    return f"<code>{esc(line.code)}</code>{task}: {prose(line.message)}"


# For the class report, which shows checks, mistakes and issues without a view of its own.
def check_title(name: str, language: str) -> str:
    return prose(Say(language).title(name))


def mistake_name(mistake: str, language: str) -> str:
    return prose(Say(language).mistake(mistake))


def issue_line(issue: Issue, language: str) -> str:
    """``code`` (task): the message, in ``language`` when the issue carries its catalogue text."""
    return _issue(IssueLine(Prose(), issue.code, issue.task, issue_message(issue, Say(language))))

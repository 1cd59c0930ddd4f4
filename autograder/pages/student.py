"""The student's feedback page: ``DIR/feedback/<student_id>.html``.

The Markdown feedback's content (score, each task, each failed check in full: the problem,
the smallest failing input as code, expected vs got, where it differs, the likely mistake;
warnings and errors), plus the attention weights as heatmaps where a check recorded them.
Failed checks come first in each task; passed ones follow as a short list. Checks that fail
with the same error and nothing to compare (an untouched task raises ``NotImplementedError``
in every check) are shown once, with the checks listed.
"""
from pathlib import Path

from .. import texts
from ..results import CheckResult, Finding, Issue, SubmissionResult, TaskResult, text
from . import figures
from .markup import (catalogued, code_block, document, esc, ident, image, number, say, table,
                     write_atomically)

WEIGHTS = text("term.attention_weights")
SHORT_VALUE = 40  # characters: a value this short reads best inline, beside its label


def write_student_page(result: SubmissionResult, path: Path, language: str) -> Path:
    """Write ``result`` as one self-contained HTML page at ``path`` (in ``language``: en or ru)."""
    write_atomically(path, student_page(result, language))
    return path


def student_page(result: SubmissionResult, language: str) -> str:
    parts = [_header(result, language)]
    if result.tasks:
        parts.append(_overview(result.tasks, language))
    parts += [_task(task, language) for task in result.tasks]
    parts.append(_issues("feedback.warnings", result.warnings, language))
    parts.append(_issues("feedback.errors", result.errors, language))
    return document(_title(result, language), "".join(parts), language)


def _title(result: SubmissionResult, language: str) -> str:
    return texts.render(text("feedback.title", student=result.student_id,
                             assignment=result.assignment), language)


def score_line(result: SubmissionResult, language: str) -> str:
    """The score as "autograded x / y, manual pending z" (the manual part only if there is one)."""
    if not result.tasks:  # an unreadable submission: nothing was split into tasks
        return say(text("feedback.score", score=number(result.score, language),
                        max=number(result.max_score, language)), language)
    line = say(text("feedback.score", score=number(result.autograded_score, language),
                    max=number(result.autograded_max, language)), language)
    if result.manual_max:
        manual = text("feedback.manual_pending", points=number(result.manual_max, language))
        line += "; " + say(manual, language)
    return line


def check_title(name: str, language: str) -> str:
    """A check's heading: the catalogue's ``title.<name>`` (its key in grader.yml otherwise)."""
    return catalogued(f"title.{name}", name, language)


def mistake_name(mistake: str, language: str) -> str:
    return catalogued(f"mistake.{mistake}", mistake, language)


def _header(result: SubmissionResult, language: str) -> str:
    return (f"<header><h1>{esc(_title(result, language))}</h1>"
            f'<p class="score">{score_line(result, language)}</p>'
            f'<p class="note">{say(text("feedback.public_note"), language)}</p></header>')


def _points(score: float | None, maximum: float, language: str) -> str:
    return f'<span class="pts">{number(score, language)} / {number(maximum, language)}</span>'


def _overview(tasks: list[TaskResult], language: str) -> str:
    rows = []
    for task in tasks:
        link = f'<a href="#task-{esc(task.id)}">{ident(task.id)}</a>'
        score = (say(text("page.manual_short"), language) if task.manual
                 else f"{number(task.score, language)} / {number(task.max_score, language)}")
        rows.append([link, score])
    headers = [say(text("term.task"), language), say(text("page.points"), language)]
    return table(headers, rows, (70, 30), numeric={1})


def _task(task: TaskResult, language: str) -> str:
    if task.manual:
        manual = text("page.manual", ta=text("term.ta"), max=number(task.max_score, language))
        return (f'<section><h2 id="task-{esc(task.id)}">{ident(task.id)}</h2>'
                f"<p>{say(manual, language)}</p></section>")
    head = (f'<h2 id="task-{esc(task.id)}">{ident(task.id)} '
            f"{_points(task.score, task.max_score, language)}</h2>")
    failed = [check for check in task.checks if not check.passed]
    passed = [check for check in task.checks if check.passed]
    body = "".join(_failed_group(group, language) for group in _group_same_error(failed, language))
    if passed:
        items = "".join(_passed_item(check, language) for check in passed)
        body += f'<ul class="passed">{items}</ul>'
    return f"<section>{head}{body}</section>"


def _group_same_error(failed: list[CheckResult], language: str) -> list[list[CheckResult]]:
    """Failed checks in order, those with the same bare error (no values to compare) merged."""
    groups: list[list[CheckResult]] = []
    by_problem: dict[str, list[CheckResult]] = {}
    for check in failed:
        finding = check.finding
        bare = finding is not None and (finding.expected, finding.got, finding.mistake,
                                        finding.heatmap) == (None, None, None, None)
        if not bare:
            groups.append([check])
            continue
        key = texts.render(finding.problem, language)
        if key not in by_problem:
            by_problem[key] = []
            groups.append(by_problem[key])
        by_problem[key].append(check)
    return groups


def _failed_group(group: list[CheckResult], language: str) -> str:
    first = group[0]
    if len(group) == 1:
        head = (f'<h3><span class="bad">✘</span> {check_title(first.name, language)} '
                f"{_points(first.score, first.max_score, language)}</h3>")
    else:
        items = "".join(f"<li>{check_title(c.name, language)} {_points(c.score, c.max_score, language)}</li>"
                        for c in group)
        head = (f'<h3><span class="bad">✘</span> {say(text("page.same_problem"), language)}</h3>'
                f"<ul>{items}</ul>")
    if first.finding is not None:  # a group's checks differ in what they check: their titles say it
        detail = _finding(first.finding, language, checked=len(group) == 1)
    else:
        detail = code_block(first.message) if first.message else ""
    return f'<article class="check">{head}{detail}</article>'


def _finding(finding: Finding, language: str, checked: bool = True) -> str:
    rows = []
    if finding.checked is not None and checked:
        rows.append(("feedback.checked", say(finding.checked, language)))
    if finding.case_code:
        rows.append(("feedback.input", code_block(finding.case_code)))
    for label, value in (("feedback.expected", finding.expected), ("feedback.got", finding.got)):
        if isinstance(value, str):   # a value: shown as code
            rows.append((label, _value(value)))
        elif value is not None:      # a description (a Text)
            rows.append((label, say(value, language)))
    if finding.difference is not None:
        rows.append(("feedback.where", say(finding.difference, language)))
    picture = _heatmap(finding, language) if finding.heatmap is not None else ""
    if finding.mistake is not None and not picture:
        rows.append(("feedback.mistake", f'<span class="mistake">{mistake_name(finding.mistake, language)}</span>'))
    items = "".join(f"<dt>{say(text(label), language)}</dt><dd>{value}</dd>" for label, value in rows)
    problem = f'<p class="problem">{say(finding.problem, language)}</p>'
    return f"{problem}<dl>{items}</dl>{picture}" if items else problem + picture


def _value(value: str) -> str:
    """A short one-line value inline, anything longer as a block."""
    if "\n" in value or len(value) > SHORT_VALUE:
        return code_block(value)
    return f"<code>{esc(value)}</code>"


def _heatmap(finding: Finding, language: str) -> str:
    """The student's weights beside the reference's, the likely mistake named under them."""
    titles = (texts.render(text("page.heatmap.yours", weights=WEIGHTS), language),
              texts.render(text("page.heatmap.reference", weights=WEIGHTS), language))
    axes = (texts.render(text("term.keys"), language), texts.render(text("term.queries"), language))
    pictures = figures.attention_heatmaps(finding.heatmap, titles, axes, texts.render(WEIGHTS, language))
    if pictures is None:
        return ""
    if finding.mistake is not None:
        verdict = (f'{say(text("feedback.mistake"), language)}: '
                   f'<span class="mistake">{mistake_name(finding.mistake, language)}</span>')
    else:
        verdict = say(text("page.heatmap.no_mistake"), language)
    caption = say(text("page.heatmap.caption"), language)
    images = "".join(image(png, title) for png, title in zip(pictures, titles, strict=True))
    return (f'<figure><div class="pair">{images}</div>'
            f"<figcaption>{caption}<br>{verdict}</figcaption></figure>")


def _passed_item(check: CheckResult, language: str) -> str:
    note = f' <span class="note">({say(check.note, language)})</span>' if check.note else ""
    return (f'<li><span class="ok">✔</span> {check_title(check.name, language)} '
            f"{_points(check.score, check.max_score, language)}{note}</li>")


def _issues(heading: str, issues: list[Issue], language: str) -> str:
    if not issues:
        return ""
    items = "".join(f"<li>{issue_line(issue, language)}</li>" for issue in issues)
    return f'<section><h2>{say(text(heading), language)}</h2><ul class="issues">{items}</ul></section>'


def issue_line(issue: Issue, language: str) -> str:
    """``code`` (task): the message, in ``language`` when the issue carries its catalogue text."""
    task = f" (<code>{esc(issue.task)}</code>)" if issue.task else ""
    message = say(issue.text, language) if issue.text is not None else esc(issue.message)
    return f"<code>{esc(issue.code)}</code>{task}: {message}"

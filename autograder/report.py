"""Rendering results as text for people: a check's message, the per-student Markdown
feedback, and a task's plain-text verdict (the nbgrader test cell's output).

Imports no torch: everything here is text. Student-controlled text (error messages, ids)
can hold Markdown: it goes into fences longer than any backtick run it contains, or onto
one escaped line, so it can never open a block of its own (a forged score, say).
"""
import re

from .results import CheckResult, Finding, Issue, SubmissionResult, TaskResult, text
from .texts import render

MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]<>()#+\-.!|~])")


def render_finding(finding: Finding, language: str) -> str:
    """A failed check: verdict first, then what was checked, the input, expected vs got, one hint."""
    def label(name: str) -> str:
        return render(text(f"feedback.{name}"), language)
    lines = [render(finding.problem, language)]
    if finding.checked is not None:
        lines.append(f"{label('checked')}: {render(finding.checked, language)}")
    if finding.case_code:
        lines += [f"{label('input')}:", *("    " + line for line in finding.case_code.splitlines())]
    for name in ("expected", "got"):
        value = getattr(finding, name)
        if value is not None:
            lines.append(f"{label(name)}: {render(value, language)}")
    if finding.difference is not None:
        lines.append(f"{label('where')}: {render(finding.difference, language)}")
    if finding.mistake is not None:
        lines.append(f"{label('mistake')}: {render(text('mistake.' + finding.mistake), language)}")
    return "\n".join(lines)


def check_message(check: CheckResult, language: str) -> str:
    if check.finding is not None:
        return render_finding(check.finding, language)
    return render(check.note, language)


def issue_message(issue: Issue, language: str) -> str:
    return render(issue.text, language) if issue.text is not None else issue.message


def fence(body: str, info: str = "text") -> list[str]:
    """A fenced block that ``body`` cannot close: longer than its longest backtick run."""
    longest = max((len(run) for run in re.findall(r"`+", body)), default=0)
    marks = "`" * max(3, longest + 1)
    return [f"{marks}{info}", body, marks]


def one_line(value: str) -> str:
    """Student text on one Markdown line, with nothing it could format."""
    return MARKDOWN_SPECIAL.sub(r"\\\1", " ".join(value.split()))


def score_line(result: SubmissionResult, language: str) -> str:
    line = render(text("feedback.score", score=f"{result.autograded_score:g}",
                       max=f"{result.autograded_max:g}"), language)
    if result.manual_max:
        line += "; " + render(text("feedback.manual_pending", points=f"{result.manual_max:g}"), language)
    return line


def feedback_markdown(result: SubmissionResult, language: str) -> str:
    """The student's feedback: score, then each task's failed checks in full."""
    title = text("feedback.title", student=result.student_id, assignment=result.assignment)
    lines = [f"# {one_line(render(title, language))}", "", f"**{score_line(result, language)}**", "",
             render(text("feedback.public_note"), language), ""]
    for task in result.tasks:
        lines += _task_markdown(task, language)
    for key in ("warnings", "errors"):
        issues: list[Issue] = getattr(result, key)
        if issues:
            lines += [f"## {render(text(f'feedback.{key}'), language)}", ""]
            lines += [f"- `{issue.code}`{' (' + issue.task + ')' if issue.task else ''}: "
                      f"{one_line(issue_message(issue, language))}" for issue in issues]
            lines.append("")
    return "\n".join(lines)


def _task_markdown(task: TaskResult, language: str) -> list[str]:
    if task.manual:
        heading = render(text("feedback.manual_task", points=f"{task.max_score:g}"), language)
        return [f"## {task.id}: {heading}", ""]
    lines = [f"## {task.id}: {task.score:g} / {task.max_score:g}", ""]
    for check, message, repeats in _grouped(task.checks, language):
        mark = "✔" if check.passed else "✘"
        lines.append(f"- {mark} {render(text('title.' + check.name), language)} ({check.score:g}/{check.max_score:g})")
        if message:
            same = [render(text("title." + c.name), language) for c in repeats]
            body = message + ("\n" + render(text("feedback.same_for", titles=", ".join(same)), language)
                              if same else "")
            lines += ["", *fence(body), ""]
    return lines + [""]


def _grouped(checks: list[CheckResult], language: str):
    """(check, message, later checks with the same message): a message said once per task.
    The later checks still get their own line, without the repeated message."""
    by_message: dict[str, list[CheckResult]] = {}
    for check in checks:
        message = check_message(check, language)
        if message and not check.passed:
            by_message.setdefault(message, []).append(check)
    said: set[str] = set()
    for check in checks:
        message = check_message(check, language)
        if message in said:
            yield check, "", []
            continue
        group = by_message.get(message, [check])
        said.add(message)
        yield check, message, [c for c in group if c is not check]


def render_task_text(task: TaskResult, language: str) -> str:
    """One task's checks as plain text (the nbgrader test cell's output)."""
    lines = [f"{task.id}: {task.score:g} / {task.max_score:g}"]
    for check in task.checks:
        verdict = render(text("feedback.pass" if check.passed else "feedback.fail"), language)
        lines.append(f"{verdict} {render(text('title.' + check.name), language)}")
        lines += ["    " + line for line in check_message(check, language).splitlines()]
    return "\n".join(lines)

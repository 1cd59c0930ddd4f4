"""Do the three writers of one feedback view (the HTML page, the Markdown, a test cell's plain
text) say the same thing for every graded variant of the mutation suite, in both languages:
the same numbers, the same findings in the same order, each failure once?"""
import re

import mistune
import pytest

from autograder.feedback import FeedbackView, Say
from autograder.feedback.markdown import feedback_markdown
from autograder.feedback.plain import task_text
from autograder.feedback.view import Code, Row, TaskView
from autograder.pages import figures, student
from autograder.results import SubmissionResult
from autograder.texts import LANGUAGES
from tests.pages.prose import shown_text

from .harness import ASSIGNMENT_OF, grade
from .report import ALL_MUTANTS

POINTS = re.compile(r"\d+(?:[.,]\d+)? / \d+(?:[.,]\d+)?")


@pytest.fixture(autouse=True)
def no_drawing(monkeypatch):
    """The pictures are not what is compared here: stand-ins, not 0.3 s of matplotlib each."""
    monkeypatch.setattr(figures, "attention_heatmaps", lambda *args: (b"\x89PNG", b"\x89PNG"))


def flat(value: object) -> str:
    """Text as every writer shows it: backticks (code marks) dropped, whitespace runs one space."""
    return " ".join(str(value).replace("`", "").split())


def _value(row: Row) -> str:
    return row.value.text if isinstance(row.value, Code) else str(row.value)


def said(task: TaskView) -> list[str]:
    """What the view says about the task, in its order: points, each failure's checks, problem
    and rows (the likely mistake last), then the other checks with their notes."""
    parts = [str(task.score), str(task.summary)]
    for failure in task.failures:
        parts += [part for check in failure.checks for part in (str(check.title), str(check.points))]
        rows = [*failure.rows, *([failure.mistake] if failure.mistake else [])]
        parts += [str(failure.problem), *(part for row in rows for part in (str(row.label), _value(row)))]
    for check in task.others:
        parts += [str(check.title), str(check.points), str(check.note)]
    return [flat(part) for part in parts if flat(part)]


def in_order(parts: list[str], text: str) -> list[str]:
    """The parts that ``text`` does not show after the ones before them (empty: all in order)."""
    missing, position = [], 0
    for part in parts:
        found = text.find(part, position)
        if found < 0:
            missing.append(part)
        else:
            position = found + len(part)
    return missing


def sections(view: FeedbackView, task_id: str) -> dict[str, str]:
    """The task's section as each writer shows it, as text."""
    page = student.student_page(view)
    html = re.search(rf'<section><h2 id="task-{re.escape(task_id)}".*?</section>', page, re.S).group(0)
    markdown = feedback_markdown(view).split(f"\n## `{task_id}`", 1)[1].split("\n## ", 1)[0]
    return {"html": flat(shown_text(html)), "markdown": flat(shown_text(mistune.html(f"## `{task_id}`" + markdown))),
            "plain": flat(task_text(view.task(task_id)))}


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("mutant", [pytest.param(m, id=m.id) for m in ALL_MUTANTS if m.sandbox_only is None])
def test_writers_say_the_same(mutant, language):
    """Does each writer show the view's points, findings and rows in the view's order, the same
    numbers as the others, and each failure's problem as often as the others (once)?"""
    task = grade(mutant)
    result = SubmissionResult(student_id=mutant.id, assignment=ASSIGNMENT_OF[mutant.task_id],
                              score=task.score, max_score=task.max_score, tasks=[task])
    view = FeedbackView.of(result, Say(language))
    shown = sections(view, task.id)
    expected = said(view.task(task.id))
    assert {writer: in_order(expected, text) for writer, text in shown.items()} == dict.fromkeys(shown, [])
    numbers = {writer: POINTS.findall(text) for writer, text in shown.items()}
    assert numbers["html"] == numbers["markdown"] == numbers["plain"]
    for failure in view.task(task.id).failures:
        problem = flat(failure.problem)
        assert {text.count(problem) for text in shown.values()} == {sum(flat(f.problem) == problem
                                                                        for f in view.task(task.id).failures)}

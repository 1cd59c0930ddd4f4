"""Do the three writers of one feedback view (the HTML page, the Markdown, a test cell's plain
text) say the same thing for every graded variant of the mutation suite, in both languages:
the same numbers, the same findings in the same order, each failure once? And what do they say
(issue 47): no type name, repr or internal word of the grader's, no sentence twice in a task, and
the released template, handed in as is, in one line per task?"""
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

from .harness import ASSIGNMENT_OF, TASK_IDS, Mutant, grade, settings
from .report import ALL_MUTANTS

POINTS = re.compile(r"\d+(?:[.,]\d+)? / \d+(?:[.,]\d+)?")
GRADED = [pytest.param(m, id=m.id) for m in ALL_MUTANTS if m.sandbox_only is None]
# The grader's own words, which a student cannot act on: its types (what stays in the worker,
# its errors and results), a repr, the emulated device's name, the seed of its weights. A
# Python type name inside a student's own error message ("'NoneType' object has no attribute")
# is the student's.
OURS = re.compile(r"\b(?:Opaque|Handle|Named|StudentError|WorkerLost|CheckFailed|CheckBlocked|Finding|"
                  r"CheckResult|TaskResult|Prose)\b|(?<!')\bNoneType\b|object at 0x|<bound method|<function |"
                  r"\blazy\b|\bmeta (?:device|tensor)\b|\bText\(id=|\bseed = \d|"
                  r"\b(?:got|получено:?) `?(?:list|tuple|dict|method|function|int|float|str|bool)\b")
TYPE_NAMES = {"list", "tuple", "dict", "method", "function", "builtin_function_or_method", "NoneType", "int",
              "float", "str", "bool", "Tensor"}  # what an expected or got value must never be, bare


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


def shown_for(task, language: str) -> tuple[FeedbackView, dict[str, str]]:
    """The view of a result holding ``task`` alone, and its section as each writer shows it."""
    result = SubmissionResult(student_id="s1", assignment=ASSIGNMENT_OF[task.id], score=task.score,
                              max_score=task.max_score, tasks=[task])
    view = FeedbackView.of(result, Say(language))
    return view, sections(view, task.id)


def sentences(task: TaskView) -> list[str]:
    """What the task says in sentences: each failure's problem, its rows said in words, its likely
    mistake, and the other checks' notes (a pointer to a note above is no sentence of its own)."""
    above = {flat(Say(language).text("feedback.note_above")) for language in LANGUAGES}
    said = []
    for failure in task.failures:
        rows = [*failure.rows, *([failure.mistake] if failure.mistake else [])]
        said += [flat(failure.problem), *(flat(row.value) for row in rows if not isinstance(row.value, Code))]
    said += [flat(check.note) for check in task.others if flat(check.note) not in above]
    return [sentence for sentence in said if len(sentence.split()) >= 3]


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("mutant", GRADED)
def test_no_word_of_the_graders_reaches_a_student(mutant, language):
    """Issue 47: "got: Opaque" for an attention_weights method without @property, "got: list" for a
    decoder that kept no weights, "lazy:0" for the device the check emulates. Does every writer show
    every variant with no type name, repr or internal word of the grader's, and no expected or got
    value that is a bare type name?"""
    view, shown = shown_for(grade(mutant), language)
    assert {writer: OURS.findall(text) for writer, text in shown.items()} == dict.fromkeys(shown, [])
    values = [row.value.text for failure in view.task(mutant.task_id).failures for row in failure.rows
              if isinstance(row.value, Code)]
    assert [value for value in values if value.strip("`") in TYPE_NAMES] == []


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("mutant", GRADED)
def test_no_sentence_is_said_twice_in_a_task(mutant, language):
    """Issue 47: the same likely mistake under each failure, the same note under each passed check,
    one problem on four inputs said four times. Does each writer say each sentence of a task once?"""
    view, shown = shown_for(grade(mutant), language)
    said = sentences(view.task(mutant.task_id))
    twice = {writer: sorted({s for s in said if text.count(s) != 1}) for writer, text in shown.items()}
    assert twice == dict.fromkeys(shown, [])


def released(task_id: str) -> Mutant:
    """The task's solution cell as the released template has it, handed in as is."""
    return Mutant(task_id, "as_released", settings(ASSIGNMENT_OF[task_id]).templates[task_id], correct=False)


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("task_id", TASK_IDS)
def test_the_released_template_is_one_line_per_task(task_id, language):
    """Issue 47: the template handed in as is took 130 lines of Markdown, "smallest failing input" ten
    times and a 5x4 tensor per device check, to say that its stubs raised. Is each task "not
    attempted yet" in one line under its heading, in every writer, with no word of the grader's?"""
    task = grade(released(task_id))
    assert task.not_attempted is not None and task.score == 0 and task.checks
    view, shown = shown_for(task, language)
    assert {writer: OURS.findall(text) for writer, text in shown.items()} == dict.fromkeys(shown, [])
    page = student.student_page(view)
    section = re.search(rf'<section><h2 id="task-{task_id}">.*?</section>', page, re.S).group(0)
    assert section.count("<p>") == 1 and not re.search("<(?:li|h3|dl|pre)", section)
    markdown = feedback_markdown(view).split(f"\n## `{task_id}`", 1)[1].split("\n## ", 1)[0]
    assert len([line for line in markdown.splitlines()[1:] if line.strip()]) == 1
    assert len(task_text(view.task(task_id)).splitlines()) == 2  # "task: 0 / 3", then the one line


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("mutant", GRADED)
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

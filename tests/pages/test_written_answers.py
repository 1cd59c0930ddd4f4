"""The written answers for a TA grading outside nbgrader (SPEC §6): read from the submission by
the one bounded reader, kept beside the result, drawn on ``answers.html`` as safely as the
feedback pages, and a ``manual_points.csv`` to fill that never replaces the TA's own.

Hostile answers first: HTML, a script, ``data:`` and ``javascript:`` URLs, a 10 MB answer,
LaTeX that never ends, an id that looks like a formula. Then what each costs, at 1x, 10x and
100x (tests/pages/growth.py)."""
import csv
import io
import json
import re
from html.parser import HTMLParser
from pathlib import Path

import nbformat
import pytest

from autograder.grading.pipeline import written_answers
from autograder.outputs import answers
from autograder.outputs.manual_points import FILE, Tasks, read_manual_points, write_blank
from autograder.pages.answers import AS_RELEASED, NO_CELL, NOT_READ, answers_page
from autograder.pages.student_markdown import answer_html
from autograder.results import Issue, SubmissionResult, TaskResult, WrittenAnswer
from autograder.submissions.reading import ANSWER_LENGTH, MAX_ANSWER_CHARS, read_kept

from .browser import PHONE_WIDTH
from .growth import assert_linear, measure

REPO = Path(__file__).resolve().parents[2]
SOURCE = nbformat.read(REPO / "assignments" / "attention_scoring" / "attention_scoring.ipynb", as_version=4)
TASK, MB = "cost_analysis", 1 << 20
TASKS = Tasks("attention_scoring", {TASK: 2.0}, ["masked_softmax"])
QUESTIONS = answers.questions_of(SOURCE, TASKS.manual)

HOSTILE = {
    "script": "<script>document.title='pwned'</script>",
    "onerror": '<img src=x onerror="alert(1)"> <svg onload=alert(1)>',
    "style": "<style>body{display:none}</style><b>bold?</b>",
    "iframe": '<iframe src="http://evil.example/"></iframe>',
    "javascript link": "[click](javascript:alert(1)) [also](JaVaScRiPt:alert(1))",
    "data link": "[data](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
    "data image": "![pixel](data:image/png;base64," + "iVBORw0KGgo" * 100 + ")",
    "outside image": "![tracker](http://evil.example/pixel.png)",
    "autolink": "<http://evil.example/> <javascript:alert(1)>",
    "reference link": "[x][r]\n\n[r]: http://evil.example/ \"title\"",
    "html entity": "&lt;script&gt;alert(1)&lt;/script&gt; &#60;script&#62;",
    "unending latex": "$$\\frac{1}{\\sqrt{d}} \\sum_{i" + "x" * 5000,
    "latex with html": "$<script>alert(1)</script>$ and $$<img src=x onerror=alert(1)>$$",
    "control characters": "\u202e reversed \x1b[2J \x00 nul",
}
# What Markdown may become: formatting only. No tag here runs, navigates or loads anything.
FORMATTING = {"p", "strong", "em", "code", "pre", "ul", "ol", "li", "blockquote", "h1", "h2", "h3", "h4", "h5",
              "h6", "hr", "br", "table", "thead", "tbody", "tr", "th", "td", "span", "s"}
ALIGN = re.compile(r"text-align:(left|right|center)")


class Tags(HTMLParser):
    """Every tag and attribute an HTML fragment holds, as a browser's parser sees them."""

    def __init__(self, fragment: str):
        super().__init__()
        self.found: list[tuple[str, list[tuple[str, str | None]]]] = []
        self.feed(fragment)
        self.close()

    def handle_starttag(self, tag, attrs):
        self.found.append((tag, attrs))


def assert_inert(fragment: str) -> None:
    """Only formatting tags, with a class (or a table cell's alignment) as their only attribute."""
    for tag, attrs in Tags(fragment).found:
        assert tag in FORMATTING, (tag, attrs)
        for name, value in attrs:
            assert name == "class" or (name == "style" and tag in ("th", "td") and ALIGN.fullmatch(value or "")), \
                (tag, name, value)


@pytest.mark.parametrize("name", HOSTILE)
def test_a_hostile_answer_is_text_on_the_page(name):
    """Is every tag, handler, link and image of a student's answer shown as text: nothing that
    runs, navigates or loads (the pages' policy forbids scripts too, but no escape is missed)?"""
    rendered = answer_html(HOSTILE[name])
    assert_inert(rendered)
    assert "\x1b" not in rendered and "\u202e" not in rendered and "\x00" not in rendered


def test_markdown_and_latex_read_as_in_jupyter():
    """Emphasis, lists, tables and code formatted; LaTeX shown as its source, in a code span,
    with the characters markdown would eat (``*``, ``_``) kept; a link's address shown."""
    rendered = answer_html("**cost** $a_1 * b_2$ and\n\n$$\\frac{1}{2}$$\n\n- one\n- two\n\n| a | b |\n|---|---|\n"
                           "| 1 | 2 |\n\n`code` [FlashAttention](https://arxiv.org/abs/2205.14135)")
    assert "<strong>cost</strong>" in rendered and "<li>one</li>" in rendered and "<td>1</td>" in rendered
    assert '<code class="tex">$a_1 * b_2$</code>' in rendered
    assert '<code class="tex">$$\\frac{1}{2}$$</code>' in rendered
    assert '<span class="link">FlashAttention</span> <code class="url">https://arxiv.org/abs/2205.14135</code>' \
        in rendered


def notebook_with(*cells: dict) -> bytes:
    return json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": list(cells)}).encode()


def markdown(source, gid: str | None = None, **extra) -> dict:
    meta = {"nbgrader": {"grade_id": gid, "solution": True, "grade": True, "points": 2}} if gid else {}
    return {"cell_type": "markdown", "metadata": meta, "source": source, **extra}


def test_the_reader_keeps_the_written_answer_and_no_other_text():
    """Does the one reader keep the answer cell's text (as a list of lines too), the first cell of
    that grade id only, no other text cell's, and no length a student wrote into the cell?"""
    data = read_kept(io.BytesIO(notebook_with(
        markdown("the question", "cost_analysis_question"), markdown("a note of mine"),
        markdown(["My answer:\n", "$O(n^2)$"], TASK, **{ANSWER_LENGTH: 5}), markdown("a second copy", TASK))),
        MB, frozenset({TASK}))
    cells = json.loads(data)["cells"]
    assert [c["source"] for c in cells] == ["", "", "My answer:\n$O(n^2)$", ""]
    assert ANSWER_LENGTH not in cells[2]
    notebook = nbformat.from_dict(json.loads(data))
    assert written_answers(notebook, frozenset({TASK})) == {TASK: WrittenAnswer(text="My answer:\n$O(n^2)$", length=19)}


def test_a_10_mb_answer_is_cut_and_costs_the_student_nothing():
    """A 10 MB answer: the notebook is read under a 4 MB limit (the answer never counts against
    what grading keeps beyond its cut), and the answer keeps its first MAX_ANSWER_CHARS with its
    whole length, for the page's note."""
    long = "word " * (2 * MB)
    data = read_kept(io.BytesIO(notebook_with(markdown(long, TASK))), 4 * MB, frozenset({TASK}))
    assert len(data) < 2 * MAX_ANSWER_CHARS
    [answer] = written_answers(nbformat.from_dict(json.loads(data)), frozenset({TASK})).values()
    assert len(answer.text) == MAX_ANSWER_CHARS and answer.length == len(long) and answer.cut


def result_of(student: str, errors: list[Issue] | None = None, checked: bool = True) -> SubmissionResult:
    tasks = [TaskResult(id="masked_softmax", score=1.0, max_score=3.0, checks=[] if not checked else [
                 {"name": "output shape", "passed": True, "score": 1.0, "max_score": 1.0}]),
             TaskResult(id=TASK, score=None, max_score=2.0, manual=True)]
    return SubmissionResult(student_id=student, assignment="attention_scoring", score=1.0, max_score=5.0,
                            tasks=tasks, errors=errors or [], notebook=f"{student}.ipynb")


def class_page(folder: Path, language: str = "en") -> str:
    """A class of five answers, one of each kind, written as the store writes them."""
    unread = Issue(code="invalid_notebook", message="broken.ipynb is not a valid notebook (premature EOF)")
    given = {"=SUM(1+1)": "The cost is $O(n^2)$.", "kim": HOSTILE["script"] + HOSTILE["onerror"],
             "long": "word " * (2 * MB), "sidorov": QUESTIONS[0].released}
    results = [result_of(sid) for sid in given] + [result_of("nocell"), result_of("broken", [unread], False)]
    for sid, source in given.items():
        cut = source[:MAX_ANSWER_CHARS]
        answers.save(folder, sid, {TASK: WrittenAnswer(text=cut, length=len(source))})
    answers.save(folder, "nocell", {})
    page = answers.write_page(folder, results, {"=SUM(1+1)": {TASK: 1.5}}, QUESTIONS, language)
    return page.read_text(encoding="utf-8")


def test_the_page_shows_each_answer_with_its_points_and_what_is_odd_about_it(tmp_path):
    page = class_page(tmp_path)
    assert "1.5 / 2 entered" in page and page.count("not entered yet (up to 2)") == 5
    assert "in <code>manual_points.csv</code>: <code>&#x27;=SUM(1+1)</code>" in page   # the id as the CSV has it
    assert "Left as released: the student did not answer" in page
    assert "No answer cell: the notebook <code>nocell.ipynb</code> has no cell with the grade id" in page
    assert "could not be read: <code>broken.ipynb is not a valid notebook (premature EOF)</code>" in page
    assert f"The answer is {2 * MB * 5} characters long; its first {MAX_ANSWER_CHARS} are shown" in page
    assert "Задача 6" in page and "TA rubric" in page          # the question and the rubric from the source
    body = page[page.index("<body>"):]
    assert {tag for tag, _ in Tags(body).found} <= FORMATTING | {"body", "main", "header", "h1", "nav", "a", "section",
                                                                "details", "summary", "div", "article", "small", "wbr"}
    assert all(value.startswith("#") for tag, attrs in Tags(body).found if tag == "a" for name, value in attrs
               if name == "href")                         # the page's own anchors only
    assert 'content="default-src \'none\'' in page          # the pages' policy: no script, no fetch


def test_the_page_in_russian(tmp_path):
    page = class_page(tmp_path, "ru")
    assert "Письменные ответы: attention_scoring" in page and "выставлено 1,5 / 2" in page
    assert "Оставлено как в шаблоне" in page and "Нет ячейки ответа" in page


def test_the_page_with_no_results_says_so():
    assert "No results yet." in answers_page([], "attention_scoring", "en")


def test_states_of_an_answer(tmp_path):
    class_page(tmp_path)
    view = answers.answers_view(tmp_path, [result_of("sidorov"), result_of("nocell"),
                                           result_of("broken", [Issue(code="x", message="m")], False)],
                                {}, QUESTIONS)
    assert [entry.state for entry in view[0].entries] == [NOT_READ, NO_CELL, AS_RELEASED]


def test_manual_points_is_written_for_the_ta_and_never_over_their_file(tmp_path):
    """Is a blank manual_points.csv written with a row per student and written task (ids as
    grades.csv writes them, points empty, read back as no points), and is a file the TA has
    never replaced, even one written since?"""
    assert write_blank(tmp_path, ["petrova", "=SUM(1+1)", "ivanov"], TASKS) == tmp_path / FILE
    with open(tmp_path / FILE, newline="", encoding="utf-8") as handle:
        assert list(csv.reader(handle)) == [["student_id", "task", "points"], ["'=SUM(1+1)", TASK, ""],
                                            ["ivanov", TASK, ""], ["petrova", TASK, ""]]
    assert read_manual_points(tmp_path, TASKS).points == {}
    (tmp_path / FILE).write_text("student_id,task,points\nivanov,cost_analysis,2\n", encoding="utf-8")
    assert write_blank(tmp_path, ["ivanov", "kim"], TASKS) is None
    assert read_manual_points(tmp_path, TASKS).points == {"ivanov": {TASK: 2.0}}
    assert not list(tmp_path.glob(".*.tmp"))


def test_the_page_costs_time_and_memory_in_proportion_to_the_class(tmp_path):
    """The same answers at 1x, 10x and 100x students: does drawing answers.html grow linearly?"""
    source = "The cost is $O(BQK(d+v))$; **memory-bound**.\n\n- a\n- b\n" * 20
    kept = {TASK: WrittenAnswer(text=source, length=len(source))}
    for index in range(200):
        answers.save(tmp_path, f"s{index:03d}", kept)

    def draw(scale: int) -> str:
        results = [result_of(f"s{index:03d}") for index in range(2 * scale)]
        view = answers.answers_view(tmp_path, results, {}, QUESTIONS)
        return answers_page(view, "attention_scoring", "en")
    assert_linear(measure(draw))


@pytest.mark.parametrize("unit", ["[", "![", "*a", "a\n", "$", "$$a", "$`a ", "|a|\n|-|\n", "<a", "> ", "\\",
                                  "word "])
def test_an_answer_costs_time_and_memory_in_proportion_to_its_length(unit):
    """Adversarial Markdown and LaTeX at 1x, 4x and 16x, up to the cut (below about a thousand
    characters markdown-it-py's own cost per character still grows a little, measured: 1 ms for
    a hundred "[", 16 ms for 800, then 20 µs a character), so from a sixteenth of it: linear?"""
    def render(scale: int) -> str:
        return answer_html(unit * (MAX_ANSWER_CHARS // 16 // len(unit) * scale))
    assert_linear(measure(render, scales=(1, 4, 16)))


@pytest.mark.parametrize("language", ["en", "ru"])
@pytest.mark.parametrize("width", [1280, PHONE_WIDTH])
def test_the_page_in_chromium_runs_nothing_loads_nothing_and_fits(browser, tmp_path, language, width):
    """Headless Chromium at a laptop's and a phone's width: no console error, no request but the
    file itself, no script and no image (the student's <img>, data: and outside images are text),
    the hostile answer shown as its characters, nothing wider than the window."""
    class_page(tmp_path, language)
    page = tmp_path / answers.PAGE
    tab = browser.new_tab(width)
    console, requests = [], []
    tab.on("console", lambda message: console.append(message.text) if message.type in ("error", "warning") else None)
    tab.on("pageerror", lambda error: console.append(str(error)))
    tab.on("request", lambda request: requests.append(request.url))
    tab.goto(page.resolve().as_uri(), wait_until="load")
    assert console == [] and requests == [page.resolve().as_uri()]
    assert tab.evaluate("() => [document.scripts.length, document.images.length, document.links.length]")[:2] == [0, 0]
    assert tab.title().startswith("Written answers" if language == "en" else "Письменные ответы")
    shown = tab.evaluate("() => document.body.innerText")
    assert "<script>document.title='pwned'</script>" in shown and '<img src=x onerror="alert(1)">' in shown
    widths = tab.evaluate("() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]")
    assert widths[0] <= widths[1], widths
    tab.screenshot(path=str(tmp_path / f"answers-{width}-{language}.png"), full_page=True)
    tab.close()
    assert (tmp_path / f"answers-{width}-{language}.png").read_bytes().startswith(b"\x89PNG")

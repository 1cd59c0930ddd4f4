"""The student's HTML feedback page, rendered by a real Chromium at a phone's width."""
import re

import pytest

from autograder.feedback import FeedbackView, Say
from autograder.pages import write_student_page
from autograder.pages.figures import attention_heatmaps
from autograder.pages.markup import say
from autograder.pages.student import student_page as page_of
from autograder.results import Heatmap, Issue, SubmissionResult, text
from autograder.texts import render

from . import samples
from .prose import LATIN_SENTENCE
from .browser import PHONE_WIDTH

PNG = b"\x89PNG\r\n\x1a\n"


def view(result: SubmissionResult, language: str) -> FeedbackView:
    return FeedbackView.of(result, Say(language))


def student_page(result: SubmissionResult, language: str) -> str:
    return page_of(view(result, language))


@pytest.mark.parametrize("language", ["en", "ru"])
def test_page_renders_cleanly_on_a_phone(browser, tmp_path, language):
    """Does Chromium show the page with no console error, both heatmaps decoded, no fetch
    beyond the file itself, and nothing wider than a 400 px phone?"""
    page = write_student_page(view(samples.submission(), language), tmp_path / "feedback" / "s1.html")
    screenshot = tmp_path / f"s1.{language}.png"
    shown = browser.render(page, screenshot)
    assert shown.console == []
    assert len(shown.images) == 2
    assert all(width > 0 and height > 0 for width, height in shown.images)
    assert shown.widths["document"] <= PHONE_WIDTH and shown.widths["body"] <= PHONE_WIDTH
    assert shown.requests == [page.resolve().as_uri()]
    assert screenshot.read_bytes().startswith(PNG)


def test_student_text_is_shown_and_never_run(browser, tmp_path):
    """Does a `<script>` or `<img onerror>` in a student's error message appear as text,
    without running or adding an element?"""
    result = samples.submission()
    page = write_student_page(view(result, "en"), tmp_path / "s1.html")
    shown = browser.render(page, tmp_path / "s1.png")
    assert shown.scripts == 0
    assert shown.title == render(text("feedback.title", student="s1", assignment=result.assignment), "en")
    assert samples.HOSTILE in shown.text
    assert len(shown.images) == 2   # the two heatmaps; the student's <img> is text


def test_hostile_student_id_is_escaped():
    """Is a student id full of markup written as text in the title and the heading?"""
    html = student_page(samples.submission(samples.HOSTILE), "en")
    assert "<script>" not in html
    assert "&lt;script&gt;document.title=&#x27;pwned&#x27;&lt;/script&gt;" in html


def test_heatmaps_with_the_mistake_named_under_them():
    """Does a failed check with recorded weights show the student's and the reference's
    heatmaps, with the likely mistake in the caption under them?"""
    html = student_page(samples.submission(), "en")
    figures = re.findall(r"<figure>(.*?)</figure>", html, re.S)
    assert len(figures) == 1
    images, caption = figures[0].split("<figcaption>")
    assert images.count('<img src="data:image/png;base64,') == 2
    assert render(text("mistake.no_sqrt"), "en") in caption


def test_no_heatmap_without_recorded_weights():
    """Is there no picture when no failed check recorded attention weights?"""
    html = student_page(samples.submission(sqrt_bug=False), "en")
    assert "<img" not in html and "<figure>" not in html


def test_finding_in_full():
    """Does the failed check show its problem, what was checked, the smallest failing input
    as code, expected vs got, and its title?"""
    html = student_page(samples.submission(), "ru")
    finding = samples.dot_product_no_sqrt()
    for part in (render(finding.problem, "ru"), render(finding.checked, "ru"),
                 render(text("title.matches the reference"), "ru")):
        assert part in html
    assert f"<pre><code>{finding.case_code}</code></pre>" in html
    assert f"<dd><code>{finding.expected}</code></dd>" in html
    assert f"<dd><code>{finding.got}</code></dd>" in html


def test_task_not_attempted_is_one_line():
    """Issue 47: does a task left as released say "not attempted yet" once, in one paragraph under
    its heading, and list none of its checks?"""
    html = student_page(samples.submission(), "en")
    section = re.search(r'<section><h2 id="task-masked_softmax">.*?</section>', html, re.S).group(0)
    assert section.count("<p>") == 1 and html.count("NotImplementedError") == 1
    assert say(text("task.not_attempted"), "en") in section
    for name in samples.TASK_CHECKS["masked_softmax"]:
        assert render(text(f"title.{name}"), "en") not in html


def test_score_keeps_manual_points_apart():
    """Is the score "autograded x / y" with the written answers' points pending, in each language?"""
    english = student_page(samples.submission(), "en")
    russian = student_page(samples.submission(), "ru")
    assert "autograded 1 / 4; " + render(text("feedback.manual_pending", points="2"), "en") in english
    assert render(text("feedback.score", score="1", max="4"), "ru") in russian


def test_unreadable_submission_gets_a_page():
    """Does a submission that could not be read get a page with its score and the reason?"""
    result = SubmissionResult(student_id="frank", assignment="attention_scoring", score=0.0, max_score=6.0,
                              errors=[Issue(code="not_utf8", text=text("issue.not_utf8", name="f.ipynb", position=3))])
    html = student_page(result, "ru")
    assert render(text("feedback.score", score="0", max="6"), "ru") in html
    assert say(text("issue.not_utf8", name="f.ipynb", position=3), "ru") in html  # the name as code


def test_russian_page_reads_in_russian(browser, tmp_path):
    """Outside code, does the Russian page have no run of three Latin-script words (an
    English sentence left untranslated)?"""
    shown = browser.render(write_student_page(view(samples.readable(), "ru"), tmp_path / "s1.html"), tmp_path / "s1.png")
    english = LATIN_SENTENCE.findall(shown.prose)
    assert english == []
    assert "веса внимания" in shown.prose


def test_heatmaps_of_different_shapes_are_both_drawn():
    """When the student's weights have the wrong shape, are both matrices still drawn?"""
    heatmap = Heatmap(got=[[0.5, 0.5, 0.0, 0.0]] * 3, expected=[[0.2] * 5] * 3)
    pictures = attention_heatmaps(heatmap, ("yours", "reference"), ("keys", "queries"), "weights")
    assert pictures is not None and all(png.startswith(PNG) for png in pictures)


BIG = 1.7976931348623157e308  # the largest float
EXTREMES = {  # weights a student's code can return (a check records them as they are)
    "nan and inf": ([[float("nan"), float("inf")], [0.5, 0.5]], True),
    "all nan": ([[float("nan")] * 2] * 2, True),
    "minus inf": ([[-float("inf"), 1.0]], True),
    "largest float": ([[BIG, 0.5]], False),
    "minus the largest float": ([[-BIG, 0.5]], False),
    "both largest floats": ([[BIG, -BIG]], False),
    "within 1e307": ([[5e306, -5e306]], True),
    "a quarter of the largest float": ([[BIG / 4, 0.0]], False),
    "huge": ([[1e300, -1e300]], True),
    "tiny": ([[5e-324, -5e-324]], True),
    "large value among nan": ([[BIG, float("nan")]], False),
}


@pytest.mark.parametrize("name", sorted(EXTREMES))
def test_any_weights_are_drawn_or_skipped_never_raise(name):
    """Are any weights, finite or not, drawn (NaN and inf grey), or skipped when no colour scale
    can hold them (±1.8e308: matplotlib's scale overflows), instead of raising while the page
    is written?"""
    got, drawable = EXTREMES[name]
    heatmap = Heatmap(got=got, expected=[[1.0, 0.0]])
    pictures = attention_heatmaps(heatmap, ("yours", "reference"), ("keys", "queries"), "weights")
    assert (pictures is not None) == drawable == (heatmap.scale() is not None)
    assert pictures is None or all(png.startswith(PNG) for png in pictures)


@pytest.mark.parametrize("got", [[], [[]], [[0.5, 0.5], [1.0]]], ids=["empty", "no keys", "ragged"])
def test_no_picture_for_a_non_matrix(got):
    """Is nothing drawn (rather than a misleading picture) when the weights are not a matrix?"""
    heatmap = Heatmap(got=got, expected=[[0.5, 0.5], [1.0, 0.0]])
    assert attention_heatmaps(heatmap, ("yours", "reference"), ("keys", "queries"), "weights") is None

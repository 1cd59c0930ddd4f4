"""The TA's class report (report.html and report.md) for a batch of results."""
import csv
import html
import re

import mistune
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from autograder.files import visible
from autograder.submissions.ids import student_id
from autograder.report import write_class_report
from autograder.report.class_stats import summarise
from autograder.pages.markup import say
from autograder.results import CheckResult, Finding, SubmissionResult, TaskResult, text
from autograder.texts import render

from . import samples
from .browser import PHONE_WIDTH


@pytest.fixture(scope="module")
def stats():
    return summarise(samples.batch(), samples.TASK_CHECKS)


@pytest.mark.parametrize("language", ["en", "ru"])
def test_report_renders_cleanly_on_a_phone(browser, tmp_path, language):
    """Does Chromium show the report with no console error, the score plot decoded, no fetch
    beyond the file, and nothing wider than a 400 px phone?"""
    html, markdown = write_class_report(samples.batch(), tmp_path, language, samples.TASK_CHECKS)
    assert (html, markdown) == (tmp_path / "report.html", tmp_path / "report.md")
    screenshot = tmp_path / f"report.{language}.png"
    shown = browser.render(html, screenshot)
    assert shown.console == []
    assert len(shown.images) == 1 and all(w > 0 and h > 0 for w, h in shown.images)
    assert shown.widths["document"] <= PHONE_WIDTH
    assert shown.requests == [html.resolve().as_uri()]
    assert shown.scripts == 0 and samples.HOSTILE in shown.text
    assert screenshot.stat().st_size > 0


def test_mistakes_ranked_by_students_with_their_ids(stats):
    """Are the catalogued mistakes ranked by how many students made them, with who made them?"""
    ranked = [(m.mistake, sorted(m.students)) for m in stats.mistakes]
    assert ranked == [("no_sqrt", ["bob", "carol"]), ("scale_by_d", ["dave"])]
    assert stats.undiagnosed == 0      # erin's untouched masked_softmax is no mistake to explain
    assert stats.not_attempted == 1    # ...but a task not attempted yet, said apart


def _one_unexplained(student: str) -> SubmissionResult:
    """A task whose one failed check names no mistake, beside the sample's other failures."""
    finding = Finding(problem=text("compare.values_differ", what=text("tensor.attention_weights")),
                      case_code="X = torch.zeros(1, 1, 2)", expected="[1, 0]", got="[0.5, 0.5]")
    task = TaskResult(id="masked_softmax", score=0.0, max_score=0.5,
                      checks=[CheckResult(name="zero weight beyond valid length", passed=False, score=0.0,
                                          max_score=0.5, finding=finding)])
    return SubmissionResult(student_id=student, assignment="attention_scoring", score=0.0, max_score=0.5,
                            tasks=[task])


def _not_attempted(student: str) -> SubmissionResult:
    """A task as grading now says it was left as released: each check failed with the one line."""
    checks = [CheckResult(name=name, passed=False, score=0.0, max_score=0.5,
                          finding=Finding(problem=text("task.not_attempted")))
              for name in samples.TASK_CHECKS["masked_softmax"]]
    return SubmissionResult(student_id=student, assignment="attention_scoring", score=0.0, max_score=2.0,
                            tasks=[TaskResult(id="masked_softmax", score=0.0, max_score=2.0, checks=checks)])


@pytest.mark.parametrize("language", ["en", "ru"])
@pytest.mark.parametrize("unexplained", [0, 1])
def test_the_report_counts_unexplained_failures_once(tmp_path, language, unexplained):
    """Issue 47: the demo's report said "Failed checks that no known mistake explains: 45." and, a few
    lines down, "Every failed check is explained by a known mistake." (the untouched template's
    failures counted in one and not the other). Do both reports give one count, the one the shared
    unknown mistakes list, say "none left" only when it is 0, and say the tasks not attempted yet
    apart (a new result's and an older grader's alike)?"""
    results = samples.batch() + [_not_attempted("gina")] + [_one_unexplained(f"u{i}") for i in range(unexplained)]
    write_class_report(results, tmp_path, language, samples.TASK_CHECKS)
    for report in (mistune.html((tmp_path / "report.md").read_text()), (tmp_path / "report.html").read_text()):
        shown = " ".join(html.unescape(re.sub(r"<[^>]+>", " ", report)).split())
        assert render(text("page.report.undiagnosed", count=unexplained), language) in shown
        assert (render(text("page.report.no_unexplained"), language) in shown) == (unexplained == 0)
        assert render(text("page.report.not_attempted", count=2), language) in shown  # erin's and gina's


def test_a_student_counts_once_per_mistake():
    """When two checks name the same mistake for one student, is the student counted once
    and both checks listed?"""
    finding = samples.dot_product_no_sqrt()
    checks = [CheckResult(name=name, passed=False, score=0.0, max_score=1.0, finding=finding)
              for name in ("matches the reference", "matches the reference with 2-D valid_lens")]
    result = SubmissionResult(student_id="gus", assignment="attention_scoring", score=0.0, max_score=2.0,
                              tasks=[TaskResult(id="dot_product_attention", score=0.0, max_score=2.0,
                                                checks=checks)])
    [entry] = summarise([result], {"dot_product_attention": [c.name for c in checks]}).mistakes
    assert entry.students == {"gus"} and len(entry.places) == 2


def test_report_lists_mistakes_in_rank_order(tmp_path):
    """Do both reports name each mistake in rank order, with its count beside it?"""
    write_class_report(samples.batch(), tmp_path, "ru", samples.TASK_CHECKS)
    markdown = (tmp_path / "report.md").read_text()
    html = (tmp_path / "report.html").read_text()
    first, second = (render(text(f"mistake.{m}"), "ru") for m in ("no_sqrt", "scale_by_d"))
    assert html.index(first) < html.index(second)
    rows = [line for line in markdown.splitlines() if line.startswith("| ") and ("√d" in line)]
    assert [row.split(" | ")[1] for row in rows] == ["2", "1"]
    assert "`bob`, `carol`" in rows[0] and "`dave`" in rows[1]


def test_pass_rates_count_every_submission(stats):
    """Is a pass rate over all submissions, an unreadable one counted as not passed?"""
    rates = {(r.task, r.check): (r.passed, r.total) for r in stats.check_rates}
    assert rates[("dot_product_attention", "matches the reference")] == (3, 7)
    assert rates[("masked_softmax", "zero weight beyond valid length")] == (5, 7)
    tasks = {r.task: (r.passed, r.total) for r in stats.task_rates}
    assert tasks == {"masked_softmax": (5, 7), "dot_product_attention": (3, 7)}
    assert stats.manual_tasks == ["cost_analysis"] and stats.autograded_max == 4.0


def test_errors_with_the_cell_source_and_traceback(tmp_path):
    """Does the TA see each submission with errors, with the crashed cell's source and
    traceback, escaped in HTML and fenced in Markdown?"""
    write_class_report(samples.batch(), tmp_path, "en", samples.TASK_CHECKS)
    html = (tmp_path / "report.html").read_text()
    markdown = (tmp_path / "report.md").read_text()
    assert "os._exit(0)  # &lt;script&gt;" in html and "Traceback: WorkerLost" in html
    assert say(text("issue.not_utf8", name="frank.ipynb", position=12), "en") in html  # the name as code
    fence = "  ````text\n  # cell 7\n  import os\n"   # longer than the ``` inside the cell
    assert fence in markdown


def test_markdown_cannot_be_broken_by_a_student(tmp_path):
    """Rendered as Markdown, does the report keep every table's columns and run no markup
    from a hostile student id?"""
    write_class_report(samples.batch(), tmp_path, "en", samples.TASK_CHECKS)
    html = mistune.create_markdown(plugins=["table"])((tmp_path / "report.md").read_text())
    assert "<script>" not in html and "<img" not in html
    for table in re.findall(r"<table>.*?</table>", html, re.S):
        widths = {len(re.findall(r"<t[hd]\b", row)) for row in re.findall(r"<tr>.*?</tr>", table, re.S)}
        assert len(widths) == 1


def test_timing_slowest_first(stats):
    """Are submissions listed slowest first, and the slowest checks by their longest run?"""
    assert [t.student for t in stats.timings[:2]] == ["erin", "bob"]
    assert stats.timings[-1].student == "frank" and stats.timings[-1].total is None
    slowest = stats.slow_checks[0]
    assert (slowest.task, slowest.check, slowest.max_s) == ("dot_product_attention", "matches the reference", 0.4)


def test_empty_batch(browser, tmp_path):
    """Does a batch with no submissions still give a report that says so?"""
    html, markdown = write_class_report([], tmp_path, "ru", samples.TASK_CHECKS)
    shown = browser.render(html, tmp_path / "empty.png")
    assert render(text("page.report.empty"), "ru") in shown.text and shown.console == []
    assert render(text("page.report.empty"), "ru") in markdown.read_text()


@pytest.mark.parametrize("language", ["en", "ru"])
def test_time_per_student_says_what_each_number_is(tmp_path, language):
    """Are the phases seconds each phase took, named in the report's language, with the worker's
    requests and the peak memory in columns of their own (not raw English keys among seconds)?"""
    html_path, markdown_path = write_class_report(samples.batch(), tmp_path, language, samples.TASK_CHECKS)
    html, markdown = html_path.read_text(), markdown_path.read_text()
    for raw_key in ("worker_requests", "grader_peak_rss_mb", "worker_s", "read 0"):
        assert raw_key not in html and raw_key not in markdown
    for label in ("page.report.worker", "page.report.peak_mb"):
        assert say(text(label), language) in html and render(text(label), language) in markdown
    reading, cells, checks = (render(text(f"phase.{name}"), language) for name in ("read", "cells", "checks"))
    mark = render(text("page.decimal_mark"), language)
    assert f"{reading} 0{mark}25; {cells} 1{mark}25; {checks} 2{mark}75" in markdown   # bob: 4.25 s in all
    assert f"| 740; 1{mark}42 | 351{mark}5 |" in markdown


def test_the_histogram_legend_covers_no_bar():
    """Does the mean's legend sit clear of every bar, the first one too (a class where many
    scored 0 has its tallest bar there)?"""
    from autograder.pages.figures import histogram_figure
    figure = histogram_figure([0.0] * 8 + [5.0, 7.0, 12.5, 13.0, 13.0], 13.0, 1.0, ("score", "students"), "mean 3.9")
    figure.draw_without_rendering()
    [ax] = figure.axes
    legend = ax.get_legend().get_window_extent()
    assert ax.patches and not any(legend.overlaps(bar.get_window_extent()) for bar in ax.patches)


def test_a_hostile_cell_and_id_stay_text_in_the_similar_solutions(browser, tmp_path):
    """Do two students who hand in one cell full of markup (and one of them a hostile id) get a
    pair whose code and names are shown as text, with no script, and CSV cells that are no
    formula?"""
    from autograder.outputs import solutions
    cell = ("def masked_softmax(X, valid_lens):\n    # </code></pre><script>alert(1)</script>\n"
            "    note = '<img src=x onerror=alert(2)> ``` | **x**'\n"
            "    weights = torch.softmax(X.masked_fill(torch.arange(X.shape[-1]) >= 3, -7.0), dim=-1)\n"
            "    return weights * (weights > 0.001) + 0 * len(note)\n")
    for student in ("=cmd|' /C calc'!A0", samples.HOSTILE):
        solutions.save(tmp_path, student, {"masked_softmax": cell})
    batch = samples.batch() + [samples.submission("=cmd|' /C calc'!A0", crashed=False)]
    html, _ = write_class_report(batch, tmp_path, "en", samples.TASK_CHECKS)
    shown = browser.render(html, tmp_path / "hostile.png")
    assert shown.scripts == 0 and shown.console == [] and "<script>alert(1)</script>" in shown.text
    with open(tmp_path / "similarity.csv", newline="") as handle:
        [row] = list(csv.reader(handle))[1:]
    assert row[0] == "masked_softmax" and set(row[1:3]) == {"'=cmd|' /C calc'!A0", samples.HOSTILE}


# Ids that a page or a Markdown viewer showed alike (red team): a space against a line break,
# a leading space or tab dropped, spaces merged, NEL and U+2028 shown as a space or a line break,
# invisible characters.
# Red team 10: é as one character and as e + U+0301, a Cyrillic а inside a Latin name.
LOOKALIKES = ["a b", "a\nb", "a  b", "a\u2028b", "a\u2029b", "a\u00a0b", "a\u200bb", "a\x85b", "ab",
              "=1+2", " =1+2", "\t=1+2", "=1+2 ", "\u3000=1+2", "\ufeff=1+2",
              "caf\u00e9", "cafe\u0301", "ivanov", "iv\u0430nov"]
FILE_NAMES = st.binary(max_size=6).map(lambda raw: raw.decode("utf-8", "surrogateescape")) | st.text(
    alphabet=st.sampled_from([" ", "\n", "\t", "\\", "x", "2", "0", "\u2028", "\x85", "\u00a0",
                              "a", "\u0430", "e", "\u0301", "\u00e9"]), max_size=5)


@settings(max_examples=500, deadline=None)
@given(FILE_NAMES, FILE_NAMES)
def test_two_ids_never_look_alike(first, second):
    """Is every id (made from a file name, as the grader makes them) shown as text that no other
    id is shown as, with nothing a viewer would drop or merge: no control or invisible character,
    and a space only alone between two others?"""
    shown = visible(student_id(first))
    assert all(char.isprintable() for char in shown) and shown == " ".join(shown.split(" "))
    assert not shown.startswith(" ") and not shown.endswith(" ") and "  " not in shown
    if first != second:
        assert shown != visible(student_id(second))


def _lookalike_report(tmp_path):
    batch = [samples.submission(sid, sqrt_bug=i % 2 == 0, crashed=False) for i, sid in enumerate(LOOKALIKES)]
    return write_class_report(batch, tmp_path, "en", samples.TASK_CHECKS)


def test_report_md_shows_each_student_under_an_id_of_their_own(tmp_path):
    """Did report.md show ``a b`` and ``a\\nb`` (and ``=1+2`` after a space or a tab) as one id?
    Is each student's row of the grade table, as text and as rendered Markdown, an id of its own?"""
    _, markdown = _lookalike_report(tmp_path)
    text_ = markdown.read_text()
    grades = text_.split("\n### ", 2)[1].split("\n## ", 1)[0]
    cells = [line.split(" | ")[0].removeprefix("| ") for line in grades.splitlines() if line.startswith("| `")]
    assert len(cells) == len(set(cells)) == len(LOOKALIKES), cells
    rendered = mistune.create_markdown(plugins=["table"])(grades)
    shown = [html.unescape(code) for code in re.findall(r"<tr>\s*<td>\s*<code>(.*?)</code>", rendered, re.S)]
    assert len(set(" ".join(code.split()) for code in shown)) == len(LOOKALIKES), shown
    assert not any(char in text_ for char in "\u2028\u2029\x85\u00a0\u200b\ufeff\u3000")


def test_report_html_shows_each_student_under_an_id_of_their_own(browser, tmp_path):
    """Did Chromium show ``<code>a\\nb</code>`` as ``a b``? Is each student's id in the grade
    table, as the browser renders it, one of its own?"""
    html_path, _ = _lookalike_report(tmp_path)
    page = browser.new_tab()
    page.goto(html_path.resolve().as_uri(), wait_until="load")
    page.evaluate("() => document.querySelectorAll('details').forEach(details => { details.open = true; })")
    shown = page.evaluate("""() => Array.from(document.querySelectorAll('details table tbody tr'))
        .filter(row => row.cells.length == 2 && row.cells[1].innerText.startsWith('autograded'))
        .map(row => row.cells[0].innerText)""")   # the grade table: student, grade
    page.close()
    assert len(shown) == len(set(shown)) == len(LOOKALIKES), shown
    assert "a\\nb" in shown and "\\x20=1+2" in shown and "\\t=1+2" in shown

"""The class report's similar solutions and shared unknown mistakes, on a class graded for
real with known pairs and groups (tests/pages/class_findings.py): both CSV files, both
reports in both languages, the page in Chromium, and no score changed."""
import csv
import shutil

import pytest

import reference.book

from autograder.report import write_class_report
from autograder.report.similarity import FLAG
from autograder.outputs.store import OutputFolder
from autograder.texts import render
from autograder.results import text

from .browser import PHONE_WIDTH
from .class_findings import ASSIGNMENT, graded_class, task_checks

pytestmark = pytest.mark.slow   # grades ten students' cells in-process (about 15 s here)


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    folder = tmp_path_factory.mktemp("class")
    results = graded_class(folder)
    write_class_report(results, folder, "en", task_checks(results))
    return folder, results


def table(path) -> list[list[str]]:
    with open(path, newline="", encoding="utf-8") as handle:
        return list(csv.reader(handle))


def test_similarity_csv_holds_the_copies_and_nothing_else(graded):
    """Are the renamed-and-reordered copy and the shared copied bug the only pairs (not the two
    students who wrote the book's code, not a different solution), ranked, in [0, 1]?"""
    folder, _ = graded
    rows = table(folder / "similarity.csv")
    assert rows[0] == ["task", "student_a", "student_b", "similarity"]
    assert [row[:3] for row in rows[1:]] == [["masked_softmax", "egor", "zhenya"],
                                             ["distance_attention", "anna", "boris"]]
    assert all(FLAG <= float(row[3]) <= 1.0 for row in rows[1:])


def test_unexplained_csv_groups_by_behaviour(graded):
    """Do the two students who share an uncatalogued bug share group 1 of that check, the third
    with another bug get group 2, and the catalogued mistake and the untouched tasks stay out?"""
    folder, _ = graded
    assert table(folder / "unexplained.csv") == [
        ["task", "check", "group", "student_id"],
        ["masked_softmax", "runs on any device", "1", "egor"],
        ["masked_softmax", "runs on any device", "1", "zhenya"],
        ["masked_softmax", "runs on any device", "2", "ilya"]]


@pytest.mark.parametrize("language", ["en", "ru"])
def test_both_reports_show_the_pairs_and_the_groups(graded, tmp_path, language):
    """Do the HTML and Markdown reports show each pair with both cells (the shared code marked),
    each shared group with its example, what the code gave and its students, and the failures
    seen in one student listed apart, in the language?"""
    folder, results = graded
    copy = tmp_path / "class"
    shutil.copytree(folder, copy)
    html_path, markdown_path = write_class_report(results, copy, language, task_checks(results))
    html, markdown = html_path.read_text(encoding="utf-8"), markdown_path.read_text(encoding="utf-8")
    for heading in ("page.report.similar", "page.report.unexplained"):
        title = render(text(heading), language)
        assert f">{title}</h2>" in html and f"## {title}" in markdown
    assert html.count('<article class="flag">') == 2 and "<mark>" in html
    assert "kk = (keys ** 2)" in html and "key_norms = (keys ** 2)" in html   # both of the pair's cells
    group = render(text("page.report.group", number=1), language)
    assert group in html and group in markdown
    single = render(text("page.report.single_groups", count=1), language)   # ilya's failure, his alone
    assert single in html and single in markdown and "| `masked_softmax`" in markdown.split(single)[1]
    egor = next(r for r in results if r.student_id == "egor")
    finding = next(c.finding for c in egor.task("masked_softmax").checks if not c.passed)
    assert finding.case_code.splitlines()[0] in markdown and finding.got.split(":")[0] in html
    assert "gleb" not in markdown.split(f"## {render(text('page.report.similar'), language)}")[1].split("##")[0]


def test_the_report_needs_only_the_folder(graded, tmp_path):
    """With the results and their kept cells alone (no notebook anywhere, as after a service
    wrote them one by one), does the report find the same pairs?"""
    folder, _ = graded
    alone = tmp_path / "alone"
    alone.mkdir()
    shutil.copytree(folder / "solutions", alone / "solutions")
    for path in folder.glob("*.json"):
        shutil.copy(path, alone)
    shutil.copy(folder / ".autograder-assignment", alone)
    results = OutputFolder(alone, ASSIGNMENT, "en").load_all()
    write_class_report(results, alone, "en", task_checks(results))
    assert table(alone / "similarity.csv") == table(folder / "similarity.csv")


def test_no_score_changes(graded):
    """Is every result's JSON the same after the report was written again?"""
    folder, results = graded
    before = {path.name: path.read_bytes() for path in folder.glob("*.json")}
    write_class_report(results, folder, "ru", task_checks(results))
    assert {path.name: path.read_bytes() for path in folder.glob("*.json")} == before


@pytest.mark.parametrize("width", [PHONE_WIDTH, 1280])
def test_the_new_sections_render_in_chromium(graded, browser, tmp_path, width):
    """Does Chromium show the Russian report with both new sections, no console error, and
    nothing wider than the window at a phone's and a laptop's width?"""
    folder, results = graded
    copy = tmp_path / "class"
    shutil.copytree(folder, copy)
    report, _ = write_class_report(results, copy, "ru", task_checks(results))
    page = browser.new_tab(width)
    errors = []
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    page.goto(report.resolve().as_uri(), wait_until="load")
    shown = page.evaluate("() => document.body.innerText")
    widths = page.evaluate("() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]")
    marks = page.evaluate("() => document.querySelectorAll('article.flag mark').length")
    page.screenshot(path=str(tmp_path / f"report-{width}.png"), full_page=True)
    page.close()
    assert errors == [] and widths[0] <= widths[1]
    assert render(text("page.report.similar"), "ru") in shown and render(text("page.report.unexplained"), "ru") in shown
    assert marks > 0


def test_a_student_alone_in_a_task_is_not_fingerprinted():
    """No pair without a second student: the task's cell is not fingerprinted, nor the
    discounted code it would be measured against (a class of one is graded seconds sooner)."""
    from autograder.report import similarity
    similarity._boilerplate.cache_clear()
    cell = "class DotProductAttention(nn.Module):\n    pass\n" * 20
    assert similarity.similar_pairs({"ann": {"dot_product_attention": cell}}, "x = 1\n") == []
    assert similarity._boilerplate.cache_info().misses == 0
    pairs = similarity.similar_pairs({"ann": {"dot_product_attention": cell}, "bob": {"dot_product_attention": cell}},
                                     "x = 1\n")
    assert [(p.student_a, p.student_b) for p in pairs] == [("ann", "bob")]


def test_a_check_not_judged_is_no_unexplained_failure_of_its_own():
    """Gradients not judged because the output check failed: only the output check's failure
    forms a group (the blocked check would list every such student a second time)."""
    from autograder.report.unexplained import unexplained_groups
    from autograder.results import CheckResult, SubmissionResult, TaskResult
    checks = [CheckResult(name="matches the reference", passed=False, score=0, max_score=1, message="differs"),
              CheckResult(name="gradients match the reference", passed=False, score=0, max_score=1,
                          blocked_by="matches the reference")]
    results = [SubmissionResult(student_id=s, assignment=ASSIGNMENT, score=0, max_score=2, seed=0, fingerprint="",
                                tasks=[TaskResult(id="dot_product_attention", score=0, max_score=2, checks=checks)])
               for s in ("ann", "bob")]
    groups = unexplained_groups(results, {"dot_product_attention": [c.name for c in checks]})
    assert [(g.check, g.students) for g in groups] == [("matches the reference", ["ann", "bob"])]


def test_a_task_whose_cell_did_not_run_is_no_unexplained_mistake():
    """A TA's trial: a syntax error and a deleted cell filled "shared unknown mistakes" with a row
    per check. Their tasks are left out (the student's result names the cell), others are not."""
    from autograder.report.unexplained import unexplained_groups
    from autograder.results import CheckResult, Issue, SubmissionResult, TaskResult
    checks = [CheckResult(name="matches the reference", passed=False, score=0, max_score=1, message="differs")]

    def student(sid: str, *issues: Issue) -> SubmissionResult:
        return SubmissionResult(student_id=sid, assignment=ASSIGNMENT, score=0, max_score=1, seed=0, fingerprint="",
                                tasks=[TaskResult(id="dot_product_attention", score=0, max_score=1, checks=checks)],
                                warnings=[i for i in issues if i.code == "cell_error"],
                                errors=[i for i in issues if i.code != "cell_error"])
    results = [student("syntax", Issue(code="cell_error", task="dot_product_attention", message="SyntaxError")),
               student("deleted", Issue(code="deleted_cell", task="dot_product_attention", message="deleted")),
               student("elsewhere", Issue(code="cell_error", task="masked_softmax", message="ValueError")),
               student("plain")]
    groups = unexplained_groups(results, {"dot_product_attention": [c.name for c in checks]})
    assert [g.students for g in groups] == [["elsewhere", "plain"]]


def test_a_copy_behind_pages_of_comments_is_still_compared():
    """Red team 4: a copy after 64 KiB of comment lines was cut away before the similarity saw
    it. Are the comment lines dropped before the cut, and the pair found?"""
    from autograder.report import similarity
    from autograder.grading.assemble import CellPlan
    from autograder.grading.pipeline import MAX_SOLUTION_CHARS, solution_cells
    code = "".join(f"def step_{i}(x, w):\n    y = torch.tanh(x @ w + {i})\n    return y.sum(-1) * {i}\n"
                   for i in range(12))
    padded = "# nothing to see here, just notes\n" * (MAX_SOLUTION_CHARS // 20) + code
    kept = solution_cells(CellPlan(cells=[("distance_attention", padded)]), ["distance_attention"])
    assert kept["distance_attention"].strip().endswith(code.strip().splitlines()[-1].strip())
    pairs = similarity.similar_pairs({"copy": kept, "orig": {"distance_attention": code}}, "x = 1\n")
    assert [(p.student_a, p.student_b) for p in pairs] == [("copy", "orig")]


PADDING = {   # red team 13: what the 64 KiB cut of the raw cell let through, and comments did not cover
    "a long string literal": f"PAD = {'x' * 70_000!r}\n",
    "a long docstring": '"""' + "notes, notes and more notes\n" * 2600 + '"""\n',
    "dead assignments": "".join(f"pad_{i:05d} = {i}\n" for i in range(6000)),
}


@pytest.mark.parametrize("padding", PADDING.values(), ids=PADDING.keys())
def test_a_copy_behind_padding_is_still_compared(padding):
    """Red team 13: a copied cell put behind a 70 KB string literal was no pair at all (the cut
    kept only the string). Is the cut taken on the code, after the padding is normalised away?"""
    from autograder.report import similarity
    from autograder.grading.assemble import CellPlan
    from autograder.grading.pipeline import solution_cells
    from .class_findings import ANNA, BORIS
    kept = solution_cells(CellPlan(cells=[("distance_attention", padding + BORIS)]), ["distance_attention"])
    assert kept["distance_attention"].rstrip().endswith(BORIS.rstrip().splitlines()[-1].strip())
    pairs = similarity.similar_pairs({"copy": kept, "orig": {"distance_attention": ANNA}}, "x = 1\n")
    assert [(p.student_a, p.student_b) for p in pairs] == [("copy", "orig")]


def _book_dot_product(modernise) -> str:
    import inspect
    return modernise(inspect.getsource(reference.book.DotProductAttention))


MODERNISED = {
    "d ** 0.5": lambda code: code.replace("math.sqrt(d)", "d ** 0.5"),
    "@": lambda code: code.replace("torch.bmm(queries, keys.transpose(1, 2))", "queries @ keys.transpose(1, 2)")
                          .replace("torch.bmm(self.dropout(self.attention_weights), values)",
                                   "self.dropout(self.attention_weights) @ values"),
    "torch.matmul": lambda code: code.replace("torch.bmm(", "torch.matmul("),
}


@pytest.mark.parametrize("modernise", MODERNISED.values(), ids=MODERNISED.keys())
def test_the_books_code_with_a_common_modernisation_is_no_pair(modernise):
    """Red team 13: two students who both wrote the book's DotProductAttention with one common
    modernisation were a pair at 1.0, above a real reworded copy: the score was a share of a tiny
    remainder. Does the score weigh how much of each cell is the students' own?"""
    from autograder.course import COURSE
    from autograder.report import similarity
    from .class_findings import ANNA, BORIS
    discounted = similarity.discounted_code(COURSE, ASSIGNMENT)
    cell = _book_dot_product(modernise)
    assert similarity.similar_pairs({"ann": {"dot_product_attention": cell},
                                     "bob": {"dot_product_attention": cell + "\n"}}, discounted) == []
    copied = similarity.similar_pairs({"anna": {"distance_attention": ANNA}, "boris": {"distance_attention": BORIS}},
                                      discounted)
    assert [(p.student_a, p.student_b) for p in copied] == [("anna", "boris")] and copied[0].similarity >= FLAG


def test_the_fingerprint_cache_is_bounded_in_bytes(monkeypatch):
    """Red team 13: the similarity cache kept every fingerprint for the life of the service, up to
    20,000 entries of up to 3 MB (each resubmission of large cells left 14.5-17.5 MB behind).
    Does what the cache holds stay within its bound in bytes, however many fresh cells pass?"""
    import gc
    import secrets
    import tracemalloc

    from autograder.report import similarity
    bound = 4 << 20
    monkeypatch.setattr(similarity, "_FINGERPRINTS", similarity._Cache(bound) if hasattr(similarity, "_Cache")
                        else None, raising=False)
    if hasattr(similarity._fingerprint, "cache_clear"):
        similarity._fingerprint.cache_clear()
    similarity._fingerprint("x = 1\n" * 20, "y = 2\n")   # the discounted code's k-grams, kept apart
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    for _ in range(12):
        salt = secrets.token_hex(4)
        cell = "".join(f"def f_{salt}_{i}(x, w):\n    return torch.tanh(x @ w + {i}).sum(-1) * {i % 7}\n"
                       for i in range(500))   # about 40 KB, fresh each time
        similarity._fingerprint(cell, "y = 2\n")
    gc.collect()
    held = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    assert held < bound + (1 << 20), f"the cache holds {held:,} bytes after 12 fresh cells (bound {bound:,})"

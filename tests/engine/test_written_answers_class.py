"""A TA grades the written answers of a plain-folder class without nbgrader, and no number
misleads (issue 46): the class of eight (tests/engine/written_class.py) is graded, the TA fills
the manual_points.csv that grade wrote from answers.html, grades again, and every place a
total is read agrees: grades.csv, the class report, `show`, the three exports and each
student's feedback page."""
import csv
import io
import shutil
import subprocess
import sys

import pytest

from autograder.files import from_spreadsheet

from .totals_everywhere import MAXIMUM, table, totals_everywhere
from .written_class import ASSIGNMENT, FORMULA_ID, GRADED, LONG, NOT_GRADED, TASK, class_folder

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed")
POINTS = {"ivanov": "2", "petrova": "1,5", "kim": "0", FORMULA_ID: "1", "long": "0.5"}   # sidorov: not yet


def autograder(*args) -> subprocess.CompletedProcess:
    command = [sys.executable, "-c", "from autograder.cli import main; main()", *map(str, args)]
    return subprocess.run(command, capture_output=True, text=True, timeout=900)


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """The class graded, the blank manual_points.csv as grade wrote it, then filled in (as a
    spreadsheet in Russian saves it: ';' and a decimal comma) and the class graded again."""
    root = tmp_path_factory.mktemp("written")
    inbox, out = class_folder(root / "class"), root / "out"
    first = autograder("grade", inbox, "--assignment", ASSIGNMENT, "--output", out)
    assert first.returncode == 0, first.stdout[-3000:] + first.stderr[-3000:]
    blank = (out / "manual_points.csv").read_text(encoding="utf-8")
    page_before = (out / "answers.html").read_text(encoding="utf-8")
    rows = list(csv.reader(io.StringIO(blank)))
    filled = [";".join(rows[0])] + [";".join([row[0], row[1], POINTS.get(from_spreadsheet(row[0]), "")])
                                    for row in rows[1:]]
    (out / "manual_points.csv").write_text("\n".join(filled) + "\n", encoding="utf-8")
    again = autograder("grade", inbox, "--assignment", ASSIGNMENT, "--output", out)
    assert again.returncode == 0, again.stdout[-3000:] + again.stderr[-3000:]
    return {"out": out, "first": first, "again": again, "blank": rows, "page_before": page_before}


def expected(student: str, autograded: dict[str, float]) -> float:
    return autograded[student] + float(POINTS.get(student, "0").replace(",", "."))


def test_grade_writes_the_answers_page_and_a_manual_points_file_to_fill(graded):
    """Does the first run write answers.html and manual_points.csv with a row per student and
    written task (the formula-like id as grades.csv writes it), points empty, and say where?"""
    assert graded["blank"][0] == ["student_id", "task", "points"]
    assert sorted(row[0] for row in graded["blank"][1:]) == sorted(["'" + FORMULA_ID, *GRADED[:4], *GRADED[5:],
                                                                     *NOT_GRADED])
    assert {row[1] for row in graded["blank"][1:]} == {TASK} and {row[2] for row in graded["blank"][1:]} == {""}
    said = " ".join(graded["first"].stdout.split())
    assert "written answers:" in said and "answers.html" in said and "written now: a row per student" in said
    assert "manual_points.csv (written now" not in " ".join(graded["again"].stdout.split())   # never rewritten
    assert "not entered yet (up to 2)" in graded["page_before"]


def test_every_place_a_total_is_read_agrees(graded, tmp_path):
    """grades.csv, the report, show, the csv, Canvas and Moodle exports and each feedback page: the
    same total for every student, autograded plus the points entered (sidorov's not yet), and
    the notebooks that could not be graded named by every export, never a silent 0."""
    out = graded["out"]
    grades = {from_spreadsheet(row["student_id"]): row for row in table(out / "grades.csv")}
    autograded = {sid: float(row["score"]) - float((row[TASK] or "0")) for sid, row in grades.items()}
    want = {sid: expected(sid, autograded) for sid in grades}
    assert want["ivanov"] == MAXIMUM and grades["ivanov"][TASK] == "2.0"        # the 13.0,15.0 row
    assert all(float(row["max_score"]) == MAXIMUM for row in grades.values())
    places = totals_everywhere(out, [*GRADED, *NOT_GRADED], tmp_path, autograder)
    for place in ("grades.csv", "report", "show", "feedback", "csv", "moodle", "canvas"):
        assert places[place] == want, place
    for fmt in ("csv", "moodle", "canvas"):
        said = " ".join(places[f"{fmt} notes"].split())
        for student in NOT_GRADED:
            assert f"{student}: not graded, 0 autograded points posted:" in said, said


def test_the_answers_page_shows_each_answer_with_its_points(graded):
    page = (graded["out"] / "answers.html").read_text(encoding="utf-8")
    assert "2 / 2 entered" in page and "1.5 / 2 entered" in page and "not entered yet (up to 2)" in page
    assert "&lt;script&gt;document.title = 'pwned'&lt;/script&gt;" in page     # kim's, as text
    assert f"The answer is {len('Ваш ответ / Your answer:') + 2 + LONG // 5 * 5} characters long" in page
    assert "Left as released" in page and "could not be read" in page
    assert '<code class="tex">$$O\\big(BQK(d+v)\\big),$$</code>' in page                  # ivanov's LaTeX


def test_the_summary_says_what_is_entered(graded):
    said = " ".join(graded["again"].stdout.split())
    assert "written answers (cost_analysis): points entered for 5 of 8 submissions" in said, said

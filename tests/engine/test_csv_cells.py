"""Every table we write (grades.csv, the exports, the class report's tables, tokens) reads back
as the rows written, whatever a cell holds: a student id with a bare carriage return went out
unquoted, and a spreadsheet or an LMS read ``mallory\\ralice`` as a second row for alice."""
import csv
import io

from hypothesis import given, settings
from hypothesis import strategies as st

from autograder.files import FORMULA_STARTS, csv_lines, csv_text, from_spreadsheet, spreadsheet_safe
from autograder.lms import _written

CELLS = st.text(alphabet=st.sampled_from(list("ab,\"'=\r\n\t ")), max_size=8)
IDS = st.text(alphabet=st.sampled_from([*FORMULA_STARTS, "'", "a", " ", "\n"]), max_size=5) | st.text(max_size=6)
ROWS = st.lists(st.lists(CELLS, min_size=1, max_size=4), max_size=5)


def read(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text, newline="")))


@settings(max_examples=300, deadline=None)
@given(ROWS, st.sampled_from(["\n", "\r\n"]))
def test_the_rows_read_back_as_written_with_their_line_ends(rows, newline):
    text = csv_lines(rows, newline)
    assert read(text) == rows
    assert text.count(newline) >= len(rows) and (not rows or text.endswith(newline))


def test_a_carriage_return_in_an_id_forges_no_row():
    rows = read(csv_text(["student_id", "score"], [["alice", 13], ["mallory\ralice", 0]]))
    assert rows == [["student_id", "score"], ["alice", "13"], ["mallory\ralice", "0"]]
    assert read(_written([["username", "grade"], ["mallory\ralice", "0"]], False, "\n"))[1] == ["mallory\ralice", "0"]


@settings(max_examples=500, deadline=None)
@given(IDS, IDS)
def test_the_formula_guard_is_one_to_one_and_read_back(first, second):
    """Do two ids ever print alike in a CSV, and does reading a written id back give the id?
    (``=x`` and ``'=x`` were both written ``'=x``, and the TA's points for one went to the other.)"""
    assert from_spreadsheet(spreadsheet_safe(first)) == first
    if first != second:
        assert spreadsheet_safe(first) != spreadsheet_safe(second)
    assert not spreadsheet_safe(first).startswith(FORMULA_STARTS)


def test_ids_that_differ_by_the_guard_are_two_rows():
    """Are ``=x``, ``'=x`` and ``''=x`` three rows of grades.csv, each read back as its id?"""
    ids = ["=x", "'=x", "''=x", "bob", "'bob", "-1"]
    rows = read(csv_text(["student_id"], [[sid] for sid in ids]))[1:]
    assert [row[0] for row in rows] == ["'=x", "''=x", "'''=x", "bob", "''bob", "'-1"]
    assert [from_spreadsheet(row[0]) for row in rows] == ids
    assert from_spreadsheet("'bob") == "'bob"     # no written form: the id as the TA typed it


def test_one_id_rule_for_show_student_manual_points_and_export(tmp_path):
    """Red team 13: with students ``-dash`` and ``'-dash``, grades.csv wrote ``'-dash`` and
    ``''-dash``; ``show "'-dash"`` and ``--student "'-dash"`` took ``'-dash``'s result while
    manual_points.csv gave ``-dash`` the points of that same cell. Does every reader of an id a
    person gives back read each cell of grades.csv (and of the csv export) as the student of its row?"""
    from pathlib import Path

    from rich.console import Console

    from autograder.export import ExportOptions, export
    from autograder.outputs.manual_points import Tasks, read_manual_points
    from autograder.outputs.store import OutputFolder
    from autograder.results import SubmissionResult, TaskResult
    from autograder.show import show_result
    from autograder.submissions.find import Submission, select
    folder = OutputFolder(tmp_path, "attention_scoring", "en")
    folder.check_usable()
    results = [SubmissionResult(student_id=sid, assignment="attention_scoring", score=score, max_score=5.0, seed=0,
                                fingerprint="", tasks=[TaskResult(id="masked_softmax", score=score, max_score=3.0),
                                                       TaskResult(id="cost_analysis", score=None, max_score=2.0,
                                                                  manual=True)])
               for sid, score in (("-dash", 1.0), ("'-dash", 2.0), ("=x", 3.0))]
    for result in results:
        folder.save(result, pages=False)
    folder.write_grades(results, ["masked_softmax", "cost_analysis"])
    rows = [row for row in read((tmp_path / "grades.csv").read_text(encoding="utf-8"))[1:]]
    cells = {row[0]: float(row[2]) for row in rows}                      # as grades.csv writes each id
    assert sorted(cells) == ["''-dash", "'-dash", "'=x"]
    owner = {cell: next(r.student_id for r in results if r.score == score) for cell, score in cells.items()}
    for cell, student in owner.items():
        console = Console(file=io.StringIO(), width=200, color_system=None)
        show_result(cell, tmp_path, console)
        assert console.file.getvalue().startswith(f"{student} ·"), (cell, console.file.getvalue()[:80])
        submissions = [Submission(r.student_id, Path(f"{r.student_id}.ipynb")) for r in results]
        assert [s.student_id for s in select(submissions, [cell], [tmp_path])] == [student]
    (tmp_path / "manual_points.csv").write_text("student_id,task,points\n" + "".join(
        f'"{cell}",cost_analysis,{cells[cell] / 2}\n' for cell in owner), encoding="utf-8")
    points = read_manual_points(tmp_path, Tasks.of_results(results))
    assert {student: points.of(student)["cost_analysis"] for student in owner.values()} == \
        {student: cells[cell] / 2 for cell, student in owner.items()}
    export(ExportOptions(tmp_path, "csv", tmp_path / "export.csv"))
    exported = read((tmp_path / "export.csv").read_text(encoding="utf-8"))[1:]
    assert sorted(row[0] for row in exported) == sorted(owner)

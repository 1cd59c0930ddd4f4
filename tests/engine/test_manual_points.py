"""DIR/manual_points.csv, the TA's points for written answers outside nbgrader: every mistake
in it stops `autograder grade` before anything is graded (exit 2, one line per problem
naming the file, the row and the fix, nothing graded or lost), and the ways spreadsheets
save a CSV are read."""
import csv

import pytest
from typer.testing import CliRunner

from autograder.cli import app
from autograder.outputs.manual_points import ManualPointsError, Tasks, read_manual_points
from autograder.outputs.store import OutputFolder

from .lms_files import ASSIGNMENT, FORMULA_ID, class_results, result, results_folder
from .test_cli_usage import CORRECT

TASKS = Tasks("attention_scoring", {"cost_analysis": 2.0}, ["masked_softmax", "dot_product_attention"])
HEADER = "student_id,task,points\n"


def grade_with(tmp_path, content: str | bytes):
    out = tmp_path / "out"
    out.mkdir()
    path = out / "manual_points.csv"
    path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    done = CliRunner().invoke(app, ["grade", str(CORRECT), "--assignment", "attention_scoring", "--output", str(out)])
    return done, path


@pytest.mark.parametrize(("content", "phrase"), [
    (HEADER + "ivanov,cost_analysis,2\nivanov,cost_analysis,1\n",
     "row 3: 'ivanov' has cost_analysis points again (first in row 2); keep one of the two rows"),
    (HEADER + "ivanov,cost_analyis,2\n", "row 2: unknown task 'cost_analyis' (did you mean 'cost_analysis'?); "
                                         "the written tasks of attention_scoring: cost_analysis"),
    (HEADER + "ivanov,masked_softmax,2\n", "row 2: task 'masked_softmax' is autograded"),
    (HEADER + "ivanov,cost_analysis,two\n", "row 2: points 'two' is not a number"),
    (HEADER + "ivanov,cost_analysis,nan\n", "row 2: points 'nan' is not a number"),
    (HEADER + "ivanov,cost_analysis,-1\n", "row 2: points -1 is below 0"),
    (HEADER + "ivanov,cost_analysis,2.5\n", "row 2: points 2.5 is above cost_analysis's maximum of 2"),
    (HEADER + "ivanov,cost_analysis,inf\n", "row 2: points 'inf' is not a number"),
    (HEADER + "ivanov,cost_analysis,1,5\n", "row 2: points 1,5 has a decimal comma, which splits the row into 4 "
                                            "cells; write 1.5 (or quote it: \"1,5\")"),
    (HEADER + "ivanov, jr,cost_analysis,1\n", "row 2: 4 cells instead of 3"),
    (HEADER + ",cost_analysis,1\n", "row 2: no student_id"),
    ("student_id,task\nivanov,cost_analysis\n", "row 1: no column 'points'"),
    ("student_id,task,points,points\n", "row 1: column 'points' appears 2 times"),
    ("student,task,points\n", "row 1: unknown column 'student' (did you mean 'student_id'?)"),
    ("task,student_id,points\n", "row 1: the columns are in another order"),
    (HEADER.encode() + "иванов,cost_analysis,1\n".encode("cp1251"), "not UTF-8 text (byte 24 is 0xe8)"),
])
def test_each_mistake_stops_grade_with_the_row_and_the_fix(tmp_path, content, phrase):
    """Does each kind of mistake exit 2 before grading, naming the file, the row and the fix?"""
    done, path = grade_with(tmp_path, content)
    assert done.exit_code == 2, done.output
    assert f"error: {path}: {phrase}" in " ".join(done.output.split()), done.output
    assert not (path.parent / "grades.csv").exists()           # nothing graded
    assert path.read_bytes() == (content if isinstance(content, bytes) else content.encode())  # nothing lost


def test_every_problem_is_its_own_line(tmp_path):
    """Does a file with three mistakes get three lines, so the TA fixes it in one go?"""
    done, path = grade_with(tmp_path, HEADER + "a,cost_analysis,9\nb,essay,1\nc,cost_analysis,x\n")
    assert done.exit_code == 2
    errors = [line for line in done.output.splitlines() if line.startswith("error:")]
    assert [line.split(": ")[2] for line in errors] == ["row 2", "row 3", "row 4"]


def test_spreadsheet_dialects_are_read(tmp_path):
    """Are a byte-order mark, Russian Excel's ';' with a decimal comma, an id grades.csv wrote
    with a leading "'", a quoted id with a comma, and an empty (not yet entered) cell read?"""
    path = tmp_path / "manual_points.csv"
    quoted = "\"'" + FORMULA_ID.replace('"', '""') + '"'
    path.write_text("\ufeffstudent_id;task;points\nivanov;cost_analysis;1,5\n" + quoted + ";cost_analysis;2\n"
                    '"smith; jr";cost_analysis;\n', encoding="utf-8")
    points = read_manual_points(tmp_path, TASKS)
    assert points.points == {"ivanov": {"cost_analysis": 1.5}, FORMULA_ID: {"cost_analysis": 2.0}}


def test_a_student_without_a_result_is_a_note_not_an_error(tmp_path):
    """Is an id with no result named (with its row) and the other points still used?"""
    out = results_folder(tmp_path / "results", class_results())
    (out / "manual_points.csv").write_text(HEADER + "ivanov,cost_analysis,2\nivanof,cost_analysis,1\n")
    done = CliRunner().invoke(app, ["export", str(out), "--format", "csv", "--output", str(tmp_path / "g.csv")])
    assert done.exit_code == 0, done.output
    assert "manual_points.csv: row 3: no result for student 'ivanof'" in " ".join(done.output.split())
    with open(tmp_path / "g.csv", newline="") as handle:
        assert {row["student_id"]: row["manual"] for row in csv.DictReader(handle)}["ivanov"] == "2.0"


def test_export_refuses_a_bad_file_too(tmp_path):
    out = results_folder(tmp_path / "results", class_results())
    (out / "manual_points.csv").write_text(HEADER + "ivanov,cost_analysis,3\n")
    done = CliRunner().invoke(app, ["export", str(out), "--format", "csv", "--output", str(tmp_path / "g.csv")])
    assert done.exit_code == 2 and "above cost_analysis's maximum of 2" in done.output
    assert not (tmp_path / "g.csv").exists()


def test_no_file_means_no_points(tmp_path):
    assert read_manual_points(tmp_path, TASKS).points == {}
    with pytest.raises(ManualPointsError):
        (tmp_path / "manual_points.csv").write_text("")
        read_manual_points(tmp_path, TASKS)


def test_each_row_copied_from_grades_csv_credits_its_own_student(tmp_path):
    """Students ``=x`` and ``'=x`` were both ``'=x`` in grades.csv, and the TA's row ``'=x`` was
    credited to ``=x``. Does each id copied from grades.csv into manual_points.csv give its points
    to that student, in the export too, under an id of its own?"""
    ids = ["=x", "'=x", "bob", "'bob"]
    results = [result(sid, (1.0, 1.0)) for sid in ids]
    out = results_folder(tmp_path / "results", results)
    OutputFolder(out, ASSIGNMENT, "en").write_grades(results, [*TASKS.autograded, *TASKS.manual])
    with open(out / "grades.csv", newline="", encoding="utf-8") as handle:
        written = [row["student_id"] for row in csv.DictReader(handle)]
    assert sorted(written) == sorted(["'=x", "''=x", "bob", "''bob"])
    points = {"'=x": "0.5", "''=x": "1", "bob": "1.5", "''bob": "2"}
    (out / "manual_points.csv").write_text(HEADER + "".join(f"{cell},cost_analysis,{points[cell]}\n"
                                                            for cell in written), encoding="utf-8")
    assert read_manual_points(out, TASKS).points == {
        "=x": {"cost_analysis": 0.5}, "'=x": {"cost_analysis": 1.0},
        "bob": {"cost_analysis": 1.5}, "'bob": {"cost_analysis": 2.0}}
    done = CliRunner().invoke(app, ["export", str(out), "--format", "csv", "--output", str(tmp_path / "g.csv")])
    assert done.exit_code == 0, done.output
    with open(tmp_path / "g.csv", newline="", encoding="utf-8") as handle:
        manual = {row["student_id"]: row["manual"] for row in csv.DictReader(handle)}
    assert manual == {cell: f"{float(value)}" for cell, value in points.items()}


def test_a_bad_file_changes_nothing_in_the_folder(tmp_path):
    """One good row and one bad (a student twice): is nothing half-applied? grade, show and export
    each stop with the row named, and every file of the folder (grades.csv, the feedback pages,
    the JSON) is as it was."""
    results = class_results()
    out = results_folder(tmp_path / "results", results)
    OutputFolder(out, ASSIGNMENT, "en").write_grades(results, [*TASKS.autograded, *TASKS.manual])
    (out / "manual_points.csv").write_text(HEADER + "petrova,cost_analysis,1\nivanov,cost_analysis,2\n"
                                                    "ivanov,cost_analysis,1.5\n", encoding="utf-8")
    before = {path: path.read_bytes() for path in out.rglob("*") if path.is_file()}
    runner, phrase = CliRunner(), "row 4: 'ivanov' has cost_analysis points again (first in row 3)"
    for args in (["grade", str(CORRECT), "--assignment", ASSIGNMENT, "--output", str(out)],
                 ["show", "petrova", "--output", str(out)],
                 ["export", str(out), "--format", "csv", "--output", str(tmp_path / "g.csv")]):
        done = runner.invoke(app, args)
        assert done.exit_code == 2 and phrase in " ".join(done.output.split()), done.output
    assert {path: path.read_bytes() for path in out.rglob("*") if path.is_file()} == before
    assert not (tmp_path / "g.csv").exists()

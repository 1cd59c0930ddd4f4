"""`autograder export` on real results folders (written by the store), against Canvas's and
Moodle's documented file layouts (tests/engine/lms_files.py); usage errors exit 2 with one
line naming the file and the fix, and write nothing."""
import csv
import io

import pytest
from typer.testing import CliRunner

from autograder.cli import app
from autograder.outputs.store import MARKER

from autograder.results import Issue, text

from .lms_files import (ASSIGNMENT, CANVAS_HEADER, COMMA_ID, FORMULA_ID, MOODLE_EXPORT, canvas_roster,
                        class_results, moodle_roster, result, results_folder)


def export(*args) -> object:
    return CliRunner().invoke(app, ["export", *map(str, args)])


def rows(path) -> list[list[str]]:
    return list(csv.reader(io.StringIO(path.read_text(encoding="utf-8-sig"), newline="")))


@pytest.fixture
def folder(tmp_path):
    out = results_folder(tmp_path / "results", class_results())
    (out / "manual_points.csv").write_text("student_id,task,points\nivanov,cost_analysis,2\n"
                                           f'"{COMMA_ID.replace(chr(34), chr(34) * 2)}",cost_analysis,1.5\n'
                                           "ghost,cost_analysis,1\n", encoding="utf-8")
    return out


def test_csv_has_both_numbers_and_manual_empty_while_unknown(folder, tmp_path):
    """Does the csv give score = autograded + manual where the written answer is entered, an
    empty manual cell where it is not, and name who is pending?"""
    done = export(folder, "--format", "csv", "--output", tmp_path / "grades.csv")
    assert done.exit_code == 0, done.output
    table = rows(tmp_path / "grades.csv")
    assert table[0] == ["student_id", "score", "max_score", "autograded", "manual"]
    by_id = {row[0]: row[1:] for row in table[1:]}
    assert by_id["ivanov"] == ["7.0", "7.0", "5.0", "2.0"]
    assert by_id[COMMA_ID] == ["5.0", "7.0", "3.5", "1.5"]        # the comma, quotes and newline survive
    assert by_id["petrova"] == ["3.5", "7.0", "3.5", ""]
    assert by_id["'" + FORMULA_ID] == ["1.0", "7.0", "1.0", ""]   # never a formula
    assert by_id["petrov\\xc1"][0] == "4.0"                       # a non-UTF-8 byte as \xNN
    assert by_id["kim"] == ["", "7.0", "", ""]                    # the grader failed: nothing guessed
    assert "written answers not entered for 6 of 8 students" in done.output
    assert "the grader failed on kim" in done.output
    assert "row 4: no result for student 'ghost'" in done.output


def test_canvas_fills_one_column_and_keeps_every_other_cell(folder, tmp_path):
    """Does the Canvas file keep every row, column and cell of the download (Points Possible,
    the posting row, other assignments, totals; BOM and CRLF), fill the assignment's column
    for matched students, empty it for roster students without a result, and name the results
    Canvas does not list?"""
    roster = canvas_roster(tmp_path / "canvas.csv")
    done = export(folder, "--format", "canvas", "--roster", roster, "--output", tmp_path / "upload.csv")
    assert done.exit_code == 0, done.output
    raw = (tmp_path / "upload.csv").read_bytes()
    before, after = rows(roster), rows(tmp_path / "upload.csv")
    assert raw.startswith("\ufeff".encode()) and raw.count(b"\r\n") == len(before)   # one CRLF per row
    assert len(after) == len(before) and after[0] == CANVAS_HEADER.split(",")
    column = after[0].index("attention_scoring (4021)")
    filled = {row[3]: row[column] for row in after[3:]}
    assert filled == {"ivanov": "7", "petrova": "3.5", "nobody": "", "": "", "'" + FORMULA_ID: "1", COMMA_ID: "5"}
    for old, new in zip(before, after):
        for i, (cell, kept) in enumerate(zip(old, new)):
            if i != column or old[3] == "":
                assert kept == cell or kept == "'" + cell, (old, new)
    assert after[1] == before[1] and after[2] == before[2]       # the posting row and Points Possible
    assert after[4][8] == "-1.50"                                # a negative grade elsewhere is a number still
    assert after[5][0] == "'" + before[5][0]                     # a name that is a formula is not one any more
    assert "results without a row in canvas.csv" in done.output
    for missing in ("kim", "petrov\\xc1", "s001", "s002"):
        assert missing in done.output
    assert "students without a result (their cell is empty): nobody" in done.output


def test_canvas_matches_another_column_with_match(tmp_path):
    """With --match "SIS User ID", are students found by that column instead?"""
    out = results_folder(tmp_path / "results", [result("2024001", (3.0, 2.0))])
    roster = canvas_roster(tmp_path / "canvas.csv")
    done = export(out, "--format", "canvas", "--roster", roster, "--match", "SIS User ID", "--output",
                  tmp_path / "upload.csv")
    assert done.exit_code == 0, done.output
    assert rows(tmp_path / "upload.csv")[3][7] == "5"


def test_moodle_writes_its_import_format(folder, tmp_path):
    """Without a roster: Moodle's identity column (username) and one grade column named after
    the assignment, one row per result with a score; the result the grader failed on has no
    row (an empty cell would clear kim's grade in Moodle) and is named."""
    done = export(folder, "--format", "moodle", "--output", tmp_path / "moodle.csv")
    assert done.exit_code == 0, done.output
    table = rows(tmp_path / "moodle.csv")
    assert table[0] == ["username", ASSIGNMENT]
    assert dict(table[1:])["ivanov"] == "7" and "kim" not in dict(table[1:])
    assert all(cell != "" for _, cell in table[1:])
    assert "the grader failed on kim: left out of the file" in done.output


def test_moodle_with_its_own_export_as_roster(tmp_path):
    """With Moodle's own grade export as --roster and --match "ID number": only its users with a
    result, never an empty cell (Moodle reads it as "no grade" and clears the grade it has: the
    README said so itself), the others named?"""
    out = results_folder(tmp_path / "results", [result("s001", (3.0, 1.0)), result("s002", (2.0, 2.0)),
                                                result("s099", (1.0, 1.0))])
    roster = moodle_roster(tmp_path / "moodle_export.csv")
    done = export(out, "--format", "moodle", "--roster", roster, "--match", "ID number",
                  "--column", "Assignment: attention_scoring", "--output", tmp_path / "import.csv")
    assert done.exit_code == 0, done.output
    assert rows(tmp_path / "import.csv") == [["ID number", "Assignment: attention_scoring"],
                                             ["s001", "4"], ["s002", "4"]]
    assert "results without a row in moodle_export.csv" in done.output and "s099" in done.output
    said = " ".join(done.output.split())
    assert ("students without a result (left out of the file: an empty cell would clear the grade Moodle has): "
            "s003") in said


def test_moodle_with_a_roster_writes_its_identities_exactly(tmp_path):
    """A TA's trial: the username -dash was written '-dash even with --roster, so Moodle knew no
    such user. Written as Moodle's roster has it, and formula-safe only without a roster?"""
    out = results_folder(tmp_path / "results", [result("-dash", (3.0, 1.0)), result("s002", (2.0, 2.0))])
    roster = tmp_path / "moodle_export.csv"
    roster.write_text(MOODLE_EXPORT.replace(",s001,", ",-dash,"), encoding="utf-8")
    done = export(out, "--format", "moodle", "--roster", roster, "--match", "ID number",
                  "--column", "Assignment: attention_scoring", "--output", tmp_path / "import.csv")
    assert done.exit_code == 0, done.output
    assert rows(tmp_path / "import.csv")[1] == ["-dash", "4"]
    done = export(out, "--format", "moodle", "--output", tmp_path / "bare.csv")
    assert done.exit_code == 0, done.output
    assert rows(tmp_path / "bare.csv")[1][0] == "'-dash"  # an id from a file name: never a formula


@pytest.mark.parametrize(("change", "phrase"), [
    (lambda text: text.replace("SIS Login ID", "SIS Login"), "no column 'SIS Login ID' (did you mean 'SIS Login'?)"),
    (lambda text: text.replace("Section,", "Section,Section,", 1), "column 'Section' appears 2 times"),
    (lambda text: text.replace("petrova,", "ivanov,", 1), "rows 4 and 5 both have SIS Login ID 'ivanov'"),
    (lambda text: text.replace("attention_scoring (4021)", "Attention (4021)"), "no columns headed 'attention_scoring (<id>)'"),
])
def test_a_roster_it_cannot_use_exits_2(folder, tmp_path, change, phrase):
    """Does a roster with a missing, repeated or ambiguous column, or one id twice, exit 2 naming
    the file and the fix, writing nothing?"""
    roster = canvas_roster(tmp_path / "canvas.csv")
    roster.write_text(change(roster.read_text(encoding="utf-8")), encoding="utf-8")
    done = export(folder, "--format", "canvas", "--roster", roster, "--output", tmp_path / "upload.csv")
    assert done.exit_code == 2 and phrase in done.output and "canvas.csv" in done.output, done.output
    assert not (tmp_path / "upload.csv").exists()


def test_a_roster_that_is_not_utf8_exits_2(folder, tmp_path):
    roster = tmp_path / "canvas.csv"
    roster.write_bytes(CANVAS_HEADER.encode() + "\r\n\"Иванов, Иван\",101,,ivanov\r\n".encode("cp1251"))
    done = export(folder, "--format", "canvas", "--roster", roster, "--output", tmp_path / "upload.csv")
    assert done.exit_code == 2 and "not UTF-8 text (byte" in done.output, done.output


@pytest.mark.parametrize(("args", "phrase"), [
    (["--format", "xlsx"], "--format xlsx: use csv, canvas or moodle"),
    (["--format", "canvas"], "--format canvas needs --roster"),
    (["--format", "csv", "--match", "x"], "are for --format canvas or moodle"),
])
def test_usage_errors_exit_2(folder, tmp_path, args, phrase):
    done = export(folder, *args, "--output", tmp_path / "out.csv")
    assert done.exit_code == 2 and phrase in done.output, done.output


def test_the_roster_is_never_overwritten(folder, tmp_path):
    roster = canvas_roster(tmp_path / "canvas.csv")
    kept = roster.read_bytes()
    done = export(folder, "--format", "canvas", "--roster", roster, "--output", roster)
    assert done.exit_code == 2 and "is the roster itself" in done.output
    assert roster.read_bytes() == kept


def test_a_folder_that_is_not_a_results_folder_exits_2(tmp_path):
    done = export(tmp_path, "--format", "csv", "--output", tmp_path / "out.csv")
    assert done.exit_code == 2 and f"it has no {MARKER}" in done.output, done.output


def test_the_notes_write_out_what_an_id_holds(tmp_path):
    """An id with escape sequences and a line break (red team: ids that clear the TA's screen)
    is named in the export's notes with them written out, never acted on by the terminal."""
    hostile = "eve\x1b[2J\x1b]0;pwned\x07\nalice"
    out = results_folder(tmp_path / "results", [result("ivanov", (3.0, 2.0)), result(hostile, (1.0, 1.0))])
    done = export(out, "--format", "csv", "--output", tmp_path / "grades.csv")
    assert done.exit_code == 0, done.output
    assert "\x1b" not in done.output and "\x07" not in done.output
    assert "eve\\x1b[2J\\x1b]0;pwned\\x07\\nalice" in done.output   # in the "written answers not entered" note


def test_a_roster_that_matches_no_result_exits_2_and_writes_nothing(folder, tmp_path):
    """A TA's trial: a Canvas roster matched by a column that holds none of the ids exited 0 and
    emptied every grade of the column, ready to clear them in Canvas. A usage error now?"""
    roster = canvas_roster(tmp_path / "canvas.csv")
    done = export(folder, "--format", "canvas", "--roster", roster, "--match", "ID",
                  "--output", tmp_path / "upload.csv")
    assert done.exit_code == 2, done.output
    assert "no result matches a row by its ID column" in done.output and "--match" in done.output
    assert not (tmp_path / "upload.csv").exists()


def test_roster_ids_match_exactly_never_another_students_result(tmp_path):
    """Red team 12: roster ids were stripped and result ids not, so the roster's " bob" got bob's
    score while " bob"'s own result was left out. Is each matched as written, and the rest named?"""
    out = results_folder(tmp_path / "results", [result(" bob", (3.0, 2.0)), result("bob", (1.0, 1.0))])
    roster = canvas_roster(tmp_path / "canvas.csv")
    roster.write_text(roster.read_text(encoding="utf-8-sig").replace(",ivanov,", ", bob,"), encoding="utf-8")
    done = export(out, "--format", "canvas", "--roster", roster, "--output", tmp_path / "upload.csv")
    assert done.exit_code == 0, done.output
    [row] = [r for r in rows(tmp_path / "upload.csv") if r[:1] == ["Ivanov, Ivan"]]
    assert row[3] == " bob" and row[7] == "5"
    assert "results without a row" in done.output and "bob" in done.output


@pytest.mark.parametrize("column", ["SIS Login ID", "ID", "Student", "Current Score"])
def test_canvas_never_overwrites_a_column_that_is_not_an_assignments(folder, tmp_path, column):
    """Red team 12: --column ID wrote each score over the Canvas ID that imports match by. Refused?"""
    roster = canvas_roster(tmp_path / "canvas.csv")
    done = export(folder, "--format", "canvas", "--roster", roster, "--column", column,
                  "--output", tmp_path / "upload.csv")
    assert done.exit_code == 2 and "not an assignment column" in done.output
    assert not (tmp_path / "upload.csv").exists()


def test_moodle_never_names_its_grade_column_as_the_identity(folder, tmp_path):
    roster = moodle_roster(tmp_path / "moodle_export.csv")
    for args in ([], ["--roster", roster, "--match", "ID number"]):
        identity = "ID number" if args else "username"
        done = export(folder, "--format", "moodle", *args, "--column", identity, "--output", tmp_path / "m.csv")
        assert done.exit_code == 2 and "identity column" in done.output, done.output


def test_canvas_refuses_a_column_out_of_other_points_naming_both(folder, tmp_path):
    """The issue: 15-point scores went into a 100-point column without a word (Canvas showed 15 %).
    Does a column whose Points Possible differs from the results' maximum stop the export with
    one line naming both numbers and the two ways on, writing nothing (exit 2)?"""
    roster = canvas_roster(tmp_path / "canvas.csv")
    roster.write_bytes(roster.read_bytes().replace(b",7.00,10.00,", b",100.00,10.00,"))
    done = export(folder, "--format", "canvas", "--roster", roster, "--output", tmp_path / "upload.csv")
    assert done.exit_code == 2, done.output
    [line] = [line for line in done.output.splitlines() if line.startswith("error:")]
    said = " ".join(done.output.split())
    assert "attention_scoring (4021) is out of 100 points in Canvas (Points Possible), but the scores are out of 7" \
        in said and "--rescale" in said and "--as-is" in said, said
    assert not (tmp_path / "upload.csv").exists()


@pytest.mark.parametrize(("flag", "ivanov", "petrova", "note"), [
    ("--rescale", "100", "50", "rescaled to attention_scoring (4021)'s Points Possible, 100 (--rescale)"),
    ("--as-is", "7", "3.5", "written as they are (--as-is); Canvas shows a full score as 7 %"),
])
def test_canvas_rescales_or_writes_as_is_when_told(folder, tmp_path, flag, ivanov, petrova, note):
    roster = canvas_roster(tmp_path / "canvas.csv")
    roster.write_bytes(roster.read_bytes().replace(b",7.00,10.00,", b",100.00,10.00,"))
    done = export(folder, "--format", "canvas", "--roster", roster, flag, "--output", tmp_path / "upload.csv")
    assert done.exit_code == 0, done.output
    after = rows(tmp_path / "upload.csv")
    filled = {row[3]: row[7] for row in after[3:]}
    assert (filled["ivanov"], filled["petrova"]) == (ivanov, petrova)
    assert after[2][7] == "100.00"                       # Canvas's Points Possible as Canvas wrote it
    assert note in " ".join(done.output.split())


def test_canvas_without_points_possible_names_the_maximum(folder, tmp_path):
    """A download without the Points Possible row: written, with a note to check the column."""
    roster = canvas_roster(tmp_path / "canvas.csv")
    roster.write_bytes(b"\r\n".join(line for line in roster.read_bytes().split(b"\r\n") if b"Points Possible" not in line))
    done = export(folder, "--format", "canvas", "--roster", roster, "--output", tmp_path / "upload.csv")
    assert done.exit_code == 0, done.output
    assert "no Points Possible for attention_scoring (4021); the scores are out of 7" in " ".join(done.output.split())


@pytest.mark.parametrize(("args", "phrase"), [
    (["--format", "csv", "--rescale"], "--rescale is for --format canvas"),
    (["--format", "moodle", "--as-is"], "--as-is is for --format canvas"),
    (["--format", "canvas", "--rescale", "--as-is"], "--rescale and --as-is: give one"),
])
def test_the_points_possible_options_are_for_canvas_only(folder, tmp_path, args, phrase):
    done = export(folder, *args, "--roster", canvas_roster(tmp_path / "canvas.csv"), "--output", tmp_path / "o.csv") \
        if "canvas" in args else export(folder, *args, "--output", tmp_path / "o.csv")
    assert done.exit_code == 2 and phrase in " ".join(done.output.split()), done.output
    assert not (tmp_path / "o.csv").exists()


def test_a_result_that_could_not_be_graded_is_named_with_its_reason_in_every_format(tmp_path):
    """The issue: a truncated notebook and the other assignment's got a silent 0, like a student
    who handed in nothing. Is each named on the console with its reason, in every format?"""
    unreadable = Issue(code="invalid_notebook", text=text("issue.invalid_notebook", name="broken.ipynb",
                                                          reason="parse error: premature EOF"))
    other = Issue(code="wrong_assignment", text=text("issue.wrong_assignment", other="bahdanau",
                                                     assignment=ASSIGNMENT))
    graded = result("ivanov", (3.0, 2.0))
    broken, wrong = (result(sid, (0.0, 0.0), [issue]) for sid, issue in (("broken", unreadable), ("wrong", other)))
    for one in (broken, wrong):
        for task in one.tasks:
            task.checks = []           # no check ran: the notebook was not graded
    out = results_folder(tmp_path / "results", [graded, broken, wrong])
    canvas = canvas_roster(tmp_path / "canvas.csv")
    canvas.write_bytes(canvas.read_bytes().replace(b",petrova,", b",broken,").replace(b",nobody,", b",wrong,"))
    for args in (["--format", "csv"], ["--format", "moodle"], ["--format", "canvas", "--roster", canvas]):
        done = export(out, *args, "--output", tmp_path / "o.csv")
        assert done.exit_code == 0, done.output
        said = " ".join(done.output.split())
        assert "broken: not graded, 0 autograded points posted: broken.ipynb" in said and "premature EOF" in said, said
        assert "wrong: not graded, 0 autograded points posted:" in said and "bahdanau" in said, said
        assert "ivanov: not graded" not in said

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

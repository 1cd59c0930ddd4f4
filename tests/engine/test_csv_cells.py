"""Every table we write (grades.csv, the exports, the class report's tables, tokens) reads back
as the rows written, whatever a cell holds: a student id with a bare carriage return went out
unquoted, and a spreadsheet or an LMS read ``mallory\\ralice`` as a second row for alice."""
import csv
import io

from hypothesis import given, settings
from hypothesis import strategies as st

from autograder.files import csv_lines, csv_text
from autograder.lms import _written

CELLS = st.text(alphabet=st.sampled_from(list("ab,\"'=\r\n\t ")), max_size=8)
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

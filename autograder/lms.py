"""The LMSs' grade files: Canvas's gradebook CSV with one column filled in, and Moodle's
grade-import CSV.

Canvas's gradebook export (what its import reads back): a header row whose first columns are
the student's (``Student``, ``ID``, then optional ``SIS User ID``, ``SIS Login ID``,
``Integration ID``, ``Root Account``, ``Section`` last), one column per assignment headed
``Title (id)``, read-only totals; under the header a ``Points Possible`` row (its first cell
``    Points Possible``) and, where an assignment posts grades by hand, a row saying so. We
fill one assignment column and keep every other row, cell and column, in their order, as
Canvas wrote them: a row without an id in the match column (``Points Possible``, the posting
row, a student with no login) is written back untouched. The one change to a cell we did not
fill: text that a spreadsheet would run as a formula gets a leading ``'`` (a number stays as it
is, so no grade of another column changes).

Moodle's grade import (``grade/import/csv``) maps one identity column (``username``,
``useridnumber``, ``useremail`` or ``userid``) and one column per grade item; an empty grade
cell is "no grade". It refuses the whole file when one row names no user it knows, so with
``--roster`` (Moodle's own grade export, or any list of its users) only the roster's users are
written.

A roster is read as UTF-8 (a byte-order mark is kept) and its line ends are kept. Every
problem that makes it unusable (not UTF-8, a missing or repeated column, one id on two rows)
is a ``RosterError`` (exit 2) naming the file and the fix; nothing is written then.
"""
import csv
import difflib
import io
from dataclasses import dataclass, field
from pathlib import Path

from .config import ConfigError
from .files import clean_text, csv_lines, spreadsheet_safe

BOM = "\ufeff"


class RosterError(ConfigError):
    """The roster cannot be used as it is (exit 2)."""


@dataclass(frozen=True)
class Roster:
    path: Path
    header: list[str]
    rows: list[list[str]]           # every row after the header, as written
    bom: bool = False
    newline: str = "\n"

    def column(self, name: str, option: str) -> int:
        """The index of column ``name`` (``option`` is the flag that named it)."""
        names = [cell.strip() for cell in self.header]
        if name not in names:
            close = difflib.get_close_matches(name, names, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise RosterError(f"{self.path}: no column {name!r}{hint}; its columns: {', '.join(names)}; "
                              f"name one with {option}")
        return names.index(name)


@dataclass
class Matching:
    """How the results met the roster's rows (rows numbered as a spreadsheet does: header 1)."""
    by_row: dict[int, str] = field(default_factory=dict)       # row -> the id of the student there
    without_result: list[str] = field(default_factory=list)    # roster ids with no result
    unmatched: list[str] = field(default_factory=list)         # result ids without a roster row


def read_roster(path: Path) -> Roster:
    if not path.is_file():
        raise RosterError(f"--roster {path}: no such file; give the CSV downloaded from the LMS")
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise RosterError(f"{path}: not UTF-8 text (byte {error.start + 1} is 0x{raw[error.start]:02x}); "
                          "download it from the LMS again, or save it as \"CSV UTF-8\"") from None
    bom = text.startswith(BOM)
    rows = list(csv.reader(io.StringIO(text.removeprefix(BOM), newline="")))
    if not rows:
        raise RosterError(f"{path}: empty; give the CSV downloaded from the LMS")
    names = [cell.strip() for cell in rows[0]]
    repeated = next((name for name in names if name and names.count(name) > 1), None)
    if repeated is not None:
        raise RosterError(f"{path}: column {repeated!r} appears {names.count(repeated)} times, which no download "
                          "from the LMS has; download it again (or rename the extra column)")
    first_line = text.split("\n", 1)[0]
    return Roster(path, rows[0], rows[1:], bom, "\r\n" if first_line.endswith("\r") else "\n")


def match(roster: Roster, key: int, student_ids: list[str]) -> Matching:
    """The roster's rows with an id in column ``key``, met with ``student_ids`` (clean text) exactly:
    an id with a space or another case is another student's, never matched to this one."""
    matching, seen = Matching(), {}
    wanted = set(student_ids)
    for number, row in enumerate(roster.rows, start=2):
        student = row[key] if key < len(row) else ""  # exactly as written: " bob" is not bob
        if not student.strip():
            continue
        if student in seen:
            raise RosterError(f"{roster.path}: rows {seen[student]} and {number} both have "
                              f"{roster.header[key].strip()} {student!r}; keep one of them")
        seen[student] = number
        matching.by_row[number] = student
        if student not in wanted:
            matching.without_result.append(student)
    matching.unmatched = sorted(wanted - seen.keys())
    return matching


def canvas_file(roster: Roster, column: int, matching: Matching, scores: dict[str, str]) -> str:
    """The roster with ``column`` filled from ``scores`` (student id -> cell) on every row that
    has an id; a roster student without a score gets an empty cell."""
    rows = [[_kept(cell) for cell in roster.header]]
    for number, row in enumerate(roster.rows, start=2):
        row = [_kept(cell) for cell in row]
        if number in matching.by_row:
            row += [""] * (column + 1 - len(row))
            row[column] = scores.get(matching.by_row[number], "")
        rows.append(row)
    return _written(rows, roster.bom, roster.newline)


def moodle_file(identity: str, grade_column: str, rows: list[tuple[str, str]], exact: bool = False) -> str:
    """Moodle's grade-import CSV: the identity column and one grade column. Moodle matches the
    identity exactly, so with ``exact`` (values from Moodle's own roster) it is written as it
    is, a leading ``-`` too; otherwise (ids from file names) formula-safe."""
    ids = [clean_text(sid) if exact else spreadsheet_safe(clean_text(sid)) for sid, _ in rows]
    return _written([[identity, grade_column], *([sid, cell] for sid, (_, cell) in zip(ids, rows))], False, "\n")


def _kept(cell: str) -> str:
    """A roster cell as written, unless it is text a spreadsheet would run as a formula (a
    number, negative too, and a lone ``-`` are not)."""
    if cell.strip() == "-":
        return cell
    try:
        float(cell)
        return cell
    except ValueError:
        return spreadsheet_safe(cell)


def _written(rows: list[list[str]], bom: bool, newline: str) -> str:
    return (BOM if bom else "") + csv_lines(rows, newline)

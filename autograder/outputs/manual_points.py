"""The TA's points for written answers outside nbgrader: ``DIR/manual_points.csv``.

One row per student and written task, under the header ``student_id,task,points``::

    student_id,task,points
    ivanov,cost_analysis,2
    petrova,cost_analysis,1.5

A task must be one of the assignment's written (manual) tasks and ``0 <= points <=`` its
maximum; an empty ``points`` cell means "not entered yet" and the row is skipped. A
spreadsheet's own ways of saving are read too: a byte-order mark, ``;`` as the separator
with ``1,5`` as the number (Russian Excel), and an id as grades.csv wrote it, with the
leading ``'`` it puts before an id that starts like a formula or with a ``'`` of its own
(``'=x`` is student ``=x``, ``''=x`` student ``'=x``: ``files.from_spreadsheet``). Every
problem (a duplicate row, an unknown task, a bad number, a malformed header) is one line
naming the file, the row as a spreadsheet numbers it (the header is row 1) and the fix,
raised together as ``ManualPointsError`` (exit 2), so the TA fixes the file once. A
student id with no result is not an error: the caller names it in a note.
"""
import csv
import difflib
import io
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ..config import AssignmentConfig, ConfigError
from ..files import clean_text, csv_text, write_new
from ..results import SubmissionResult
from ..submissions.ids import given

FILE = "manual_points.csv"
HEADER = ("student_id", "task", "points")
MAX_PROBLEMS = 30             # lines: a file wrong everywhere says so without filling the screen
DECIMAL_COMMA = re.compile(r"^\s*\d+,\d+\s*$")


class ManualPointsError(ConfigError):
    """manual_points.csv cannot be used as it is: one line per problem (exit 2)."""


@dataclass(frozen=True)
class ManualPoints:
    """Points per student and written task, and the row each student first appears in."""
    path: Path
    points: dict[str, dict[str, float]] = field(default_factory=dict)
    rows: dict[str, int] = field(default_factory=dict)

    def unknown_students(self, has_result: Callable[[str], bool]) -> list[str]:
        """Notes naming the ids of the file that have no result (``has_result`` says which do)."""
        return [f"{self.path}: row {row}: no result for student {sid!r}; their points wait until "
                "they are graded (or fix the id)" for sid, row in self.rows.items() if not has_result(sid)]

    def of(self, student_id: str) -> dict[str, float]:
        return self.points.get(clean_text(student_id), {})


@dataclass(frozen=True)
class Tasks:
    """The assignment's tasks, as the file is checked against them."""
    assignment: str
    manual: dict[str, float]      # written task -> its maximum
    autograded: list[str]

    @classmethod
    def of(cls, assignment: str, spec: AssignmentConfig) -> "Tasks":
        return cls(assignment, {t: spec.points(t) for t in spec.tasks if spec.is_manual(t)},
                   [t for t in spec.tasks if not spec.is_manual(t)])

    @classmethod
    def of_results(cls, results: list[SubmissionResult]) -> "Tasks":
        """The tasks as stored results list them (what a results folder says without grader.yml)."""
        full = max(results, key=lambda r: len(r.tasks))
        return cls(full.assignment, {t.id: t.max_score for t in full.tasks if t.manual},
                   [t.id for t in full.tasks if not t.manual])


def read_manual_points(folder: Path, tasks: Tasks) -> ManualPoints:
    """``folder/manual_points.csv`` checked against ``tasks`` (no file: no points)."""
    path = folder / FILE
    if not path.is_file():
        return ManualPoints(path)
    rows = _rows(path)
    problems = _header_problems(path, rows[0] if rows else [])
    if problems:
        raise ManualPointsError("\n".join(problems))
    points, where, problems = _entries(path, rows[1:], tasks)
    if problems:
        raise ManualPointsError("\n".join(_capped(problems)))
    firsts: dict[str, int] = {}
    for (student, _), number in sorted(where.items(), key=lambda item: item[1]):
        firsts.setdefault(student, number)
    return ManualPoints(path, points, firsts)


def write_blank(folder: Path, student_ids: list[str], tasks: Tasks) -> Path | None:
    """``folder/manual_points.csv`` with a row per student (in id order) and written task and
    empty points, where the folder has none; the path, or None where a file is there already
    (or the assignment has no written task)."""
    if not tasks.manual:
        return None
    path = folder / FILE
    rows = [[student, task, None] for student in sorted(student_ids) for task in tasks.manual]
    return path if write_new(path, csv_text(list(HEADER), rows)) else None


def _entries(path: Path, rows: list[list[str]], tasks: Tasks):
    """(points per student and task, the row of each, the problems), rows counted from 2."""
    points: dict[str, dict[str, float]] = {}
    where: dict[tuple[str, str], int] = {}
    problems: list[str] = []
    for number, row in enumerate(rows, start=2):
        found = _row(row, tasks) if any(cell.strip() for cell in row) else None
        if isinstance(found, str):
            problems.append(f"{path}: row {number}: {found}")
        elif found is not None and (found[0], found[1]) in where:
            student, task, _ = found
            problems.append(f"{path}: row {number}: {student!r} has {task} points again (first in row "
                            f"{where[(student, task)]}); keep one of the two rows")
        elif found is not None:
            student, task, value = found
            points.setdefault(student, {})[task] = value
            where[(student, task)] = number
    return points, where, problems


def _rows(path: Path) -> list[list[str]]:
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise ManualPointsError(f"{path}: not UTF-8 text (byte {error.start + 1} is 0x{raw[error.start]:02x}); "
                                "save it as \"CSV UTF-8\"") from None
    first = text.split("\n", 1)[0]
    delimiter = ";" if first.count(";") > first.count(",") else ","
    return list(csv.reader(io.StringIO(text, newline=""), delimiter=delimiter))


def _header_problems(path: Path, header: list[str]) -> list[str]:
    names = [name.strip() for name in header]
    fix = f"the first row must be {','.join(HEADER)}"
    problems = [f"{path}: row 1: column {name!r} appears {names.count(name)} times; {fix}"
                for name in dict.fromkeys(names) if name and names.count(name) > 1]
    problems += [f"{path}: row 1: no column {name!r}; {fix}" for name in HEADER if name not in names]
    problems += [f"{path}: row 1: unknown column {name!r}{_suggest(name, HEADER)}; {fix}"
                 for name in dict.fromkeys(names) if name not in HEADER]
    if not problems and tuple(names) != HEADER:
        problems.append(f"{path}: row 1: the columns are in another order; {fix}")
    return problems


def _row(row: list[str], tasks: Tasks) -> tuple[str, str, float] | str | None:
    """(student, task, points), or a problem's text, or None when no points are entered yet."""
    if len(row) != len(HEADER):
        return _cells_problem(row)
    student, task, value = _student(row[0]), row[1].strip(), row[2].strip()
    if not student:
        return "no student_id; write the id as grades.csv has it"
    if task not in tasks.manual:
        return _task_problem(task, tasks)
    if not value:
        return None
    points = _number(value)
    if points is None:
        return f"points {value!r} is not a number; write a number such as 1.5"
    if points < 0:
        return f"points {value} is below 0; write 0 up to {tasks.manual[task]:g}"
    if points > tasks.manual[task]:
        return f"points {value} is above {task}'s maximum of {tasks.manual[task]:g}; write 0 up to it"
    return student, task, points


def _cells_problem(row: list[str]) -> str:
    """A row of another length than the header's: a decimal comma (``1,5`` unquoted) said as such."""
    whole, fraction = (row[2].strip(), row[3].strip()) if len(row) == len(HEADER) + 1 else ("", "")
    if whole.isdigit() and fraction.isdigit():
        return (f"points {whole},{fraction} has a decimal comma, which splits the row into 4 cells; write "
                f"{whole}.{fraction} (or quote it: \"{whole},{fraction}\")")
    return f"{len(row)} cells instead of 3; write student_id,task,points (quote a cell that holds a comma)"


def _student(cell: str) -> str:
    """The id of a cell written as grades.csv writes it (the ``'`` it adds removed: ``ids.given``)."""
    return given(cell)


def _task_problem(task: str, tasks: Tasks) -> str:
    written = ", ".join(tasks.manual) or "none"
    if task in tasks.autograded:
        return (f"task {task!r} is autograded: its points come from the checks; only the written tasks "
                f"of {tasks.assignment} take points here ({written})")
    return f"unknown task {task!r}{_suggest(task, tasks.manual)}; the written tasks of {tasks.assignment}: {written}"


def _number(value: str) -> float | None:
    if DECIMAL_COMMA.match(value):
        value = value.replace(",", ".")
    try:
        number = float(value)
    except ValueError:
        return None
    return number if math.isfinite(number) else None


def _suggest(word: str, choices) -> str:
    close = difflib.get_close_matches(word, list(choices), n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _capped(problems: list[str]) -> list[str]:
    if len(problems) <= MAX_PROBLEMS:
        return problems
    return problems[:MAX_PROBLEMS] + [f"... and {len(problems) - MAX_PROBLEMS} more problems of the same file"]

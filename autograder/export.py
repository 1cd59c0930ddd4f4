"""``autograder export DIR --format csv|canvas|moodle --output FILE`` (SPEC §6): a results
folder's grades, out to a spreadsheet or an LMS.

Every number comes from ``autograder.outputs.totals``: ``score`` is the autograded points plus the
written answers' points where they are known (the nbgrader gradebook DIR's results were
recorded into, or ``DIR/manual_points.csv`` over it), the autograded part alone while they are
not. ``csv`` writes ``student_id,score,max_score,autograded,manual`` (``manual`` empty while
unknown); ``canvas`` fills one column of the gradebook CSV the TA downloaded from Canvas;
``moodle`` writes Moodle's grade-import CSV (``autograder.lms``). Nothing is dropped silently:
results without a roster row, roster students without a result (Canvas: an empty cell;
Moodle: no row, since an empty cell would clear the grade Moodle has), written answers not yet
entered, results the grader failed on (no score: they are graded again by the next run) and
results of a notebook that could not be graded (an unreadable one, another assignment's: their
0 is posted and the reason named) are named in the notes the command prints. Canvas's column
is out of its ``Points Possible``: where that differs from the results' maximum, nothing is
written unless the TA says to rescale the scores to it (``--rescale``) or write them as they
are (``--as-is``).
"""
import re
from dataclasses import dataclass, field
from pathlib import Path

from . import lms
from .config import ConfigError
from .files import clean_text, csv_text, write_atomically
from .outputs.manual_points import Tasks, read_manual_points
from .results import SubmissionResult
from .outputs.store import OutputFolder
from .outputs.totals import Total, entered_in, total_of

FORMATS = ("csv", "canvas", "moodle")
ASSIGNMENT_COLUMN = re.compile(r".+ \(\d+\)")  # Canvas's header of an assignment column: Title (id)
CSV_HEADER = ["student_id", "score", "max_score", "autograded", "manual"]
CANVAS_MATCH, MOODLE_MATCH = "SIS Login ID", "username"
NAMED = 20  # ids named in a note before "and N more"
POINTS_POSSIBLE = "Points Possible"   # the first cell of Canvas's row of each column's maximum
RESCALE, AS_IS = "rescale", "as-is"   # what to do where Points Possible differs from the results' maximum


class ExportError(ConfigError):
    """The export cannot be made as asked (exit 2)."""


@dataclass(frozen=True)
class ExportOptions:
    folder: Path
    format: str
    output: Path
    roster: Path | None = None
    column: str | None = None
    match: str | None = None
    points: str | None = None          # RESCALE or AS_IS (Canvas: the column's Points Possible differs)


@dataclass
class Exported:
    path: Path
    students: int                      # rows written with a score
    notes: list[str] = field(default_factory=list)


def export(options: ExportOptions) -> Exported:
    """Write ``options.output``; ``ExportError`` (or the manual-points file's error) says why not."""
    _check(options)
    folder = OutputFolder.existing(options.folder)
    results = folder.load_all()
    if not results:
        raise ExportError(f"{options.folder}: holds no results; run autograder grade with --output {options.folder}")
    tasks = Tasks.of_results(results)
    manual = read_manual_points(folder.path, tasks)
    entered = entered_in(folder.path, folder.assignment, tasks, manual)
    totals = [total_of(result, entered) for result in results]
    notes = folder.notes + manual.unknown_students(lambda sid: folder.result_path(sid).is_file())
    notes += _pending(totals) + _failed(results, options.format) + _ungraded(results)
    scores = {clean_text(t.student_id): t.score for t, r in zip(totals, results) if not _grader_failed(r)}
    content, written, named = _content(options, folder.assignment, totals, scores)
    write_atomically(options.output, content)
    return Exported(options.output, written, notes + named)


def _check(options: ExportOptions) -> None:
    if options.format not in FORMATS:
        raise ExportError(f"--format {options.format}: use csv, canvas or moodle")
    if options.format == "canvas" and options.roster is None:
        raise ExportError("--format canvas needs --roster: the gradebook CSV downloaded from Canvas "
                          "(Grades, Export, Export Entire Gradebook)")
    if options.format == "csv" and (options.roster, options.column, options.match) != (None, None, None):
        raise ExportError("--roster, --column and --match are for --format canvas or moodle; csv writes every result")
    if options.points is not None and options.format != "canvas":
        raise ExportError(f"--{options.points} is for --format canvas (its column's Points Possible); "
                          f"{options.format} writes the scores out of the results' maximum")
    if options.roster is not None and options.output.resolve() == options.roster.resolve():
        raise ExportError(f"--output {options.output}: is the roster itself; write to another file and keep "
                          "the download as it is")
    if options.output.is_dir():
        raise ExportError(f"--output {options.output}: is a folder; name the file to write")


def _cell(score: float) -> str:
    return f"{round(score, 4):g}"


def _grader_failed(result: SubmissionResult) -> bool:
    return any(error.code == "grader_failed" for error in result.errors)


def _content(options: ExportOptions, assignment: str, totals: list[Total],
             scores: dict[str, str]) -> tuple[str, int, list[str]]:
    """The file's text, how many students got a score in it, and the notes on matching."""
    if options.format == "csv":
        rows = [[t.student_id, *([t.score, t.max_score, t.autograded, t.entered]
                                 if clean_text(t.student_id) in scores else ["", t.max_score, "", ""])]
                for t in totals]
        return csv_text(CSV_HEADER, rows), len(scores), []
    if options.roster is None:  # moodle without a roster: one row per result with a score
        _not_the_identity(options.column, options.match or MOODLE_MATCH)
        rows = [(clean_text(t.student_id), _cell(scores[clean_text(t.student_id)]))
                for t in totals if clean_text(t.student_id) in scores]
        return lms.moodle_file(options.match or MOODLE_MATCH, options.column or assignment, rows), len(rows), []
    roster = lms.read_roster(options.roster)
    key = roster.column(options.match or (CANVAS_MATCH if options.format == "canvas" else MOODLE_MATCH), "--match")
    matching = lms.match(roster, key, [clean_text(t.student_id) for t in totals])
    if totals and not set(matching.by_row.values()) & {clean_text(t.student_id) for t in totals}:
        column = roster.header[key].strip()
        raise ExportError(f"{roster.path}: no result matches a row by its {column} column (results: "
                          f"{', '.join(sorted(matching.unmatched)[:3])}...; {column}: "
                          f"{', '.join(list(matching.by_row.values())[:3])}...); nothing written, so that no grade "
                          "in the LMS is cleared: name the column holding the students' ids with --match")
    written = sum(1 for sid in matching.by_row.values() if sid in scores)
    if options.format == "canvas":
        column = _canvas_column(roster, options.column, assignment)
        cells, notes = _out_of_points_possible(roster, column, totals, scores, options.points)
        content = lms.canvas_file(roster, column, matching, cells)
        return content, written, notes + _matching_notes(roster, key, matching, "their cell is empty")
    _not_the_identity(options.column, roster.header[key].strip())
    content = lms.moodle_file(roster.header[key].strip(), options.column or assignment,
                              [(sid, _cell(scores[sid])) for sid in matching.by_row.values() if sid in scores],
                              exact=True)
    return content, written, _matching_notes(roster, key, matching, "left out of the file: an empty cell would "
                                             "clear the grade Moodle has")


def _out_of_points_possible(roster: lms.Roster, column: int, totals: list[Total], scores: dict[str, float],
                            choice: str | None) -> tuple[dict[str, str], list[str]]:
    """Each score as its Canvas cell, out of the column's ``Points Possible`` (the results' maximum
    where they agree; ``choice``: RESCALE or AS_IS where they differ, else ``ExportError``)."""
    maximum = max((t.max_score for t in totals), default=0.0)
    possible, header = _points_possible(roster, column), roster.header[column].strip()
    if possible is None:
        note = (f"{roster.path.name}: no Points Possible for {header}; the scores are out of {maximum:g}: check that "
                "the column is too (Canvas, the assignment's settings)")
        return {sid: _cell(score) for sid, score in scores.items()}, [note]
    if abs(possible - maximum) < 1e-9 or choice == AS_IS:
        notes = [] if abs(possible - maximum) < 1e-9 else [
            f"{header} is out of {possible:g} in Canvas (Points Possible) and the scores are out of {maximum:g}: "
            f"written as they are (--as-is); Canvas shows a full score as {100 * maximum / possible:g} %"]
        return {sid: _cell(score) for sid, score in scores.items()}, notes
    if choice == RESCALE and maximum > 0:
        note = f"scores out of {maximum:g} rescaled to {header}'s Points Possible, {possible:g} (--rescale)"
        return {sid: _cell(score * possible / maximum) for sid, score in scores.items()}, [note]
    raise ExportError(f"{roster.path}: {header} is out of {possible:g} points in Canvas (Points Possible), but the "
                      f"scores are out of {maximum:g}; nothing written: pass --rescale to write each score "
                      f"times {possible:g}/{maximum:g}, or --as-is to write them as they are (and set the "
                      f"assignment's points to {maximum:g} in Canvas)")


def _points_possible(roster: lms.Roster, column: int) -> float | None:
    """The number in the ``Points Possible`` row under ``column``, or None where there is none."""
    for row in roster.rows:
        if row and row[0].strip() == POINTS_POSSIBLE and column < len(row):
            try:
                value = float(row[column])
            except ValueError:
                return None
            return value if value > 0 and value < float("inf") else None
    return None


def _canvas_column(roster: lms.Roster, column: str | None, assignment: str) -> int:
    """--column, or the one column headed ``<assignment> (<id>)``."""
    names = [name.strip() for name in roster.header]
    if column is not None:
        index = roster.column(column, "--column")
        if not ASSIGNMENT_COLUMN.fullmatch(names[index]):
            raise ExportError(f"--column {column}: not an assignment column of {roster.path.name} (those are headed "
                              f"'Title (id)'); its students' names, ids and totals are never overwritten")
        return index
    found = [i for i, name in enumerate(names) if re.fullmatch(rf"{re.escape(assignment)} \(\d+\)", name)]
    if len(found) == 1:
        return found[0]
    assignments = ", ".join(name for name in names if ASSIGNMENT_COLUMN.fullmatch(name)) or "none"
    raise ExportError(f"{roster.path}: {'several' if found else 'no'} columns headed '{assignment} (<id>)'; "
                      f"name the one to fill with --column (its assignment columns: {assignments})")


def _not_the_identity(column: str | None, identity: str) -> None:
    """Moodle's grade column is never its identity column (``ID number,ID number``)."""
    if column is not None and column.strip().casefold() == identity.casefold():
        raise ExportError(f"--column {column}: that is the identity column the students are matched by; "
                          f"name the grade column another way (default: the assignment's name)")


def _matching_notes(roster: lms.Roster, key: int, matching: lms.Matching, without: str) -> list[str]:
    """The results the roster does not list, and its students without a result (``without``:
    what became of them in the file)."""
    column = roster.header[key].strip()
    notes = []
    if matching.unmatched:
        notes.append(f"results without a row in {roster.path.name} (their {column} is not there; not exported): "
                     f"{', '.join(matching.unmatched)}")
    if matching.without_result:
        notes.append(f"{roster.path.name}: students without a result ({without}): "
                     f"{_named(matching.without_result)}")
    return notes


def _pending(totals: list[Total]) -> list[str]:
    pending = [t.student_id for t in totals if t.manual is None]
    if not pending:
        return []
    return [f"written answers not entered for {len(pending)} of {len(totals)} students (their score is the "
            f"autograded part only; enter them in formgrader or manual_points.csv): {_named(pending)}"]


def _failed(results: list[SubmissionResult], format: str) -> list[str]:
    failed = [r.student_id for r in results if _grader_failed(r)]
    if not failed:
        return []
    where = "left out of the file" if format == "moodle" else "their cells are empty"
    return [f"the grader failed on {', '.join(failed)}: {where}; run autograder grade again"]


def _ungraded(results: list[SubmissionResult]) -> list[str]:
    """One note per result whose notebook could not be graded (no check ran: unreadable, another
    assignment's, several candidates): its 0 is posted, and why, so it is never a silent 0."""
    return [f"{r.student_id}: not graded, 0 autograded points posted: {_first_line(r.errors[0].message)} "
            "(grade again once a notebook that can be graded is handed in)"
            for r in results if r.errors and not _grader_failed(r) and not any(t.checks for t in r.tasks)]


def _first_line(message: str) -> str:
    line = (message.strip().splitlines() or [""])[0]
    return line if len(line) <= 200 else line[:197] + "..."


def _named(ids: list[str]) -> str:
    shown = ", ".join(ids[:NAMED])
    return shown + (f" and {len(ids) - NAMED} more" if len(ids) > NAMED else "")

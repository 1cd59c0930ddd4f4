"""What runs for a submission: the student's code cells in the student's order, with every
locked cell taken from the TA's source notebook by grade id, and no test cell at all.

Tampering (deleted, edited, duplicated or re-labelled cells, changed points, an old
nbformat) becomes a named warning or error; it never adds points, because test cells,
points and locked code always come from the source.
"""
import re
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
from nbgrader.utils import compute_checksum

MAGIC = re.compile(r"^\s*[%!]")


@dataclass
class Program:
    cells: list[tuple[str, str]] = field(default_factory=list)   # (label, source), in run order
    warnings: list[dict] = field(default_factory=list)
    errors: list[dict] = field(default_factory=list)


def issue(code: str, message: str, task: str | None = None) -> dict:
    return {"code": code, "task": task, "message": message}


def _nbgrader(cell) -> dict:
    return cell.get("metadata", {}).get("nbgrader", {}) or {}


def read_notebook(path: Path, program: Program):
    """The notebook as nbformat v4, or None with the reason in ``program.errors``."""
    try:
        as_written = nbformat.reads(path.read_text(encoding="utf-8"), as_version=nbformat.NO_CONVERT)
        version = as_written.get("nbformat")
        notebook = nbformat.convert(as_written, 4)  # what nbformat.read(as_version=4) does, without reading twice
    except (OSError, UnicodeDecodeError) as error:
        program.errors.append(issue("unreadable", f"{path.name}: cannot read the file ({error})"))
        return None
    except Exception as error:  # nbformat raises several kinds for invalid JSON or schema
        program.errors.append(issue("invalid_notebook", f"{path.name}: not a valid notebook "
                                    f"({str(error).splitlines()[0][:200]}); re-download the template"))
        return None
    if version != 4:
        program.warnings.append(issue("old_nbformat", f"{path.name}: nbformat {version}, converted to 4"))
    return notebook


def _strip_magics(source: str, label: str, program: Program) -> str:
    kept = [line for line in source.splitlines() if not MAGIC.match(line)]
    if len(kept) != len(source.splitlines()):
        program.warnings.append(issue("magic_removed", f"cell {label}: IPython magics and shell "
                                      f"escapes (% and !) were removed before grading"))
    return "\n".join(kept)


def assemble(submission, source, tasks: list[str]) -> Program:
    """The cells to run for ``submission`` (nbformat v4) against the TA's ``source``."""
    program = Program()
    source_cells = {_nbgrader(c).get("grade_id"): c for c in source.cells if _nbgrader(c).get("grade_id")}
    order = {gid: i for i, gid in enumerate(source_cells)}
    seen: dict[str, int] = {}
    for number, cell in enumerate(submission.cells):
        gid = _nbgrader(cell).get("grade_id")
        if gid in seen:
            program.warnings.append(issue("duplicate_cell", f"grade id {gid!r} appears again (cell {number}); "
                                          f"only the first is used", gid if gid in tasks else None))
            continue
        if gid is not None and gid not in source_cells:
            program.warnings.append(issue("unknown_grade_id", f"cell {number} has grade id {gid!r}, which the "
                                          f"assignment does not have; it runs as your own cell"))
        origin = source_cells.get(gid)
        if origin is not None:
            seen[gid] = number
            _compare_cells(cell, origin, gid, program)
        if cell.cell_type != "code" and (origin is None or origin.cell_type != "code"):
            continue
        if origin is None:
            program.cells.append((f"your cell {number}", _strip_magics(cell.source, str(number), program)))
        elif _nbgrader(origin).get("solution"):
            if cell.cell_type == "code":
                program.cells.append((gid, _strip_magics(cell.source, gid, program)))
        elif not _nbgrader(origin).get("grade") and origin.cell_type == "code":
            program.cells.append((gid, origin.source))  # locked: the TA's version, always
    _restore_deleted(source_cells, order, seen, tasks, program)
    return program


def _compare_cells(cell, origin, gid: str, program: Program) -> None:
    """Report what the student changed in a cell the grader takes from the source anyway."""
    meta = _nbgrader(cell)
    _compare_metadata(meta, _nbgrader(origin), gid, program)
    locked = _nbgrader(origin).get("locked") and not _nbgrader(origin).get("solution")
    if locked and meta.get("checksum") != compute_checksum(cell):  # nbgrader's own checksum
        program.warnings.append(issue("locked_cell_edited", f"cell {gid!r} is read-only and was edited "
                                      f"(its checksum does not match); the source's version is used"))


def _compare_metadata(meta: dict, origin: dict, gid: str, program: Program) -> None:
    if meta.get("points") != origin.get("points") and origin.get("grade"):
        program.warnings.append(issue("points_changed", f"cell {gid!r}: points changed from "
                                      f"{origin.get('points')} to {meta.get('points')}; the source's count"))
    if meta.get("solution") != origin.get("solution") or meta.get("grade") != origin.get("grade"):
        program.warnings.append(issue("cell_type_changed", f"cell {gid!r}: its nbgrader type was changed; "
                                      f"the source's is used"))


def _restore_deleted(source_cells: dict, order: dict, seen: dict, tasks: list[str], program: Program) -> None:
    """Locked cells the student deleted are put back; deleted solution cells are errors."""
    for gid, cell in source_cells.items():
        if gid in seen or cell.cell_type != "code":
            continue
        meta = _nbgrader(cell)
        if meta.get("solution"):
            program.errors.append(issue("deleted_cell", f"the solution cell {gid!r} is missing",
                                        gid if gid in tasks else None))
        elif not meta.get("grade"):
            program.warnings.append(issue("deleted_cell", f"the locked cell {gid!r} was missing; the "
                                          f"source's version runs in its place"))
            labels = [label for label, _ in program.cells]
            before = [i for i, label in enumerate(labels) if order.get(label, -1) < order[gid]]
            program.cells.insert(before[-1] + 1 if before else 0, (gid, cell.source))

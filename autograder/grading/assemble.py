"""What runs for a submission: the student's code cells in the student's order, with every
locked cell taken from the TA's source notebook by grade id, and no test cell at all. The
locked cells that exist for the student only (visible checks, demonstrations) do not run.

Tampering (deleted, edited, duplicated or re-labelled cells, changed points, an old
nbformat) becomes a named warning or error; it never adds points, because test cells,
points and locked code always come from the source. Malformed notebook JSON (metadata
that is not a mapping, a grade id that is not a string, ...) is the student's error with
its reason, never the grader's crash.
"""
import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from . import ipython_syntax
from ..results import Issue, text


@dataclass
class CellPlan:
    """The cells to run, in order, as (label, source); a label is a grade id or ``#n``
    (the student's own n-th cell, counted from 1 as Jupyter shows them), and first the
    stand-ins for IPython's ``get_ipython`` and ``display`` (``ipython_syntax.LABEL``)."""
    cells: list[tuple[str, str]] = field(default_factory=list)
    warnings: list[Issue] = field(default_factory=list)
    errors: list[Issue] = field(default_factory=list)
    plain_python: ipython_syntax.PlainPython = field(default_factory=ipython_syntax.PlainPython)  # within a budget

    def warn(self, code: str, message, task: str | None = None) -> None:
        self.warnings.append(Issue(code=code, task=task, text=message))

    def error(self, code: str, message, task: str | None = None) -> None:
        self.errors.append(Issue(code=code, task=task, text=message))


def nbgrader_meta(cell) -> dict:
    """A cell's nbgrader metadata; anything malformed reads as none."""
    meta = cell.get("metadata") if isinstance(cell, dict) else None
    found = meta.get("nbgrader") if isinstance(meta, dict) else None
    return found if isinstance(found, dict) else {}


MAX_GRADE_ID = 100  # nbgrader's own grade ids are short; a longer one is not a grade id
MAX_POINTS = 1e15   # points nbgrader could have written (a float it can print back exactly)


def grade_id(cell) -> str | None:
    gid = nbgrader_meta(cell).get("grade_id")
    return gid if isinstance(gid, str) and 0 < len(gid) <= MAX_GRADE_ID else None


def read_notebook(path: Path, data: bytes, plan: CellPlan):
    """The notebook as nbformat v4 from what ``reading.read_kept`` kept of it, or None with the
    reason in ``plan.errors``."""
    try:
        as_written = nbformat.from_dict(json.loads(data))
        if not isinstance(as_written, dict):
            raise ValueError("it is not a JSON object")
        version = as_written.get("nbformat")
        notebook = nbformat.convert(as_written, 4)
        if not isinstance(notebook.get("cells"), list):
            raise ValueError("it has no list of cells")
    except Exception as error:  # nbformat raises several kinds for a notebook of no known format
        reason = (str(error).splitlines() or [type(error).__name__])[0][:200]
        plan.error("invalid_notebook", text("issue.invalid_notebook", name=path.name, reason=reason))
        return None
    if version != 4:
        plan.warn("old_nbformat", text("issue.old_nbformat", name=path.name, version=str(version)))
    return notebook


def assemble(submission, source, tasks: list[str], plan: CellPlan) -> None:
    """Add the cells to run for ``submission`` (nbformat v4) against the TA's ``source``."""
    try:
        _assemble(submission, source, tasks, plan)
    except (AttributeError, TypeError, ValueError, KeyError) as error:  # a cell that is not a cell
        plan.cells.clear()
        plan.error("invalid_notebook", text("issue.invalid_cells", reason=f"{type(error).__name__}: {error}"[:200]))
    if plan.cells:  # what IPython syntax became, and IPython's builtin display, exist in the worker
        plan.cells.insert(0, (ipython_syntax.LABEL, ipython_syntax.STAND_INS))


def _assemble(submission, source, tasks: list[str], plan: CellPlan) -> None:
    source_cells = {grade_id(c): c for c in source.cells if grade_id(c)}
    if not any(grade_id(cell) for cell in submission.cells):
        return _assemble_stripped(submission, source, plan)
    seen: dict[str, int] = {}
    for number, cell in enumerate(submission.cells, start=1):
        gid = _known_grade_id(cell, number, source_cells, seen, tasks, plan)
        if gid is _DUPLICATE:
            continue
        origin = source_cells.get(gid)
        if origin is not None:
            seen[gid] = number
            _compare_cells(cell, origin, gid, plan)
        _plan_cell(cell, number, gid, origin, plan)
    order = {gid: i for i, gid in enumerate(source_cells)}
    _restore_deleted(source_cells, order, seen, tasks, plan)


_DUPLICATE = object()  # a grade id seen before in this notebook: the cell is skipped


def _known_grade_id(cell, number: int, source_cells: dict, seen: dict, tasks: list[str], plan: CellPlan):
    """The cell's grade id (None for the student's own), with what is odd about it reported."""
    gid = grade_id(cell)
    if gid is None and nbgrader_meta(cell).get("grade_id") is not None:
        plan.warn("bad_grade_id", text("issue.bad_grade_id", cell=f"#{number}"))
    if gid in seen:
        plan.warn("duplicate_cell", text("issue.duplicate_cell", gid=gid, cell=f"#{number}"),
                  gid if gid in tasks else None)
        return _DUPLICATE
    if gid is not None and gid not in source_cells:
        plan.warn("unknown_grade_id", text("issue.unknown_grade_id", cell=f"#{number}", gid=gid))
    return gid


def _plan_cell(cell, number: int, gid: str | None, origin, plan: CellPlan) -> None:
    """The student's own code cell and a solution cell run as written; a locked cell runs
    as the TA's source has it; test cells never run."""
    if cell.get("cell_type") != "code" and (origin is None or origin.cell_type != "code"):
        return
    if origin is None:
        plan.cells.append((f"#{number}", _plain(_source(cell), f"#{number}", plan)))
    elif nbgrader_meta(origin).get("solution"):
        if cell.get("cell_type") == "code":
            plan.cells.append((gid, _plain(_source(cell), gid, plan)))
    elif not nbgrader_meta(origin).get("grade") and origin.cell_type == "code" and not for_the_student(gid):
        plan.cells.append((gid, _plain_locked(origin, plan)))  # locked: the TA's version, always


def for_the_student(gid: str) -> bool:
    """A locked cell that exists for the student only, which grading does not run: a visible
    check (``<task>_visible``) or a demonstration (a grade id with ``demo`` in it). The release
    tests prove that they pass on every correct solution; they define nothing a solution uses."""
    return gid.endswith("_visible") or "demo" in gid


def _assemble_stripped(submission, source, plan: CellPlan) -> None:
    """No cell carries nbgrader metadata (the work was copied into a fresh notebook): run the
    source's set-up cells (the locked code before the first solution), then the student's
    cells in order; tasks are graded by the names they define."""
    plan.warn("no_nbgrader_metadata", text("issue.no_nbgrader_metadata"))
    for cell in source.cells:
        meta = nbgrader_meta(cell)
        if meta.get("solution"):
            break
        if cell.cell_type == "code" and not meta.get("grade"):
            plan.cells.append((grade_id(cell) or "setup", _plain_locked(cell, plan)))
    for number, cell in enumerate(submission.cells, start=1):
        if cell.get("cell_type") == "code":
            plan.cells.append((f"#{number}", _plain(_source(cell), f"#{number}", plan)))


def _source(cell) -> str:
    source = cell.get("source", "")
    if isinstance(source, list):
        source = "".join(part for part in source if isinstance(part, str))
    if not isinstance(source, str):
        raise TypeError(f"a cell's source is a {type(source).__name__}")
    return source


def _plain(source: str, label: str, plan: CellPlan) -> str:
    """The student's cell as plain Python, as an IPython kernel would run it (``obj?``, ``%magic``,
    ``!cmd`` made calls that do nothing in the worker), with a warning that those did not run."""
    plain, dropped = plan.plain_python(source)
    if dropped:
        plan.warn("magic_removed", text("issue.magic_removed", cell=label))
    return plain


def _plain_locked(cell, plan: CellPlan) -> str:
    """A locked cell of the TA's source as plain Python, as a kernel runs it (a ``%matplotlib
    inline`` there must not cost the students points); the student is told nothing."""
    return plan.plain_python(cell.source)[0]


def _compare_cells(cell, origin, gid: str, plan: CellPlan) -> None:
    """Report what the student changed in a cell the grader takes from the source anyway. The
    submission's metadata is only compared, never used as a number (points of 10**400 or "ten")."""
    meta, source_meta = nbgrader_meta(cell), nbgrader_meta(origin)
    if meta.get("points") != source_meta.get("points") and source_meta.get("grade"):
        plan.warn("points_changed", text("issue.points_changed", gid=gid, old=_shown(source_meta.get("points")),
                                         new=_shown(meta.get("points"))))
    if meta.get("solution") != source_meta.get("solution") or meta.get("grade") != source_meta.get("grade"):
        plan.warn("cell_type_changed", text("issue.cell_type_changed", gid=gid))
    locked = source_meta.get("locked") and not source_meta.get("solution") and origin.cell_type == "code"
    if locked and (cell.get("cell_type") != "code" or meta.get("checksum") != nbgrader_checksum(cell)):
        plan.warn("locked_cell_edited", text("issue.locked_cell_edited", gid=gid))


def nbgrader_checksum(cell) -> str | None:
    """The checksum nbgrader's release stores in a cell (nbgrader.utils.compute_checksum: md5 of
    the source, the type, the grade, solution and locked flags, the grade id and a grade cell's
    points as a float), computed from what the student handed in without using its metadata as
    numbers: None where the points are no number nbgrader could have written (10**400, "ten"),
    which then matches no stored checksum."""
    meta = nbgrader_meta(cell)
    grade, solution = meta.get("grade", False), meta.get("solution", False)
    locked = False if solution else True if grade else meta.get("locked", False)
    digest = hashlib.md5()
    for part in (_source(cell), cell.get("cell_type"), str(grade), str(solution), str(locked), meta.get("grade_id")):
        digest.update(str(part).encode("utf-8", "surrogatepass"))
    if grade:
        points = meta.get("points")
        if isinstance(points, bool) or not isinstance(points, (int, float)) or not abs(points) < MAX_POINTS:
            return None
        digest.update(str(float(points)).encode())
    return digest.hexdigest()


def _shown(value) -> str:
    """A metadata value as the student wrote it, capped."""
    shown = repr(value) if isinstance(value, str) else json.dumps(value)
    return shown if len(shown) <= 40 else shown[:37] + "..."


def _restore_deleted(source_cells: dict, order: dict, seen: dict, tasks: list[str], plan: CellPlan) -> None:
    """Locked cells the student deleted are put back; deleted solution cells are errors."""
    for gid, cell in source_cells.items():
        if gid in seen or cell.cell_type != "code":
            continue
        meta = nbgrader_meta(cell)
        if meta.get("solution"):
            plan.error("deleted_cell", text("issue.deleted_solution", gid=gid), gid if gid in tasks else None)
        elif not meta.get("grade") and not for_the_student(gid):
            plan.warn("deleted_cell", text("issue.deleted_locked", gid=gid))
            labels = [label for label, _ in plan.cells]
            before = [i for i, label in enumerate(labels) if order.get(label, -1) < order[gid]]
            plan.cells.insert(before[-1] + 1 if before else 0, (gid, _plain_locked(cell, plan)))

"""Each student's solution cells, kept beside the result: ``DIR/solutions/<student_id>.json``.

The class report compares every student's solution cells with every other's (similar
solutions, ``autograder.report.similarity``), and it is written over every result in the folder,
whoever graded it and when: a later ``--student`` run or the service writing one result at a
time has none of the other students' notebooks at hand. So the store keeps, with each result,
the cells that result was graded from (``{"student_id": ..., "cells": {task id: source}}``),
and the report reads them back from here. The result's JSON (SPEC §3) does not carry them.
"""
import json
from pathlib import Path

from ..files import clean, write_atomically
from ..submissions.ids import file_stem

FOLDER = "solutions"


def path(folder: Path, student_id: str) -> Path:
    return folder / FOLDER / f"{file_stem(student_id)}.json"


def save(folder: Path, student_id: str, cells: dict[str, str]) -> None:
    data = clean({"student_id": student_id, "cells": cells})
    write_atomically(path(folder, student_id), json.dumps(data, indent=1, ensure_ascii=False))


def load(folder: Path, student_id: str) -> dict[str, str] | None:
    """The cells kept for ``student_id`` (task id -> source), or None when none were kept (a
    result graded before cells were kept, or a file that is not ours)."""
    try:
        data = json.loads(path(folder, student_id).read_text(encoding="utf-8"))
        cells = data["cells"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if not isinstance(cells, dict) or not all(isinstance(v, str) for v in cells.values()):
        return None
    return {str(task): source for task, source in cells.items()}

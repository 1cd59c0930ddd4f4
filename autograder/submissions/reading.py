"""Reading a submitted notebook: streamed, keeping only what grading uses.

A notebook can be large for reasons that say nothing about its code (a 30 MB image
attachment, megabytes of widget state in its metadata, outputs). ``read_kept`` streams the
file through a JSON event parser (ijson) and keeps, of each cell, only its type, its nbgrader
metadata and, for a code cell, its source (and the notebook's format version), so the size
limit bounds what is kept, not what was handed in. Of the text cells, only the written
answers keep their text (the first cell of each grade id named in ``answers``, which the TA
reads: ``autograder.outputs.answers``), its first ``MAX_ANSWER_CHARS`` characters, with the
whole text's length where it was cut. The kept notebook is written back as compact JSON: what
the result cache keys on, what travels to a cluster's node, and what
``assemble.read_notebook`` parses. A second, larger bound stops reading a file that is too
large to stream at all.
"""
import json
from dataclasses import dataclass

import ijson
from ijson.backends import python as python_backend

CELL_KEYS = ("cell_type", "id", "source", "input", "level")   # v4 source, v3 input, v3 heading level
CELL_PREFIXES = ("cells.item", "worksheets.item.cells.item")  # nbformat 4, nbformat 3
STREAM_FACTOR = 5         # a file may be this many times the kept limit before it is not read at all
MAX_DEPTH = 100  # no notebook nests deeper than a few dozen (widget state, Vega specs)
LONG_PREFIX = 1024  # a longer path is none that grading reads
ELSEWHERE = "\x00elsewhere"  # its name: no key path grading compares with holds a NUL
OPENING, CLOSING = ("start_map", "start_array"), ("end_map", "end_array")
MAX_ANSWER_CHARS = 20_000  # of a written answer: pages of prose (real ones are 5-10 sentences)
ANSWER_LENGTH = "x_answer_length"  # a cut answer's whole length; never a key read from the file
BUFFER = 16 << 20         # the parser's reads: a long string (an attachment) costs time quadratic in
                          # its length over this buffer (150 MB: 2 s at 16 MB, 8 s of 30 MB at 64 kB)


class TooLarge(Exception):
    """More than the limit was kept (``kept``) or read (``read``); sizes in bytes."""

    def __init__(self, size: int, limit: int, what: str):
        super().__init__(what)
        self.size, self.limit, self.what = size, limit, what


class NotJSON(Exception):
    """The file is not JSON (or not UTF-8): ``reason`` says where."""

    def __init__(self, reason: str, utf8: bool):
        super().__init__(reason)
        self.reason, self.utf8 = reason, utf8


@dataclass
class _Counted:
    """A file object that counts what is read from it and stops at ``limit`` bytes."""
    handle: object
    limit: int
    size: int = 0

    def read(self, n: int = BUFFER) -> bytes:
        chunk = self.handle.read(n)
        self.size += len(chunk)
        if self.size > self.limit:
            raise TooLarge(self.size, self.limit, "read")
        return chunk


def read_kept(handle, limit: int, answers: frozenset[str] = frozenset()) -> bytes:
    """The notebook in ``handle`` (opened in binary), reduced to what grading uses, as JSON bytes;
    ``answers``: the grade ids of the written answers, whose text is kept too. Raises ``TooLarge``
    (kept more than ``limit``, or the file is above ``STREAM_FACTOR`` times it) or ``NotJSON``."""
    start = handle.tell()
    try:
        # use_float: with it, yajl reports a number beyond 64 bits as an error; without it, ijson
        # 3.6's C backend crashes the process on an integer of 5,000 digits.
        return _parsed(ijson.basic_parse, handle, limit, answers, use_float=True)
    except NotJSON as error:
        if "overflow" not in error.reason:
            raise
    # yajl takes no number beyond 64 bits (a "points": 10**400 that nothing here reads as a
    # number); Python's own parser does, more slowly.
    handle.seek(start)
    return _parsed(python_backend.basic_parse, handle, limit, answers)


def _parsed(basic_parse, handle, limit: int, answers: frozenset[str], **options) -> bytes:
    kept = _Kept(limit, answers)
    try:
        for prefix, event, value in _prefixed(basic_parse(_Counted(handle, limit * STREAM_FACTOR),
                                                          buf_size=BUFFER, **options)):
            kept.event(prefix, event, value)
    except ijson.JSONError as error:
        raise NotJSON(_first_line(error), utf8="utf8" not in _first_line(error).lower()) from None
    except UnicodeDecodeError as error:
        raise NotJSON(f"byte {error.start}", utf8=False) from None
    return kept.notebook()


def _prefixed(events):
    """ijson's ``parse`` events (prefix, event, value) from its ``basic_parse`` ones, named as
    ``ijson.common.parse_basecoro`` names them, refusing values nested beyond ``MAX_DEPTH``.
    Not ijson's own ``parse``: it names a whole buffer's events before the first reaches us,
    each by its whole path from the top (a file nested 200,000 deep in 476 kB took 24 GB).
    Here each container's prefix is made once, and one beyond ``LONG_PREFIX`` characters (no
    path grading reads is) is named ``ELSEWHERE``: no event costs more than that."""
    open_: list[list] = []  # per open container: [its own prefix, its current child's prefix]
    for event, value in events:
        child = open_[-1][1] if open_ else ""
        if event == "map_key":
            yield open_[-1][0], event, value
            open_[-1][1] = _joined(open_[-1][0], value, top=len(open_) == 1)
        elif event in OPENING:
            if len(open_) >= MAX_DEPTH:
                raise NotJSON(f"values nested more than {MAX_DEPTH} deep (a notebook needs about 6)", utf8=True)
            yield child, event, value
            open_.append([child, _joined(child, "item", top=not child) if event == "start_array" else None])
        elif event in CLOSING:
            yield open_.pop()[0], event, value
        else:  # a scalar
            yield child, event, value


def _joined(prefix: str, key: str, top: bool) -> str:
    """The prefix of ``key`` in the container named ``prefix``: alone in the file's own map, and
    an array's ``item`` alone where the array's prefix is empty (as ijson's C backend names them)."""
    if prefix is ELSEWHERE or len(prefix) + len(key) > LONG_PREFIX:
        return ELSEWHERE
    return key if top else f"{prefix}.{key}"


class _Kept:
    """Builds the kept notebook from the parser's events."""

    def __init__(self, limit: int, answers: frozenset[str] = frozenset()):
        self.limit, self.size = limit, 0
        self.answers, self.answered = answers, set()   # written answers' grade ids; those kept so far
        self.top: dict = {}
        self.cells: dict[str, list[dict]] = {prefix: [] for prefix in CELL_PREFIXES}
        self.building: tuple[dict, str, ijson.ObjectBuilder, int] | None = None   # (cell, key, builder, depth)

    def event(self, prefix: str, event: str, value) -> None:
        """A key given twice counts as json, nbformat and Jupyter read it: the last one (a second
        ``cells`` list replaces the first; a cell's second ``metadata``, its nbgrader part)."""
        if self.building is not None:
            self._feed(event, value)
        elif prefix == "cells" and event == "start_array":
            self.cells["cells.item"] = []
            self.answered = set()
        elif event == "start_map" and prefix.endswith(".metadata") and self.cells.get(prefix[: -len(".metadata")]):
            self.cells[prefix[: -len(".metadata")]][-1].pop("nbgrader", None)
        elif prefix in self.cells and event == "start_map":
            self.cells[prefix].append({})
        elif prefix in self.cells and event == "end_map":
            self._keep(self.cells[prefix][-1])
        elif prefix in ("nbformat", "nbformat_minor") and event == "number":
            self.top[prefix] = value
        else:
            self._maybe_start(prefix, event, value)

    def _maybe_start(self, prefix: str, event: str, value) -> None:
        cell_prefix, _, key = prefix.rpartition(".")
        if key == "nbgrader" and cell_prefix.endswith(".metadata"):
            cell_prefix, key = cell_prefix[: -len(".metadata")], "nbgrader"
        elif key not in CELL_KEYS:
            return
        if cell_prefix not in self.cells or not self.cells[cell_prefix]:
            return
        builder = ijson.ObjectBuilder()
        self.building = (self.cells[cell_prefix][-1], key, builder, 0)
        self._feed(event, value)

    def _keep(self, cell: dict) -> None:
        """A cell just ended: what grading does not use goes (the text of a cell that is not code,
        but a written answer's, cut to ``MAX_ANSWER_CHARS``), and what stays counts against the limit."""
        if cell.get("cell_type") != "code":
            cell.pop("input", None)
            meta = cell.get("nbgrader")
            gid = meta.get("grade_id") if isinstance(meta, dict) else None
            text = ""
            if isinstance(gid, str) and gid in self.answers and gid not in self.answered:
                self.answered.add(gid)  # the first cell of a grade id is the one graded (as assemble has it)
                text = _text(cell.get("source"))
            cell["source"] = text[:MAX_ANSWER_CHARS]
            if len(text) > MAX_ANSWER_CHARS:
                cell[ANSWER_LENGTH] = len(text)
        self.size += len(json.dumps(cell, ensure_ascii=False, default=float).encode("utf-8", "surrogatepass"))
        if self.size > self.limit:
            raise TooLarge(self.size, self.limit, "kept")

    def _feed(self, event: str, value) -> None:
        cell, key, builder, depth = self.building
        builder.event(event, value)
        depth += 1 if event in ("start_map", "start_array") else -1 if event in ("end_map", "end_array") else 0
        if depth == 0:
            cell[key] = builder.value
            self.building = None
        else:
            self.building = (cell, key, builder, depth)

    def notebook(self) -> bytes:
        version = self.top.get("nbformat")
        notebook: dict = {"metadata": {}, **self.top}
        if self.cells["worksheets.item.cells.item"] and version != 4:
            notebook["worksheets"] = [{"cells": [_cell(c) for c in self.cells["worksheets.item.cells.item"]]}]
        else:
            notebook["cells"] = [_cell(c) for c in self.cells["cells.item"]]
        # \u escapes (lone surrogates too); a Decimal (the Python parser's) as the float it is
        return json.dumps(notebook, separators=(",", ":"), default=float).encode("ascii")


def _text(source) -> str:
    """A text cell's source as one string (nbformat allows a list of lines); anything else: none."""
    if isinstance(source, list):
        return "".join(part for part in source if isinstance(part, str))
    return source if isinstance(source, str) else ""


def _cell(kept: dict) -> dict:
    """A kept cell as nbformat wants it: code cells get empty outputs, every cell its metadata."""
    cell = {key: kept[key] for key in (*CELL_KEYS, ANSWER_LENGTH) if key in kept}
    cell["metadata"] = {"nbgrader": kept["nbgrader"]} if "nbgrader" in kept else {}
    if cell.get("cell_type") == "code":
        cell["outputs"], cell["execution_count"] = [], None
    return cell


def _first_line(error: Exception) -> str:
    """The parser's reason, without the lines that quote the file (yajl's message is bytes)."""
    reason = error.args[0] if error.args else type(error).__name__
    if isinstance(reason, bytes):
        reason = reason.decode("utf-8", "replace")
    line = (str(reason).strip().splitlines() or [type(error).__name__])[0]
    return line if len(line) <= 120 else line[:117] + "..."

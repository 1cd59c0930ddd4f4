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

What is kept is counted while it is built, never after (SPEC §3: work on what a student controls
grows with its size): its characters against the limit, and its values (every number, string,
key, list and map) against ``MAX_VALUES``, so that no value is built beyond a bound (red team 13:
nbgrader metadata of many tiny containers took the grader to 2.4 GB for 15.5 MB). A cell's
source given as a list of lines is joined as it comes, as nbformat joins it, so a line costs its
characters only. What is not kept (outputs, attachments, other metadata) is passed over without
naming its paths: its cost is the parser's alone.

The parser pushes each event to ``_Namer`` as it meets it (ijson's generators first gather every
event of a read into a list: 16 MB of tiny containers made hundreds of MB of events), and the
file is read in chunks of ``CHUNK`` bytes, doubled while a chunk brings no event: yajl reads a
token it has not finished again from its start at each chunk, so a long string (an attachment)
read in fixed chunks costs time quadratic in its length, in doubling ones linear.
"""
import io
import json
from dataclasses import dataclass

import ijson
from ijson.backends import python as python_backend

CELL_KEYS = ("cell_type", "id", "source", "input", "level")   # v4 source, v3 input, v3 heading level
CELL_PREFIXES = ("cells.item", "worksheets.item.cells.item")  # nbformat 4, nbformat 3
STREAM_FACTOR = 5         # a file may be this many times the kept limit before it is not read at all
MAX_DEPTH = 100  # no notebook nests deeper than a few dozen (widget state, Vega specs)
NOT_NOTEBOOK_EVENTS = 1 << 16   # a top that is no map: read this far (to tell what is not JSON), then refused
MAX_VALUES = 100_000   # values kept (a cell and its nbgrader metadata are about 20; a line of code none)
KEPT_VALUES = tuple(f"{cells}.{key}" for cells in CELL_PREFIXES for key in (*CELL_KEYS, "metadata.nbgrader"))
LEADING = {"", "cells", "worksheets", "worksheets.item", "worksheets.item.cells", *CELL_PREFIXES,
           *(f"{c}.metadata" for c in CELL_PREFIXES)}   # containers on the way to what is kept
LONG_PREFIX = 1024  # a longer path is none that grading reads
ELSEWHERE = "\x00elsewhere"  # its name: no key path grading compares with holds a NUL
OPENING, CLOSING = ("start_map", "start_array"), ("end_map", "end_array")
CHUNK = 64 << 10          # the parser's first read, and again after each chunk with events in it
MAX_ANSWER_CHARS = 20_000  # of a written answer: pages of prose (real ones are 5-10 sentences)
ANSWER_LENGTH = "x_answer_length"  # a cut answer's whole length; never a key read from the file


class TooLarge(Exception):
    """More than the limit was kept (``kept``, in bytes) or read (``read``, in bytes), or more
    values than ``MAX_VALUES`` were kept (``values``)."""

    def __init__(self, size: int, limit: int, what: str):
        super().__init__(what)
        self.size, self.limit, self.what = size, limit, what


class NotNotebook(Exception):
    """JSON, but not a notebook: no map at the top, or no list of cells and nbformat version."""


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

    def read(self, n: int) -> bytes:
        chunk = self.handle.read(n)
        self.size += len(chunk)
        if self.size > self.limit:
            raise TooLarge(self.size, self.limit, "read")
        return chunk


def read_kept(handle, limit: int, answers: frozenset[str] = frozenset()) -> bytes:
    """The notebook in ``handle`` (opened in binary), reduced to what grading uses, as JSON bytes;
    ``answers``: the grade ids of the written answers, whose text is kept too. Raises ``TooLarge``
    (kept more than ``limit`` or ``MAX_VALUES``, or the file is above ``STREAM_FACTOR`` times it)
    or ``NotJSON``."""
    return _read(handle, limit, strict=False, answers=answers).notebook()


def check_notebook(handle, limit: int) -> set[str]:
    """Whether ``handle`` holds a notebook, read as ``read_kept`` reads it (streamed, bounded):
    a map at the top (refused within ``NOT_NOTEBOOK_EVENTS`` otherwise) with a list of cells and
    an integer nbformat; its cells' grade ids (the kept nbgrader metadata's). Raises
    ``NotNotebook``, ``NotJSON`` or ``TooLarge``."""
    kept = _read(handle, limit, strict=True)
    if not kept.has_cells or type(kept.top.get("nbformat")) is not int:
        raise NotNotebook("no list of cells and nbformat version")
    return {gid for cells in kept.cells.values() for cell in cells if (gid := _grade_id(cell)) is not None}


def _grade_id(cell: dict) -> str | None:
    """A kept cell's nbgrader grade id, as JSON gives it (nothing else is trusted)."""
    nbgrader = cell.get("nbgrader")
    gid = nbgrader.get("grade_id") if type(nbgrader) is dict else None
    return gid if type(gid) is str else None


def _read(handle, limit: int, strict: bool, answers: frozenset[str] = frozenset()) -> "_Kept":
    start = handle.tell()
    try:
        # use_float: with it, yajl reports a number beyond 64 bits as an error; without it, ijson
        # 3.6's C backend crashes the process on an integer of 5,000 digits.
        return _parsed(ijson.basic_parse_coro, handle, limit, strict, answers, use_float=True)
    except NotJSON as error:
        if "overflow" not in error.reason:
            raise
    # yajl takes no number beyond 64 bits (a "points": 10**400 that nothing here reads as a
    # number); Python's own parser does, more slowly.
    handle.seek(start)
    return _parsed(python_backend.basic_parse_coro, handle, limit, strict, answers)


def _parsed(parser_of, handle, limit: int, strict: bool, answers: frozenset[str], **options) -> "_Kept":
    kept = _Kept(limit, answers)
    namer = _Namer(kept.event, wanted=_wanted, strict=strict)
    file, size = _Counted(handle, limit * STREAM_FACTOR), CHUNK
    try:
        parser = parser_of(namer, **options)
        while chunk := file.read(size):
            seen = namer.events
            parser.send(chunk)
            size = size * 2 if namer.events == seen else CHUNK
        parser.close()
    except ijson.JSONError as error:
        raise NotJSON(_first_line(error), utf8="utf8" not in _first_line(error).lower()) from None
    except UnicodeDecodeError as error:
        raise NotJSON(f"byte {error.start}", utf8=False) from None
    return kept


def _wanted(prefix: str) -> bool:
    """Whether a container named ``prefix`` may hold what is kept (else it is passed over)."""
    return prefix in LEADING or prefix.startswith(KEPT_VALUES)


class _Namer:
    """Takes the parser's events one by one (``send``) and hands ``sink(prefix, event, value)``
    each, named as ijson's own ``parse`` names them (``ijson.common.parse_basecoro``), refusing
    values nested beyond ``MAX_DEPTH``. Not ijson's own ``parse``: it names a whole buffer's
    events before the first reaches us, each by its whole path from the top (a file nested
    200,000 deep in 476 kB took 24 GB). Here each container's prefix is made once, and one beyond
    ``LONG_PREFIX`` characters (no path grading reads is) is named ``ELSEWHERE``: no event costs
    more than that. A container whose prefix ``wanted`` refuses is passed over whole, none of its
    events named; with ``strict``, a top that is not a map is passed over and refused
    (``NotNotebook``) after ``NOT_NOTEBOOK_EVENTS`` events, or as not JSON before them."""

    def __init__(self, sink, wanted=None, strict: bool = False):
        self.sink, self.wanted, self.strict = sink, wanted, strict
        self.open: list[list] = []   # per open container: [its own prefix, its current child's prefix]
        self.passing = 0             # depth inside a container passed over (0: none)
        self.outside = False         # passing over a top that is no map (with strict)
        self.events = 0

    def send(self, event_value: tuple) -> None:
        event, value = event_value
        self.events += 1
        if self.passing:
            self._pass(event)
            return
        child = self.open[-1][1] if self.open else ""
        if event == "map_key":
            self.sink(self.open[-1][0], event, value)
            self.open[-1][1] = _joined(self.open[-1][0], value, top=len(self.open) == 1)
        elif event in OPENING:
            self._deeper(len(self.open) + 1)
            outside = self.strict and not self.open and event != "start_map"
            if outside or self.wanted is not None and child and not self.wanted(child):
                self.passing, self.outside = 1, outside
                return
            self.sink(child, event, value)
            self.open.append([child, _joined(child, "item", top=not child) if event == "start_array" else None])
        elif event in CLOSING:
            self.sink(self.open.pop()[0], event, value)
        else:  # a scalar
            self.sink(child, event, value)

    def _pass(self, event: str) -> None:
        if self.outside and self.events > NOT_NOTEBOOK_EVENTS:
            raise NotNotebook("not a JSON object")
        if event in OPENING:
            self.passing += 1
            self._deeper(len(self.open) + self.passing)
        elif event in CLOSING:
            self.passing -= 1

    @staticmethod
    def _deeper(depth: int) -> None:
        if depth > MAX_DEPTH:
            raise NotJSON(f"values nested more than {MAX_DEPTH} deep (a notebook needs about 6)", utf8=True)


def _joined(prefix: str, key: str, top: bool) -> str:
    """The prefix of ``key`` in the container named ``prefix``: alone in the file's own map, and
    an array's ``item`` alone where the array's prefix is empty (as ijson's C backend names them)."""
    if prefix is ELSEWHERE or len(prefix) + len(key) > LONG_PREFIX:
        return ELSEWHERE
    return key if top else f"{prefix}.{key}"


class _Kept:
    """Builds the kept notebook from the parser's events."""

    def __init__(self, limit: int, answers: frozenset[str] = frozenset()):
        self.limit, self.size, self.values = limit, 0, 0
        self.answers, self.answered = answers, set()   # written answers' grade ids; those kept so far
        self.top: dict = {}
        self.has_cells = False
        self.cells: dict[str, list[dict]] = {prefix: [] for prefix in CELL_PREFIXES}
        self.building: _Value | None = None

    def event(self, prefix: str, event: str, value) -> None:
        """A key given twice counts as json, nbformat and Jupyter read it: the last one (a second
        ``cells`` list replaces the first; a cell's second ``metadata``, its nbgrader part)."""
        if self.building is not None:
            self._feed(event, value)
        elif prefix == "cells" and event == "start_array":
            self.cells["cells.item"], self.has_cells = [], True
            self.answered = set()
        elif event == "start_map" and prefix.endswith(".metadata") and self.cells.get(prefix[: -len(".metadata")]):
            self.cells[prefix[: -len(".metadata")]][-1].pop("nbgrader", None)
        elif prefix in self.cells and event == "start_map":
            self.count(1)
            self.cells[prefix].append({})
        elif prefix in self.cells and event == "end_map":
            self._keep(self.cells[prefix][-1])
        elif prefix in ("nbformat", "nbformat_minor") and event == "number":
            self.top[prefix] = value
        else:
            self._maybe_start(prefix, event, value)

    def count(self, values: int, size: int = 0) -> None:
        """``values`` more values of ``size`` characters kept: refused past either bound."""
        self.values, self.size = self.values + values, self.size + size + values
        if self.values > MAX_VALUES:
            raise TooLarge(self.values, MAX_VALUES, "values")
        if self.size > self.limit:
            raise TooLarge(self.size, self.limit, "kept")

    def _maybe_start(self, prefix: str, event: str, value) -> None:
        cell_prefix, _, key = prefix.rpartition(".")
        if key == "nbgrader" and cell_prefix.endswith(".metadata"):
            cell_prefix, key = cell_prefix[: -len(".metadata")], "nbgrader"
        elif key not in CELL_KEYS:
            return
        if cell_prefix not in self.cells or not self.cells[cell_prefix]:
            return
        cell = self.cells[cell_prefix][-1]
        if key in ("source", "input") and cell.get("cell_type", "code") != "code":
            # the text of a cell that is not code: read and dropped, but a written answer's
            self.building = _Value(self, cell, key, join=True, cap=MAX_ANSWER_CHARS) if self._may_answer(cell) \
                else _Value(self, cell, key, kept=False)
        else:
            self.building = _Value(self, cell, key, join=key in ("source", "input"))
        self._feed(event, value)

    def _may_answer(self, cell: dict) -> bool:
        """Whether a text cell may be a written answer still to keep (its grade id is one of
        ``answers``, or not known yet: its metadata may come after its text)."""
        if not self.answers:
            return False
        gid = _grade_id(cell)
        return gid is None and "nbgrader" not in cell or gid in self.answers and gid not in self.answered

    def _keep(self, cell: dict) -> None:
        """A cell just ended: what grading does not use goes (the text of a cell that is not code,
        but a written answer's, cut to ``MAX_ANSWER_CHARS``) and gives back what it counted."""
        if cell.get("cell_type") == "code":
            return
        text = next((cell[key] for key in ("source", "input") if isinstance(cell.get(key), str)), "")
        for key in ("input", "source"):
            if isinstance(cell.get(key), str):
                self.size -= len(cell[key])
        cell.pop("input", None)
        gid = _grade_id(cell)
        if gid in self.answers and gid not in self.answered:
            self.answered.add(gid)  # the first cell of a grade id is the one graded (as assemble has it)
            cell["source"] = text[:MAX_ANSWER_CHARS]   # cut as it was read
            self.size += len(cell["source"])
        else:
            cell["source"] = ""
            cell.pop(ANSWER_LENGTH, None)

    def _feed(self, event: str, value) -> None:
        if self.building.event(event, value):
            self.building = None

    def notebook(self) -> bytes:
        version = self.top.get("nbformat")
        notebook: dict = {"metadata": {}, **self.top}
        if self.cells["worksheets.item.cells.item"] and version != 4:
            notebook["worksheets"] = [{"cells": [_cell(c) for c in self.cells["worksheets.item.cells.item"]]}]
        else:
            notebook["cells"] = [_cell(c) for c in self.cells["cells.item"]]
        # \u escapes (lone surrogates too); a Decimal (the Python parser's) as the float it is
        return json.dumps(notebook, separators=(",", ":"), default=float).encode("ascii")


class _Value:
    """One kept value of a cell, built from its events and counted as it grows: a source given as
    a list is joined (its strings; nbformat and ``assemble`` ignore the rest), anything else is
    built as it is. With ``kept`` False the value is read and dropped (a markdown cell's text);
    with ``cap``, a text keeps (and counts) its first ``cap`` characters only, its whole length
    noted as ``ANSWER_LENGTH`` where it was cut (a written answer)."""

    def __init__(self, kept_notebook: _Kept, cell: dict, key: str, join: bool = False, kept: bool = True,
                 cap: int | None = None):
        self.notebook, self.cell, self.key, self.join, self.kept = kept_notebook, cell, key, join, kept
        self.depth, self.cap, self.total = 0, cap, 0
        self.builder = ijson.ObjectBuilder()
        self.lines: io.StringIO | None = None

    def _capped(self, value: str, written: int) -> str:
        """What of a string is kept: all of it, or what is left of ``cap``."""
        self.total += len(value)
        return value if self.cap is None else value[:max(0, self.cap - written)]

    def event(self, event: str, value) -> bool:
        """Takes one event; True once the value is complete (and stored in its cell)."""
        first = self.depth == 0
        self.depth += 1 if event in OPENING else -1 if event in CLOSING else 0
        if not self.kept:
            pass
        elif first and self.join and event == "start_array":
            self.lines = io.StringIO()
        elif self.lines is not None:
            if self.depth == 1 and event == "string":
                value = self._capped(value, self.lines.tell())
                self.notebook.count(0, len(value))
                self.lines.write(value)
        else:
            if isinstance(value, str) and self.cap is not None:
                value = self._capped(value, 0)
            self.notebook.count(event not in CLOSING, len(value) if isinstance(value, str) else 0)
            self.builder.event(event, value)
        if self.depth:
            return False
        if self.kept:
            self._store()
        return True

    def _store(self) -> None:
        self.cell[self.key] = self.lines.getvalue() if self.lines is not None else self.builder.value
        if self.cap is not None and self.total > self.cap:
            self.cell[ANSWER_LENGTH] = self.total


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

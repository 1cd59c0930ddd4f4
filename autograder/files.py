"""The rules every file the grader writes follows: valid UTF-8, no spreadsheet formula,
atomic replacement.

- ``clean_text``: one rule for text that is not valid UTF-8 (each undecodable byte becomes
  ``\\xNN``, so a cp1251 file name unpacked on Linux keeps a readable, stable id);
- ``spreadsheet_safe``: a text cell that starts like a formula (``=``, ``+``, ``-``, ``@``,
  a tab or a carriage return) gets a leading ``'``, which a spreadsheet shows as text; so does
  one that starts with ``'`` itself, so that the rule is one-to-one and ``from_spreadsheet``
  undoes it (``=x`` is written ``'=x``, and ``'=x`` is written ``''=x``);
- ``visible``: text with every character that does not show as itself written out, so two ids
  never look alike on a page;
- ``csv_text``: a CSV table with both rules applied to every text cell (numbers stay numbers);
- ``write_atomically``: a reader sees the old file or the new one, never half of one.

Torch-free and free of the rest of the package, so the store, the pages and the exports can
all use it (a student id's file name is ``ids.file_stem``'s).
"""
import csv
import io
import os
import re
import tempfile
import unicodedata
from collections.abc import Iterable
from pathlib import Path

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
GUARD = "'"  # a leading ' makes a spreadsheet show the rest of the cell as text
# C0, DEL and C1 (what a terminal acts on), and the invisible format characters that reorder or
# hide text around them on a page or a terminal: zero-width ones, direction marks, embeddings,
# overrides and isolates, the word joiner, the byte-order mark (red team 10: a message's U+202E
# reversed the grader's own words after it).
CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]")


def written_out(value: str, keep: str = "") -> str:
    """``value`` with each control or invisible format character not in ``keep`` written out as
    its escape (``\\x1b``, ``\\n``, ``\\u202e``): text from a submission (an id, a message) that
    the TA's terminal shows, ``cat`` prints from a Markdown file, or a page shows, acts on nothing
    (no cleared screen, no title set, no line of the student's own in the log, no words of the
    grader's reversed)."""
    return CONTROL.sub(lambda found: found.group() if found.group() in keep else _escape(found.group()), value)


def _escape(char: str) -> str:
    return repr(char)[1:-1] if ord(char) < 0x100 else _code_point(char)


def _code_point(char: str) -> str:
    """``\\uNNNN`` (``\\UNNNNNNNN`` beyond the basic plane): the character written out."""
    return f"\\u{ord(char):04x}" if ord(char) <= 0xFFFF else f"\\U{ord(char):08x}"


def visible(value: str) -> str:
    """``value`` (an id) with every character that does not show as itself written out, so
    that a page or a Markdown file never shows two ids alike: controls, format characters
    (zero width, direction marks), line and paragraph separators, every space but U+0020,
    combining marks and letters of another script than the id's first letter (look-alikes)
    as ``\\xNN`` below U+0080 (``\\n``, ``\\t``, ``\\r`` by name) and ``\\uNNNN`` above it (a
    ``\\xNN`` above stands for an undecodable byte of a file name), and a U+0020 at either end
    or beside another as ``\\x20`` (a page drops or merges those). An id made by
    ``ids.student_id`` holds a backslash only doubled or in an escape of its own, so no
    escape written here reads as the id's own text."""
    value = clean_text(value)
    script = next((_script(char) for char in value if char.isalpha()), None)
    return "".join(_visible(char, value[index - 1:index], value[index + 1:index + 2], script)
                   for index, char in enumerate(value))


def _script(char: str) -> str:
    """A letter's script, as the first word of its Unicode name (LATIN, CYRILLIC, GREEK)."""
    return unicodedata.name(char, "?").split(" ")[0]


def _visible(char: str, before: str, after: str, script: str | None) -> str:
    if char == " ":
        return char if before not in ("", " ") and after not in ("", " ") else "\\x20"
    if unicodedata.category(char).startswith("M") or (char.isalpha() and _script(char) != script):
        # a combining mark (e + U+0301 shows as é), or a letter of another script than the id's
        # first (a Cyrillic а inside a Latin name): written out, so look-alikes differ (red team 10)
        return _code_point(char)
    if char.isprintable():
        return char
    if char in "\n\t\r":
        return repr(char)[1:-1]
    return f"\\x{ord(char):02x}" if ord(char) < 0x80 else _code_point(char)


def clean_text(value: str) -> str:
    """``value`` as valid UTF-8: undecodable bytes (surrogate escapes) and lone surrogates
    become ``\\xNN`` escapes of their bytes."""
    try:
        raw = value.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        raw = value.encode("utf-8", "surrogatepass")
    return raw.decode("utf-8", "backslashreplace")


def clean(value):
    """``clean_text`` on every string of a JSON-like tree."""
    if isinstance(value, str):
        return clean_text(value)
    if isinstance(value, list):
        return [clean(item) for item in value]
    if isinstance(value, dict):
        return {clean_text(str(key)): clean(item) for key, item in value.items()}
    return value


def spreadsheet_safe(value: str) -> str:
    """A text cell that a spreadsheet will not run as a formula: a ``'`` before text that
    starts like a formula or with a ``'`` of its own (without the second rule, students
    ``=x`` and ``'=x`` were one row ``'=x``, and a TA's points for one went to the other)."""
    return GUARD + value if value.startswith((*FORMULA_STARTS, GUARD)) else value


def from_spreadsheet(cell: str) -> str:
    """The text that ``spreadsheet_safe`` wrote as ``cell``: its one added ``'`` removed. A
    cell it cannot have written (``'bob``: ``bob`` is written bare) is kept as it is."""
    unguarded = cell.removeprefix(GUARD)
    return unguarded if unguarded != cell and unguarded.startswith((*FORMULA_STARTS, GUARD)) else cell


def safe_cell(value: str | float | int | None) -> str | float | int:
    """One CSV cell: None is empty, a number stays a number, text is cleaned and formula-safe."""
    if value is None:
        return ""
    if isinstance(value, str):
        return spreadsheet_safe(clean_text(value))
    return value


def csv_text(header: list[str], rows: Iterable[Iterable[str | float | int | None]]) -> str:
    """A CSV table (``\\n`` line ends) whose every text cell passed ``safe_cell``."""
    return csv_lines([[safe_cell(name) for name in header], *([safe_cell(cell) for cell in row] for row in rows)])


def csv_lines(rows: Iterable[Iterable], newline: str = "\n") -> str:
    """``rows`` as CSV lines ended by ``newline``, a cell holding a line break of either kind
    quoted. (The csv module quotes only the characters of its own line end: written with
    ``\\n``, a student id ``mallory\\ralice`` went out bare, and a spreadsheet or an LMS read
    it as a second row for alice.)"""
    out, lines = io.StringIO(), []
    writer = csv.writer(out, lineterminator="\r\n")
    for row in rows:
        out.seek(0)
        out.truncate()
        writer.writerow(row)
        lines.append(out.getvalue()[:-2] + newline)
    return "".join(lines)


def write_atomically(path: Path, content: str) -> None:
    """Write ``content`` so that a reader sees the old file or the new one, never half of one,
    even after a power cut (a batch can be killed at any moment and resumed): a hidden
    ``.<name>.*.tmp`` beside it, flushed to disk, then renamed over it, with the mode the
    TA's umask gives a new file (mkstemp's own is private)."""
    _written_then(path, content, lambda temporary: os.replace(temporary, path))


def write_new(path: Path, content: str) -> bool:
    """Write ``content`` as ``write_atomically`` does, only where no file ``path`` is: a file the
    TA made meanwhile is never replaced (linked into place, which fails where one is). False
    when there was one."""
    try:
        _written_then(path, content, lambda temporary: os.link(temporary, path))
    except FileExistsError:
        return False
    return True


def _written_then(path: Path, content: str, place) -> None:
    """``content`` in a hidden temporary file beside ``path``, on disk, then ``place(temporary)``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="") as out:
            out.write(content)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(temporary, 0o666 & ~UMASK)
        place(temporary)
    finally:
        Path(temporary).unlink(missing_ok=True)  # after a link (or a failure); a rename left nothing


def _umask() -> int:
    """This process's umask, read once at import (``os.umask`` sets it to read it: a thread
    creating a file meanwhile would get the wrong mode)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


UMASK = _umask()

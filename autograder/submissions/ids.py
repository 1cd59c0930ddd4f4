"""Student ids: parsed once from a file or folder name, then formatted for each consumer here.

An id comes from a name the file system gave (a folder under ``submitted/``, a notebook's
stem), so it may hold any bytes. One rule makes it valid UTF-8 and keeps two names apart:
a backslash is doubled and each byte that is not UTF-8 becomes ``\\xNN`` (a cp1251 name
unpacked on Linux, and a folder literally named by that escape, are two students).

Each consumer gets its own form, and nobody else formats an id:
- ``file_stem``: the name of the student's files, one-to-one (two ids never share a file);
- nbgrader's paths are globs (``CourseDirectory.student_id``): ``glob.escape`` the folder's
  own name before handing it over (gradebook/nbgrader_course.py);
- spreadsheets: ``files.spreadsheet_safe`` on every text cell (grades.csv, the csv export);
- an id a person gives back (``show ID``, ``--student``, ``manual_points.csv``): ``given``,
  which reads it as grades.csv writes it, one rule for all of them.
"""
import hashlib

from ..files import clean_text, from_spreadsheet

MAX_STEM_BYTES = 160     # leaves room for ".<stem>.json.<random>.tmp" within 255 bytes
LONG_MARK = "~"          # only a shortened stem holds it: ``file_stem`` escapes it otherwise
DIGEST_CHARS = 16


def student_id(name: str) -> str:
    """The id of a file system name (a ``str`` holding surrogate escapes for undecodable bytes)."""
    try:
        raw = name.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # a lone surrogate that no byte stands for
        raw = name.encode("utf-8", "surrogatepass")
    # A backslash is one byte and never part of a longer UTF-8 sequence: doubled first, it
    # cannot be confused with the escapes that the decoding writes for undecodable bytes.
    return raw.replace(b"\\", b"\\\\").decode("utf-8", "backslashreplace")


def given(text: str) -> str:
    """The id a person means by ``text`` (typed after ``show`` or ``--student``, or a cell of
    ``manual_points.csv``): the id as grades.csv writes it, so the ``'`` it puts before an id
    that starts like a formula or with a ``'`` of its own is not part of the id (``'-dash`` is
    student ``-dash``, ``''-dash`` student ``'-dash``); any other text is the id itself. One rule
    for every reader (red team 13: ``show "'-dash"`` showed ``'-dash`` while manual_points.csv
    gave ``-dash`` the points of that same cell)."""
    return from_spreadsheet(clean_text(text))


def _unsafe(char: str, first: bool) -> bool:
    """A character that cannot stand for itself in a file name (or would read as another form)."""
    return char in "/\0%" or char == LONG_MARK or ord(char) < 0x20 or ord(char) == 0x7F or (first and char == ".")


def file_stem(student_id: str) -> str:
    """The student's file name without extension: the id itself where every character may
    stand in a file name; otherwise those characters as ``%XX`` of their UTF-8 bytes (``%``
    itself included, so no two ids meet); an id whose stem would not fit is cut, with
    ``~`` and a digest of the whole id (``~`` never appears in a stem that was not cut).
    An id that is not valid UTF-8 (made without ``student_id``) is named as it is written
    (``files.clean_text``), so its file holds the id the file is named by."""
    student_id = clean_text(student_id)
    parts = []
    for index, char in enumerate(student_id):
        if _unsafe(char, index == 0):
            parts.append("".join(f"%{byte:02X}" for byte in char.encode("utf-8")))
        else:
            parts.append(char)
    stem = "".join(parts)
    if stem and len(stem.encode("utf-8")) <= MAX_STEM_BYTES:
        return stem
    digest = hashlib.sha256(student_id.encode("utf-8")).hexdigest()[:DIGEST_CHARS]
    room = MAX_STEM_BYTES - len(LONG_MARK) - DIGEST_CHARS
    kept, size = [], 0
    for part in parts:  # whole characters and whole %XX groups only
        size += len(part.encode("utf-8"))
        if size > room:
            break
        kept.append(part)
    return f"{''.join(kept)}{LONG_MARK}{digest}"

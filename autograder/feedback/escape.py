"""Markdown that shows any text as it is: the one place that escapes text for Markdown.

The student's feedback (``feedback/markdown.py``) and the class report
(``pages/class_markdown.py``) both write with these. Text from a submission (an error
message, a student id) can hold Markdown: as words it is escaped; as code it goes into a
span or a fence longer than any backtick run it contains, so it can never open a block of
its own (a forged score, say). An identifier (``code``) is shown character for character:
what a page would drop or merge (a line break, a leading space) is written out, so no
student shows under another's id.
"""
import re

from ..files import visible, written_out

# ( ) and ! only matter after [ ], which are escaped; no line starts with escaped text, so
# the line-start markers (#, -, +, 1.) need nothing more than # escaped.
SPECIAL = re.compile(r"([\\`*_{}\[\]<>#|~])")


def md(value: object) -> str:
    """Plain text on one line that Markdown shows as it is (no emphasis, link, HTML or table
    cell break)."""
    return SPECIAL.sub(r"\\\1", written_out(" ".join(str(value).split())))


def words(value: str) -> str:
    """A run of words inside a sentence, escaped as ``md`` does, its edge spaces kept."""
    return SPECIAL.sub(r"\\\1", written_out(re.sub(r"\s+", " ", value)))


def _fence(value: str, shortest: int) -> str:
    return "`" * max(shortest, max((len(run) for run in re.findall(r"`+", value)), default=0) + 1)


def inline_code(value: object) -> str:
    """An inline code span that holds any text, on one line."""
    flat = written_out(" ".join(str(value).split()))
    fence = _fence(flat, 1)
    pad = " " if flat.startswith(("`", " ")) or flat.endswith(("`", " ")) or "`" in flat else ""
    return f"{fence}{pad}{flat}{pad}{fence}"


def code(value: object) -> str:
    """An identifier (a student id, a task id) as an inline code span for a table cell, every
    character shown (``files.visible``: ``a b`` and ``a\\nb`` stay two ids to the eye, and so do
    ``=1+2`` and the same after a space) and its ``|`` escaped, as a table needs."""
    return inline_code(visible(str(value)).replace("|", "\\|"))


def fenced(block: str) -> list[str]:
    """A fenced code block's lines; the fence outgrows any run of backticks in ``block``."""
    block = written_out(block, keep="\n\t")
    fence = _fence(block, 3)
    return [fence + "text", *block.rstrip("\n").splitlines(), fence]

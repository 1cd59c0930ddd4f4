"""Do the released folders keep the TA's solutions and hidden tests secret?

The rule, per assignment: a *secret line* is a line inside a ``### BEGIN SOLUTION`` /
``### END SOLUTION`` or ``### BEGIN HIDDEN TESTS`` / ``### END HIDDEN TESTS`` region of
the source notebook (code and markdown cells, so TA rubrics too). Lines are compared
stripped; blank lines, comment-only lines (starting with ``#``) and lines that also appear
in the source notebook outside those regions (the skeleton the student gets anyway, e.g.
``super().__init__()``) are not secret. A leak is a secret line that appears as a line of
any file in the assignment's released folder (notebook cells and outputs, the helper
package and its zip) or of the release's top-level files.
"""
import zipfile
from pathlib import Path

import pytest

from .cells import ASSIGNMENTS, REPO, nbgrader, read, source_path, split_regions


def secret_lines(assignment: str) -> dict[str, set[str]]:
    """grade_id -> the secret lines of that cell (see the module docstring)."""
    inside, outside = {}, set()
    for cell in read(source_path(assignment)).cells:
        skeleton, hidden = split_regions(cell.source)
        outside |= {line.strip() for line in skeleton}
        if hidden:
            inside[nbgrader(cell).get("grade_id", cell.id)] = {line.strip() for line in hidden}
    return {cell: {line for line in lines if line and not line.startswith("#")} - outside
            for cell, lines in inside.items()}


def released_lines(path: Path) -> list[str]:
    """The stripped lines of a released file; of a notebook's cells and outputs; of a zip's files."""
    if path.suffix == ".zip":
        with zipfile.ZipFile(path) as archive:
            texts = [archive.read(name).decode("utf-8") for name in archive.namelist()]
        return [line.strip() for text in texts for line in text.split("\n")]
    if path.suffix != ".ipynb":
        return [line.strip() for line in path.read_text(encoding="utf-8").split("\n")]
    texts = []
    for cell in read(path).cells:
        texts.append(cell.source)
        for output in cell.get("outputs", []):
            texts.append(output.get("text", ""))
            texts.extend(str(value) for value in output.get("data", {}).values())
    return [line.strip() for text in texts for line in text.split("\n")]


def leaks(secrets: dict[str, set[str]], files: list[Path]) -> list[str]:
    every_secret = set().union(*secrets.values())
    return [f"{path.name}: {line}" for path in files for line in released_lines(path)
            if line in every_secret]


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_every_task_has_secrets(assignment):
    """Is the rule not vacuous: does every solution and hidden-test cell keep a secret line?"""
    secrets = secret_lines(assignment)
    empty = [cell for cell, lines in secrets.items() if not lines]
    assert secrets and not empty, f"cells whose regions hold no secret line: {empty}"


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_no_solution_or_hidden_test_line_is_released(release_dir, assignment):
    """Does no secret line of the assignment appear anywhere in its released folder?"""
    files = [path for path in sorted((release_dir / assignment).rglob("*")) if path.is_file()]
    files += [release_dir / "README.md", release_dir / "requirements.txt"]
    assert not leaks(secret_lines(assignment), files)


def test_the_rule_would_catch_the_book_in_attention_scoring():
    """Would shipping reference/book.py (the published answers) with attention_scoring be caught?"""
    assert leaks(secret_lines("attention_scoring"), [REPO / "reference" / "book.py"])

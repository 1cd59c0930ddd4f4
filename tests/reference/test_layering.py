"""Import layering (STYLE §1): reference never imports the autograder, and the modules shipped
to students never import the secret solutions."""
import ast
from pathlib import Path

import pytest

import reference

PACKAGE = Path(reference.__file__).parent
PUBLIC = ("book", "seq2seq", "data", "training", "bleu", "plots")  # shipped to students
SECRET = ("reference.attention", "reference.decoders", "reference.book_decoder")  # the answers


def imported_modules(path: Path) -> set[str]:
    """Absolute names of every module ``path`` imports (relative imports resolved in reference)."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = f"reference.{node.module or ''}".rstrip(".") if node.level else node.module
            names.add(base)
            names |= {f"{base}.{alias.name}" for alias in node.names}  # `from . import attention`
    return names


@pytest.mark.parametrize("path", sorted(PACKAGE.glob("*.py")), ids=lambda p: p.name)
def test_reference_never_imports_the_autograder(path):
    """Does no reference module import ``autograder`` (reference is pure torch math)?"""
    assert not {n for n in imported_modules(path) if n.split(".")[0] == "autograder"}


@pytest.mark.parametrize("module", PUBLIC)
def test_public_modules_never_import_the_solutions(module):
    """Does no module shipped to students import reference.attention, decoders or book_decoder?"""
    names = imported_modules(PACKAGE / f"{module}.py")
    assert not {n for n in names if n.startswith(SECRET)}, names


def test_the_import_parser_sees_relative_imports():
    """Does the parser resolve ``from .attention import X`` and ``from . import decoders``?"""
    names = imported_modules(PACKAGE / "__init__.py")
    assert "reference.attention" in names and "reference.decoders" in names

"""``make release``: is the committed student_template/ exactly what the release step makes?"""
import ast
import subprocess
import sys
from pathlib import Path

import pytest

from .cells import ASSIGNMENTS, REPO

TEMPLATE = REPO / "student_template"
# What running a released notebook leaves behind (Python's bytecode, hypothesis's cache
# when a hidden test cell runs there); git ignores both.
NOT_RELEASED = {"__pycache__", ".hypothesis"}
HEADER = "# Generated from reference/{}.py by `make release`; do not edit.\n"


def tree(root: Path) -> dict[str, bytes]:
    return {str(path.relative_to(root)): path.read_bytes() for path in sorted(root.rglob("*"))
            if path.is_file() and not NOT_RELEASED & set(path.relative_to(root).parts)}


def test_template_is_exactly_the_release(release_dir):
    """Does regenerating the release reproduce student_template/ byte for byte?

    nbgrader's generate_assignment is deterministic here (checksums are md5s of the cell
    sources, cell ids come from the source notebook, no timestamps), so nothing is ignored
    but the run-time leftovers in NOT_RELEASED.
    """
    expected, committed = tree(release_dir), tree(TEMPLATE)
    assert sorted(committed) == sorted(expected), "run `make release` and commit student_template/"
    changed = [name for name in expected if committed[name] != expected[name]]
    assert not changed, f"stale files (run `make release`): {changed}"


def test_release_layout(release_dir):
    """Does each assignment get its notebook and only the helpers it may see?"""
    assert sorted(tree(release_dir)) == sorted([
        "README.md", "requirements.txt",
        "attention_scoring/attention_scoring.ipynb",
        "attention_scoring/d2l_attention/__init__.py",
        "attention_scoring/d2l_attention/plots.py",
        "bahdanau/bahdanau.ipynb",
        *(f"bahdanau/d2l_attention/{name}.py" for name in
          ("__init__", "book", "seq2seq", "data", "training", "bleu", "plots")),
    ])


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_helpers_are_marked_copies_of_the_reference(release_dir, assignment):
    """Is every helper module reference/<name>.py verbatim below a do-not-edit header?"""
    package = release_dir / assignment / "d2l_attention"
    for module in package.glob("*.py"):
        if module.name == "__init__.py":
            continue
        original = (REPO / "reference" / module.name).read_text(encoding="utf-8")
        assert module.read_text(encoding="utf-8") == HEADER.format(module.stem) + original


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_helpers_import_on_their_own(release_dir, assignment):
    """Does the helper package import beside its notebook, and only from there?"""
    folder = release_dir / assignment
    package_init = (folder / "d2l_attention" / "__init__.py").read_text()
    exported = ast.literal_eval(package_init.split("__all__ = ", 1)[1])
    probe = ("import sys, d2l_attention\n"
             f"assert d2l_attention.__file__.startswith({str(folder)!r}), d2l_attention.__file__\n"
             f"missing = [n for n in {exported!r} if not hasattr(d2l_attention, n)]\n"
             "assert not missing, missing\n"
             "assert 'reference' not in sys.modules and 'autograder' not in sys.modules\n")
    subprocess.run([sys.executable, "-c", probe], cwd=folder, check=True, capture_output=True)


def test_student_requirements_follow_pyproject(release_dir):
    """Are the student's requirements pinned to the versions the course is tested with?"""
    import tomllib
    pinned = set(tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"])
    requirements = (release_dir / "requirements.txt").read_text().split()
    assert [line.split("==")[0] for line in requirements] == ["torch", "numpy", "matplotlib", "tqdm"]
    assert set(requirements) <= pinned

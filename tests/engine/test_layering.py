"""One-way imports (STYLE §1): the sandbox never sees a check or the reference; report is text."""
import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "autograder"


def imports(path: Path) -> set[str]:
    """Absolute names a module imports (relative imports resolved inside autograder)."""
    names = set()
    package = ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts[:-1])
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = package.rsplit(".", node.level - 1)[0] if node.level else ""
            module = ".".join(part for part in (base, node.module or "") if part)
            names |= {module} | {f"{module}.{alias.name}" for alias in node.names}
    return names


@pytest.mark.parametrize("path", sorted((PACKAGE / "sandbox").glob("*.py")), ids=lambda p: p.name)
def test_sandbox_imports_no_check_and_no_reference(path):
    """Could the worker's code pull a check or the reference into the student's process?"""
    bad = {name for name in imports(path)
           if name.startswith(("reference", "autograder.checks", "autograder.grading.task", "autograder.config"))}
    assert bad == set()


@pytest.mark.parametrize("path", sorted((PACKAGE / "feedback").glob("*.py")), ids=lambda p: p.name)
def test_feedback_imports_no_torch(path):
    assert not {name for name in imports(path) if name.startswith("torch")}


TORCH_FREE = ["autograder.results", "autograder.texts", "autograder.feedback", "autograder.outputs.store",
              "autograder.pages", "autograder.gradebook", "autograder.submissions.find", "autograder.course",
              "autograder.config"]


@pytest.mark.parametrize("module", TORCH_FREE)
def test_result_and_rendering_modules_never_import_torch(module):
    """Can the result model, the texts and everything that renders or stores results be used
    without torch (directly or through anything they import)?"""
    import subprocess
    import sys
    probe = f"import sys, {module}; print('torch' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"


def test_a_run_starts_without_compiling_iri_grammars():
    """Does a run start without rfc3987_syntax's 38 lark grammars (1.3 s, for jsonschema's "iri"
    format checks, which nothing here uses), while notebooks are still read and validated?"""
    import subprocess
    import sys
    probe = ("import sys, autograder.run, nbformat\n"
             "nb = nbformat.read('examples/attention_scoring/correct.ipynb', as_version=4)\n"
             "nbformat.validate(nb)\nprint('lark' in sys.modules, len(nb.cells) > 0)")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120,
                          cwd=PACKAGE.parent)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False", "True"]


def test_a_run_imports_nbgrader_only_for_a_course():
    """Does grading a plain folder start without nbgrader (seconds of imports), and does
    looking for a course still find one?"""
    import subprocess
    import sys
    probe = ("import sys, autograder.run, autograder.grading.pipeline, autograder.grading.session\n"
             "from autograder.gradebook import course_root\n"
             "print(any(m.startswith('nbgrader') for m in sys.modules), course_root(['examples']))\n"
             "from autograder.gradebook import NbgraderCourse\n"
             "print('nbgrader' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120,
                          cwd=PACKAGE.parent)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False", "None", "True"]

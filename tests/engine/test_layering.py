"""One-way imports (STYLE §1): the rooms of the package follow the flow of a submission, and a
room imports only rooms below it; the sandbox never sees a check or the reference; what renders
is torch-free."""
import ast
import re
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


# The rooms, lowest first: the vocabulary every room shares, then the flow's stages in order
# (a submission is found and read, its cells run and its tasks judged, by an executor, its result
# rendered and written, the class reported on), then the service, then the verbs at the top.
# A room may import only rooms of a lower rank; the verbs (the package's top-level modules,
# beside the vocabulary) may also import one another.
RANKS = {
    "autograder": 0, "results": 0, "files": 0,         # the version; the result model; written files' rules
    "texts": 1, "course": 1,                             # every text, both languages; where course files are
    "sandbox": 2,                                        # runs student code; never sees a check
    "checks": 3,                                         # judges through the sandbox's client
    "config": 4,                                         # grader.yml, its checks validated against the checks'
    "submissions": 5, "feedback": 5,                     # which notebooks and how read; one student's feedback
    "grading": 6, "pages": 6,                            # one submission graded; its HTML page
    "executors": 7, "gradebook": 7,                      # many at once; an nbgrader course's gradebook
    "outputs": 8,                                        # the results folder, one owner
    "report": 9,                                         # the class report
    "service": 10,                                       # autograder serve
    "release": 11,                                       # autograder release, a verb of its own
}
VERBS = 11   # cli, in_kernel, run, console, show, export, lms, release


def room(module: str) -> str | None:
    """The room of an ``autograder`` module (its subpackage, or the top-level module's name)."""
    parts = module.split(".")
    if parts[0] != "autograder":
        return None
    return parts[1] if len(parts) > 1 else "autograder"


def rank(name: str) -> int:
    return RANKS.get(name, VERBS)


def modules() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


@pytest.mark.parametrize("path", modules(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_a_room_imports_only_the_rooms_below_it(path):
    """Does every module import only rooms of a lower rank (the stages before it in the flow, and
    the vocabulary), so that a newcomer can read the package bottom-up?"""
    own = room(".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts))
    existing = {p.stem if p.is_file() else p.name for p in PACKAGE.iterdir() if p.suffix == ".py" or p.is_dir()}
    upward = set()
    for name in imports(path):
        other = room(name)
        if other is None or other == own or other not in existing | {"autograder"}:
            continue  # another package, its own room, or a name imported from the package itself
        if rank(other) > rank(own) or (rank(other) == rank(own) and rank(own) != VERBS):
            upward.add(f"{own} -> {other}")
    assert upward == set()


def test_every_room_has_a_rank_and_a_docstring():
    """Is every subpackage placed in the order (a new room is placed on purpose), and does it say
    what it holds?"""
    rooms = {p.name for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").is_file()}
    assert rooms <= set(RANKS)
    for name in rooms:
        assert ast.get_docstring(ast.parse((PACKAGE / name / "__init__.py").read_text())), name


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
              "autograder.pages", "autograder.report", "autograder.gradebook", "autograder.submissions.find",
              "autograder.course",
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


def test_the_layout_names_every_module():
    """Does the Layout section (the developers' page of the docs) name every module of the
    package, so that a newcomer reading it finds each file's room?"""
    page = (PACKAGE.parent / "docs" / "developers.md").read_text(encoding="utf-8")
    layout = page[page.index("## Layout"):page.index("\n## ", page.index("## Layout") + 1)]
    named = set(re.findall(r"`([\w./]+?)(?:\.py)?`", layout))
    missing = {path.relative_to(PACKAGE).with_suffix("").as_posix() for path in modules()
               if path.stem != "__init__" and path.stem not in named}
    assert missing == set()

"""A real nbgrader course in a temporary folder, driven by the docs' walk-through.

The TA's commands are the fenced block under "The walk-through" in docs/ta/nbgrader.md, run
one by one from the course root. What the docs leave to people happens between them, done
with nbgrader's own tools: students fetch, solve and submit through nbgrader's exchange (each
hands in the notebook only, as the student README says) and later fetch their feedback; the
TA grades the written answer as formgrader does, through nbgrader's gradebook API.
"""
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat

from ..notebooks.cells import REPO, nbgrader, read, solved_copy, source_path

ASSIGNMENT = "attention_scoring"
NOTEBOOK = f"{ASSIGNMENT}.ipynb"
COURSE_ID = "attention101"
MANUAL_TASK = "cost_analysis"
HEADING = "## The walk-through"
WALKTHROUGH = REPO / "docs" / "ta" / "nbgrader.md"
COURSE_CONFIG = """\
c = get_config()
load_subconfig("nbgrader_config.py", path={repo!r})  # the course's own settings (timeouts, ...)
c.CourseDirectory.root = {root!r}
c.CourseDirectory.source_directory = "source"
c.CourseDirectory.release_directory = "release"
c.CourseDirectory.db_url = "sqlite:///{root}/gradebook.db"
c.CourseDirectory.course_id = {course_id!r}
c.Exchange.root = {exchange!r}
"""
STUDENT_CONFIG = """\
c = get_config()
c.CourseDirectory.course_id = {course_id!r}
c.Exchange.root = {exchange!r}
c.Exchange.cache = {cache!r}
"""


def walkthrough_commands(page: Path = WALKTHROUGH) -> list[str]:
    """The commands of the first ``sh`` block after the walk-through's heading (comments dropped)."""
    text = page.read_text(encoding="utf-8")
    assert HEADING in text, f"{page.name} has no {HEADING!r} section (the walk-through this test runs)"
    block = re.search(r"```sh\n(.*?)```", text[text.index(HEADING):], re.S)
    assert block, f"{page.name}: no ```sh block under {HEADING!r}"
    return [line.strip() for line in block.group(1).splitlines() if line.strip() and not line.lstrip().startswith("#")]


def verb(command: str) -> str:
    """'nbgrader collect' for 'nbgrader collect attention_scoring', 'autograder grade' for ..."""
    return " ".join(shlex.split(command)[:2])


class Course:
    """The course root, the exchange and the students' home folders, all under ``base``."""

    def __init__(self, base: Path):
        self.root, self.exchange, self.homes = base / "course", base / "exchange", base / "students"
        self.jupyter_config = base / "jupyter_config"  # empty: no user-wide Jupyter config leaks in
        for folder in (self.root, self.exchange, self.homes, self.jupyter_config):
            folder.mkdir()
        (self.root / "nbgrader_config.py").write_text(COURSE_CONFIG.format(
            repo=str(REPO), root=str(self.root), course_id=COURSE_ID, exchange=str(self.exchange)))
        shutil.copytree(REPO / "assignments" / ASSIGNMENT, self.root / "source" / ASSIGNMENT)

    def require_helpers(self) -> None:
        """The notebook imports ``d2l_attention``: nbgrader releases it and copies it into every
        autograded submission only from the source folder (a student hands in the notebook alone)."""
        helpers = REPO / "assignments" / ASSIGNMENT / "d2l_attention"
        assert helpers.is_dir(), f"{helpers} is missing: the helper package must live in the source folder (issue 12)"

    @property
    def db_url(self) -> str:
        return f"sqlite:///{self.root}/gradebook.db"

    def env(self) -> dict:
        """The venv's programs first (nbgrader runs ``alembic`` and kernels run ``python`` by name),
        this checkout's packages for the ``autograder`` command and the kernels, one torch thread."""
        env = {name: value for name, value in os.environ.items() if name != "NBGRADER_EXECUTION"}
        env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
        env["PYTHONPATH"] = str(REPO)
        env["OMP_NUM_THREADS"] = "1"
        env["JUPYTER_CONFIG_DIR"] = str(self.jupyter_config)
        return env

    def run(self, command: str, cwd: Path | None = None) -> str:
        done = subprocess.run(shlex.split(command), cwd=cwd or self.root, env=self.env(),
                              capture_output=True, text=True)
        assert done.returncode == 0, f"`{command}` failed ({done.returncode}):\n{done.stdout}{done.stderr}"
        return done.stdout + done.stderr

    def home(self, student: str) -> Path:
        """A student's folder, with a config that finds the course's exchange."""
        home = self.homes / student
        if not home.exists():
            home.mkdir()
            (home / "nbgrader_config.py").write_text(STUDENT_CONFIG.format(
                course_id=COURSE_ID, exchange=str(self.exchange), cache=str(home / ".nbgrader_cache")))
        return home

    def submit(self, student: str, solve) -> None:
        """``student`` fetches the assignment, ``solve(notebook_path)`` edits it, and the student
        submits the notebook alone (the helper package is not handed in)."""
        home = self.home(student)
        self.run(f"nbgrader fetch_assignment {ASSIGNMENT}", cwd=home)
        folder = home / ASSIGNMENT
        solve(folder / NOTEBOOK)
        shutil.rmtree(folder / "d2l_attention")
        self.run(f"nbgrader submit {ASSIGNMENT} --student {student}", cwd=home)

    def fetch_feedback(self, student: str) -> str:
        """The feedback page nbgrader's exchange delivers to ``student``."""
        home = self.home(student)
        self.run(f"nbgrader fetch_feedback {ASSIGNMENT} --student {student}", cwd=home)
        [page] = (home / ASSIGNMENT / "feedback").glob(f"*/{ASSIGNMENT}.html")
        return page.read_text(encoding="utf-8")

    def submitted(self, student: str) -> Path:
        return self.root / "submitted" / student / ASSIGNMENT / NOTEBOOK

    def autograded(self, student: str) -> nbformat.NotebookNode:
        return read(self.root / "autograded" / student / ASSIGNMENT / NOTEBOOK)


def solve(notebook: Path) -> None:
    """The TA's solutions pasted into the released notebook, written answer included."""
    solved_copy(notebook, source_path(ASSIGNMENT), notebook)


def solve_with_bugs(notebook: Path) -> None:
    """The bundled buggy example's code cells pasted in; the written answer left untouched."""
    example = read(REPO / "examples" / ASSIGNMENT / "buggy.ipynb")
    buggy = {nbgrader(cell)["grade_id"]: cell.source for cell in example.cells
             if nbgrader(cell).get("solution") and cell.cell_type == "code"}
    released = read(notebook)
    for cell in released.cells:
        if nbgrader(cell).get("grade_id") in buggy:
            cell.source = buggy[nbgrader(cell)["grade_id"]]
    nbformat.write(released, notebook)


def leave_untouched(notebook: Path) -> None:
    """The released notebook handed in as it is."""


STUDENTS = {"solved": solve, "untouched": leave_untouched, "buggy": solve_with_bugs}

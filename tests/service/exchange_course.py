"""A JupyterHub-like course for the exchange's tests and benchmark: the TA (root) releases the
assignment into a temporary nbgrader exchange, and students fetch, solve, submit, list and fetch
feedback with nbgrader's own commands, each as their own Unix user where users can be made
(``unix_students``), else all as root with ``--student`` (the hub that runs every student as one
user, where grader.yml sets ``service.exchange_shared_uid``).

Everything lives under one folder that other users can enter (pytest's own folder is root's
alone); ``close`` removes it and the users."""
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from nbgrader.utils import notebook_hash

from ..nbgrader_course.course import ASSIGNMENT, COURSE_ID, NOTEBOOK, Course
from .unix_students import UnixStudents

VENV_BIN = Path(sys.executable).parent


class ExchangeCourse:
    nice = 0   # the niceness of the students' ``nbgrader submit`` (a benchmark lowers them)

    def __init__(self, roles: list[str], users: bool = True):
        self.base = Path(tempfile.mkdtemp(prefix="autograder-exchange-"))
        os.chmod(self.base, 0o755)
        self.course = Course(self.base)
        os.chmod(self.course.exchange, 0o1777)   # as nbgrader's docs set it up: every student writes there
        os.chmod(self.course.homes, 0o755)
        made, self.why_shared = UnixStudents.make(roles, self.base / "scratch") if users else (None, "asked for")
        self.unix = made
        self.names = dict(zip(roles, made.names)) if made else {role: f"student_{role}" for role in roles}
        for name in self.names.values():
            home = self.course.home(name)
            if made:
                made.own(name, home)
        self.course.run(f"nbgrader generate_assignment {ASSIGNMENT}")
        self.course.run(f"nbgrader release_assignment {ASSIGNMENT}")

    @property
    def shared_uid(self) -> bool:
        return self.unix is None

    @property
    def feedback_folder(self) -> Path:
        return self.course.exchange / COURSE_ID / "feedback"

    @property
    def inbound(self) -> Path:
        return self.course.exchange / COURSE_ID / "inbound"

    def close(self) -> None:
        if self.unix:
            self.unix.remove()
        shutil.rmtree(self.base, ignore_errors=True)

    def nbgrader(self, role: str, *args: str, check: bool = True) -> str:
        """``nbgrader ARGS`` run by the student of ``role`` in their home, as their own user (or
        as root, saying who with ``--student``, where every student is one user)."""
        runner = self.names[role]
        home = self.course.home(runner)
        argv = [*(("nice", "-n", str(self.nice)) if self.nice and args[0] == "submit" else ()),
                sys.executable, "-m", "nbgrader", *args]
        if self.shared_uid and args[0] in ("submit", "fetch_feedback", "list") and "--student" not in args:
            argv += ["--student", runner]
        env = {"HOME": str(home), "USER": runner, "LOGNAME": runner, "LANG": "C.UTF-8",
               "PATH": os.pathsep.join([str(VENV_BIN), "/usr/bin", "/bin"]),
               "JUPYTER_CONFIG_DIR": str(self.course.jupyter_config), "JUPYTER_DATA_DIR": str(home / ".jupyter-data")}
        command = self.unix.command(runner, argv) if self.unix else argv
        done = subprocess.run(command, cwd=home, env=env, capture_output=True, text=True, timeout=300)
        if check:
            assert done.returncode == 0, f"nbgrader {' '.join(args)} as {runner}: {done.stdout}{done.stderr}"
        return done.stdout + done.stderr

    def notebook(self, role: str) -> Path:
        return self.course.home(self.names[role]) / ASSIGNMENT / NOTEBOOK

    def fetch(self, role: str, solve) -> None:
        """The student fetches the assignment and ``solve(notebook)`` edits it (in place: the
        file stays the student's)."""
        self.nbgrader(role, "fetch_assignment", ASSIGNMENT)
        self.work(role, solve)

    def work(self, role: str, solve) -> None:
        scratch = self.base / f"scratch-{role}.ipynb"
        shutil.copyfile(self.notebook(role), scratch)
        solve(scratch)
        self.notebook(role).write_bytes(scratch.read_bytes())
        scratch.unlink()

    def submit(self, role: str, *extra: str) -> float:
        """``nbgrader submit`` (the Assignments tab's Submit); returns the monotonic time it ended."""
        self.nbgrader(role, "submit", ASSIGNMENT, *extra)
        return time.monotonic()

    def cached(self, role: str) -> list[Path]:
        """The student's own copies of their hand-ins (nbgrader's cache), oldest first."""
        cache = self.course.home(self.names[role]) / ".nbgrader_cache" / COURSE_ID
        return sorted(cache.glob(f"*+{ASSIGNMENT}+*"), key=lambda folder: folder.name.rsplit("+", 1)[1])

    def handed_in_at(self, role: str, which: int = -1) -> float:
        """When the hand-in ``which`` was complete in ``inbound/``: its secret's ctime (Unix seconds)."""
        [folder] = self.inbound.glob(f"{self.cached(role)[which].name}+*")
        return os.stat(folder / "submission_secret.txt").st_ctime

    def page_path(self, role: str, which: int = -1) -> Path:
        """Where ``fetch_feedback`` looks for the feedback of the student's hand-in ``which``."""
        secret = (self.cached(role)[which] / "submission_secret.txt").read_text()
        return self.feedback_folder / f"{notebook_hash(secret=secret, notebook_id=Path(NOTEBOOK).stem)}.html"

    def wait_for_page(self, role: str, within_s: float, which: int = -1) -> float:
        """Seconds until the page of the student's hand-in ``which`` is there."""
        started, path = time.monotonic(), self.page_path(role, which)
        while not path.exists():
            assert time.monotonic() - started < within_s, f"no feedback for {role} within {within_s} s"
            time.sleep(0.05)
        return time.monotonic() - started

    def fetch_feedback(self, role: str) -> dict[str, str]:
        """``nbgrader fetch_feedback``: each hand-in's page the student now has, by its timestamp."""
        self.nbgrader(role, "fetch_feedback", ASSIGNMENT)
        folder = self.notebook(role).parent / "feedback"
        return {page.parent.name: page.read_text(encoding="utf-8") for page in folder.glob(f"*/{Path(NOTEBOOK).stem}.html")}

    def listing(self, role: str) -> str:
        """What the Assignments tab shows of the student's hand-ins (``nbgrader list --cached``)."""
        return self.nbgrader(role, "list", "--cached")

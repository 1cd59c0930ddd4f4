"""Helpers shared by the sandbox tests."""
import os
import re
import shutil
import sys
from pathlib import Path

from autograder.sandbox.client import Student
from autograder.sandbox.sandbox import Limits
from autograder.sandbox.uids import processes_by_uid

CAN_SANDBOX = sys.platform == "linux" and os.geteuid() == 0 and shutil.which("bwrap") is not None
SKIP_REASON = "the sandbox tests need Linux, root and bubblewrap (make sandbox-deps)"
SLOT, OTHER_SLOT = 90, 91  # slot numbers only: each slot's uid is leased at start
# Time limits are CPU time; the wall-clock backstop (wall_factor) and the submission's
# deadline are generous, so that a busy machine (other people's tests) changes no outcome.
LIMITS = Limits(cell_timeout_s=3, call_timeout_s=2, submission_timeout_s=60, wall_factor=5,
                memory_mb=1024, max_processes=16, max_file_mb=16, max_output_kb=16, tmp_mb=64)


def processes_of(uid: int) -> list[int]:
    """Host pids whose real uid is ``uid``."""
    return processes_by_uid().get(uid, [])


def make_helper_package(folder: Path) -> Path:
    """A tiny ``d2l_attention`` package, readable by the sandbox's users, next to a TA's
    notebook holding a secret, as in ``assignments/<a>/``."""
    package = folder / "d2l_attention"
    package.mkdir()
    (package / "__init__.py").write_text("GREETING = 'hello from /course'\n")
    (folder / "assignment.ipynb").write_text('{"solution": "TA-SECRET"}')
    folder.chmod(0o755)  # pytest makes it 0700; the sandbox's user must cross it
    return package


def cut_at_its_limit(reason: str, limit: float) -> bool:
    """Did a busy cell end at its CPU-time limit? On a machine so loaded that the cell got
    less than 1/wall_factor of a CPU, the wall-clock backstop ends it instead, and then its
    reason must say that the machine was overloaded."""
    return reason == f"timed out after {limit:g} s" or bool(
        re.fullmatch(r"timed out after \d+ s of wall-clock time, .*the machine was overloaded.*", reason))


def run(worker, source: str) -> dict:
    """Run one cell as the grader does (through the sandbox's client)."""
    return Student(worker.transport).run_cell("x", source, None)

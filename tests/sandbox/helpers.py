"""Helpers shared by the sandbox tests."""
import os
import shutil
import sys
from pathlib import Path

from autograder.sandbox.sandbox import Limits

CAN_SANDBOX = sys.platform == "linux" and os.geteuid() == 0 and shutil.which("bwrap") is not None
SKIP_REASON = "the sandbox tests need Linux, root and bubblewrap (make sandbox-deps)"
SLOT = 90  # uid 61090: far from the slots a grading run uses
LIMITS = Limits(cell_timeout_s=3, call_timeout_s=2, submission_timeout_s=6, memory_mb=1024,
                max_processes=16, max_file_mb=16, max_output_kb=16, tmp_mb=64)


def processes_of(uid: int) -> list[int]:
    """Host pids whose real uid is ``uid``."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            status = Path(f"/proc/{name}/status").read_text()
        except OSError:
            continue
        real_uid = next(line.split()[1] for line in status.splitlines() if line.startswith("Uid:"))
        if int(real_uid) == uid:
            found.append(int(name))
    return found


def run(worker, source: str) -> dict:
    """Run one cell as the grader does."""
    return worker.transport({"op": "exec", "args": {"label": "x", "source": source}})

"""The processes of a grading run, for tests: found by the run marker (autograder/executors/runmarker.py),
never by name, and waited for until they are gone."""
import os
import signal
import time
from pathlib import Path

from autograder.executors.runmarker import processes_of


def start_time(pid: int) -> int | None:
    """The kernel's start time of ``pid``: with the pid, it names one process (pids are reused)."""
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19])
    except (OSError, IndexError, ValueError):
        return None


def snapshot(marker: str, prefix: bool = False) -> dict[tuple[int, int], str]:
    """The run's live processes now: (pid, start time) -> command line."""
    return {(pid, started): command for pid, command in processes_of(marker, prefix=prefix).items()
            if (started := start_time(pid)) is not None}


def alive(seen: dict[tuple[int, int], str]) -> dict[tuple[int, int], str]:
    """Those of ``seen`` still running (not a zombie: a zombie holds only a pid)."""
    return {key: command for key, command in seen.items() if start_time(key[0]) == key[1]
            and _state(key[0]) not in ("Z", "X", None)}


def left_after(marker: str, seen: dict[tuple[int, int], str] = None, within_s: float = 5.0,
               prefix: bool = False) -> dict[tuple[int, int], str]:
    """Waits up to ``within_s`` for every process of the run (by its marker now, and those in
    ``seen``, recorded earlier: a zygote whose marked parents died would not be found by
    the marker) to be gone. Returns what was still there, after killing it, so that a
    failed test leaves nothing running either."""
    seen = dict(seen or {})
    deadline = time.monotonic() + within_s
    while True:
        left = {**alive(seen), **snapshot(marker, prefix)}
        if not left or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    for pid, started in left:
        if start_time(pid) == started:
            os.kill(pid, signal.SIGKILL)
    return left


def _state(pid: int) -> str | None:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return None


def parent(pid: int) -> int | None:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return None

"""The run marker: how every process of one grading run can be found, by a marker and not
by name (issue 15).

The grader runs with ``AUTOGRADER_RUN=<id>`` in its environment, and every process it
starts inherits it: the grading processes it forks, bubblewrap. The zygotes inside
bubblewrap start with a cleared environment; they are the descendants of marked
processes. A TA (or a CI job, or a test) may choose the id; otherwise the run picks one.

Linux shows a process's environment as it was when the process was *executed*
(``/proc/<pid>/environ``): a variable set later reaches the programs it executes, not
itself nor the children it forks. So a grader started without a marker executes itself
again with one, before it imports anything heavy (``carry``).

Torch-free and import-light: the command line calls ``carry`` first thing.
"""
import contextlib
import os
import sys
import uuid
from pathlib import Path

RUN_MARKER = "AUTOGRADER_RUN"


def carry() -> None:
    """Make sure this process was executed with a run marker: if not, execute it again
    with a new one (same pid, same arguments)."""
    if RUN_MARKER in os.environ or not Path("/proc/self/environ").exists():
        return
    os.environ[RUN_MARKER] = uuid.uuid4().hex
    with contextlib.suppress(OSError):  # cannot execute itself: its children still carry it
        os.execv(sys.executable, sys.orig_argv)


def marker_of(pid: int) -> str | None:
    """The run marker ``pid`` was executed with, if any (None also if it is gone)."""
    for entry in _environ(pid):
        name, _, value = entry.partition(b"=")
        if name == RUN_MARKER.encode():
            return value.decode(errors="replace")
    return None


def processes_of(marker: str, exclude: set[int] = frozenset(), prefix: bool = False) -> dict[int, str]:
    """Every live process of the run ``marker`` (with ``prefix``, of every run whose marker
    starts with it): pid -> its command line. Marked processes and all their descendants
    (a zygote's environment is cleared); zombies are not counted (they hold nothing but a
    pid, and their parent reaps them)."""
    def ours(value: str | None) -> bool:
        return value is not None and (value == marker or prefix and value.startswith(marker))
    found = {pid for pid in _pids() if pid not in exclude and ours(marker_of(pid))}
    stack = list(found)
    while stack:
        for child in _children(stack.pop()):
            if child not in found and child not in exclude:
                found.add(child)
                stack.append(child)
    return {pid: command for pid in sorted(found) if (command := _command(pid)) is not None}


def _pids() -> list[int]:
    return [int(name) for name in os.listdir("/proc") if name.isdigit()]


def _environ(pid: int) -> list[bytes]:
    try:
        return Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    except OSError:  # gone, or not ours to read
        return []


def _children(pid: int) -> list[int]:
    """Children of every thread of ``pid``: a thread that forks is their parent."""
    children = []
    try:
        for task in Path(f"/proc/{pid}/task").iterdir():
            children += [int(c) for c in (task / "children").read_text().split()]
    except OSError:
        pass
    return children


def _command(pid: int) -> str | None:
    """The command line of a live process; None when it is gone or a zombie."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        command = Path(f"/proc/{pid}/cmdline").read_bytes()
    except (OSError, IndexError):
        return None
    if state in ("Z", "X"):
        return None
    return command.replace(b"\0", b" ").decode(errors="replace").strip()[:300]

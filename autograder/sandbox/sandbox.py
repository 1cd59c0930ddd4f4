"""The trusted side of the sandbox: a slot is one warm, locked-down zygote started
through bubblewrap; each submission gets a fresh worker forked from it (``zygote``).

What student code can reach, as the grader runs it (root, Linux, bubblewrap):

- Files: read-only /usr, /etc, the Python installation, the virtualenv (at /opt/venv),
  the ``autograder.sandbox`` package (at /opt/grader) and the assignment's helper
  folder (at /course); a private /tmp (tmpfs of ``tmp_mb``) that is emptied between
  submissions. The repository, ``reference/``, ``grader.yml``, the TA's notebooks,
  other submissions and the output folder are not mounted at all.
- Processes: its own PID namespace, where it sees only its own slot; a uid of its
  own per slot (61000 + slot) with rlimits on CPU time, processes (threads count),
  file size, data memory and open files; no privilege gain through exec, no new
  user namespaces, no SysV IPC; it cannot ptrace or read the zygote. When the
  submission ends (or times out, or dies) every process of that uid is SIGKILLed.
- Network: its own namespace with only a loopback device. Nothing else.

Not covered: memory is capped per process (``memory_mb``), so a submission may hold
up to ``memory_mb`` x ``max_processes`` in all (a cgroup per slot would close this);
a reply may be up to ``protocol.MAX_MESSAGE_BYTES`` big; the kernel is shared.

Without root, bubblewrap runs in a user namespace and the uid cannot change: student
code runs as the grader's own user (the repository is still not mounted),
``max_processes`` counts all of that user's processes, and SysV IPC stays on. A
warning says so.

bubblewrap's ``--die-with-parent`` fires when the *thread* that started the slot
ends: start slots from a thread that lives as long as they do.
"""
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

from . import protocol
from .confine import COURSE_INSIDE, bwrap_command, first_child, wait_until_dead
from .proxy import WorkerLost

BASE_UID = 61000
START_TIMEOUT_S, SETUP_TIMEOUT_S, KILL_TIMEOUT_S = 60.0, 30.0, 2.0
NOT_ROOT = ("the grader is not running as root: the sandbox falls back to a user namespace "
            "without a uid of its own, so student code runs as your user and max_processes "
            "counts all of your processes (see autograder/sandbox/sandbox.py)")


class SandboxUnavailable(RuntimeError):
    """This machine cannot run the sandbox at all."""


class SandboxError(RuntimeError):
    """The sandbox failed for a reason that is the grader's or the course's, not the student's."""


class _ZygoteGone(Exception):
    """The zygote did not answer: it died, was stopped, or said something unreadable."""


@dataclass(frozen=True)
class Limits:
    """What one submission may use. Times are wall-clock seconds."""
    cell_timeout_s: float = 30
    call_timeout_s: float = 20
    submission_timeout_s: float = 240
    memory_mb: int = 3072       # per process (RLIMIT_DATA)
    max_processes: int = 32     # processes and threads of the slot's uid
    max_file_mb: int = 16       # largest file it may write
    max_output_kb: int = 64     # printed output kept per request
    tmp_mb: int = 64            # size of its private /tmp


class Sandbox:
    """One slot: a zygote kept warm across submissions, one worker at a time.

    ``start()`` takes about as long as ``import torch``; ``spawn()`` tens of
    milliseconds. A zygote that a student killed or stopped is replaced at the next
    ``spawn()``.
    """

    def __init__(self, slot: int, helpers_dir: Path, limits: Limits = Limits(), device: str = "cpu"):
        self.slot, self.helpers_dir = slot, Path(helpers_dir).resolve()
        self.limits, self.device = limits, device
        self.uid = BASE_UID + slot if os.geteuid() == 0 else os.geteuid()  # what student code runs as
        self.starts = 0  # zygotes started so far: more than one means a slot was replaced
        self._process: subprocess.Popen | None = None
        self._init: int | None = None  # PID 1 of the slot's namespace, as the host sees it
        self._control: socket.socket | None = None
        self._worker: Worker | None = None

    def __enter__(self) -> "Sandbox":
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def start(self) -> None:
        """Launch bubblewrap and the zygote; return once it has imported torch."""
        if self._process is not None:
            return
        bwrap = shutil.which("bwrap")
        if sys.platform != "linux" or bwrap is None:
            raise SandboxUnavailable("bubblewrap is not installed: run `make sandbox-deps` "
                                     "(apt-get install bubblewrap)")
        if not self.helpers_dir.is_dir():
            raise SandboxError(f"the assignment's helper folder {self.helpers_dir} does not exist")
        as_root = os.geteuid() == 0
        if as_root and self.helpers_dir.stat().st_mode & 0o005 != 0o005:
            raise SandboxError(f"the sandbox's user cannot read the helper folder {self.helpers_dir}"
                               f": run `chmod -R o+rX {self.helpers_dir}`")
        if not as_root:
            warnings.warn(NOT_ROOT, RuntimeWarning, stacklevel=2)
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        stderr = tempfile.TemporaryFile()
        command = bwrap_command(bwrap, self.uid if as_root else None, self.helpers_dir,
                                self.limits.tmp_mb, self.device, theirs.fileno())
        with theirs, stderr:
            try:
                self._process = subprocess.Popen(
                    command, pass_fds=[theirs.fileno()], stdin=subprocess.DEVNULL,
                    stdout=subprocess.DEVNULL, stderr=stderr, start_new_session=True)
            except OSError:
                ours.close()
                raise
            self._control, self.starts = ours, self.starts + 1
            theirs.close()  # now only the zygote holds it: its death reads as EOF here
            try:
                self._receive(START_TIMEOUT_S)
                # bubblewrap exits as soon as the zygote does, leaving PID 1 of the namespace
                # to die after it: note that PID now, to wait for it in _stop()
                self._init = first_child(self._process.pid)
            except _ZygoteGone:
                self._stop()
                stderr.seek(0)
                tail = stderr.read()[-2000:].decode(errors="replace").strip()
                raise SandboxError(f"the sandbox did not start: {tail or 'no message'}") from None

    def spawn(self, book_source: str | None) -> "Worker":
        """A fresh worker for one submission; ``book_source`` is the course's published
        code, bound in place of a task's names while other tasks are checked."""
        if self._worker is not None:
            self._worker.close()
        self.start()
        grader_end, worker_end = socket.socketpair()
        with worker_end:
            try:
                self._ask({"op": "spawn"}, fds=[worker_end.fileno()])
            except _ZygoteGone:  # killed between submissions: one fresh try
                self._stop()
                self.start()
                self._ask({"op": "spawn"}, fds=[worker_end.fileno()])
        self._worker = Worker(self, grader_end)
        self._worker.set_up(book_source)
        return self._worker

    def close(self) -> None:
        if self._worker is not None:
            self._worker.close()
        self._stop()

    def end_submission(self, wait_s: float = 0.0) -> str:
        """Kill every process of the slot's uid; returns how the worker ended ("" if
        unknown). A zygote that does not answer, or could not clean up, is replaced."""
        self._worker = None
        if self._process is None:
            return ""
        try:
            reply = self._ask({"op": "kill", "wait_s": wait_s}, timeout=KILL_TIMEOUT_S + wait_s)
        except _ZygoteGone:
            self._stop()
            return ""
        if reply.get("clean") is not True:
            self._stop()
        return str(reply.get("child", ""))[:200]

    def _ask(self, message: dict, fds: list[int] = (), timeout: float = KILL_TIMEOUT_S) -> dict:
        data = json.dumps(message).encode()
        try:
            self._control.settimeout(timeout)
            socket.send_fds(self._control, [data], list(fds))
        except OSError as error:
            raise _ZygoteGone(str(error)) from None
        return self._receive(timeout)

    def _receive(self, timeout: float) -> dict:
        try:
            self._control.settimeout(timeout)
            reply = json.loads(self._control.recv(1 << 16) or b"null")
        except (OSError, ValueError) as error:
            raise _ZygoteGone(str(error)) from None
        if not isinstance(reply, dict):
            raise _ZygoteGone("no reply")
        return reply

    def _stop(self) -> None:
        """Kill bubblewrap: its PID namespace, with every process in it, dies with it."""
        if self._process is not None:
            self._process.kill()
            self._process.wait()
            self._process = None
            if self._init is not None:
                wait_until_dead(self._init)
                self._init = None
        if self._control is not None:
            self._control.close()
            self._control = None


class Worker:
    """One submission's process; ``transport`` is what ``proxy.Student`` calls."""

    def __init__(self, sandbox: Sandbox, sock: socket.socket):
        self.alive = True
        self._sandbox, self._sock, self._limits = sandbox, sock, sandbox.limits
        self._ends_at = time.monotonic() + self._limits.submission_timeout_s
        self._lost = ""

    def set_up(self, book_source: str | None) -> None:
        limits = self._limits
        setup = {"book": book_source, "sys_path": [COURSE_INSIDE],
                 "output_limit": limits.max_output_kb * 1024,
                 "limits": {"cpu_s": int(limits.submission_timeout_s) + 1,
                            "max_processes": limits.max_processes,
                            "file_mb": limits.max_file_mb, "memory_mb": limits.memory_mb}}
        try:
            reply = self._exchange(setup, SETUP_TIMEOUT_S)
        except WorkerLost as lost:
            raise SandboxError(f"the worker could not be set up: {lost.reason}") from None
        if "error" in reply:
            self.close()
            error = reply["error"]
            raise SandboxError(f"the book's code failed in the sandbox: {error.get('type')}: "
                               f"{error.get('message')}")

    def transport(self, request: dict) -> dict:
        """Send one request and wait for its reply; raises ``WorkerLost`` (and ends the
        submission) on a timeout, a dead process or an unreadable reply."""
        if not self.alive:
            raise WorkerLost(self._lost or "the worker was closed")
        exec_op = request.get("op") == "exec"
        reply = self._exchange(request, self._limits.cell_timeout_s if exec_op
                               else self._limits.call_timeout_s)
        error = reply.get("error")
        if exec_op and isinstance(error, dict) and error.get("type") == "MemoryError":
            # what the cell allocated stays reachable from its names, and every later call
            # would fail for want of memory: end the worker as if it had crashed
            raise self._lose(f"ran out of memory ({self._limits.memory_mb} MB)")
        return reply

    def close(self) -> None:
        """End the submission: every process it started is killed."""
        if self.alive:
            self.alive, self._lost = False, "the worker was closed"
            self._sock.close()
            self._sandbox.end_submission()

    def _exchange(self, message: dict, limit: float) -> dict:
        now = time.monotonic()
        why = f"timed out after {limit:g} s"
        if now + limit > self._ends_at:
            limit, why = self._ends_at - now, (
                f"the submission used up its {self._limits.submission_timeout_s:g} s")
        channel = _DeadlineSocket(self._sock, now + limit)
        try:
            protocol.send(channel, message)
            reply = protocol.recv(channel)
        except TimeoutError:
            raise self._lose(why) from None
        except (EOFError, OSError):
            raise self._lose("the process exited (os._exit or a crash)", wait_s=0.2) from None
        except protocol.ProtocolError as error:
            raise self._lose(f"it sent an unreadable reply ({error})") from None
        if not isinstance(reply, dict):
            raise self._lose("it sent a reply that is not a dict")
        return reply

    def _lose(self, reason: str, wait_s: float = 0.0) -> WorkerLost:
        self.alive = False
        self._sock.close()
        how = self._sandbox.end_submission(wait_s)
        self._lost = f"{reason}: {how}" if how and wait_s else reason
        return WorkerLost(self._lost)


class _DeadlineSocket:
    """The two socket methods ``protocol`` uses, under one deadline for the whole
    message: a worker that trickles bytes cannot stretch its time."""

    def __init__(self, sock: socket.socket, deadline: float):
        self.sock, self.deadline = sock, deadline

    def _arm(self) -> None:
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError
        self.sock.settimeout(left)

    def sendall(self, data: bytes) -> None:
        self._arm()
        self.sock.sendall(data)

    def recv(self, size: int) -> bytes:
        self._arm()
        return self.sock.recv(size)

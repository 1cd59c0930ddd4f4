"""The grader's end of one worker's socket, and every cap the grader itself enforces.

A request and its reply are one exchange. An exchange ends, and the worker with it,
when the submission's processes have used the cell's or call's limit in CPU time (the
slot's cgroup counts it, so time that another slot took is never charged), when
``wall_factor`` times that limit has passed on the wall clock (a cell that sleeps; the
reason says when the machine was overloaded meanwhile), or at the submission's deadline,
whichever comes first. Whatever the worker does to its own caps, the grader reads at
most ``max_reply_mb`` per reply and keeps at most ``max_printed_kb`` of printed output
per submission (the client, ``client.Student``, caps error texts).
"""
import select
import socket
import time
from pathlib import Path

from . import protocol
from .errors import SandboxError, ZygoteGone
from .client import WorkerLost

MIN_POLL_S = 0.05


class OutputBudget:
    """Printed output the grader keeps for one submission, over all its workers."""

    def __init__(self, limit: int):
        self.limit, self.left, self.dropped = limit, limit, 0

    def take(self, text: str) -> str:
        kept = text[:self.left]
        self.left -= len(kept)
        if len(kept) == len(text):
            return kept
        note = "" if self.dropped else (
            f"\n[... printed output beyond {self.limit} characters per submission not kept]")
        self.dropped += len(text) - len(kept)
        return kept + note


class SubmissionAllowance:
    """What one submission's workers share: its deadline and its printed-output budget."""

    def __init__(self, deadline: float, printed_limit: int):
        self.deadline, self.seconds = deadline, deadline - time.monotonic()
        self.printed = OutputBudget(printed_limit)


class Worker:
    """One submission's process; ``transport`` is what ``client.Student`` calls."""

    def __init__(self, sandbox, sock: socket.socket, submission: SubmissionAllowance):
        self.alive = True
        self._sandbox, self._sock, self._limits = sandbox, sock, sandbox.limits
        self._submission, self._printed = submission, submission.printed
        self._groups = sandbox.groups
        self._lost: WorkerLost | None = None
        self._died = False
        self.namespaces: bool | None = None  # whether it got namespaces of its own

    def set_up(self, setup: dict, timeout_s: float) -> None:
        """Send the set-up; a worker that dies here ran no student code: the zygote is to blame."""
        try:
            reply = self._exchange(setup, timeout_s)
        except WorkerLost as lost:
            if self._died:
                raise ZygoteGone(lost.reason) from None
            if time.monotonic() >= self._submission.deadline:
                raise
            raise SandboxError(f"the worker could not be set up: {lost.reason}") from None
        if not isinstance(reply, dict):
            raise SandboxError("the worker's set-up reply is not a dict")
        if "error" in reply:
            self.close()
            error = reply["error"] if isinstance(reply["error"], dict) else {}
            raise SandboxError(f"the worker could not be set up: {error.get('type')}: "
                               f"{str(error.get('message'))[:500]}")
        self.namespaces = reply.get("namespaces") is True

    def transport(self, request: dict, until: float | None = None) -> dict:
        """Send one request and wait for its reply; raises ``WorkerLost`` (and ends the
        submission) on a timeout, a dead process or an unreadable or oversized reply.
        ``until`` (a time.monotonic() value) ends it sooner: the cells a student added run on
        a budget of their own (``Limits.own_cells_s``)."""
        if not self.alive:
            raise self._lost or WorkerLost("the worker was closed", "closed")
        exec_op = request.get("op") == "exec"
        reply = self._checked(self._exchange(request, self._limits.cell_timeout_s if exec_op
                                             else self._limits.call_timeout_s, until))
        error = reply.get("error")
        if exec_op and isinstance(error, dict) and error.get("type") == "MemoryError":
            # what the cell allocated stays reachable from its names, and every later call
            # would fail for want of memory: end the worker as if it had crashed
            raise self._lose(f"ran out of memory ({self._limits.memory_mb} MB)", "out_of_memory",
                             mb=self._limits.memory_mb)
        return reply

    def close(self) -> None:
        """End the submission: every process it started is killed."""
        if self.alive:
            self.alive, self._lost = False, WorkerLost("the worker was closed", "closed")
            self._sock.close()
            self._sandbox.end_submission()

    def _exchange(self, message: dict, limit: float, until: float | None = None):
        clock = _Clock(limit, self._limits, self._submission, self._groups, until)
        channel = _BoundedSocket(self._sock, clock, self._limits.max_reply_mb << 20)
        ooms = self._groups.oom_kills()
        try:
            protocol.send(channel, message)
            return protocol.recv(channel)
        except _OutOfTime as out:
            raise self._lose(out.reason, out.why, **out.params) from None
        except _TooLarge:
            raise self._lose(f"it sent a reply larger than {self._limits.max_reply_mb} MB", "reply_too_large",
                             mb=self._limits.max_reply_mb) from None
        except (EOFError, OSError):
            self._died = True
            if self._groups.oom_kills() > ooms:
                raise self._lose(f"ran out of memory ({self._limits.memory_mb} MB)", "out_of_memory",
                                 mb=self._limits.memory_mb) from None
            raise self._lose("the process exited (os._exit or a crash)", "exited", wait_s=0.2) from None
        except protocol.ProtocolError as error:
            raise self._lose(f"it sent an unreadable reply ({error})", "unreadable_reply",
                             detail=str(error)[:200]) from None

    def _checked(self, reply) -> dict:
        """The reply as a dict, its printed output taken from the submission's budget."""
        if not isinstance(reply, dict):
            raise self._lose("it sent a reply that is not a dict", "unreadable_reply", detail="not a dict")
        printed = reply.get("stdout")
        reply["stdout"] = self._printed.take(printed) if isinstance(printed, str) else ""
        return reply

    def _lose(self, reason: str, why: str, wait_s: float = 0.0, **params) -> WorkerLost:
        """End the worker; the ``WorkerLost`` says why in English (``reason``, for logs) and
        as a text id with parameters (``why``: ``lost.<why>`` in autograder/texts)."""
        self.alive = False
        self._sock.close()
        how = self._sandbox.end_submission(wait_s)
        if how and wait_s:  # how the process ended: "exit status N" or "killed by SIGNAME"
            reason = f"{reason}: {how}"
            number = how.rsplit(" ", 1)[-1]
            why, params = ("exit_status", {"status": number}) if how.startswith("exit") else (
                "killed_by", {"signal": number})
        self._lost = WorkerLost(reason, why, params)
        return self._lost


class _OutOfTime(Exception):
    def __init__(self, reason: str, why: str, **params):
        super().__init__(reason)
        self.reason, self.why, self.params = reason, why, params


class _TooLarge(Exception):
    """Not an OSError or ValueError: ``protocol.recv`` must not take it for a bad frame."""


class _Clock:
    """When one exchange must end, and why (see the module's docstring)."""

    def __init__(self, limit: float, limits, submission: SubmissionAllowance, groups, until: float | None = None):
        now = time.monotonic()
        self.limit, self.limits, self.submission, self.groups = limit, limits, submission, groups
        self.deadline = submission.deadline
        self.until = until if until is not None and until < self.deadline else None
        self.started, self.wall_end = now, now + limit * limits.wall_factor
        self.cpu_start = groups.cpu_seconds()
        self.next_look = now + limit / limits.cpus  # no sooner can it have used its limit
        self.stall_start: tuple[float, float] | None = None  # (when, stalled s) from the first look

    def wall_left(self) -> float:
        """Seconds to the earlier of the backstop and the deadline; raises once none is left."""
        now = time.monotonic()
        if now >= self.deadline:
            raise _OutOfTime(f"the submission used up its {self.submission.seconds:.0f} s", "submission_time",
                             seconds=f"{self.submission.seconds:.0f}")
        if self.until is not None and now >= self.until:
            raise _OutOfTime(f"the cells it added used up their {self.limits.own_cells_s:g} s", "own_cells_time",
                             seconds=f"{self.limits.own_cells_s:g}")
        if now >= self.wall_end:
            raise self._backstop(now)
        return min(self.deadline, self.until or self.deadline, self.wall_end) - now

    def wait_s(self) -> float:
        """How long to wait for the worker before looking at its CPU time again."""
        left = self.wall_left()
        now = time.monotonic()
        if now >= self.next_look:
            if self.stall_start is None:  # only a slow exchange pays for reading it
                self.stall_start = (now, _stalled_s())
            used = self.groups.cpu_seconds() - self.cpu_start
            if used >= self.limit:
                raise _OutOfTime(f"timed out after {self.limit:g} s", "cpu_timeout", seconds=f"{self.limit:g}")
            self.next_look = now + max((self.limit - used) / self.limits.cpus, MIN_POLL_S)
        return max(min(left, self.next_look - now), 0.0)

    def _backstop(self, now: float) -> _OutOfTime:
        """Out of wall-clock time, and whether the machine was overloaded meanwhile."""
        wall, cpu = f"{now - self.started:.0f}", f"{self.groups.cpu_seconds() - self.cpu_start:.1f}"
        reason = f"timed out after {wall} s of wall-clock time, with {cpu} s of CPU time"
        since, stalled = self.stall_start or (now, None)
        now_stalled = _stalled_s()
        if stalled is not None and now_stalled is not None and now > since:
            share = (now_stalled - stalled) / (now - since)
            if share > 0.5:
                return _OutOfTime(f"{reason}; the machine was overloaded (work waited for a CPU "
                                  f"{share:.0%} of the time)", "wall_timeout_overloaded",
                                  wall=wall, cpu=cpu, share=f"{share:.0%}")
        return _OutOfTime(reason, "wall_timeout", wall=wall, cpu=cpu)


def _stalled_s() -> float | None:
    """Seconds during which some task on this machine waited for a CPU (PSI), or None."""
    try:
        line = Path("/proc/pressure/cpu").read_text().splitlines()[0]
    except (OSError, IndexError):
        return None
    return int(line.rsplit("total=", 1)[1]) / 1e6


class _BoundedSocket:
    """The two socket methods ``protocol`` uses, bounded by one exchange's clock and a
    cap on the bytes received: a worker that trickles bytes cannot stretch its time, and
    one that sends too much is cut off before the grader holds it."""

    def __init__(self, sock: socket.socket, clock: _Clock, max_bytes: int):
        self.sock, self.clock, self.max_bytes, self.received = sock, clock, max_bytes, 0
        self.poller = select.poll()  # not select(): the grader may hold descriptors above 1024
        self.poller.register(sock, select.POLLIN)

    def sendall(self, data: bytes) -> None:
        self.sock.settimeout(self.clock.wall_left())
        try:
            self.sock.sendall(data)
        except TimeoutError:
            self.clock.wall_left()  # raises with the reason
            raise _OutOfTime(f"timed out after {self.clock.limit:g} s", "cpu_timeout",
                             seconds=f"{self.clock.limit:g}") from None

    def recv(self, size: int) -> bytes:
        while not self.poller.poll(self.clock.wait_s() * 1000):
            pass
        self.sock.settimeout(self.clock.wall_left())
        chunk = self.sock.recv(size)
        self.received += len(chunk)
        if self.received > self.max_bytes:
            raise _TooLarge
        return chunk

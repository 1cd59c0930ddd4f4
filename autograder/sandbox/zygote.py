"""The warm parent inside the sandbox: forks one fresh worker per submission.

Started by ``sandbox.Sandbox`` inside bubblewrap as
``python -P -m autograder.sandbox.zygote ARGS`` (JSON: the control socket's fd, the
slot's uid, and ``cgroup.procs`` files to join). It joins the slot's cgroups, forbids
SysV IPC in the slot, hardens itself (``lockdown``), imports torch once (not matplotlib:
the course library imports it on the first heatmap drawn, and grading draws none), notes
its own state and says ``ready``. As root it stays uid 0 with CAP_SETUID,
CAP_SETGID and CAP_KILL only; its workers run as the slot's uid, so they cannot reach
it. It never imports ``reference`` or the checks: they are not even mounted.

Control messages are JSON datagrams (a SOCK_SEQPACKET pair), one reply each:

- ``{"op": "spawn"}`` with one socket passed as SCM_RIGHTS: fork a worker on it
  (``child.run``).
- ``{"op": "kill", "wait_s": s}``: give the worker ``s`` seconds to finish dying (to
  learn how it ended), SIGKILL every other process in the slot, empty /tmp, and compare
  its own state with the one it started with. Replies ``{"op": "done", "child": how it
  ended, "clean": bool, "changed": [...]}``; not clean means the grader must restart
  the slot.
"""
import contextlib
import gc
import json
import os
import select
import shutil
import signal
import socket
import sys
import time

from . import child, lockdown

KILL_DEADLINE_S = 5.0  # a process holding gigabytes takes a while to die


def main(argv: list[str]) -> None:
    args = json.loads(argv[0])
    control = socket.socket(fileno=args["control"])
    for fd in args["slot_cgroups"]:  # before anything is charged: the slot's groups hold us
        os.write(fd, b"0")
        os.close(fd)
    if args["uid"] is not None:  # root inside bubblewrap
        lockdown.forbid_ipc()
    lockdown.harden_zygote()
    _warm_up()
    _empty_tmp()
    # What the zygote holds now (torch's modules, hundreds of thousands of objects) lives as
    # long as every worker forked from it: kept out of the workers' garbage collections,
    # which otherwise walk all of it each time the objects a submission's modules leave
    # behind set off a full one (half of an attention module's build), and write into the
    # pages it shares with them.
    gc.freeze()
    baseline = lockdown.process_state()
    control.send(json.dumps({"op": "ready", "pid": os.getpid()}).encode())
    Zygote(control, args["uid"], args["worker_cgroups"], baseline).serve()


def _warm_up() -> None:
    """Import what every submission needs, once. One torch thread before any op: a
    parent that ran a multi-threaded op can hang its forked children. CUDA is never
    touched here: it cannot survive a fork."""
    import torch

    torch.set_num_threads(1)
    from . import runner  # noqa: F401 - the worker's code, imported before forking

    torch.ones(2, 3).softmax(-1)  # first-op set-up costs paid once, here
    _first_uses(torch)


def _first_uses(torch) -> None:
    """Run once what every submission's checks run first: otherwise each fresh worker pays
    these first uses again (the emulated other device's dispatch: about 0.3 s)."""
    from torch import nn

    from .elsewhere import OtherDevice, back_to_cpu

    x = torch.ones(2, 3, 4)
    lazy, gru, lstm = nn.LazyLinear(2), nn.GRU(4, 3, 2), nn.LSTM(4, 3, 2)
    lazy(x)

    def run(t, move=lambda m: m):
        (t.masked_fill(t > 0, -1.0).softmax(-1) @ t.transpose(1, 2)).double().softmax(1)
        _ = torch.arange(4, device=t.device)[None, None, :] < torch.ones(2, 1, 1, device=t.device)
        for module in (lazy, gru, lstm, nn.Dropout(0.5)):
            back_to_cpu(move(module)(t))
        move(nn.Embedding(5, 2))(torch.zeros(2, dtype=torch.long, device=t.device))
    run(x)
    with OtherDevice() as other:
        def moved(module):
            other.move_module(module)
            return module
        run(other.move(x), moved)
    torch.cdist(x, x)
    torch.einsum("bqd,bkd->bqk", x, x)


class Zygote:
    """The control loop; remembers the current worker to say how it ended."""

    def __init__(self, control: socket.socket, uid: int | None, cgroup_fds: list[int], baseline: dict):
        self.control, self.uid, self.cgroup_fds, self.baseline = control, uid, cgroup_fds, baseline
        self.child: int | None = None
        self.child_ended: str | None = None

    def serve(self) -> None:
        """Answer control messages until the grader closes the socket; reap orphans meanwhile."""
        while True:
            readable, _, _ = select.select([self.control], [], [], 1.0)
            self._reap()
            if not readable:
                continue
            data, fds, _, _ = socket.recv_fds(self.control, 1 << 16, 4)
            if not data:
                return
            message = json.loads(data)
            if message["op"] == "spawn":
                reply = self._spawn(fds[0])
            else:
                reply = self._end_submission(float(message.get("wait_s", 0)))
            for fd in fds:
                os.close(fd)
            self.control.send(json.dumps(reply).encode())

    def _spawn(self, data_fd: int) -> dict:
        pid = os.fork()
        if pid == 0:
            try:
                child.run(data_fd, self.cgroup_fds, self.uid, self.baseline)
                os._exit(0)
            finally:
                os._exit(70)  # never fall back into the zygote's loop
        self.child, self.child_ended = pid, None
        return {"op": "spawned", "pid": pid}

    def _end_submission(self, wait_s: float) -> dict:
        deadline = time.monotonic() + wait_s
        while self.child is not None and self.child_ended is None and time.monotonic() < deadline:
            self._reap()
            time.sleep(0.005)
        ended = self.child_ended or ""
        left = _kill_all_but_me(self._reap)
        clean = self._clean_tmp()
        changed = sorted(key for key, value in lockdown.process_state().items()
                         if value != self.baseline[key])
        self.child = None
        return {"op": "done", "child": ended, "clean": clean and not left and not changed,
                "left": left, "tmp_emptied": clean, "changed": changed}

    def _clean_tmp(self) -> bool:
        """Empty /tmp as the slot's uid: the student owns what is there, and we (root
        without CAP_DAC_OVERRIDE or CAP_FOWNER) could not enter a folder it closed."""
        if self.uid is None or not os.listdir("/tmp"):  # most submissions leave nothing there
            return _empty_tmp()
        pid = os.fork()
        if pid == 0:
            try:
                lockdown.drop_to(self.uid)
                os._exit(0 if _empty_tmp() else 1)
            finally:
                os._exit(70)
        _, status = os.waitpid(pid, 0)
        return os.waitstatus_to_exitcode(status) == 0 and not os.listdir("/tmp")

    def _reap(self) -> None:
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            if pid == self.child:
                self.child_ended = _describe(status)


def _describe(status: int) -> str:
    code = os.waitstatus_to_exitcode(status)
    if code < 0:
        return f"killed by {signal.Signals(-code).name}"
    return f"exit status {code}"


def _kill_all_but_me(reap) -> int:
    """SIGKILL every process we may signal in our PID namespace (kill(-1) skips the
    caller and PID 1; with CAP_KILL that is every student process), until none is left.
    Returns how many are still there."""
    end = time.monotonic() + KILL_DEADLINE_S
    while True:
        with contextlib.suppress(ProcessLookupError):  # nothing left to signal
            os.kill(-1, signal.SIGKILL)
        reap()
        left = _other_processes()
        if not left or time.monotonic() > end:
            return len(left)
        time.sleep(0.002)


def _other_processes() -> list[int]:
    """Every process in the slot but PID 1 (bubblewrap's init) and us."""
    me = os.getpid()
    return [int(name) for name in os.listdir("/proc") if name.isdigit() and int(name) not in (1, me)]


def _empty_tmp() -> bool:
    """Delete everything in /tmp (the next submission must not see it); True if empty."""
    for entry in os.scandir("/tmp"):
        try:
            if entry.is_dir(follow_symlinks=False):
                _give_back_rights(entry.path)
                shutil.rmtree(entry.path)
            else:
                os.unlink(entry.path)
        except (OSError, RecursionError):
            pass  # left for the emptiness check: the grader then restarts the slot
    return not os.listdir("/tmp")


def _give_back_rights(top: str) -> None:
    """The student owns everything in /tmp but may have made folders unreadable."""
    os.chmod(top, 0o700)
    for root, dirs, _ in os.walk(top):  # top-down: each folder is opened before descending
        for name in dirs:
            with contextlib.suppress(OSError):
                os.chmod(os.path.join(root, name), 0o700)


if __name__ == "__main__":
    main(sys.argv[1:])

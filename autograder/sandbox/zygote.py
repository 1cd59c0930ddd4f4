"""The warm parent inside the sandbox: forks one fresh worker per submission.

Started by ``sandbox.Sandbox`` inside bubblewrap as
``python -P -m autograder.sandbox.zygote CONTROL_FD [UID]``. As root it first forbids
SysV IPC and drops to ``UID`` (the slot's own user); then it forbids ptrace, privilege
gain and user namespaces (``confine``), imports torch and matplotlib once, and says
``ready`` on the control socket. It never imports ``reference`` or the checks: they
are not even mounted.

Control messages are JSON datagrams (a SOCK_SEQPACKET pair), one reply each:

- ``{"op": "spawn"}`` with one socket passed as SCM_RIGHTS: fork a worker on it.
  The worker reads ``{"book", "sys_path", "limits"}`` from that socket, sets its
  rlimits, says ready and serves ``runner.Runner`` requests until EOF.
- ``{"op": "kill", "wait_s": s}``: give the worker ``s`` seconds to finish dying (to
  learn how it ended), then SIGKILL every process of this uid but the zygote, reap
  them and empty /tmp. Replies ``{"op": "done", "child": how it ended, "clean": bool}``;
  not clean means the grader must restart the slot.
"""
import contextlib
import json
import os
import select
import shutil
import signal
import socket
import sys
import time
import types

from . import confine

KILL_DEADLINE_S = 1.0


def main(argv: list[str]) -> None:
    control = socket.socket(fileno=int(argv[0]))
    if len(argv) > 1:  # root inside bubblewrap: become the slot's user before anything else
        confine.forbid_ipc()
        confine.drop_privileges(int(argv[1]))
    confine.harden()
    _warm_up()
    _empty_tmp()  # matplotlib may have written its cache there
    control.send(json.dumps({"op": "ready", "pid": os.getpid()}).encode())
    Zygote(control).serve()


def _warm_up() -> None:
    """Import what every submission needs, once. One torch thread before any op: a
    parent that ran a multi-threaded op can hang its forked children. CUDA is never
    touched here: it cannot survive a fork."""
    import torch

    torch.set_num_threads(1)
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot  # noqa: F401 - students' cells plot

    from . import runner  # noqa: F401 - the worker's code, imported before forking

    torch.ones(2, 3).softmax(-1)  # first-op set-up costs paid once, here
    _first_uses(torch)


def _first_uses(torch) -> None:
    """Run once what every submission's checks run first: otherwise each fresh worker pays
    these first uses again (the meta device's kernels alone cost about 0.5 s)."""
    from torch import nn

    x = torch.ones(2, 3, 4)
    lazy, gru, lstm = nn.LazyLinear(2), nn.GRU(4, 3, 2), nn.LSTM(4, 3, 2)
    lazy(x)
    for device in ("cpu", "meta"):
        t = x.to(device)
        (t.masked_fill(t > 0, -1.0).softmax(-1) @ t.transpose(1, 2)).double().softmax(1)
        _ = torch.arange(4, device=device)[None, None, :] < torch.ones(2, 1, 1, device=device)
        for module in (lazy, gru, lstm, nn.Dropout(0.5)):
            module.to(device)(t)
        nn.Embedding(5, 2).to(device)(torch.zeros(2, dtype=torch.long, device=device))
    torch.cdist(x, x)
    torch.einsum("bqd,bkd->bqk", x, x)


class Zygote:
    """The control loop; remembers the current worker to say how it ended."""

    def __init__(self, control: socket.socket):
        self.control = control
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
                _worker(data_fd)
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
        clean = _empty_tmp()
        self.child = None
        return {"op": "done", "child": ended, "clean": clean and not left}

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
    """SIGKILL every process this uid may signal in our PID namespace (kill(-1) skips
    the caller and PID 1), until none is left. Returns how many are still there."""
    end = time.monotonic() + KILL_DEADLINE_S
    while True:
        try:
            os.kill(-1, signal.SIGKILL)
        except ProcessLookupError:
            pass  # nothing left to signal
        reap()
        left = _my_other_processes()
        if not left or time.monotonic() > end:
            return len(left)
        time.sleep(0.002)


def _my_other_processes() -> list[int]:
    uid, me, found = os.getuid(), os.getpid(), []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) in (1, me):
            continue
        try:
            with open(f"/proc/{name}/status") as file:
                status = file.read()
        except OSError:
            continue  # gone meanwhile
        real_uid = next(line.split()[1] for line in status.splitlines() if line.startswith("Uid:"))
        if int(real_uid) == uid:
            found.append(int(name))
    return found


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


def _worker(data_fd: int) -> None:
    """The forked child: its own session, only its socket open, output to /dev/null,
    rlimits set, then the runner until the grader hangs up."""
    os.setsid()
    devnull = os.open("/dev/null", os.O_RDWR)
    for fd in (0, 1, 2):  # C-level floods go nowhere, never to the grader
        os.dup2(devnull, fd)
    os.closerange(3, data_fd)  # the control socket among them: a student must not reach it
    os.closerange(data_fd + 1, 1 << 20)
    confine.prctl(confine.PR_SET_DUMPABLE, 1)  # its own processes may inspect it; the zygote stays closed
    from . import protocol, runner

    os.set_inheritable(data_fd, False)  # programs the student runs do not get it either
    os.register_at_fork(after_in_child=lambda: _disconnect(data_fd))
    data = socket.socket(fileno=data_fd)
    setup = protocol.recv(data)
    confine.limit_resources(**setup["limits"])
    sys.path[:0] = setup["sys_path"]
    try:
        book = _build_book(setup["book"])
    except BaseException as error:  # the TA's book is broken: say so, run nothing
        protocol.send(data, {"error": runner.student_error(error)})
        return
    protocol.send(data, {"value": "ready"})
    runner.serve(data, runner.Runner(book=book, output_limit=setup["output_limit"]))


def _disconnect(data_fd: int) -> None:
    """In a process the student forked: /dev/null in place of the grader's socket. A
    forked copy of the worker that returns into the runner would otherwise answer the
    grader too, and every later reply would belong to an earlier request; now its send
    fails (not a socket) and it exits."""
    devnull = os.open("/dev/null", os.O_RDWR)
    os.dup2(devnull, data_fd)
    os.close(devnull)


def _build_book(source: str | None) -> types.ModuleType | None:
    """The course's published code as a private module, not in ``sys.modules``, so a
    student's ``import`` cannot reach or replace it."""
    if source is None:
        return None
    book = types.ModuleType("book")
    exec(compile(source, "<book>", "exec"), book.__dict__)  # noqa: S102 - the TA's code
    return book


if __name__ == "__main__":
    main(sys.argv[1:])

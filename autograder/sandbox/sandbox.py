"""The trusted side of the sandbox: a slot is one warm, locked-down zygote started
through bubblewrap; each submission gets a fresh worker forked from it.

What student code can reach, as the grader runs it (root, Linux, bubblewrap):

- Files: read-only /usr, /etc, the Python installation, the virtualenv (at /opt/venv),
  the ``autograder.sandbox`` package (at /opt/grader) and the assignment's helper
  package (at /course/d2l_attention); a private /tmp (``tmp_mb``, ``tmp_files``)
  emptied between submissions. The repository, ``reference/``, ``grader.yml``, the TA's
  notebooks, other submissions and the output folder are not mounted at all.
- Processes: its own PID namespace, where it sees only its own slot, as a uid leased
  for this slot alone (``uids``: no two slots on the host, in this run or another, share
  one); the zygote is another user (root with three capabilities), so a worker can
  neither signal it nor change its limits, priority, policy or affinity, and the zygote
  checks its own state after every submission anyway. Every rlimit is set in the worker.
  The slot's cgroups (``cgroups``) give it a CPU quota of ``cpus`` cores, and bound the
  submission's memory (memfd and tmpfs included) and processes as a whole; time limits
  are in the submission's CPU time, with a wall-clock backstop. When the submission ends,
  every process in the slot but the zygote is SIGKILLed and /tmp is emptied.
- Kernel state: see the channel list below. Network: only a loopback device of its own.

Kernel channels a student could reach, and what closes each:

- keyrings (add_key, keyctl, request_key): denied by seccomp; /proc/keys and
  /proc/key-users hidden; a uid that owns keys is never leased.
- System V shared memory, queues, semaphores: denied by seccomp; the worker's own IPC
  namespace; the slot's IPC namespace has every SysV limit at 0.
- POSIX message queues: denied by seccomp, RLIMIT_MSGQUEUE 0, the worker's IPC namespace.
- POSIX shared memory (/dev/shm): /dev is bubblewrap's, owned by root, not writable.
- abstract UNIX sockets, loopback ports: the worker's own network namespace, gone
  with its last process.
- files: /tmp only, emptied between submissions (as the student's uid).
- processes, signals, rlimits, nice, policy, affinity, ioprio of other processes: uid
  per slot and per run, PID namespace, zygote under another uid and self-checked.
- inotify, fanotify: denied by seccomp (a watch on a shared read-only file would see
  another slot's reads).
- ptrace, process_vm_*, kcmp, pidfd_getfd, perf_event_open, bpf, userfaultfd,
  io_uring, syslog (the kernel log names other processes), memfd_secret: denied.
- new user namespaces, setns: denied (the worker's own are made before the filter).
- memfd and tmpfs memory: the submission's memory cgroup.
- file locks on shared read-only files, CPU and cache timing: not closed; they pass
  bits only between two students running at the same time who cooperate, and leave
  nothing behind.

Fallbacks, each stated once: see ``preflight``.

bubblewrap's ``--die-with-parent`` fires when the *thread* that started the slot
ends: start slots from a thread that lives as long as they do.
"""
import contextlib
import json
import multiprocessing.util
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

from . import cgroups, uids
from .confine import (COURSE_INSIDE, Plan, bwrap_command, children, first_child, gpu_nodes, wait_until_dead,
                      wait_until_stopped)
from .errors import SandboxError, SandboxUnavailable, ZygoteGone
from .limits import Limits, rlimits
from .preflight import NO_CGROUP, NO_NAMESPACES, NOT_ROOT, check_available, gpu_slots, warn_once

if TYPE_CHECKING:
    from .worker import SubmissionAllowance, Worker

__all__ = ["Limits", "Sandbox", "SandboxError", "SandboxUnavailable", "check_available", "gpu_slots"]

START_TIMEOUT_S, SETUP_TIMEOUT_S, KILL_TIMEOUT_S = 60.0, 30.0, 8.0
DEFAULT_LIMITS = Limits()
class Sandbox:
    """One slot: a zygote kept warm across submissions, one worker at a time.

    ``start()`` leases the slot's uid and cgroups and takes about as long as ``import
    torch``; ``spawn()`` a few tens of milliseconds. A zygote that died, stopped or
    changed is replaced at the next ``spawn()`` (``starts`` counts them, ``replaced``
    says why).
    """

    def __init__(self, slot: int, helper_package: Path, limits: Limits = DEFAULT_LIMITS, device: str = "cpu"):
        self.slot, self.helper_package = slot, Path(helper_package).resolve()
        self.limits, self.device = limits, device
        self.uid: int | None = None  # what student code runs as, once started
        self.groups: cgroups.NoGroups = cgroups.NoGroups()
        self.starts, self.replaced = 0, []
        self._lease: uids.UidLease | None = None
        self._process: subprocess.Popen | None = None
        self._launcher: int | None = None  # the pid of the process that launched bubblewrap
        self._init: int | None = None  # PID 1 of the slot's namespace, as the host sees it
        self._control: socket.socket | None = None
        self._worker: "Worker | None" = None
        self._submission: "SubmissionAllowance | None" = None
        self._finalizer: multiprocessing.util.Finalize | None = None
        self._stderr = None  # the zygote's stderr until it has started: what a failed start said

    def __enter__(self) -> "Sandbox":
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    @property
    def zygote_pid(self) -> int | None:
        """The zygote's pid as the host sees it."""
        return first_child(self._init) if self._init is not None else None

    def start(self) -> None:
        """Launch bubblewrap and the zygote; return once it has imported torch."""
        self.launch()
        self.await_start()

    def launch(self, cpus: set[int] | None = None) -> None:
        """Lease the slot and launch bubblewrap with the zygote, without waiting for it: a
        grader launches its slots before its own imports, and the grading process each slot
        is forked into ``adopt``s it and waits there (``await_start``). ``cpus``: the zygote
        (and every worker) runs on these, as the grading process that adopts it will; set
        before the zygote starts, which keeps its own affinity as it was when it started."""
        if self._process is not None:
            return
        problem = check_available() if self.starts == 0 else None
        if problem is not None:
            raise SandboxUnavailable(problem)
        self._check_package()
        leased_now = self.uid is None
        if leased_now:
            self._lease_resources()
        try:
            self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 - kept until await_start reads it
            with _affinity(cpus):
                self._control, self.starts = self._popen(self._stderr), self.starts + 1
            self._launcher = os.getpid()
        except BaseException:
            self._closed_after_failure(leased_now)
            raise

    def await_start(self) -> None:
        """Wait until the launched zygote has imported torch (``SandboxError`` if it died)."""
        if self._init is not None:
            return
        try:
            self._receive(START_TIMEOUT_S)
            # bubblewrap exits as soon as the zygote does, leaving PID 1 of the namespace
            # to die after it: note that PID now, to wait for it in _stop()
            self._init = first_child(self._process.pid)
        except ZygoteGone:
            self._stop()
            self._stderr.seek(0)
            tail = self._stderr.read()[-2000:].decode(errors="replace").strip()
            self._closed_after_failure(self.starts == 1)
            raise SandboxError(f"the sandbox did not start: {tail or 'no message'}") from None
        finally:
            if self._init is not None or self._process is None:
                self._stderr.close()

    def adopt(self) -> None:
        """In the grading process forked after ``launch``: the slot is this process's now. It is
        closed when this process exits (multiprocessing forgets a parent's finalizers in a
        child); its zygote runs on the CPUs it was launched on."""
        self._finalizer = multiprocessing.util.Finalize(None, self.close, exitpriority=10)
        self.await_start()

    def _closed_after_failure(self, leased_now: bool) -> None:
        if leased_now:  # a slot that never ran keeps nothing: uid, cgroups
            self.close()

    def spawn(self, deadline: float | None = None) -> "Worker":
        """A fresh worker for one submission. ``deadline`` (``time.monotonic()`` seconds)
        bounds the whole submission: pass the same one for every worker it needs, and its
        printed output is capped across them too."""
        if self._worker is not None:
            self._worker.close()
        from .worker import SubmissionAllowance  # the grader's side of the wire imports torch: not before a spawn
        if deadline is None:
            deadline = time.monotonic() + self.limits.submission_timeout_s
        if self._submission is None or self._submission.deadline != deadline:
            self._submission = SubmissionAllowance(deadline, self.limits.max_printed_kb * 1024)
        self.start()
        try:
            return self._spawn_once()
        except ZygoteGone:  # killed, stopped or broken between submissions: one fresh try
            self._stop()
            self.start()
            return self._spawn_once()

    def close(self) -> None:
        if self._worker is not None:
            self._worker.close()
        self._stop()
        if self._stderr is not None:
            self._stderr.close()
        self.groups.remove()
        self.groups = cgroups.NoGroups()
        if self._lease is not None:
            self._lease.release()
            self._lease = None
        if self._finalizer is not None:
            self._finalizer.cancel()
            self._finalizer = None
        self.uid = None

    def end_submission(self, wait_s: float = 0.0) -> str:
        """Kill every process of the submission; returns how the worker ended ("" if
        unknown). A zygote that does not answer, could not clean up, or whose own state
        changed is replaced."""
        self._worker = None
        if self._process is None:
            return ""
        try:
            reply = self._ask({"op": "kill", "wait_s": wait_s}, timeout=KILL_TIMEOUT_S + wait_s)
        except ZygoteGone as gone:
            self._replace(f"the zygote did not answer ({gone})")
            return ""
        if reply.get("clean") is not True:
            self._replace(f"the slot was not clean: {reply.get('left')} processes left, /tmp emptied: "
                          f"{reply.get('tmp_emptied')}, the zygote's own state changed: {reply.get('changed')}")
        elif self.groups.processes():
            self._replace("processes of the submission outlived it")
        return str(reply.get("child", ""))[:200]

    # --- internals --------------------------------------------------------------------
    def _check_package(self) -> None:
        package = self.helper_package
        if not package.is_dir():
            raise SandboxError(f"the assignment's helper package {package} does not exist")
        if notebooks := sorted(package.rglob("*.ipynb")):
            raise SandboxError(f"the helper package {package} holds a notebook ({notebooks[0].name}): "
                               f"pass the package folder alone; the sandbox never mounts a notebook")
        if os.geteuid() == 0 and package.stat().st_mode & 0o005 != 0o005:
            raise SandboxError(f"the sandbox's user cannot read the helper package {package}"
                               f": run `chmod -R o+rX {package}`")

    def _lease_resources(self) -> None:
        if os.geteuid() != 0:
            warn_once(NOT_ROOT)
            self.uid = os.geteuid()
            return
        self._lease = uids.lease_uid()
        if self._lease is None:
            raise SandboxError(f"all {uids.UID_COUNT} sandbox uids from {uids.FIRST_UID} are in use "
                               f"on this host (see {uids.LOCK_DIR})")
        self.uid = self._lease.uid
        limits = self.limits
        self.groups, why = cgroups.create(self.uid, limits.memory_mb, limits.max_processes, limits.cpus,
                                          is_free=uids.is_free)
        # At exit, even in a multiprocessing child (which ends with os._exit, so atexit
        # never runs): the slot's cgroups must not outlive the run.
        self._finalizer = multiprocessing.util.Finalize(None, self.close, exitpriority=10)
        if why:
            warn_once(NO_CGROUP.format(why=why))

    def _plan(self, zygote_args: dict) -> Plan:
        gpu = None
        if self.device.startswith("cuda"):
            nodes = gpu_nodes()
            if self.slot >= len(nodes):
                raise SandboxError(f"slot {self.slot} has no GPU of its own: this machine has "
                                   f"{len(nodes)}; grade with --jobs {max(len(nodes), 1)}")
            gpu = nodes[self.slot]
        tmp_mount = None
        if self._lease is not None:
            tmp_mount = self._lease.scratch_dir / "tmp"
            tmp_mount.mkdir(mode=0o700, exist_ok=True)
        return Plan(uid=self.uid if self._lease else None, helper_package=self.helper_package,
                    tmp_mb=self.limits.tmp_mb, tmp_files=self.limits.tmp_files, tmp_mount=tmp_mount,
                    gpu=gpu, zygote_args=json.dumps(zygote_args))

    def _popen(self, stderr) -> socket.socket:
        """Start bubblewrap with the zygote; returns our end of its control socket."""
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        join = [os.open(path, os.O_WRONLY | os.O_CLOEXEC)
                for path in self.groups.slot_procs + self.groups.worker_procs]
        split = len(self.groups.slot_procs)
        args = {"control": theirs.fileno(), "uid": self.uid if self._lease else None,
                "slot_cgroups": join[:split], "worker_cgroups": join[split:]}
        try:
            command = bwrap_command(shutil.which("bwrap"), self._plan(args))
            self._process = subprocess.Popen(
                command, pass_fds=[theirs.fileno(), *join], stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL, stderr=stderr, start_new_session=True)
        except BaseException:
            ours.close()
            raise
        finally:
            theirs.close()  # now only the zygote holds it: its death reads as EOF here
            for fd in join:
                os.close(fd)
        return ours

    def _spawn_once(self) -> "Worker":
        from .worker import Worker
        grader_end, worker_end = socket.socketpair()
        with worker_end:
            try:
                self._ask({"op": "spawn"}, fds=[worker_end.fileno()])
            except ZygoteGone:
                grader_end.close()
                raise
        self._worker = Worker(self, grader_end, self._submission)
        setup = {"sys_path": [COURSE_INSIDE], "limits": rlimits(self.limits),
                 "output_limit": self.limits.max_output_kb * 1024}
        self._worker.set_up(setup, SETUP_TIMEOUT_S)
        if self._worker.namespaces is False:
            warn_once(NO_NAMESPACES)
        return self._worker

    def _ask(self, message: dict, fds: list[int] = (), timeout: float = KILL_TIMEOUT_S) -> dict:
        data = json.dumps(message).encode()
        try:
            self._control.settimeout(timeout)
            socket.send_fds(self._control, [data], list(fds))
        except (OSError, AttributeError) as error:  # AttributeError: no control socket
            raise ZygoteGone(str(error)) from None
        return self._receive(timeout)

    def _receive(self, timeout: float) -> dict:
        try:
            self._control.settimeout(timeout)
            reply = json.loads(self._control.recv(1 << 16) or b"null")
        except (OSError, ValueError) as error:
            raise ZygoteGone(str(error)) from None
        if not isinstance(reply, dict):
            raise ZygoteGone("no reply")
        return reply

    def _replace(self, why: str) -> None:
        """Stop the zygote; the next ``spawn()`` starts a fresh one."""
        self.replaced.append(why)
        self._stop()

    def _stop(self) -> None:
        """Kill bubblewrap: its PID namespace, with every process in it, dies with it."""
        if self._process is not None:
            if self._launcher == os.getpid():
                if self._init is None:  # never awaited: its namespace's PID 1 may not die with it yet
                    _kill_children(self._process.pid)
                self._process.kill()
                self._process.wait()
            else:  # adopted: bubblewrap is the launcher's child, which reaps it, not this process's:
                # Popen here finds no child to wait for, takes it for dead and would not signal it
                with contextlib.suppress(ProcessLookupError):
                    os.kill(self._process.pid, signal.SIGKILL)
            self._process = None
            if self._init is not None:
                wait_until_dead(self._init)
                self._init = None
        if self._control is not None:
            self._control.close()
            self._control = None


def _kill_children(pid: int) -> None:
    """Kill the children of a just-launched bubblewrap: PID 1 of its namespace, with all in it.
    Stopped first, it starts no child while they are read; killed alone, a child that had not
    yet asked to die with its parent would outlive it (one slot in 50 closed at once did)."""
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGSTOP)
        wait_until_stopped(pid)
        for child in children(pid):
            with contextlib.suppress(ProcessLookupError):
                os.kill(child, signal.SIGKILL)


@contextlib.contextmanager
def _affinity(cpus: set[int] | None):
    """This thread runs on ``cpus`` meanwhile (what it starts inherits them), then as before."""
    if cpus is None:
        yield
        return
    before = os.sched_getaffinity(0)
    os.sched_setaffinity(0, cpus)
    try:
        yield
    finally:
        os.sched_setaffinity(0, before)

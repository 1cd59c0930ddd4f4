"""A forked worker, from the zygote's ``fork()`` to serving requests.

Before any student code, in this order: its own session; the submission's cgroups
joined (so everything it and its children use is counted there); only its socket left
open and output going to /dev/null; the grader's set-up read; every rlimit, the nice
value, SCHED_OTHER and the CPU affinity set explicitly; the slot's uid; user, network
and IPC namespaces of its own; every capability dropped; the seccomp filter; and a check
that all of it holds. Then ``runner.Runner`` answers the grader until it hangs up.
"""
import os
import socket
import sys

from . import lockdown, seccomp


def run(data_fd: int, cgroup_fds: list[int], uid: int | None, baseline: dict) -> None:
    os.setsid()
    for fd in cgroup_fds:
        os.write(fd, b"0")  # "0" is the writer itself
    devnull = os.open("/dev/null", os.O_RDWR)
    for fd in (0, 1, 2):  # C-level floods go nowhere, never to the grader
        os.dup2(devnull, fd)
    os.closerange(3, data_fd)  # the control socket and the cgroup files among them
    os.closerange(data_fd + 1, 1 << 20)
    from . import protocol, runner

    data = socket.socket(fileno=data_fd)
    setup = protocol.recv(data)
    namespaces = _lock_down(setup["limits"], uid, baseline)
    os.set_inheritable(data_fd, False)  # programs the student runs do not get it either
    os.register_at_fork(after_in_child=lambda: _disconnect(data_fd))
    sys.path[:0] = setup["sys_path"]
    protocol.send(data, {"value": "ready", "namespaces": namespaces})
    runner.serve(data, runner.Runner(output_limit=setup["output_limit"]))


def _lock_down(rlimits: dict[str, int], uid: int | None, baseline: dict) -> bool:
    """Everything between the set-up and the first student instruction; True when the
    worker has namespaces of its own. Raises (and so ends the process before it says
    ready) if any of it did not take."""
    ceiling = {name: hard for name, (_, hard) in baseline["rlimits"].items()}
    lockdown.set_limits(rlimits, ceiling, baseline["nice"], baseline["affinity"])
    if uid is not None:
        lockdown.drop_to(uid)
    namespaces = lockdown.own_namespaces()
    lockdown.drop_capabilities()
    lockdown.prctl(lockdown.PR_SET_DUMPABLE, 1)  # its own processes may inspect it; the zygote stays closed
    seccomp.install()
    state = lockdown.process_state()
    wanted = {name: [lockdown.lower(v, ceiling.get(name, -1))] * 2 for name, v in rlimits.items()}
    got = {name: state["rlimits"][name] for name in wanted}
    if got != wanted or state["nice"] != baseline["nice"] or state["policy"] != os.SCHED_OTHER \
            or state["affinity"] != baseline["affinity"]:
        raise RuntimeError(f"the worker's limits did not take: {state}")
    return namespaces


def _disconnect(data_fd: int) -> None:
    """In a process the student forked: /dev/null in place of the grader's socket. A
    forked copy of the worker that returns into the runner would otherwise answer the
    grader too, and every later reply would belong to an earlier request; now its send
    fails (not a socket) and it exits."""
    devnull = os.open("/dev/null", os.O_RDWR)
    os.dup2(devnull, data_fd)
    os.close(devnull)


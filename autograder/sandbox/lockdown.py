"""Kernel settings made inside the sandbox, by the zygote for itself and by each forked
worker before it runs student code. Stdlib and ctypes only: the zygote imports this
before torch.

The zygote stays uid 0 inside bubblewrap with three capabilities (``CAP_SETUID`` and
``CAP_SETGID`` to make workers, ``CAP_KILL`` to end them), no_new_privs, not dumpable.
A worker is the slot's unprivileged uid in user, network and IPC namespaces of its own,
with no capability left in any of them: Linux lets a process change the rlimits, nice
value, scheduling policy and CPU affinity of another only with the same uid or a
capability, so nothing a worker does can reach its zygote (issue 9), and every limit the
worker runs under is set here, explicitly, rather than inherited.
"""
import ctypes
import fcntl
import os
import resource
import socket
import struct

PR_SET_DUMPABLE, PR_CAPBSET_DROP, PR_SET_CHILD_SUBREAPER, PR_SET_NO_NEW_PRIVS = 4, 24, 36, 38
PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL = 47, 4
CLONE_NEWUSER, CLONE_NEWNET, CLONE_NEWIPC = 0x10000000, 0x40000000, 0x08000000
CAPABILITY_VERSION_3 = 0x20080522
SIOCSIFFLAGS, IFF_UP_LOOPBACK_RUNNING = 0x8914, 0x1 | 0x8 | 0x40
# Linux's numbering (the same on every architecture); Python names all but RLIMIT_LOCKS.
RLIMITS = {name: number for number, name in enumerate((
    "cpu", "fsize", "data", "stack", "core", "rss", "nproc", "nofile", "memlock", "as",
    "locks", "sigpending", "msgqueue", "nice", "rtprio", "rttime"))}

_libc = ctypes.CDLL(None, use_errno=True)


def prctl(option: int, arg2: int, arg3: int = 0) -> None:
    # prctl reads unsigned longs and checks unused arguments are 0: pass full-width zeros
    args = (ctypes.c_ulong(option), ctypes.c_ulong(arg2), ctypes.c_ulong(arg3),
            ctypes.c_ulong(0), ctypes.c_ulong(0))
    if _libc.prctl(*args) != 0:
        _raise(f"prctl({option})")


def _raise(what: str):
    code = ctypes.get_errno()
    raise OSError(code, f"{what}: {os.strerror(code)}")


# --- the zygote ---------------------------------------------------------------------
def forbid_ipc() -> None:
    """No System V objects in the slot's own IPC namespace (it lives as long as the
    slot); workers get namespaces of their own and a seccomp filter on top."""
    for name, value in (("shmmni", "0"), ("shmall", "0"), ("msgmni", "0"), ("sem", "0 0 0 0")):
        with open(f"/proc/sys/kernel/{name}", "w") as file:
            file.write(value)


def harden_zygote() -> None:
    """No privilege gain through exec, no ptrace or /proc/<pid>/mem of it, orphans
    reparented to it (so it reaps them), and no inheritable or ambient capability."""
    prctl(PR_SET_NO_NEW_PRIVS, 1)
    prctl(PR_SET_DUMPABLE, 0)
    prctl(PR_SET_CHILD_SUBREAPER, 1)
    prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL)
    effective, permitted, _ = _capget()
    _capset(effective, permitted, 0)


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32),
                ("inheritable", ctypes.c_uint32)]


def _capget() -> tuple[int, int, int]:
    header, data = _CapHeader(CAPABILITY_VERSION_3, 0), (_CapData * 2)()
    if _libc.capget(ctypes.byref(header), data) != 0:
        _raise("capget")
    return tuple(data[0].__getattribute__(f) | data[1].__getattribute__(f) << 32
                 for f in ("effective", "permitted", "inheritable"))


def _capset(effective: int, permitted: int, inheritable: int) -> None:
    header, data = _CapHeader(CAPABILITY_VERSION_3, 0), (_CapData * 2)()
    for i in (0, 1):
        data[i] = _CapData(effective >> 32 * i & 0xFFFFFFFF, permitted >> 32 * i & 0xFFFFFFFF,
                           inheritable >> 32 * i & 0xFFFFFFFF)
    if _libc.capset(ctypes.byref(header), data) != 0:
        _raise("capset")


# --- a worker -----------------------------------------------------------------------
def drop_to(uid: int) -> None:
    """Become the slot's unprivileged uid for good (real, effective and saved), with no
    supplementary groups; root's capabilities go with it."""
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)
    if os.getresuid() != (uid, uid, uid) or os.getresgid() != (uid, uid, uid):
        raise RuntimeError(f"could not drop to uid {uid}")


def own_namespaces() -> bool:
    """Put this process (already the slot's uid) into new user, network and IPC
    namespaces: sockets, System V objects and message queues then die with the
    submission's last process. The loopback device comes up as in the slot's network.
    Every capability the new user namespace granted is dropped before returning. False
    when this kernel refuses unprivileged user namespaces (the slot's own namespaces
    then still hold)."""
    uid, gid = os.getuid(), os.getgid()
    prctl(PR_SET_DUMPABLE, 1)  # the uid change made us undumpable: /proc/self would be root's
    if _libc.unshare(CLONE_NEWUSER | CLONE_NEWNET | CLONE_NEWIPC) != 0:
        return False
    for name, text in (("uid_map", f"{uid} {uid} 1"), ("setgroups", "deny"),
                       ("gid_map", f"{gid} {gid} 1")):
        with open(f"/proc/self/{name}", "w") as file:
            file.write(text)
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        fcntl.ioctl(sock, SIOCSIFFLAGS, struct.pack("16sH22x", b"lo", IFF_UP_LOOPBACK_RUNNING))
    return True


def drop_capabilities() -> None:
    """No capability in any set, the bounding set included (where we may still drop it)."""
    prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL)
    with open("/proc/sys/kernel/cap_last_cap") as file:
        last = int(file.read())
    for cap in range(last + 1):
        if _libc.prctl(ctypes.c_ulong(PR_CAPBSET_DROP), ctypes.c_ulong(cap),
                       ctypes.c_ulong(0), ctypes.c_ulong(0), ctypes.c_ulong(0)) != 0:
            break  # no CAP_SETPCAP: no user namespace of our own; nothing to drop then
    _capset(0, 0, 0)
    prctl(PR_SET_NO_NEW_PRIVS, 1)


def set_limits(rlimits: dict[str, int], ceiling: dict[str, int], nice: int,
               affinity: list[int]) -> None:
    """Every rlimit (soft = hard, so the student cannot raise it), the nice value,
    SCHED_OTHER and the CPU affinity, set here whatever the zygote has now. -1 is
    unlimited; no limit goes above ``ceiling`` (the zygote's hard limits when it
    started: what the grader itself was given)."""
    for name, value in rlimits.items():
        value = lower(value, ceiling.get(name, -1))
        resource.setrlimit(RLIMITS[name], (value, value))
    os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))
    os.setpriority(os.PRIO_PROCESS, 0, nice)
    os.sched_setaffinity(0, affinity)


def lower(a: int, b: int) -> int:
    """The smaller limit, where -1 (RLIM_INFINITY) is the largest."""
    return b if a < 0 else a if b < 0 else min(a, b)


def process_state() -> dict:
    """What a process runs under that a same-uid process could change: the zygote
    compares it after every submission, a worker checks it before it serves."""
    return {"rlimits": {name: list(resource.getrlimit(n)) for name, n in RLIMITS.items()},
            "nice": os.getpriority(os.PRIO_PROCESS, 0),
            "policy": os.sched_getscheduler(0), "priority": os.sched_getparam(0).sched_priority,
            "affinity": sorted(os.sched_getaffinity(0)),
            "ids": [list(os.getresuid()), list(os.getresgid())]}

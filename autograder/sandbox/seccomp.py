"""The worker's seccomp filter: the system calls that reach kernel state outliving a
process, or another process, or a large attack surface, fail, and nothing a notebook
needs does.

Denied (EPERM) because the state they create outlives the submission or crosses slots:
keyrings (``add_key``, ``request_key``, ``keyctl``), System V IPC (``shm*``, ``msg*``,
``sem*``), POSIX message queues (``mq_*``), inotify and fanotify (a watch on a shared
read-only file sees another slot's reads), new user namespaces (``clone``/``unshare``
with ``CLONE_NEWUSER``; ``clone3``, whose flags a classic filter cannot read, fails
with ENOSYS so that glibc falls back to ``clone``) and ``setns``.
Denied because they reach other processes or the kernel's insides and no notebook uses
them: ``ptrace``, ``process_vm_readv``/``writev``, ``kcmp``, ``pidfd_getfd``,
``perf_event_open``, ``bpf``, ``userfaultfd``, ``io_uring_*``, ``syslog`` (the kernel
log holds other processes' names), ``memfd_secret`` (memory the memory cgroup cannot
reclaim), ``open_by_handle_at``.
Every system call of a foreign ABI (x32, i386) is denied too.
Stdlib and ctypes only: the zygote imports this before torch.
"""
import ctypes
import errno
import os

from .lockdown import prctl

PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 22, 2
CLONE_NEWUSER = 0x10000000

# x86_64 numbers first, then the generic table (aarch64).
DENIED = {
    "add_key": (248, 217), "request_key": (249, 218), "keyctl": (250, 219),
    "shmget": (29, 194), "shmat": (30, 196), "shmctl": (31, 195), "shmdt": (67, 197),
    "msgget": (68, 186), "msgsnd": (69, 189), "msgrcv": (70, 188), "msgctl": (71, 187),
    "semget": (64, 190), "semop": (65, 193), "semctl": (66, 191), "semtimedop": (220, 192),
    "mq_open": (240, 180), "mq_unlink": (241, 181), "mq_timedsend": (242, 182),
    "mq_timedreceive": (243, 183), "mq_notify": (244, 184), "mq_getsetattr": (245, 185),
    "inotify_init": (253, None), "inotify_init1": (294, 26), "inotify_add_watch": (254, 27),
    "fanotify_init": (300, 262), "fanotify_mark": (301, 263), "setns": (308, 268),
    "ptrace": (101, 117), "process_vm_readv": (310, 270), "process_vm_writev": (311, 271),
    "kcmp": (312, 272), "pidfd_getfd": (438, 438), "perf_event_open": (298, 241),
    "bpf": (321, 280), "userfaultfd": (323, 282), "io_uring_setup": (425, 425),
    "io_uring_enter": (426, 426), "io_uring_register": (427, 427), "syslog": (103, 116),
    "memfd_secret": (447, 447), "open_by_handle_at": (304, 265),
}
# AUDIT_ARCH value, column in DENIED, and the numbers of (clone, unshare, clone3).
MACHINES = {"x86_64": (0xC000003E, 0, 56, 272, 435), "aarch64": (0xC00000B7, 1, 220, 97, 435)}

LD, JEQ, JGE, JSET, RET = 0x20, 0x15, 0x35, 0x45, 0x06
ALLOW, DENY, NOSYS = 0x7FFF0000, 0x00050000 | errno.EPERM, 0x00050000 | errno.ENOSYS


class _SockFilter(ctypes.Structure):
    _fields_ = [("code", ctypes.c_ushort), ("jt", ctypes.c_ubyte), ("jf", ctypes.c_ubyte),
                ("k", ctypes.c_uint)]


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(_SockFilter))]


def program(machine: str) -> list[tuple[int, int, int, int]]:
    """The classic-BPF program for ``machine``, as (code, jt, jf, k) instructions."""
    arch, column, clone, unshare, clone3 = MACHINES[machine]
    denied = sorted({numbers[column] for numbers in DENIED.values() if numbers[column] is not None})
    head = [(LD, 0, 0, 4), (JEQ, 1, 0, arch), (RET, 0, 0, DENY),  # foreign arch: deny
            (LD, 0, 0, 0), (JGE, 0, 1, 0x40000000), (RET, 0, 0, DENY)]  # x32: deny
    checks = [(JEQ, 0, 0, n) for n in denied] + [(JEQ, 0, 0, clone3), (JEQ, 0, 0, clone),
                                                 (JEQ, 0, 0, unshare)]
    tail = [(RET, 0, 0, ALLOW),
            (RET, 0, 0, DENY),                 # a denied number lands here
            (RET, 0, 0, NOSYS),                # clone3
            (LD, 0, 0, 16),                    # clone, unshare: A = low half of args[0], the flags
            (JSET, 0, 1, CLONE_NEWUSER),
            (RET, 0, 0, DENY),
            (RET, 0, 0, ALLOW)]
    body = []
    for i, (code, _, _, k) in enumerate(checks):
        to_tail = len(checks) - i - 1  # instructions between this check and the tail
        target = {clone3: 2, clone: 3, unshare: 3}.get(k, 1) if i >= len(denied) else 1
        body.append((code, to_tail + target, 0, k))
    return head + body + tail


def install() -> None:
    """Install the filter on this process (and so on everything it starts). Needs
    no_new_privs. On an unknown machine nothing is filtered: the uid, namespaces and
    rlimits still hold."""
    machine = os.uname().machine
    if machine not in MACHINES:
        return
    ops = program(machine)
    filters = (_SockFilter * len(ops))(*(_SockFilter(*op) for op in ops))
    fprog = _SockFprog(len(ops), filters)  # kept alive by these names until the call returns
    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.addressof(fprog))

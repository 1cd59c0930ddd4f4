"""How the sandbox confines student code, in two halves.

Outside, the grader starts each slot with ``bwrap_command``: new PID, network, IPC,
UTS and cgroup namespaces and a filesystem of read-only binds (see ``sandbox``), and
waits for a stopped slot's namespace to empty (``wait_until_dead``).
Inside, the zygote and its workers call the kernel settings below: SysV IPC off,
the slot's own uid, no privilege gain, no ptrace of the zygote, no new user
namespaces, and per-process rlimits. Every setting is inherited by the processes a
student starts, and none can be undone without privileges the sandbox no longer has.
Stdlib and ctypes only: the zygote imports this before torch.
"""
import ctypes
import errno
import glob
import importlib.util
import os
import resource
import sys
import time
from pathlib import Path

PACKAGE_INSIDE, VENV_INSIDE, COURSE_INSIDE = "/opt/grader", "/opt/venv", "/course"


# --- outside: the bubblewrap command -----------------------------------------------
def bwrap_command(bwrap: str, uid: int | None, helpers_dir: Path, tmp_mb: int, device: str,
                  control_fd: int) -> list[str]:
    """The bubblewrap command line that starts a zygote; ``uid`` None: not root, no uid change."""
    python, binds, site_dirs = _python_layout()
    command = [bwrap, "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts",
               "--unshare-cgroup-try", "--die-with-parent", "--new-session"]
    if uid is not None:  # the zygote needs these two only to drop to the slot's uid, which clears them
        command += ["--cap-drop", "ALL", "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]
    else:
        command += ["--unshare-user"]
    package = Path(__file__).resolve().parent
    binds += [(package.parent / "__init__.py", f"{PACKAGE_INSIDE}/autograder/__init__.py"),
              (package, f"{PACKAGE_INSIDE}/autograder/sandbox"), (helpers_dir, COURSE_INSIDE)]
    command += _filesystem_args(binds, tmp_mb)
    if device.startswith("cuda"):
        for node in sorted(glob.glob("/dev/nvidia*")):
            command += ["--dev-bind", node, node]
    command += _environment_args(python, site_dirs)
    command += ["--", python, "-P", "-s", "-m", "autograder.sandbox.zygote", str(control_fd)]
    return command + ([str(uid)] if uid is not None else [])


def _python_layout() -> tuple[str, list[tuple[Path, str]], list[str]]:
    """The interpreter to run inside, what to bind for it, and site folders outside both
    prefixes (a user site, say) that must go on PYTHONPATH. The venv moves to /opt/venv
    so that no folder of the repository, not even an empty one, exists inside."""
    binds: list[tuple[Path, str]] = []
    python = sys.executable
    if sys.prefix != sys.base_prefix:
        binds.append((Path(sys.prefix), VENV_INSIDE))
        python = f"{VENV_INSIDE}/bin/{Path(sys.executable).name}"
    if not _under(sys.base_prefix, "/usr"):
        binds.append((Path(sys.base_prefix), sys.base_prefix))
    covered = ["/usr", sys.prefix, sys.base_prefix]
    site_dirs = [entry for entry in sys.path
                 if entry.endswith(("site-packages", "dist-packages")) and os.path.isdir(entry)
                 and not any(_under(entry, root) for root in covered)]
    return python, binds + [(Path(entry), entry) for entry in site_dirs], site_dirs


def _under(path, root) -> bool:
    return Path(path) == Path(root) or Path(root) in Path(path).parents


def _filesystem_args(binds: list[tuple[Path, str]], tmp_mb: int) -> list[str]:
    """Read-only binds only; bubblewrap makes the missing parents of a bind root-only
    (0700), which the slot's uid could not cross, so we create them 0755 first."""
    args = ["--ro-bind", "/usr", "/usr", "--ro-bind", "/etc", "/etc"]
    for top in ("/bin", "/sbin", "/lib", "/lib32", "/lib64"):
        if os.path.islink(top):
            args += ["--symlink", os.readlink(top), top]
        elif os.path.isdir(top):
            args += ["--ro-bind", top, top]
    parents = sorted({str(parent) for _, inside in binds for parent in Path(inside).parents
                      if str(parent) != "/"}, key=lambda p: p.count("/"))
    for parent in parents:
        args += ["--perms", "0755", "--dir", parent]
    for host, inside in binds:
        args += ["--ro-bind", str(host), inside]
    args += _hide_secrets(binds)
    return args + ["--perms", "1777", "--size", str(tmp_mb << 20), "--tmpfs", "/tmp",
                   "--proc", "/proc", "--dev", "/dev", "--chdir", "/tmp"]


def _hide_secrets(binds: list[tuple[Path, str]]) -> list[str]:
    """An empty tmpfs over ``reference`` and ``autograder`` wherever a bind would show
    them: a non-editable install puts both into the venv's site-packages."""
    args = []
    for name in ("reference", "autograder"):
        spec = importlib.util.find_spec(name)
        if spec is None or spec.origin is None:
            continue
        folder = Path(spec.origin).resolve().parent
        for host, inside in binds:
            host = Path(host).resolve()
            if host.is_dir() and _under(folder, host):
                args += ["--tmpfs", str(Path(inside) / folder.relative_to(host))]
    return args


def _environment_args(python: str, site_dirs: list[str]) -> list[str]:
    env = {"PATH": f"{Path(python).parent}:/usr/local/bin:/usr/bin:/bin", "HOME": "/tmp",
           "PYTHONPATH": ":".join([PACKAGE_INSIDE, *site_dirs]), "LANG": "C.UTF-8",
           "MPLBACKEND": "Agg", "MPLCONFIGDIR": "/tmp", "NBGRADER_EXECUTION": "autograde",
           "OMP_NUM_THREADS": "1", "PYTHONDONTWRITEBYTECODE": "1"}
    args = ["--clearenv"]
    for key, value in env.items():
        args += ["--setenv", key, value]
    return args


def first_child(pid: int) -> int | None:
    """The oldest child of ``pid``: for bubblewrap, PID 1 of its namespace."""
    try:
        return int(Path(f"/proc/{pid}/task/{pid}/children").read_text().split()[0])
    except (OSError, IndexError, ValueError):
        return None


def wait_until_dead(pid: int, timeout_s: float = 5.0) -> None:
    """Until ``pid`` is a zombie or gone. For a namespace's PID 1 that means every
    process in the namespace is gone: the kernel kills and reaps them first."""
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            return
        if state in ("Z", "X"):
            return
        time.sleep(0.01)


# --- inside: kernel settings --------------------------------------------------------
PR_SET_DUMPABLE, PR_SET_SECCOMP, PR_SET_CHILD_SUBREAPER, PR_SET_NO_NEW_PRIVS = 4, 22, 36, 38
SECCOMP_MODE_FILTER = 2
CLONE_NEWUSER = 0x10000000
# AUDIT_ARCH value and the numbers of (clone, unshare, clone3) per machine.
SYSCALLS = {"x86_64": (0xC000003E, 56, 272, 435), "aarch64": (0xC00000B7, 220, 97, 435)}

_libc = ctypes.CDLL(None, use_errno=True)


def prctl(option: int, arg2: int, arg3: int = 0) -> None:
    # prctl reads unsigned longs and checks unused arguments are 0: pass full-width zeros
    args = (ctypes.c_ulong(option), ctypes.c_ulong(arg2), ctypes.c_ulong(arg3),
            ctypes.c_ulong(0), ctypes.c_ulong(0))
    if _libc.prctl(*args) != 0:
        code = ctypes.get_errno()
        raise OSError(code, f"prctl({option}): {os.strerror(code)}")


def forbid_ipc() -> None:
    """No System V shared memory, queues or semaphores. The IPC namespace lives as long
    as the slot, so a segment left by one submission could be read by the next, and it
    escapes RLIMIT_DATA. These sysctls belong to the sandbox's own IPC namespace."""
    for name, value in (("shmmni", "0"), ("shmall", "0"), ("msgmni", "0"), ("sem", "0 0 0 0")):
        with open(f"/proc/sys/kernel/{name}", "w") as file:
            file.write(value)


def drop_privileges(uid: int) -> None:
    """Become the slot's own unprivileged user: RLIMIT_NPROC is not enforced for root,
    and a uid per slot keeps one slot's processes from signalling another's."""
    os.setgroups([])
    os.setgid(uid)
    os.setuid(uid)  # as root this sets the real, effective and saved uid: no way back
    if os.getresuid() != (uid, uid, uid) or os.getresgid() != (uid, uid, uid):
        raise RuntimeError(f"could not drop to uid {uid}")


def harden() -> None:
    """No privilege gain through exec, no ptrace or /proc/<pid>/mem access by the
    student's same-uid processes, orphans reparented to us (so we reap them), and no
    new user namespaces (they would hand the student capabilities over fresh namespaces:
    a large kernel attack surface for nothing a notebook needs)."""
    prctl(PR_SET_NO_NEW_PRIVS, 1)
    prctl(PR_SET_DUMPABLE, 0)
    prctl(PR_SET_CHILD_SUBREAPER, 1)
    _install_seccomp_filter()


class _SockFilter(ctypes.Structure):
    _fields_ = [("code", ctypes.c_ushort), ("jt", ctypes.c_ubyte), ("jf", ctypes.c_ubyte),
                ("k", ctypes.c_uint)]


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(_SockFilter))]


def _install_seccomp_filter() -> None:
    """A classic-BPF filter: clone/unshare with CLONE_NEWUSER fail with EPERM, clone3
    fails with ENOSYS (its flags sit in memory a filter cannot read; glibc then falls
    back to clone), and so does every syscall of a foreign ABI (x32, i386)."""
    if os.uname().machine not in SYSCALLS:
        return  # unknown machine: the uid drop and namespaces still hold
    arch, clone, unshare, clone3 = SYSCALLS[os.uname().machine]
    ld, jeq, jge, jset, ret = 0x20, 0x15, 0x35, 0x45, 0x06
    allow, deny, nosys = 0x7FFF0000, 0x00050000 | errno.EPERM, 0x00050000 | errno.ENOSYS
    program = [
        (ld, 0, 0, 4),              # 0: A = arch
        (jeq, 1, 0, arch),          # 1: native -> 3
        (ret, 0, 0, deny),          # 2
        (ld, 0, 0, 0),              # 3: A = syscall number
        (jge, 6, 0, 0x40000000),    # 4: x32 -> 11
        (jeq, 7, 0, clone3),        # 5: -> 13
        (jeq, 2, 0, clone),         # 6: -> 9
        (jeq, 1, 0, unshare),       # 7: -> 9
        (ret, 0, 0, allow),         # 8
        (ld, 0, 0, 16),             # 9: A = low half of args[0], the flags
        (jset, 0, 1, CLONE_NEWUSER),  # 10: -> 11 or 12
        (ret, 0, 0, deny),          # 11
        (ret, 0, 0, allow),         # 12
        (ret, 0, 0, nosys),         # 13
    ]
    filters = (_SockFilter * len(program))(*(_SockFilter(*op) for op in program))
    fprog = _SockFprog(len(program), filters)
    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.addressof(fprog))


def limit_resources(cpu_s: int, max_processes: int, file_mb: int, memory_mb: int,
                    open_files: int = 256) -> None:
    """Per-process caps, soft = hard so the student cannot raise them again.
    RLIMIT_DATA rather than RLIMIT_AS: torch reserves address space it never touches.
    RLIMIT_NPROC counts every process and thread of the slot's uid."""
    mb = 1 << 20
    for limit, value in ((resource.RLIMIT_CPU, cpu_s), (resource.RLIMIT_NPROC, max_processes),
                         (resource.RLIMIT_FSIZE, file_mb * mb), (resource.RLIMIT_DATA, memory_mb * mb),
                         (resource.RLIMIT_CORE, 0), (resource.RLIMIT_NOFILE, open_files),
                         (resource.RLIMIT_MSGQUEUE, 0)):
        resource.setrlimit(limit, (value, value))

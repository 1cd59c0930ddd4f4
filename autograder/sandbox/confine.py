"""The bubblewrap command that starts a slot's zygote, and waiting for a slot to die.

The zygote gets new PID, network, IPC, UTS and cgroup namespaces and a filesystem of
read-only binds: /usr, /etc, the interpreter, the virtualenv (at /opt/venv), the
``autograder.sandbox`` package (at /opt/grader) and the assignment's helper package
(at /course/<name>). Its /tmp is a tmpfs capped in bytes and in files: bubblewrap 0.8
cannot cap inodes, so as root the grader mounts it itself, with ``nr_inodes``, in a
private mount namespace that only this bubblewrap process ever sees (``unshare -m``),
and binds it in; nothing is mounted on the host. ``/proc/keys`` and
``/proc/key-users`` are hidden. On CUDA, only the slot's own GPU device node is there.
"""
import glob
import importlib.util
import os
import re
import sys
import time
from dataclasses import dataclass
from pathlib import Path

PACKAGE_INSIDE, VENV_INSIDE, COURSE_INSIDE, SITE_INSIDE = "/opt/grader", "/opt/venv", "/course", "/opt/site"
GPU_CONTROL_NODES = ("/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/nvidia-uvm-tools", "/dev/nvidia-modeset")
HIDDEN_PROC_FILES = ("/proc/keys", "/proc/key-users")


@dataclass(frozen=True)
class Plan:
    """What one slot's bubblewrap command needs."""
    uid: int | None            # the slot's uid; None: not root, bubblewrap's user namespace
    helper_package: Path       # bound read-only at /course/<its name>
    tmp_mb: int
    tmp_files: int
    tmp_mount: Path | None     # as root: an empty root-only folder to mount /tmp's tmpfs on
    gpu: str | None            # the slot's /dev/nvidiaN on CUDA
    zygote_args: str           # JSON for ``python -m autograder.sandbox.zygote``


def bwrap_command(bwrap: str, plan: Plan) -> list[str]:
    """The full command line: bubblewrap, behind ``unshare``/``mount`` as root."""
    python, binds, site_dirs = _python_layout()
    command = [bwrap, "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts",
               "--unshare-cgroup-try", "--die-with-parent", "--new-session"]
    if plan.uid is not None:  # the zygote stays root with these; its workers get none
        command += ["--cap-drop", "ALL"] + [arg for cap in ("CAP_SETUID", "CAP_SETGID", "CAP_KILL")
                                            for arg in ("--cap-add", cap)]
    else:
        command += ["--unshare-user"]
    package = Path(__file__).resolve().parent
    binds += [(package.parent / "__init__.py", f"{PACKAGE_INSIDE}/autograder/__init__.py"),
              (package, f"{PACKAGE_INSIDE}/autograder/sandbox"),
              (plan.helper_package, f"{COURSE_INSIDE}/{plan.helper_package.name}")]
    command += _filesystem_args(binds, plan)
    if plan.gpu is not None:
        for node in [*(n for n in GPU_CONTROL_NODES if os.path.exists(n)), plan.gpu]:
            command += ["--dev-bind", node, node]
    command += _environment_args(python, site_dirs, cuda=plan.gpu is not None)
    command += ["--", python, "-P", "-s", "-m", "autograder.sandbox.zygote", plan.zygote_args]
    if plan.tmp_mount is None:
        return command
    options = f"size={plan.tmp_mb << 20},nr_inodes={plan.tmp_files},mode=1777,nosuid,nodev"
    return ["unshare", "--mount", "--propagation", "private", "--", "/bin/sh", "-c",
            'mount -t tmpfs -o "$1" tmpfs "$2" && shift 2 && exec "$@"', "sh",
            options, str(plan.tmp_mount), *command]


def gpu_nodes() -> list[str]:
    """This machine's GPU device nodes (/dev/nvidia0, /dev/nvidia1, ...), in order."""
    nodes = [n for n in glob.glob("/dev/nvidia*") if re.fullmatch(r"/dev/nvidia\d+", n)]
    return sorted(nodes, key=lambda n: int(n.removeprefix("/dev/nvidia")))


def _python_layout() -> tuple[str, list[tuple[Path, str]], list[str]]:
    """The interpreter to run inside, what to bind for it, and (as they are named inside) the
    site folders outside both prefixes (a user site, say) that must go on PYTHONPATH. The venv moves to /opt/venv
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
    # Each at a path of its own inside: one under /tmp (a checkout in /tmp, the GPU check's
    # venv on another's packages) would be hidden by the sandbox's own /tmp.
    inside = [f"{SITE_INSIDE}/{number}" for number in range(len(site_dirs))]
    return python, binds + [(Path(entry), where) for entry, where in zip(site_dirs, inside)], inside


def _under(path, root) -> bool:
    return Path(path) == Path(root) or Path(root) in Path(path).parents


def _filesystem_args(binds: list[tuple[Path, str]], plan: Plan) -> list[str]:
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
    return args + _hide_secrets(binds) + _tmp_proc_dev_args(plan)


def _tmp_proc_dev_args(plan: Plan) -> list[str]:
    """/tmp (ours as root, else bubblewrap's: bytes capped, inodes not), /proc without
    the key files, and a minimal /dev."""
    if plan.tmp_mount is not None:
        args = ["--bind", str(plan.tmp_mount), "/tmp"]
    else:
        args = ["--perms", "1777", "--size", str(plan.tmp_mb << 20), "--tmpfs", "/tmp"]
    args += ["--proc", "/proc"]
    for name in HIDDEN_PROC_FILES:
        if os.path.exists(name):
            args += ["--ro-bind", "/dev/null", name]
    return args + ["--dev", "/dev", "--chdir", "/tmp"]


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


def _environment_args(python: str, site_dirs: list[str], cuda: bool = False) -> list[str]:
    """The worker's whole environment. On CUDA the driver's library path passes through:
    libcuda may be found only through it (a driver under /usr/local/nvidia)."""
    env = {"PATH": f"{Path(python).parent}:/usr/local/bin:/usr/bin:/bin", "HOME": "/tmp",
           "PYTHONPATH": ":".join([PACKAGE_INSIDE, *site_dirs]), "LANG": "C.UTF-8",
           "MPLBACKEND": "Agg", "MPLCONFIGDIR": "/tmp", "NBGRADER_EXECUTION": "autograde",
           "OMP_NUM_THREADS": "1", "PYTHONDONTWRITEBYTECODE": "1"}
    if cuda and os.environ.get("LD_LIBRARY_PATH"):
        env["LD_LIBRARY_PATH"] = os.environ["LD_LIBRARY_PATH"]
    args = ["--clearenv"]
    for key, value in env.items():
        args += ["--setenv", key, value]
    return args


def first_child(pid: int) -> int | None:
    """The oldest child of ``pid``: for bubblewrap, PID 1 of its namespace."""
    found = children(pid)
    return found[0] if found else None


def children(pid: int) -> list[int]:
    """The children of ``pid`` (of its main thread), oldest first, as the kernel lists them."""
    try:
        return [int(child) for child in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except (OSError, ValueError):
        return []


def wait_until_stopped(pid: int, timeout_s: float = 1.0) -> None:
    """Until ``pid`` is stopped (by SIGSTOP), a zombie or gone."""
    _wait_for_state(pid, {"T", "t", "Z", "X"}, timeout_s, 0.001)


def wait_until_dead(pid: int, timeout_s: float = 5.0) -> None:
    """Until ``pid`` is a zombie or gone. For a namespace's PID 1 that means every
    process in the namespace is gone: the kernel kills and reaps them first."""
    _wait_for_state(pid, {"Z", "X"}, timeout_s, 0.01)


def _wait_for_state(pid: int, states: set[str], timeout_s: float, poll_s: float) -> None:
    """Until ``pid``'s state (/proc/PID/stat) is one of ``states`` or it is gone, at most ``timeout_s``."""
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            return
        if state in states:
            return
        time.sleep(poll_s)

"""Before any slot starts: whether this machine can run the sandbox at all, how many
slots a device allows, and the fallbacks the sandbox states (once per process, as a
RuntimeWarning) when it runs with less than it wants: not root (bubblewrap's user
namespace, the grader's own uid, no cap on the number of files in /tmp); no usable
cgroup (memory capped per process only, no CPU share, wall-clock time limits); no
unprivileged user namespaces (workers share the slot's network and IPC namespaces)."""
import os
import shutil
import subprocess
import sys
import warnings

from .confine import gpu_nodes

NOT_ROOT = ("the grader is not running as root: the sandbox falls back to a user namespace "
            "without a uid of its own, so student code runs as your user, max_processes "
            "counts all of your processes and /tmp has no cap on its number of files")
NO_CGROUP = ("{why}: each process's memory is capped but not the submission's, no slot has "
             "its own CPU share, and time limits are wall-clock time")
NO_NAMESPACES = ("this kernel refuses unprivileged user namespaces: workers share the slot's "
                 "network and IPC namespaces (the seccomp filter still denies SysV IPC)")
_warned: set[str] = set()


def check_available() -> str | None:
    """One readable line when this machine cannot run the sandbox; None when it can.
    For the command line to call in the parent, before forking any grading process."""
    if sys.platform != "linux":
        return f"the sandbox needs Linux (bubblewrap and namespaces); this is {sys.platform}"
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return "bubblewrap is not installed: install it: apt-get install bubblewrap (make sandbox-deps)"
    if os.geteuid() == 0 and not (shutil.which("unshare") and shutil.which("mount")):
        return "unshare and mount are missing: install them: apt-get install util-linux"
    probe = subprocess.run([bwrap, "--ro-bind", "/", "/", "--unshare-pid", "--unshare-net",
                            "--unshare-ipc", "--", "true"], capture_output=True, text=True)
    if probe.returncode != 0:
        return f"bubblewrap cannot create namespaces here: {probe.stderr.strip()[:200]}"
    return None


def gpu_slots(device: str) -> int | None:
    """How many slots may run at once on ``device``: one per GPU on CUDA (each slot gets
    a GPU to itself, so no student can take another's GPU memory); None (no cap) on
    the CPU. The pipeline caps ``--jobs`` at it."""
    return len(gpu_nodes()) if device.startswith("cuda") else None


def warn_once(message: str) -> None:
    """Each fallback is said once per process, not once per slot or submission."""
    if message not in _warned:
        _warned.add(message)
        warnings.warn(message, RuntimeWarning, stacklevel=3)

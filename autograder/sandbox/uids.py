"""Slot uids: every slot of every grading run on this host gets a uid that no other live
slot holds.

A slot leases its uid for its whole life by holding ``flock`` on
``/run/autograder-uids/<uid>.lock``. The kernel drops the lock when the last descriptor
closes, so a run that crashes or is killed frees its uids without any clean-up; two
runs (or two test sessions) never share a uid, and so never share ``RLIMIT_NPROC``, the
uid's signals or its per-user kernel state. A free lock is not enough: a uid that
still has processes or keys on the host (a crashed run's leftovers, or another tool
that picked the same number) is skipped. uids that name an account in the user database
are never used.

Host side only (the grader, as root).
"""
import fcntl
import os
import pwd
from pathlib import Path

FIRST_UID, UID_COUNT = 61000, 1000
LOCK_DIR = Path("/run/autograder-uids")


class UidLease:
    """One uid held by this process until ``release()`` (or until the process ends)."""

    def __init__(self, uid: int, lock_fd: int):
        self.uid, self._lock_fd = uid, lock_fd

    def release(self) -> None:
        if self._lock_fd is not None:
            os.close(self._lock_fd)  # closing the only descriptor drops the flock
            self._lock_fd = None

    @property
    def scratch_dir(self) -> Path:
        """A root-only folder of this uid's own, for mount points (see ``confine``)."""
        path = LOCK_DIR / f"{self.uid}.d"
        path.mkdir(mode=0o700, exist_ok=True)
        return path


def lease_uid(lock_dir: Path = LOCK_DIR) -> UidLease | None:
    """The first free, clean uid of the range, locked for this process; None if every one
    is taken (more than ``UID_COUNT`` live slots on one host)."""
    lock_dir.mkdir(mode=0o700, exist_ok=True)
    accounts = {entry.pw_uid for entry in pwd.getpwall()}
    busy = uids_with_processes() | uids_with_keys()
    for uid in range(FIRST_UID, FIRST_UID + UID_COUNT):
        if uid in accounts or uid in busy:
            continue
        fd = os.open(lock_dir / f"{uid}.lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            continue
        if uid in uids_with_processes():  # started by a run that began between our scans
            os.close(fd)
            continue
        return UidLease(uid, fd)
    return None


def is_free(uid: int, lock_dir: Path = LOCK_DIR) -> bool:
    """Whether no live process holds ``uid``'s lease (for clearing what a dead run left)."""
    try:
        fd = os.open(lock_dir / f"{uid}.lock", os.O_RDWR | os.O_CLOEXEC)
    except FileNotFoundError:
        return True
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except BlockingIOError:
        return False
    finally:
        os.close(fd)  # drops the lock again if we took it


def uids_with_processes() -> set[int]:
    """Real uids of every process on the host (not the owner of ``/proc/<pid>``, which
    is root for a process that is not dumpable)."""
    return set(processes_by_uid())


def processes_by_uid() -> dict[int, list[int]]:
    """Host pids by real uid."""
    found: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            status = Path(f"/proc/{name}/status").read_text()
        except OSError:
            continue  # gone meanwhile
        for line in status.splitlines():
            if line.startswith("Uid:"):
                found.setdefault(int(line.split()[1]), []).append(int(name))
                break
    return found


def uids_with_keys() -> set[int]:
    """uids that own kernel keys (``/proc/key-users``; root sees every user)."""
    try:
        lines = Path("/proc/key-users").read_text().splitlines()
    except OSError:
        return set()
    return {int(line.split(":")[0]) for line in lines if line.strip()}


def leftovers(only: list[int] | None = None) -> dict[int, list[str]]:
    """What slot uids that no live slot holds still own on the host: processes, kernel
    keys, System V objects (of the host's IPC namespace). Empty when every run cleaned
    up; ``only`` restricts the check to some uids."""
    candidates = only if only is not None else range(FIRST_UID, FIRST_UID + UID_COUNT)
    processes, keys = processes_by_uid(), uids_with_keys()
    found: dict[int, list[str]] = {}
    for uid in candidates:
        if not is_free(uid):
            continue  # a live slot's, perhaps another run's that leased it since
        items = [f"process {pid}" for pid in processes.get(uid, [])]
        items += ["kernel keys"] * (uid in keys) + [f"System V {kind}" for kind in _sysv_owned_by(uid)]
        if items:
            found[uid] = items
    return found


def _sysv_owned_by(uid: int) -> list[str]:
    kinds = []
    for kind in ("shm", "msg", "sem"):
        try:
            lines = Path(f"/proc/sysvipc/{kind}").read_text().splitlines()
        except OSError:
            continue
        column = lines[0].split().index("uid")
        kinds += [kind for line in lines[1:] if line.split() and int(line.split()[column]) == uid]
    return kinds


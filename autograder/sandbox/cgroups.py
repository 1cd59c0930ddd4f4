"""Control groups per slot: each slot its own CPU share, and each submission's memory,
processes and CPU time counted as a whole (memfd and tmpfs pages included).

Layout, below the grader's own cgroup (so that whatever bounds the grader bounds its
slots too), in each hierarchy that holds the controllers:

    autograder-<uid>/           the slot: cpu quota of ``cpus`` cores (zygote and worker)
    autograder-<uid>/zygote/    v2 only (a v2 group with children holds no processes)
    autograder-<uid>/worker/    the submission: memory limit, pids limit, CPU time, OOM kills

The zygote joins the slot's group and every forked worker joins ``worker`` before it runs
anything, by writing ``0`` into a ``cgroup.procs`` file that the grader opened: the kernel
checks the opener's credentials, so neither needs a capability for it.

cgroup v1 (the ``memory``, ``pids``, ``cpu`` and ``cpuacct`` hierarchies) and v2 (``cpu``,
``memory`` and ``pids`` enabled below the grader's cgroup) are detected. Without either,
``create`` says why and the sandbox falls back to per-process limits and wall-clock
time (it warns once). Host side only (the grader, as root).
"""
import os
import time
from pathlib import Path

PERIOD_US = 100_000
V1_CONTROLLERS = ("memory", "pids", "cpu", "cpuacct")
V2_CONTROLLERS = ("cpu", "memory", "pids")


class NoGroups:
    """The fallback: nothing joined, CPU time read as wall-clock time."""
    version = None
    slot_procs: list[Path] = []
    worker_procs: list[Path] = []

    def cpu_seconds(self) -> float:
        return time.monotonic()

    def oom_kills(self) -> int:
        return 0

    def threads(self) -> list[int]:
        return []

    def processes(self) -> list[int]:
        return []

    def remove(self) -> None:
        pass


class SlotGroups(NoGroups):
    """One slot's groups; ``worker`` is the folder whose files count the submission."""

    def __init__(self, version: str, slot_dirs: list[Path], worker_dirs: dict[str, Path]):
        self.version, self.slot_dirs, self.worker_dirs = version, slot_dirs, worker_dirs
        join = [d / "zygote" for d in slot_dirs] if version == "v2" else slot_dirs
        self.slot_procs = [d / "cgroup.procs" for d in join]
        self.worker_procs = [d / "cgroup.procs" for d in dict.fromkeys(worker_dirs.values())]
        v1 = version == "v1"
        self._cpu = _Counter(worker_dirs["cpuacct" if v1 else "cpu"] / ("cpuacct.usage" if v1 else "cpu.stat"),
                             None if v1 else "usage_usec")
        self._ooms = _Counter(worker_dirs["memory"] / ("memory.oom_control" if v1 else "memory.events"),
                              "oom_kill")

    def cpu_seconds(self) -> float:
        """CPU time of every process the submission ran, dead ones included."""
        return self._cpu.read() / (1e9 if self.version == "v1" else 1e6)

    def oom_kills(self) -> int:
        return self._ooms.read()

    def threads(self) -> list[int]:
        """Host thread ids in the submission's group."""
        name = "tasks" if self.version == "v1" else "cgroup.threads"
        return _ids(self.worker_dirs["cpu" if self.version == "v2" else "cpuacct"] / name)

    def processes(self) -> list[int]:
        return sorted({pid for d in self.worker_dirs.values() for pid in _ids(d / "cgroup.procs")})

    def remove(self) -> None:
        """Remove the slot's folders; its processes must be gone (they are, once the
        slot's PID namespace has died)."""
        self._cpu.close()
        self._ooms.close()
        for top in self.slot_dirs:
            for folder in (top / "worker", top / "zygote", top):
                _rmdir(folder)


class _Counter:
    """A number in a cgroup file, read through a descriptor kept open: ``pread`` costs a
    few microseconds where opening the file costs tens, on every exchange."""

    def __init__(self, path: Path, key: str | None):
        self.fd, self.key = os.open(path, os.O_RDONLY | os.O_CLOEXEC), key

    def read(self) -> int:
        text = os.pread(self.fd, 4096, 0).decode()
        if self.key is None:
            return int(text)
        for line in text.splitlines():
            name, _, value = line.partition(" ")
            if name == self.key:
                return int(value)
        return 0

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


def create(uid: int, memory_mb: int, max_processes: int, cpus: float,
           is_free=lambda uid: False) -> tuple[NoGroups, str | None]:
    """The slot's groups with their limits set, or ``NoGroups`` and the reason why not.
    Groups left by slots that are gone (``is_free(their uid)``: a run killed before it
    could remove them) are removed on the way."""
    mounts = _cgroup_mounts()
    _sweep(mounts, is_free)
    v1 = {c: mounts["v1"][c] for c in V1_CONTROLLERS if c in mounts["v1"]}
    try:
        if len(v1) == len(V1_CONTROLLERS):
            return _create_v1(uid, v1, memory_mb, max_processes, cpus), None
        if mounts["v2"] is not None:
            return _create_v2(uid, mounts["v2"], memory_mb, max_processes, cpus), None
    except OSError as error:
        return NoGroups(), f"could not set up the slot's cgroups ({error})"
    missing = [c for c in V1_CONTROLLERS if c not in v1]
    return NoGroups(), f"no cgroup v2 and no cgroup v1 {', '.join(missing)} hierarchy is mounted"


def _create_v1(uid: int, mounts: dict[str, Path], memory_mb: int, max_processes: int,
               cpus: float) -> SlotGroups:
    own = _own_paths()
    slot_of = {c: mounts[c] / own.get(c, "").lstrip("/") / f"autograder-{uid}" for c in mounts}
    for slot in dict.fromkeys(slot_of.values()):
        _rmdir(slot / "worker")  # a crashed run's (its uid lock is free, so its slot is dead)
        (slot / "worker").mkdir(parents=True, exist_ok=True)
    worker = {c: d / "worker" for c, d in slot_of.items()}
    _write(worker["memory"] / "memory.limit_in_bytes", memory_mb << 20)
    if (worker["memory"] / "memory.memsw.limit_in_bytes").exists():  # no swapping past it
        _write(worker["memory"] / "memory.memsw.limit_in_bytes", memory_mb << 20)
    _write(worker["pids"] / "pids.max", max_processes)
    _write(slot_of["cpu"] / "cpu.cfs_period_us", PERIOD_US)
    _write(slot_of["cpu"] / "cpu.cfs_quota_us", int(cpus * PERIOD_US))
    return SlotGroups("v1", list(dict.fromkeys(slot_of.values())), worker)


def _create_v2(uid: int, mount: Path, memory_mb: int, max_processes: int, cpus: float) -> SlotGroups:
    own = mount / _own_paths().get("", "/").lstrip("/")
    enabled = (own / "cgroup.subtree_control").read_text().split()
    if missing := [c for c in V2_CONTROLLERS if c not in enabled]:
        try:  # fails while the grader's own group holds processes (unless it is the root)
            _write(own / "cgroup.subtree_control", " ".join(f"+{c}" for c in missing))
        except OSError as error:
            raise OSError(f"cgroup v2: cannot enable {', '.join(missing)} below {own} "
                          f"({error.strerror}); run the grader in a delegated cgroup") from None
    slot = own / f"autograder-{uid}"
    for leaf in ("worker", "zygote"):
        _rmdir(slot / leaf)
    slot.mkdir(exist_ok=True)
    _write(slot / "cgroup.subtree_control", " ".join(f"+{c}" for c in V2_CONTROLLERS))
    for leaf in ("worker", "zygote"):
        (slot / leaf).mkdir()
    _write(slot / "cpu.max", f"{int(cpus * PERIOD_US)} {PERIOD_US}")
    _write(slot / "worker" / "memory.max", memory_mb << 20)
    if (slot / "worker" / "memory.swap.max").exists():
        _write(slot / "worker" / "memory.swap.max", 0)
    _write(slot / "worker" / "pids.max", max_processes)
    return SlotGroups("v2", [slot], {c: slot / "worker" for c in V2_CONTROLLERS})


def _sweep(mounts: dict, is_free) -> None:
    """Remove the empty groups of slots whose uid nobody holds, where we would make ours."""
    own = _own_paths()
    parents = {m / own.get(c, "").lstrip("/") for c, m in mounts["v1"].items()}
    if mounts["v2"] is not None:
        parents.add(mounts["v2"] / own.get("", "/").lstrip("/"))
    for parent in parents:
        for top in parent.glob("autograder-*"):
            uid = top.name.removeprefix("autograder-")
            if uid.isdigit() and is_free(int(uid)) and not any(_ids(p) for p in top.rglob("cgroup.procs")):
                for folder in (top / "worker", top / "zygote", top):
                    _rmdir(folder, tries=1)


def _cgroup_mounts() -> dict:
    """{"v1": {controller: mount point}, "v2": mount point or None (when it has no
    controllers to give, as in a hybrid layout where v1 holds them all)}."""
    found: dict = {"v1": {}, "v2": None}
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        left, _, right = line.partition(" - ")
        point = Path(_unescape(left.split()[4]))
        fstype, _, options = right.split()[:3]
        if fstype == "cgroup":
            for name in set(options.split(",")) & set(V1_CONTROLLERS):
                found["v1"].setdefault(name, point)
        elif fstype == "cgroup2" and (point / "cgroup.controllers").read_text().split():
            found["v2"] = point
    return found


def _own_paths() -> dict[str, str]:
    """This process's cgroup path per v1 controller, and under "" its v2 path."""
    paths = {}
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        for name in controllers.split(",") if controllers else [""]:
            paths[name] = path
    return paths


def _unescape(field: str) -> str:
    """mountinfo writes spaces, tabs, newlines and backslashes as octal escapes."""
    return field.encode().decode("unicode_escape") if "\\" in field else field


def _ids(path: Path) -> list[int]:
    try:
        return [int(n) for n in path.read_text().split()]
    except OSError:
        return []


def _write(path: Path, value) -> None:
    path.write_text(f"{value}\n")


def _rmdir(path: Path, tries: int = 50) -> None:
    """Remove an empty group; a group whose last process is still being reaped is busy
    for a moment."""
    for _ in range(tries):
        try:
            os.rmdir(path)
            return
        except FileNotFoundError:
            return
        except OSError:
            time.sleep(0.02)

"""Memory, files and CPU bounded per submission and per slot (issue 9, item 5; issue 18,
item 2): what the slot's cgroups count and the CPU-time limits."""
import contextlib
import dataclasses
import time
import warnings

import pytest

from autograder.sandbox import cgroups, preflight
from autograder.sandbox.client import Student, WorkerLost
from autograder.sandbox.sandbox import Sandbox

from .helpers import CAN_SANDBOX, LIMITS, SKIP_REASON, processes_of, run

pytestmark = pytest.mark.timeout(120)
HOLD_MEMFDS = ("import os\nchunk = b'x' * (1 << 20)\nfds = []\n"
               "for _ in range(150):  # 10 MB each, under max_file_mb: 1.5 GB in all\n"
               "    fds.append(os.memfd_create('hidden'))\n"
               "    for _ in range(10):\n        os.write(fds[-1], chunk)\n")
# Each child prints once it holds its 400 MB, then sleeps. Counted after every child has printed
# or died (a child the OOM killer takes may already have printed): those alive then hold their
# memory at once.
CHILDREN_HOLD = ("import subprocess, sys, time\n"
                 "code = 'import time; b = b\"x\" * (400 << 20); print(1, flush=True); time.sleep(30)'\n"
                 "kids = [subprocess.Popen([sys.executable, '-c', code], stdout=subprocess.PIPE) for _ in range(4)]\n"
                 "[kid.stdout.readline() for kid in kids]\n"
                 "time.sleep(0.5)\n"
                 "alive = [kid for kid in kids if kid.poll() is None]\n"
                 "print((len(alive), [kid.wait() for kid in kids if kid not in alive]))\n")


def test_memfd_memory_counts_against_the_submission(worker):
    """Does memory held in memfds (counted by no process's RSS or RLIMIT_DATA) end the
    worker at memory_mb, read as running out of memory?"""
    with pytest.raises(WorkerLost, match=r"^ran out of memory \(1024 MB\)$"):
        run(worker, HOLD_MEMFDS)


def test_the_memory_of_all_processes_counts_together(worker):
    """Do four child processes of 400 MB each (each under the per-process limit) not all
    survive a 1 GB submission?"""
    alive, codes = eval(run(worker, CHILDREN_HOLD)["stdout"])  # noqa: S307 - our cell's output
    assert alive < 4 and set(codes) == {-9}  # the memory cgroup's OOM killer took the others


def test_tmp_holds_a_bounded_number_of_files(worker):
    """Do empty files in /tmp (no bytes, but kernel memory each) stop at tmp_files?"""
    reply = run(worker, "n = 0\ntry:\n    while True:\n        open(f'/tmp/{n}', 'w').close()\n"
                        "        n += 1\nfinally:\n    print(n)")
    assert "No space left on device" in reply["error"]["message"]
    assert int(reply["stdout"]) < LIMITS.tmp_files


def test_a_cell_is_limited_in_cpu_time_not_wall_clock_time(worker):
    """Does a cell that sleeps longer than the cell limit (using no CPU) still finish, as
    long as it stays within the wall-clock backstop?"""
    reply = run(worker, f"import time\ntime.sleep({LIMITS.cell_timeout_s + 1})\nprint('done')")
    assert reply["stdout"] == "done\n"


def test_a_sleeping_cell_stops_at_the_wall_clock_backstop(sandbox, monkeypatch):
    """Does a cell that sleeps for ever end at wall_factor times its limit, with a reason
    that says it was wall-clock time and how much CPU it used?"""
    monkeypatch.setattr(sandbox, "limits", dataclasses.replace(LIMITS, cell_timeout_s=1))
    reason = r"^timed out after 5 s of wall-clock time, with 0\.\d s of CPU time"
    with contextlib.closing(sandbox.spawn()) as worker, pytest.raises(WorkerLost, match=reason):
        run(worker, "import time\ntime.sleep(600)")


BUSY_CHILDREN = ("import os\nstart, go = os.pipe()\nfor _ in range(30):\n    if os.fork() == 0:\n"
                 "        os.setsid()\n        os.close(go)\n        os.read(start, 1)  # spin once all are forked\n"
                 "        while True:\n            pass\nos.close(go)\n")
CORRECT_WORK = ("import torch\ndef work():\n    torch.manual_seed(0)\n    x = torch.randn(256, 256)\n"
                "    for _ in range(600):  # about 0.25 s of CPU: far under the 2 s call limit on a slow day\n"
                "        x = torch.tanh(x @ x / 16)\n"
                "    return float(x.sum())\n")


def test_a_busy_slot_does_not_starve_another(sandbox, busy_sandbox, monkeypatch):
    """While 30 busy processes, each in its own session, run in one slot, does a correct
    computation in the other slot finish within its (CPU-time) limits, and does the busy
    slot stay within its CPU quota? The wall-clock backstop is made generous here: this
    machine is shared, and the quota, not the backstop, is what is tested."""
    monkeypatch.setattr(sandbox, "limits", dataclasses.replace(LIMITS, wall_factor=30))
    with contextlib.closing(busy_sandbox.spawn()) as hog:
        run(hog, BUSY_CHILDREN)
        assert len(processes_of(busy_sandbox.uid)) >= 30
        cpu_before, wall_before = busy_sandbox.groups.cpu_seconds(), time.monotonic()
        with contextlib.closing(sandbox.spawn()) as honest:
            run(honest, CORRECT_WORK)
            student = Student(honest.transport)
            expected = student.call("work")
            assert student.call("work") == expected  # twice, each within the call limit
        hog_share = (busy_sandbox.groups.cpu_seconds() - cpu_before) / (time.monotonic() - wall_before)
    assert hog_share <= LIMITS.cpus * 1.25
    assert processes_of(busy_sandbox.uid) == []


@pytest.fixture
def busy_sandbox(other_sandbox, monkeypatch):
    """The other slot, allowed enough processes for 30 busy children."""
    assert other_sandbox.groups.version is not None
    pids_max = [p / "pids.max" for p in other_sandbox.groups.worker_dirs.values() if (p / "pids.max").exists()]
    for path in pids_max:
        path.write_text("64")
    monkeypatch.setattr(other_sandbox, "limits", dataclasses.replace(LIMITS, max_processes=64))
    yield other_sandbox
    for path in pids_max:
        path.write_text(str(LIMITS.max_processes))


@pytest.mark.skipif(not CAN_SANDBOX, reason=SKIP_REASON)
def test_without_a_cgroup_it_says_so_once_and_still_runs(monkeypatch, helper_package):
    """With no usable cgroup, does the slot warn once (not per submission) what is not
    bounded, and still run a cell?"""
    monkeypatch.setattr(cgroups, "create", lambda *args, **kwargs: (cgroups.NoGroups(), "no cgroup here"))
    monkeypatch.setattr(preflight, "_warned", set())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with Sandbox(92, helper_package, LIMITS) as slot:
            for _ in range(2):
                with contextlib.closing(slot.spawn()) as worker:
                    assert run(worker, "print(6 * 7)")["stdout"] == "42\n"
    said = [str(w.message) for w in caught if "no cgroup here" in str(w.message)]
    assert said == [preflight.NO_CGROUP.format(why="no cgroup here")]

"""Zygote poisoning (issue 9, item 2): nothing a submission does to its warm parent may
reach the next submission in that slot."""
import contextlib
import os
import resource

import pytest

from autograder.sandbox.limits import rlimits
from autograder.sandbox.lockdown import RLIMITS

from .helpers import LIMITS, run

pytestmark = pytest.mark.timeout(90)

# What the next submission looks at: its own limits, priority, policy and affinity, and
# whether it can still open files and hold memory.
INSPECT = """
import os, resource, torch
state = {
    "as": resource.getrlimit(resource.RLIMIT_AS), "nofile": resource.getrlimit(resource.RLIMIT_NOFILE),
    "nice": os.getpriority(os.PRIO_PROCESS, 0), "policy": os.sched_getscheduler(0),
    "cpus": len(os.sched_getaffinity(0)),
}
files = [open('/dev/null') for _ in range(200)]
big = torch.ones(100, 1024, 1024)  # 400 MB
print(state)
"""
POISON = {
    "RLIMIT_AS": "import os, resource\nresource.prlimit(os.getppid(), resource.RLIMIT_AS, (1 << 30, 1 << 30))",
    "RLIMIT_NOFILE": "import os, resource\nresource.prlimit(os.getppid(), resource.RLIMIT_NOFILE, (8, 8))",
    "nice": "import os\nos.setpriority(os.PRIO_PROCESS, os.getppid(), 19)",
    "process group nice": "import os\nos.setpriority(os.PRIO_PGRP, os.getpgid(os.getppid()), 19)",
    "affinity": "import os\nos.sched_setaffinity(os.getppid(), {0})",
    "policy": "import os\nos.sched_setscheduler(os.getppid(), os.SCHED_IDLE, os.sched_param(0))",
}


def _inspect(worker) -> dict:
    reply = run(worker, INSPECT)
    assert "error" not in reply, reply
    return eval(reply["stdout"])  # noqa: S307 - our own cell's printed dict


@pytest.mark.parametrize("attack", sorted(POISON))
def test_a_cell_cannot_change_its_zygote(sandbox, worker, attack):
    """Does a cell that tries to lower the zygote's limits, renice it, pin it to one CPU or
    make it idle-priority fail, and does the next submission in the slot run as the first?"""
    before = _inspect(worker)
    starts = sandbox.starts
    assert run(worker, POISON[attack])["error"]["type"] == "PermissionError"
    worker.close()
    with contextlib.closing(sandbox.spawn()) as next_one:
        assert _inspect(next_one) == before
    assert sandbox.starts == starts  # nothing to replace: the zygote was never reached
    assert before["as"] == (resource.RLIM_INFINITY,) * 2 and before["nofile"] == (LIMITS.open_files,) * 2
    assert before["nice"] == 0 and before["policy"] == os.SCHED_OTHER


@pytest.mark.parametrize("poison, changed", [
    (lambda pid: resource.prlimit(pid, resource.RLIMIT_NOFILE, (64, 64)), "rlimits"),
    (lambda pid: resource.prlimit(pid, resource.RLIMIT_AS, (1 << 31, 1 << 31)), "rlimits"),
    (lambda pid: os.setpriority(os.PRIO_PROCESS, pid, 10), "nice"),
    (lambda pid: os.sched_setaffinity(pid, {0}), "affinity"),
])
def test_a_zygote_changed_by_any_route_is_replaced(sandbox, worker, poison, changed):
    """If the zygote's state changes anyway (here from the host, as root), does it notice at
    the end of the submission and get replaced, so the next worker has its own limits?"""
    starts = sandbox.starts
    poison(sandbox.zygote_pid)
    worker.close()
    assert sandbox.replaced[-1].endswith(f"changed: ['{changed}']")
    with contextlib.closing(sandbox.spawn()) as next_one:
        state = _inspect(next_one)
    assert sandbox.starts == starts + 1
    assert state["nofile"] == (LIMITS.open_files,) * 2 and state["nice"] == 0
    assert state["cpus"] == len(os.sched_getaffinity(0))


def test_every_rlimit_is_set_in_the_worker(worker):
    """Does the worker run under exactly the limits the grader computed, each with soft =
    hard, whatever the zygote had?"""
    reply = run(worker, "import resource\nprint({n: resource.getrlimit(n) for n in range(16)})")
    got = eval(reply["stdout"])  # noqa: S307 - our own cell's printed dict
    wanted = rlimits(LIMITS)
    for name, number in RLIMITS.items():
        value = wanted[name] if wanted[name] >= 0 else resource.RLIM_INFINITY
        assert got[number] == (value, value), name

"""What a grading process leaves on the host when it does not close its slot: a pool
worker that just exits, or a run killed with SIGKILL."""
import multiprocessing
import os
import signal
import time
from pathlib import Path

import pytest

from autograder.sandbox import cgroups, uids
from autograder.sandbox.sandbox import Sandbox

from .helpers import CAN_SANDBOX, LIMITS, SKIP_REASON, processes_of

pytestmark = [pytest.mark.timeout(120), pytest.mark.skipif(not CAN_SANDBOX, reason=SKIP_REASON)]


def _start_and_leave(package: Path, report, stay: bool) -> None:
    """In a child process: start a slot, say where its cgroups are, never close it."""
    slot = Sandbox(95, package, LIMITS)
    slot.start()
    report.send((slot.uid, [str(d) for d in slot.groups.slot_dirs]))
    while stay:
        time.sleep(1)


def _run_child(package: Path, stay: bool):
    context = multiprocessing.get_context("fork")  # as the grading pool starts its processes
    ours, theirs = context.Pipe()
    child = context.Process(target=_start_and_leave, args=(package, theirs, stay))
    child.start()
    uid, dirs = ours.recv()
    assert dirs and all(Path(d).is_dir() for d in dirs)
    return child, uid, [Path(d) for d in dirs]


def test_a_slot_never_closed_leaves_no_cgroup(helper_package):
    """When a grading process ends without closing its slot (as a pool worker does), are the
    slot's processes, cgroups and uid lease all gone?"""
    child, uid, dirs = _run_child(helper_package, stay=False)
    child.join()
    assert child.exitcode == 0
    assert not any(d.exists() for d in dirs) and uids.is_free(uid) and processes_of(uid) == []


def test_a_killed_runs_cgroups_are_swept_by_the_next_slot(helper_package):
    """When a grading process is killed with SIGKILL, its slot dies with it; are the
    cgroups it could not remove swept when the next slot's groups are made?"""
    child, uid, dirs = _run_child(helper_package, stay=True)
    os.kill(child.pid, signal.SIGKILL)
    child.join()
    while processes_of(uid):  # bubblewrap follows its parent (--die-with-parent)
        time.sleep(0.05)
    assert uids.is_free(uid) and all(d.exists() for d in dirs)
    lease = uids.lease_uid()
    try:
        groups, why = cgroups.create(lease.uid, 64, 4, 1.0, is_free=uids.is_free)
        assert why is None
        groups.remove()
    finally:
        lease.release()
    assert not any(d.exists() for d in dirs)

"""Slot uids (issue 9, item 10): no two live slots on one host, in one run or in two, share
a uid, and a run that dies frees its uids."""
import fcntl
import os
import signal
import subprocess
import sys
import time

import pytest

from autograder.sandbox import uids

from .helpers import CAN_SANDBOX, SKIP_REASON, processes_of

pytestmark = [pytest.mark.timeout(60), pytest.mark.skipif(not CAN_SANDBOX, reason=SKIP_REASON)]
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HOLD = "from autograder.sandbox.uids import lease_uid\nprint(lease_uid().uid, flush=True)\ninput()\n"


def _lease_in_another_process() -> tuple[subprocess.Popen, int]:
    """Another grading run, as far as uids go: a process that leases one and holds it."""
    other = subprocess.Popen([sys.executable, "-c", HOLD], cwd=REPO, stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True)
    return other, int(other.stdout.readline())


def _is_locked(uid: int) -> bool:
    fd = os.open(uids.LOCK_DIR / f"{uid}.lock", os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return False
    except BlockingIOError:
        return True
    finally:
        os.close(fd)


def test_the_test_slots_lease_their_uids(sandbox, other_sandbox):
    """Do the test slots (SLOT, OTHER_SLOT) get distinct uids from the range, each locked
    for as long as the slot lives?"""
    assert sandbox.uid != other_sandbox.uid
    for uid in (sandbox.uid, other_sandbox.uid):
        assert uids.FIRST_UID <= uid < uids.FIRST_UID + uids.UID_COUNT and _is_locked(uid)


def test_two_runs_never_share_a_uid(sandbox):
    """While another process holds a uid, does a lease here get another one?"""
    other, theirs = _lease_in_another_process()
    try:
        mine = uids.lease_uid()
        try:
            assert mine.uid not in (theirs, sandbox.uid) and _is_locked(theirs)
        finally:
            mine.release()
    finally:
        other.kill()
        other.wait()


def test_a_killed_run_frees_its_uid():
    """When a run is killed with SIGKILL (no clean-up of any kind), is its uid free again?"""
    other, theirs = _lease_in_another_process()
    assert _is_locked(theirs)
    other.send_signal(signal.SIGKILL)
    other.wait()
    assert not _is_locked(theirs)


def test_a_uid_that_still_has_processes_is_skipped():
    """Is a free uid that still runs a process (a crashed run's leftover, another tool) passed over?"""
    first = uids.lease_uid()
    uid = first.uid
    first.release()
    squatter = os.fork()
    if squatter == 0:
        try:
            os.setresuid(uid, uid, uid)
            time.sleep(60)
        finally:
            os._exit(0)
    try:
        while not processes_of(uid):
            time.sleep(0.01)
        lease = uids.lease_uid()
        assert lease.uid != uid
        lease.release()
    finally:
        os.kill(squatter, signal.SIGKILL)
        os.waitpid(squatter, 0)

"""Real sandbox slots for the whole folder, with small limits so that a sandbox that
failed could not hurt this machine. After every test no process of the submission may be
left but the zygote; after the session, nothing at all of any slot uid (processes, kernel
keys, System V objects) and none of the slots' cgroups."""
from pathlib import Path

import pytest

from autograder.sandbox.sandbox import Sandbox

from autograder.sandbox.uids import leftovers

from .helpers import CAN_SANDBOX, LIMITS, OTHER_SLOT, SKIP_REASON, SLOT, make_helper_package, processes_of

LEASED: list[int] = []  # every slot uid the session used


@pytest.fixture(scope="session")
def helper_package(tmp_path_factory) -> Path:
    """An assignment's ``d2l_attention`` package, alone in its folder."""
    return make_helper_package(tmp_path_factory.mktemp("helpers"))


@pytest.fixture(scope="session", autouse=True)
def nothing_left_behind():
    """After the whole session: no process, key or IPC object of a slot uid, no cgroup."""
    yield
    assert leftovers(only=LEASED) == {}, "a slot uid left something on the machine"


def _slot(slot: int, helper_package: Path, limits=LIMITS):
    if not CAN_SANDBOX:
        pytest.skip(SKIP_REASON)
    with Sandbox(slot, helper_package, limits) as sandbox:
        LEASED.append(sandbox.uid)
        groups = sandbox.groups
        yield sandbox
    assert all(not d.exists() for d in getattr(groups, "slot_dirs", [])), "a slot's cgroup outlived it"


@pytest.fixture(scope="session")
def sandbox(helper_package):
    yield from _slot(SLOT, helper_package)


@pytest.fixture(scope="session")
def other_sandbox(helper_package):
    """A second slot, as a second grading process would have."""
    yield from _slot(OTHER_SLOT, helper_package)


@pytest.fixture
def worker(sandbox):
    """A fresh worker; afterwards the submission is ended and nothing of it may remain."""
    worker = sandbox.spawn()
    yield worker
    worker.close()
    assert processes_of(sandbox.uid) == [], "a process of the submission outlived it"

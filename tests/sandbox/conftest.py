"""One real sandbox slot for the whole folder, with small limits so that a sandbox that
failed could not hurt this machine; after every test, no process of the slot's uid may
be left but the zygote."""
from pathlib import Path

import pytest

from autograder.sandbox.sandbox import Sandbox

from .helpers import CAN_SANDBOX, LIMITS, SKIP_REASON, SLOT, processes_of


@pytest.fixture(scope="session")
def helpers_dir(tmp_path_factory) -> Path:
    """An assignment's helper folder with a tiny ``d2l_attention`` package in it."""
    folder = tmp_path_factory.mktemp("helpers")
    (folder / "d2l_attention").mkdir()
    (folder / "d2l_attention" / "__init__.py").write_text("GREETING = 'hello from /course'\n")
    folder.chmod(0o755)  # pytest makes it 0700; the sandbox's user must read it
    return folder


@pytest.fixture(scope="session")
def sandbox(helpers_dir):
    if not CAN_SANDBOX:
        pytest.skip(SKIP_REASON)
    with Sandbox(SLOT, helpers_dir, LIMITS) as slot:
        yield slot


@pytest.fixture
def worker(sandbox):
    """A fresh worker; afterwards the submission is ended and nothing of it may remain."""
    worker = sandbox.spawn(None)
    yield worker
    worker.close()
    assert len(processes_of(sandbox.uid)) <= 1, "a process of the submission outlived it"


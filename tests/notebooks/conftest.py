"""Fixtures for the notebook tests: one fresh release per session, kernels that find the venv."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

from .cells import REPO


def venv_env() -> dict:
    """The environment for nbgrader and Jupyter kernels: the venv's programs first on PATH.

    nbgrader runs ``alembic`` by name and the ``python3`` kernel spec runs ``python``.
    One torch thread: on a busy 2-core runner, two spinning OpenMP threads make the
    bahdanau training demos ten times slower. NBGRADER_EXECUTION is left to nbgrader.
    """
    env = {name: value for name, value in os.environ.items() if name != "NBGRADER_EXECUTION"}
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    env["OMP_NUM_THREADS"] = "1"
    return env


@pytest.fixture(scope="session")
def release_dir(tmp_path_factory) -> Path:
    """What ``python -m autograder.release --into TMP`` writes (the ``make release`` step)."""
    into = tmp_path_factory.mktemp("release")
    done = subprocess.run([sys.executable, "-m", "autograder.release", "--into", str(into)],
                          cwd=REPO, env=venv_env(), capture_output=True, text=True)
    assert done.returncode == 0, f"the release failed:\n{done.stdout}{done.stderr}"
    return into


@pytest.fixture
def kernel_env(monkeypatch):
    """Kernels started by nbclient inherit this process's environment: make it venv_env()."""
    for name, value in venv_env().items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)

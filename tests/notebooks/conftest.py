"""Fixtures for the notebook tests: one fresh release per session, kernels that find the venv."""
import os
import shutil
import sys
from pathlib import Path

import pytest

from autograder.course import COURSE, Course
from autograder.release import release


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
def release_course(tmp_path_factory) -> Course:
    """A copy of the course's inputs (source notebooks, reference/, nbgrader_config.py, grader.yml), released.

    Only the notebooks are copied from assignments/: the helper folders there are the
    release's output, so comparing them with the committed ones (test_release.py) shows
    whether they are stale. The repository itself is never written to."""
    root = tmp_path_factory.mktemp("course")
    for notebook in sorted(COURSE.source_dir.glob("*/*.ipynb")):
        copy = root / notebook.relative_to(COURSE.root)
        copy.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(notebook, copy)
    shutil.copytree(COURSE.reference_dir, root / "reference", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(COURSE.root / "nbgrader_config.py", root / "nbgrader_config.py")
    shutil.copy(COURSE.config_path, root / "grader.yml")   # its service keys: how the students' README says to hand in
    course = Course(root)
    release(course)
    return course


@pytest.fixture(scope="session")
def release_dir(release_course) -> Path:
    """What ``autograder release`` writes into student_template/, made from the copy."""
    return release_course.release_dir


@pytest.fixture
def kernel_env(monkeypatch):
    """Kernels started by nbclient inherit this process's environment: make it venv_env()."""
    for name, value in venv_env().items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)

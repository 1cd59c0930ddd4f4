"""Shared test settings: the hypothesis profile, the ``cuda`` marker (pyproject.toml), and
the last check of the session: no process of a grader run started by the tests is left."""
import os
import uuid

import pytest
from hypothesis import HealthCheck, settings

from autograder.executors.runmarker import RUN_MARKER

# Every grader the tests start inherits this run marker (a test may add to it, never drop
# it): the session's last check finds what they left by it, and by descent, not by name.
SESSION_MARKER = f"tests-{os.getpid()}-{uuid.uuid4().hex[:8]}"

# Derandomized, no example database, no deadline: every run sees the same examples
# (SPEC §3). HYPOTHESIS_PROFILE=thorough searches longer.
settings.register_profile(
    "ci", deadline=None, derandomize=True, database=None, max_examples=60,
    print_blob=True, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile(  # a longer, random search, for a TA changing the reference
    "thorough", parent=settings.get_profile("ci"), derandomize=False, max_examples=1000)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


def pytest_configure(config: pytest.Config) -> None:
    """One torch thread, as the grader uses: on these 2-core machines tiny ops are about
    a thousand times slower with a thread pool (FIELD_NOTES), and results do not change.
    And the session's run marker, for every grader the tests start."""
    import torch

    torch.set_num_threads(1)
    os.environ[RUN_MARKER] = SESSION_MARKER


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Fails the session if a process of a grader run the tests started is still running
    5 s after the last test (and kills it, so that the machine keeps nothing)."""
    from tests.processes import left_after

    left = left_after(SESSION_MARKER, within_s=5, prefix=True)
    if left:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        lines = "\n".join(f"  {pid}: {command}" for (pid, _), command in sorted(left.items()))
        reporter.ensure_newline()
        reporter.write_line(f"FAILED: {len(left)} processes that the tests started (run marker "
                            f"{SESSION_MARKER}) were still running 5 s after the last test; killed:\n{lines}",
                            red=True)


def pytest_runtest_setup(item: pytest.Item) -> None:
    """Skip tests marked ``@pytest.mark.cuda`` on a machine without a CUDA device."""
    if item.get_closest_marker("cuda") is None:
        return
    import torch

    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA device")


@pytest.fixture(scope="session")
def browser(tmp_path_factory):
    """One headless Chromium for every page test (tests/pages, tests/service): Playwright's
    synchronous API allows one instance per thread while it lives, so there is one."""
    from tests.pages.browser import start
    chromium = start(tmp_path_factory)
    yield chromium
    chromium.close()

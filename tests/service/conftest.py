"""One service for the API and page tests (Russian, three submissions an hour per student,
two slots), started once; every test uses students of its own."""
import shutil
import signal

import pytest

from .server import config_file, make_tokens, start

STUDENTS = [f"s{i}" for i in range(40)] + ["../escape", "=HYPERLINK(1)", "студент"]
PER_HOUR = 3


@pytest.fixture(scope="session")
def server(tmp_path_factory):
    if shutil.which("bwrap") is None:
        pytest.skip("bubblewrap is not installed")
    folder = tmp_path_factory.mktemp("service")
    tokens, token_of = make_tokens(folder, STUDENTS)
    running = start(folder, tokens, token_of, config_file(folder, "ru", PER_HOUR))
    yield running
    status = running.stop(signal.SIGTERM)
    assert running.left() == {}, "processes left after SIGTERM"
    assert status == -signal.SIGTERM, running.log.read_text()[-3000:]

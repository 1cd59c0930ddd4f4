"""One headless Chromium for all page tests (starting it takes about a second)."""
import pytest

from .browser import start


@pytest.fixture(scope="session")
def browser(tmp_path_factory):
    chromium = start(tmp_path_factory)
    yield chromium
    chromium.close()

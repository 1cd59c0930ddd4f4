"""The students' page at ``/``, in headless Chromium at a phone's width, against the real
service: give the token, choose the notebook, hand in, watch it graded, read the feedback;
nothing loaded from anywhere but the service, no console error, nothing wider than 400 px."""
import os
import shutil
import signal

import pytest

from tests.pages.browser import PHONE_WIDTH, WIDTHS

from .server import REPO, config_file, make_tokens, notebook, start

# AUTOGRADER_SCREENSHOTS=1 also copies the Russian screenshot to the docs site's docs/images/service_page.png
DOCS_SCREENSHOT = REPO / "docs" / "images" / "service_page.png"


@pytest.fixture(scope="module")
def english(tmp_path_factory):
    """A second service, in English (the session's is Russian)."""
    if shutil.which("bwrap") is None:
        pytest.skip("bubblewrap is not installed")
    folder = tmp_path_factory.mktemp("english")
    tokens, token_of = make_tokens(folder, ["e1", "e2"])
    running = start(folder, tokens, token_of, config_file(folder, "en"), jobs=1, name="english")
    yield running
    running.stop(signal.SIGTERM)
    assert running.left() == {}


def hand_in(browser, server, student: str, token: str, data: bytes, shot=None) -> dict:
    """The page as a student uses it; what the browser saw."""
    page, seen = browser.new_tab(PHONE_WIDTH), {"console": [], "requests": []}
    page.on("console", lambda m: seen["console"].append(f"{m.type}: {m.text}") if m.type in ("error", "warning") else None)
    page.on("pageerror", lambda error: seen["console"].append(f"pageerror: {error}"))
    page.on("request", lambda request: seen["requests"].append(request.url))
    origin = f"http://127.0.0.1:{server.port}/"
    page.goto(origin, wait_until="load")
    page.fill("#token", token)
    page.set_input_files("#notebook", files=[{"name": "attention_scoring.ipynb", "mimeType": "application/json",
                                              "buffer": data}])
    page.click("button[type=submit]")
    if token == server.tokens.get(student):
        page.wait_for_selector("#result:not([hidden])", timeout=240_000)
        seen["feedback"] = page.frame_locator("#feedback").locator("body").inner_text(timeout=30_000)
    else:
        page.wait_for_selector("#status.bad", timeout=30_000)
    seen["status"] = page.inner_text("#status")
    seen["widths"] = page.evaluate(WIDTHS)
    seen["lang"] = page.evaluate("() => document.documentElement.lang")
    if shot is not None:
        page.screenshot(path=str(shot), full_page=True)
    page.close()
    seen["outside"] = [url for url in seen["requests"] if not url.startswith((origin, "about:", "data:"))]
    return seen


@pytest.mark.parametrize("language", ["ru", "en"])
def test_a_student_hands_in_and_reads_the_feedback(browser, server, english, language, tmp_path):
    """Does a student, on a phone, get their buggy notebook graded and see its feedback (the
    named mistake included) in the course's language, with no console error, no resource from
    outside the service, and no horizontal scrolling?"""
    running, student = (server, "s30") if language == "ru" else (english, "e1")
    shot = tmp_path / f"service_page.{language}.png"
    seen = hand_in(browser, running, student, running.tokens[student], notebook("buggy"), shot)
    if language == "ru" and os.environ.get("AUTOGRADER_SCREENSHOTS") == "1":
        shutil.copy(shot, DOCS_SCREENSHOT)
    assert seen["console"] == [], seen["console"]
    assert seen["outside"] == []
    assert seen["lang"] == language
    assert seen["widths"]["document"] <= PHONE_WIDTH and seen["widths"]["body"] <= PHONE_WIDTH
    said = {"ru": ("Проверено", "автоматическая оценка", "√d"), "en": ("Graded", "autograded", "√d")}[language]
    assert said[0] in seen["status"]
    assert said[1] in seen["feedback"] and said[2] in seen["feedback"]


def test_a_wrong_token_is_said_on_the_page(browser, english):
    """Does a mistyped token show the service's reason, in the course's language, and nothing else?"""
    seen = hand_in(browser, english, "e2", "not-a-token", notebook("correct"))
    assert "unknown token" in seen["status"]
    assert seen["console"] == [] or all("401" in line for line in seen["console"])

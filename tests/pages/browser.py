"""A real headless browser for the page tests: Debian's Chromium, driven by Playwright.

Why Playwright (Python) and not a hand-written DevTools client: it is the maintained,
documented driver of the DevTools protocol (console events, request events, screenshots,
evaluating a promise), and it drives an installed Chromium through ``executable_path``; only
its own browser download cannot be fetched here, and we do not use it. A hand-written
websocket client would be ours to keep working across Chromium releases.

Chromium's flags are the ones this machine needs (closed network: no background
connections, no QUIC, no component updates), with a fresh profile per launch.
"""
from dataclasses import dataclass, field
from pathlib import Path

import pytest

CHROMIUM = Path("/usr/bin/chromium")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]
PHONE_WIDTH = 400

# Every image decoded (decode() resolves only for a decodable image), with its natural size.
DECODE_IMAGES = """() => Promise.all(Array.from(document.images).map(
    image => image.decode().then(() => [image.naturalWidth, image.naturalHeight], () => [0, 0])))"""
WIDTHS = """() => ({document: document.documentElement.scrollWidth, body: document.body.scrollWidth,
                    viewport: document.documentElement.clientWidth})"""
# The text a reader sees outside code: code and pre blocks removed from a copy of the page.
PROSE = """() => { const copy = document.body.cloneNode(true);
    copy.querySelectorAll('code, pre').forEach(node => node.remove());
    document.body.after(copy); const prose = copy.innerText; copy.remove(); return prose; }"""


@dataclass
class Rendered:
    """What Chromium made of a page at a phone's width."""
    title: str
    console: list[str] = field(default_factory=list)       # errors and warnings, page errors
    requests: list[str] = field(default_factory=list)      # every URL the page asked for
    images: list[list[int]] = field(default_factory=list)  # [natural width, height] per image
    widths: dict = field(default_factory=dict)
    scripts: int = 0
    text: str = ""
    prose: str = ""


class Browser:
    """One Chromium (fresh profile) for the test session; ``render`` opens a page in a new tab."""

    def __init__(self, profile: Path):
        from playwright.sync_api import sync_playwright

        self._playwright = sync_playwright().start()
        self._context = self._playwright.chromium.launch_persistent_context(
            str(profile), executable_path=str(CHROMIUM), headless=True, args=FLAGS,
            viewport={"width": PHONE_WIDTH, "height": 860}, device_scale_factor=1)

    def new_tab(self, width: int = PHONE_WIDTH):
        page = self._context.new_page()
        page.set_viewport_size({"width": width, "height": 860})
        return page

    def render(self, path: Path, screenshot: Path) -> Rendered:
        page = self.new_tab()
        rendered = Rendered(title="")
        page.on("console", lambda message: rendered.console.append(f"{message.type}: {message.text}")
                if message.type in ("error", "warning") else None)
        page.on("pageerror", lambda error: rendered.console.append(f"pageerror: {error}"))
        page.on("request", lambda request: rendered.requests.append(request.url))
        page.goto(path.resolve().as_uri(), wait_until="load")
        rendered.images = page.evaluate(DECODE_IMAGES)
        rendered.widths = page.evaluate(WIDTHS)
        rendered.scripts = page.evaluate("() => document.scripts.length")
        rendered.text = page.evaluate("() => document.body.innerText")
        rendered.prose = page.evaluate(PROSE)
        rendered.title = page.title()
        page.screenshot(path=str(screenshot), full_page=True)
        page.close()
        return rendered

    def close(self) -> None:
        self._context.close()
        self._playwright.stop()


def start(tmp_path_factory) -> Browser:
    if not CHROMIUM.exists():
        pytest.fail(f"{CHROMIUM} is missing: run `make browser-deps` (apt-get install chromium)")
    return Browser(tmp_path_factory.mktemp("chromium-profile"))

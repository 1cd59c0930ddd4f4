"""Screenshots of the built docs site, at a laptop's width (1280 px) and a phone's (400 px):
the Quick start and Grading a folder, the top of each page as a reader first sees it.

    make docs && .venv/bin/python docs/make_site_screenshots.py [build/docs]

Writes docs/images/site_<page>_<width>.png. Needs Debian's chromium (``make browser-deps``)
and the test extras (Playwright).
"""
import argparse
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.pages.browser import Browser  # noqa: E402

IMAGES = REPO / "docs" / "images"
PAGES = {"quickstart": "quickstart.html", "grading": "ta/grading.html"}
WIDTHS = (1280, 400)
HEIGHT = 1000  # px: the first screen and a little more


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("site", type=Path, nargs="?", default=REPO / "build" / "docs", help="the built site")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        browser = Browser(Path(scratch) / "profile")
        try:
            for name, page in PAGES.items():
                for width in WIDTHS:
                    tab = browser.new_tab(width)
                    tab.goto((args.site / page).resolve().as_uri(), wait_until="load")
                    out = IMAGES / f"site_{name}_{width}.png"
                    tab.screenshot(path=str(out), clip={"x": 0, "y": 0, "width": width, "height": HEIGHT})
                    tab.close()
                    print(out.relative_to(REPO))
        finally:
            browser.close()


if __name__ == "__main__":
    main()

"""Screenshots of the TA's page of written answers (``answers.html``) at a laptop's width (1280 px)
and a phone's (400 px), in English and Russian: ``docs/images/answers-<width>-<language>.png``.

    .venv/bin/python docs/make_answers_screenshots.py RESULTS_DIR

RESULTS_DIR is an ``autograder grade`` output folder of a plain class (the written answers' test
class, ``tests/engine/written_class.py``, graded, is the one shown): the page is drawn from its
results, its kept answers and the points its manual_points.csv holds, in each language, into a
temporary file (RESULTS_DIR is not changed). Needs Debian's chromium (``make browser-deps``)
and the test extras (Playwright).
"""
import argparse
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from autograder.course import COURSE  # noqa: E402
from autograder.outputs import answers  # noqa: E402
from autograder.outputs.manual_points import Tasks  # noqa: E402
from autograder.outputs.store import OutputFolder  # noqa: E402
from autograder.outputs.totals import entered_in  # noqa: E402
from autograder.pages.answers import answers_page  # noqa: E402
from tests.pages.browser import Browser  # noqa: E402

MAX_HEIGHT = 2600  # px: the top of the page, what a TA sees first
WIDTHS = (1280, 400)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", type=Path, help="an autograder grade output folder")
    parser.add_argument("--into", type=Path, default=REPO / "docs" / "images", help="folder for the PNGs")
    args = parser.parse_args()
    store = OutputFolder.existing(args.results)
    results = store.load_all()
    tasks = Tasks.of_results(results)
    import nbformat
    source = nbformat.read(COURSE.source_notebook(store.assignment), as_version=4)
    view = answers.answers_view(args.results, results, entered_in(args.results, store.assignment, tasks),
                                answers.questions_of(source, tasks.manual))
    with tempfile.TemporaryDirectory() as scratch:
        browser = Browser(Path(scratch) / "profile")
        try:
            for language in ("en", "ru"):
                page = Path(scratch) / f"answers.{language}.html"
                page.write_text(answers_page(view, store.assignment, language), encoding="utf-8")
                for width in WIDTHS:
                    shot(browser, page, args.into / f"answers-{width}-{language}.png", width)
        finally:
            browser.close()


def shot(browser: Browser, page: Path, out: Path, width: int) -> None:
    tab = browser.new_tab(width)
    tab.goto(page.resolve().as_uri(), wait_until="load")
    height = min(MAX_HEIGHT, tab.evaluate("() => document.documentElement.scrollHeight"))
    tab.screenshot(path=str(out), clip={"x": 0, "y": 0, "width": width, "height": height}, full_page=True)
    tab.close()
    print(out)


if __name__ == "__main__":
    main()

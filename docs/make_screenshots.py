"""Regenerate the docs' screenshots: a student's page at a phone's width (400 px), the
class report at a laptop's (820 px), and its similar solutions and shared unknown mistakes,
all in Russian by default.

    .venv/bin/python docs/make_screenshots.py CLASS_DIR [--student RESULT.json] [--language en]

CLASS_DIR is an ``autograder grade`` output folder (``docs/sample_class.py`` makes the sample
class): its results, the solution cells kept beside them and its manual_points.csv make the
report; the student page shows RESULT.json, or by default the page tests' sample student
(tests/pages/samples.py: one failed check with its heatmap). Needs Debian's chromium
(``make browser-deps``) and the test extras (Playwright).
"""
import argparse
import shutil
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from autograder.feedback import FeedbackView, Say  # noqa: E402
from autograder.outputs.manual_points import Tasks, read_manual_points  # noqa: E402
from autograder.outputs.solutions import FOLDER as SOLUTIONS  # noqa: E402
from autograder.pages import write_student_page  # noqa: E402
from autograder.report import write_class_report  # noqa: E402
from autograder.results import SubmissionResult  # noqa: E402
from tests.pages import samples  # noqa: E402
from tests.pages.browser import Browser  # noqa: E402

IMAGES = REPO / "docs" / "images"  # the docs site shows them (docs/ta/class-report.md)
MAX_HEIGHT = 2600  # px: the top of a page, what a reader sees first


def task_checks(results: list[SubmissionResult]) -> dict[str, list[str]]:
    """Tasks and their checks in the order the results list them (manual tasks: [])."""
    order: dict[str, list[str]] = {}
    for result in results:
        for task in result.tasks:
            names = order.setdefault(task.id, [])
            names += [c.name for c in task.checks if c.name not in names]
    return order


def screenshot(browser: Browser, page: Path, out: Path, width: int, anchor: str | None = None) -> None:
    """The page's top (or from the element ``#anchor`` down), at most MAX_HEIGHT pixels."""
    tab = browser.new_tab(width)
    tab.goto(page.resolve().as_uri(), wait_until="load")
    top = tab.evaluate(f"() => document.getElementById('{anchor}').getBoundingClientRect().top + window.scrollY"
                       ) if anchor else 0
    height = min(MAX_HEIGHT, tab.evaluate("() => document.documentElement.scrollHeight") - top)
    tab.screenshot(path=str(out), clip={"x": 0, "y": top, "width": width, "height": height}, full_page=True)
    tab.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", type=Path, help="folder of <student_id>.json for the class report")
    parser.add_argument("--student", type=Path, help="one result JSON (default: the tests' sample)")
    parser.add_argument("--language", default="ru", choices=["en", "ru"])
    args = parser.parse_args()
    results = [SubmissionResult.model_validate_json(path.read_text(encoding="utf-8"))
               for path in sorted(args.results.glob("*.json"))]
    student = (SubmissionResult.model_validate_json(args.student.read_text(encoding="utf-8"))
               if args.student else samples.readable())
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        page = write_student_page(FeedbackView.of(student, Say(args.language)), folder / "student.html")
        if (args.results / SOLUTIONS).is_dir():
            shutil.copytree(args.results / SOLUTIONS, folder / SOLUTIONS)
        entered = read_manual_points(args.results, Tasks.of_results(results)).points
        report, _ = write_class_report(results, folder, args.language, task_checks(results), entered)
        browser = Browser(folder / "profile")
        try:
            screenshot(browser, page, IMAGES / "student_page.png", 400)
            screenshot(browser, report, IMAGES / "class_report.png", 820)
            screenshot(browser, report, IMAGES / "class_report_unexplained.png", 820, anchor="unexplained")
            screenshot(browser, report, IMAGES / "class_report_similar.png", 820, anchor="similar")
        finally:
            browser.close()


if __name__ == "__main__":
    main()

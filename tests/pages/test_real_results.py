"""The pages as `autograder grade` writes them for the bundled example notebooks:
DIR/feedback/<student_id>.html and DIR/report.html (and report.md)."""
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from autograder.report.class_markdown import md
from autograder.report.class_stats import summarise
from autograder.results import SubmissionResult, text
from autograder.texts import render

from .browser import PHONE_WIDTH

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples" / "attention_scoring"
STUDENTS = {"buggy", "correct", "hostile", "untouched"}

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed")]


@pytest.fixture(scope="module")
def graded(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("results")
    command = [sys.executable, "-c", "from autograder.cli import main; main()", "grade", str(EXAMPLES),
               "--assignment", "attention_scoring", "--output", str(out)]
    run = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    return out


def results(out: Path) -> list[SubmissionResult]:
    return [SubmissionResult.model_validate_json(path.read_text(encoding="utf-8"))
            for path in sorted(out.glob("*.json"))]


def test_every_student_page_renders_cleanly(graded, browser, tmp_path):
    """Does every page the run wrote render with no console error, its images decoded, at a
    phone's width, without fetching anything?"""
    pages = sorted((graded / "feedback").glob("*.html"))
    assert {page.stem for page in pages} == STUDENTS
    for page in pages:
        shown = browser.render(page, tmp_path / f"{page.stem}.png")
        assert shown.console == [], page.stem
        assert all(w > 0 and h > 0 for w, h in shown.images), page.stem
        assert shown.widths["document"] <= PHONE_WIDTH, page.stem
        assert shown.requests == [page.resolve().as_uri()] and shown.scripts == 0, page.stem


def test_report_names_the_buggy_notebooks_mistakes(graded, browser, tmp_path):
    """Does the run's class report render cleanly and name the buggy notebook's mistakes
    (a mask of 0, no 1/√d), each made by one student?"""
    shown = browser.render(graded / "report.html", tmp_path / "report.png")
    assert shown.console == [] and shown.widths["document"] <= PHONE_WIDTH
    assert len(shown.images) == 1 and all(w > 0 and h > 0 for w, h in shown.images)
    markdown = (graded / "report.md").read_text(encoding="utf-8")
    language = results(graded)[0].language
    for mistake in ("mask_value_zero", "no_sqrt"):
        [row] = [line for line in markdown.splitlines()
                 if line.startswith(f"| {md(render(text(f'mistake.{mistake}'), language))} | ")]
        assert row.split(" | ")[1:3] == ["1", "`buggy`"], mistake


def test_report_full_marks_agree_with_the_scores(graded):
    """Is a task's full-marks count the number of results with all of its points?"""
    batch = results(graded)
    stats = summarise(batch, {task.id: [c.name for c in task.checks] for task in batch[0].tasks})
    for rate in stats.task_rates:
        full = sum(1 for r in batch if r.task(rate.task).score == r.task(rate.task).max_score)
        assert (rate.passed, rate.total) == (full, len(batch)), rate.task

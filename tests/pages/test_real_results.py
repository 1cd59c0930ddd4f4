"""The pages on real results: `autograder grade` on the bundled example notebooks, each
student's page and the class report rendered from the JSON it wrote."""
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from autograder.pages import write_class_report, write_student_page
from autograder.pages.class_stats import summarise
from autograder.results import SubmissionResult

from .browser import PHONE_WIDTH

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples" / "attention_scoring"

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed")]


@pytest.fixture(scope="module")
def results(tmp_path_factory) -> list[SubmissionResult]:
    out = tmp_path_factory.mktemp("results")
    command = [sys.executable, "-c", "from autograder.cli import main; main()", "grade", str(EXAMPLES),
               "--assignment", "attention_scoring", "--output", str(out)]
    run = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    return [SubmissionResult.model_validate_json(path.read_text(encoding="utf-8"))
            for path in sorted(out.glob("*.json"))]


def task_checks(results: list[SubmissionResult]) -> dict[str, list[str]]:
    return {task.id: [c.name for c in task.checks] for task in results[0].tasks}


@pytest.mark.parametrize("language", ["en", "ru"])
def test_every_student_page_renders_cleanly(results, browser, tmp_path, language):
    """Does every example student's real page render with no console error, its images
    decoded, at a phone's width?"""
    assert {r.student_id for r in results} == {"buggy", "correct", "hostile", "untouched"}
    for result in results:
        page = write_student_page(result, tmp_path / f"{result.student_id}.html", language)
        shown = browser.render(page, tmp_path / f"{result.student_id}.png")
        assert shown.console == [], result.student_id
        assert all(w > 0 and h > 0 for w, h in shown.images), result.student_id
        assert shown.widths["document"] <= PHONE_WIDTH, result.student_id


def test_report_names_the_buggy_notebooks_mistakes(results, browser, tmp_path):
    """Does the class report of the examples name the buggy notebook's mistakes (a mask of 0,
    no 1/√d), each made by one student, and render cleanly?"""
    html, _ = write_class_report(results, tmp_path, "ru", task_checks(results))
    shown = browser.render(html, tmp_path / "report.png")
    assert shown.console == [] and shown.widths["document"] <= PHONE_WIDTH
    mistakes = {m.mistake: m.students for m in summarise(results, task_checks(results)).mistakes}
    assert mistakes == {"mask_value_zero": {"buggy"}, "no_sqrt": {"buggy"}}


def test_report_full_marks_agree_with_the_scores(results):
    """Is a task's full-marks count the number of results with all of its points?"""
    stats = summarise(results, task_checks(results))
    for rate in stats.task_rates:
        full = sum(1 for r in results if r.task(rate.task).score == r.task(rate.task).max_score)
        assert (rate.passed, rate.total) == (full, len(results)), rate.task

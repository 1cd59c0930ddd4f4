"""End-to-end: the `autograder grade` CLI on the bundled example notebooks."""
import csv
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from autograder.results import text
from autograder.texts import render

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed")


def grade(*args: str) -> subprocess.CompletedProcess:
    command = [sys.executable, "-c", "from autograder.cli import main; main()", "grade", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def attention_results(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("results")
    run = grade(str(EXAMPLES / "attention_scoring"), "--assignment", "attention_scoring", "--output", str(out))
    assert run.returncode == 0, run.stderr
    return out


def load(out: Path, student: str) -> dict:
    return json.loads((out / f"{student}.json").read_text())


def task_scores(result: dict) -> dict:
    return {task["id"]: (task["score"], task["max_score"]) for task in result["tasks"]}


def test_correct_notebook_gets_full_marks_on_every_autograded_task(attention_results):
    """Does the reference-solved notebook get every autograded point, with manual tasks left null?"""
    scores = task_scores(load(attention_results, "correct"))
    assert scores.pop("cost_analysis") == (None, 2.0)
    assert all(score == maximum for score, maximum in scores.values()), scores


def test_timing_says_how_long_the_checks_waited_on_the_worker(attention_results):
    """The timing file beside a result counts the checks' requests to the worker and the time
    spent waiting for them, a part of the checks' own time (benchmarks print the split)."""
    timing = json.loads((attention_results / "timing" / "correct.json").read_text())
    checks_s = sum(s for task in timing["tasks"].values() for s in task["checks"].values())
    assert timing["phases"]["worker_requests"] > 100
    assert 0 < timing["phases"]["worker_s"] < checks_s


def test_untouched_template_gets_zero(attention_results):
    """Does the released template, unsolved, get zero on every autograded task?"""
    scores = task_scores(load(attention_results, "untouched"))
    assert all(score in (0.0, None) for score, _ in scores.values()), scores


def test_untouched_template_is_not_attempted_in_one_line(attention_results):
    """Issue 47: the released template handed in as is took 130 lines of Markdown, "smallest failing
    input" ten times, to say that its stubs raised. Is each autograded task "not attempted yet" in one
    line under its heading, with every check still in the JSON, failed, with that line?"""
    result = load(attention_results, "untouched")
    for task in (t for t in result["tasks"] if t["checks"]):
        assert {c["message"] for c in task["checks"]} == {render(text("task.not_attempted"), "en")}, task["id"]
        assert not any(c["passed"] for c in task["checks"]) and len(task["checks"]) > 5
    markdown = (attention_results / "feedback" / "untouched.md").read_text(encoding="utf-8")
    for section in markdown.split("\n## ")[1:]:
        assert len([line for line in section.splitlines()[1:] if line.strip()]) == 1, section
    assert "smallest failing input" not in markdown


def test_buggy_notebook_loses_points_only_where_it_is_wrong_and_names_the_mistake(attention_results):
    """Does a missing 1/√d cost points in dot_product_attention only, diagnosed by name?"""
    result = load(attention_results, "buggy")
    scores = task_scores(result)
    assert scores["dot_product_attention"][0] < scores["dot_product_attention"][1]
    assert scores["masked_softmax"][0] < scores["masked_softmax"][1]
    for task in ("additive_attention", "distance_attention", "bilinear_attention"):
        assert scores[task][0] == scores[task][1], task  # bound to the book's masked_softmax
    messages = [c["message"] for t in result["tasks"] for c in t["checks"] if not c["passed"]]
    assert any("not divided by √d" in m for m in messages)
    assert any("smallest failing input" in m for m in messages)


def test_hostile_cell_cannot_read_the_reference_and_costs_nothing_else(attention_results):
    """Does a cell that reads the reference and calls os._exit lose only itself?"""
    result = load(attention_results, "hostile")
    assert any(e["code"] == "cell_crashed" for e in result["errors"])
    scores = task_scores(result)
    assert all(s == m for s, m in scores.values() if s is not None)
    # a TA's trial: the class report promised the crashed cell's source, and showed none
    assert "os._exit" in (attention_results / "report.md").read_text(encoding="utf-8")


def test_grades_csv_has_a_row_per_submission_and_a_column_per_task(attention_results):
    rows = list(csv.DictReader((attention_results / "grades.csv").open()))
    assert sorted(r["student_id"] for r in rows) == ["buggy", "correct", "hostile", "untouched"]
    assert rows[0]["cost_analysis"] == ""
    assert (attention_results / "feedback" / "buggy.md").read_text().startswith("# Feedback")


def test_unchanged_submissions_are_reused_and_force_regrades(attention_results):
    """Is an unchanged submission skipped on a second run (same results), unless --force?"""
    before = (attention_results / "correct.json").read_text()
    run = grade(str(EXAMPLES / "attention_scoring" / "correct.ipynb"), "--assignment", "attention_scoring",
                "--output", str(attention_results))
    assert run.returncode == 0 and "reused" in run.stdout
    assert (attention_results / "correct.json").read_text() == before


def test_unreadable_notebook_is_scored_zero_with_the_reason(tmp_path):
    bad = tmp_path / "broken.ipynb"
    bad.write_text("{not json")
    run = grade(str(bad), "--assignment", "attention_scoring", "--output", str(tmp_path / "out"))
    assert run.returncode == 0, run.stderr
    result = load(tmp_path / "out", "broken")
    assert result["score"] == 0 and result["errors"][0]["code"] == "invalid_notebook"


def test_notebooks_away_from_nbgraders_place_are_graded_with_a_warning_or_named_in_the_summary(tmp_path):
    """Red team: carol's notebook one folder deeper (an LMS zip) and dave's with no assignment
    folder were in no JSON, no row and no summary line. Are both graded, each result naming its
    file with a warning, the summary counting them, and is petrov's other assignment named as found and not graded?"""
    submitted = tmp_path / "submitted"
    placed = {"carol": "carol/carol_hw/attention_scoring/attention_scoring.ipynb",
              "dave": "dave/attention_scoring.ipynb", "petrov": "petrov/bahdanau/bahdanau.ipynb"}
    for where in placed.values():
        (submitted / where).parent.mkdir(parents=True)
        shutil.copy(EXAMPLES / "attention_scoring" / "untouched.ipynb", submitted / where)
    out = tmp_path / "out"
    run = grade(str(submitted), "--assignment", "attention_scoring", "--output", str(out))
    assert run.returncode == 0, run.stderr
    summary = " ".join(run.stdout.split())
    assert "2 submissions found: 2 graded" in summary
    assert ("found and not graded (1): petrov/bahdanau: 1 notebook, none named attention_scoring.ipynb "
            "or in a folder attention_scoring/") in summary
    assert "graded from another notebook than attention_scoring.ipynb (2): carol, dave" in summary
    for student in ("carol", "dave"):
        result = load(out, student)
        assert result["notebook"] == placed[student]
        [warning] = result["warnings"]
        assert warning["code"] == "other_notebook" and placed[student].split("/", 1)[1] in warning["message"]
    assert sorted(row["student_id"] for row in csv.DictReader((out / "grades.csv").open())) == ["carol", "dave"]


def test_bad_config_key_exits_2_with_a_suggestion(tmp_path):
    config = tmp_path / "grader.yml"
    config.write_text((REPO / "grader.yml").read_text().replace("language:", "langauge:"))
    run = grade(str(EXAMPLES / "attention_scoring"), "--assignment", "attention_scoring",
                "--output", str(tmp_path / "out"), "--config", str(config))
    assert run.returncode == 2
    assert "langauge: unknown key (did you mean 'language'?)" in run.stderr


def test_unknown_assignment_exits_2(tmp_path):
    run = grade(str(EXAMPLES), "--assignment", "atention_scoring", "--output", str(tmp_path))
    assert run.returncode == 2 and "did you mean 'attention_scoring'" in run.stderr


def test_manual_points_reach_the_summary_grades_csv_the_report_and_export(attention_results, tmp_path):
    """With DIR/manual_points.csv, does a run say both numbers in its summary, put the points
    in grades.csv's written-answer column and in the class report, name an id that has no
    result, keep the JSON's score the autograded sum, and does export add them up?"""
    out = tmp_path / "out"
    shutil.copytree(attention_results, out)
    (out / "manual_points.csv").write_text("student_id,task,points\ncorrect,cost_analysis,2\n"
                                           "buggy,cost_analysis,0.5\nghost,cost_analysis,1\n")
    run = grade(str(EXAMPLES / "attention_scoring"), "--assignment", "attention_scoring", "--output", str(out))
    assert run.returncode == 0, run.stderr
    summary = " ".join(run.stdout.split())
    assert "written answers (cost_analysis): points entered for 2 of 4 submissions" in summary
    assert "mean 1.25 / 2" in summary
    assert "manual_points.csv: row 4: no result for student 'ghost'" in summary
    rows = {row["student_id"]: row for row in csv.DictReader((out / "grades.csv").open())}
    assert (rows["correct"]["cost_analysis"], rows["untouched"]["cost_analysis"]) == ("2.0", "")
    assert float(rows["correct"]["score"]) == 15.0            # SPEC §3: what the student has so far
    assert load(out, "correct")["score"] == 13.0              # the JSON keeps the autograded sum
    assert next(t for t in load(out, "correct")["tasks"] if t["id"] == "cost_analysis")["score"] is None
    assert "points entered for 2 of 4 submissions" in (out / "report.md").read_text()
    exported = subprocess.run([sys.executable, "-c", "from autograder.cli import main; main()", "export", str(out),
                               "--format", "csv", "--output", str(tmp_path / "lms.csv")],
                              capture_output=True, text=True, timeout=300)
    assert exported.returncode == 0, exported.stderr
    by_id = {row["student_id"]: row for row in csv.DictReader((tmp_path / "lms.csv").open())}
    assert by_id["correct"] == {"student_id": "correct", "score": "15.0", "max_score": "15.0",
                                "autograded": "13.0", "manual": "2.0"}
    assert by_id["untouched"]["manual"] == "" and "written answers not entered for 2 of 4" in exported.stdout

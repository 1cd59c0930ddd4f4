"""A TA's grades are never lost, guessed or hidden: the CLI on real folders (SPEC §3).

One class folder as a TA gets it from an LMS: notebooks at the top and in group folders, a
student folder with a copy of the notebook, one with two candidates, a notebook of the other
assignment; graded, then one student regraded with --student, then looked at with `show`.
"""
import csv
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"
UNTOUCHED = EXAMPLES / "attention_scoring" / "untouched.ipynb"

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed")


def autograder(*args) -> subprocess.CompletedProcess:
    command = [sys.executable, "-c", "from autograder.cli import main; main()", *map(str, args)]
    return subprocess.run(command, capture_output=True, text=True, timeout=900)


def put(source: Path, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(source, path)


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """The class folder, graded once: (folder, output, the run)."""
    root = tmp_path_factory.mktemp("ta")
    inbox, out = root / "class", root / "out"
    put(UNTOUCHED, inbox / "sidorov.ipynb")
    put(UNTOUCHED, inbox / "group1" / "ivanov.ipynb")
    put(EXAMPLES / "attention_scoring" / "correct.ipynb", inbox / "group1" / "petrova.ipynb")
    put(UNTOUCHED, inbox / "kim" / "attention_scoring" / "attention_scoring-Copy1.ipynb")
    put(UNTOUCHED, inbox / "kim" / "attention_scoring" / "Untitled.ipynb")
    put(UNTOUCHED, inbox / "lee" / "attention_scoring" / "attention_scoring-Copy1.ipynb")
    put(EXAMPLES / "bahdanau" / "buggy.ipynb", inbox / "wrong.ipynb")
    put(UNTOUCHED, inbox / ".ipynb_checkpoints" / "sidorov-checkpoint.ipynb")
    run = autograder("grade", inbox, "--assignment", "attention_scoring", "--output", out)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    return inbox, out, run


def load(out: Path, student: str) -> dict:
    return json.loads((out / f"{student}.json").read_text(encoding="utf-8"))


def rows(out: Path) -> dict[str, dict]:
    with (out / "grades.csv").open(encoding="utf-8") as handle:
        return {row["student_id"]: row for row in csv.DictReader(handle)}


def test_every_notebook_at_any_depth_is_graded_and_the_summary_names_the_rest(graded):
    _, out, run = graded
    assert set(rows(out)) == {"sidorov", "ivanov", "petrova", "kim", "lee", "wrong"}
    assert load(out, "ivanov")["notebook"] == "group1/ivanov.ipynb"
    summary = " ".join(run.stdout.split())
    assert "found and not graded (3):" in summary and ".ipynb_checkpoints" in summary
    assert "kim/attention_scoring/Untitled.ipynb: one of 2 candidates, so none is graded" in summary
    assert "7 submissions found" not in run.stdout and "6 submissions found: 6 graded" in run.stdout


def test_the_only_other_notebook_is_graded_and_the_result_names_it(graded):
    _, out, _ = graded
    lee = load(out, "lee")
    assert lee["notebook"] == "lee/attention_scoring/attention_scoring-Copy1.ipynb"
    assert [w["code"] for w in lee["warnings"]][:1] == ["other_notebook"]
    assert "attention_scoring-Copy1.ipynb" in lee["warnings"][0]["message"]


def test_several_candidates_are_one_error_naming_them(graded):
    _, out, _ = graded
    kim = load(out, "kim")
    assert kim["score"] == 0 and [e["code"] for e in kim["errors"]] == ["several_notebooks"]
    assert "Untitled.ipynb, attention_scoring-Copy1.ipynb" in kim["errors"][0]["message"]


def test_the_other_assignments_notebook_is_one_error_naming_it(graded):
    _, out, _ = graded
    wrong = load(out, "wrong")
    assert [e["code"] for e in wrong["errors"]] == ["wrong_assignment"] and not wrong["warnings"]
    assert "bahdanau" in wrong["errors"][0]["message"]


def test_regrading_one_student_keeps_every_other_row(graded):
    """After a full run, `--student petrova`: does grades.csv still hold the whole class, and the
    report count every submission?"""
    inbox, out, _ = graded
    before = rows(out)
    run = autograder("grade", inbox, "--assignment", "attention_scoring", "--output", out,
                     "--student", "petrova", "--force")
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    assert rows(out) == before
    assert "1 graded" in run.stdout and "5 kept from earlier runs" in run.stdout
    assert "Submissions: 6." in (out / "report.md").read_text(encoding="utf-8")
    assert "graded from another notebook, grader.yml" not in run.stdout  # the others are this run's grades


def test_regrading_one_student_with_another_seed_names_the_results_kept_from_the_old_one(graded, tmp_path):
    """A TA's trial: --student with another seed (or grader.yml, or grader) kept the others'
    results of the old one with no note, so one grades.csv mixed two gradings. Named now?"""
    inbox, out, _ = graded
    copy = tmp_path / "out"
    shutil.copytree(out, copy)
    run = autograder("grade", inbox, "--assignment", "attention_scoring", "--output", copy,
                     "--student", "petrova", "--seed", "7")
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    said = " ".join(run.stdout.split())
    assert "5 results kept as they are (not selected by --student) were graded from another notebook, grader.yml, " \
           "seed or grader version than this run would use" in said, said
    assert "run without --student to grade them again" in said


def test_show_prints_one_students_scores_errors_and_page(graded):
    _, out, _ = graded
    run = autograder("show", "petrova", "--output", out)
    assert run.returncode == 0, run.stderr
    assert "petrova" in run.stdout and "masked_softmax" in run.stdout and "✔" in run.stdout
    assert str(out / "feedback" / "petrova.html") in run.stdout
    kim = autograder("show", "kim", "--output", out)
    assert "several_notebooks" in kim.stdout
    unknown = autograder("show", "petrov", "--output", out)
    assert unknown.returncode == 2 and "did you mean 'petrova'?" in unknown.stderr


def test_a_missing_config_file_names_the_flag_that_gave_it(tmp_path):
    run = autograder("grade", UNTOUCHED, "--assignment", "attention_scoring", "--output", tmp_path / "o",
                     "--config", tmp_path / "nope.yml")
    assert run.returncode == 2
    assert "--config" in run.stderr and "nope.yml" in run.stderr and "pass --config PATH" not in run.stderr


def test_one_notebook_graded_into_the_class_folder_keeps_every_other_row(graded):
    """A TA's trial: a resubmitted notebook graded by its path into the class's folder cut
    grades.csv and the report down to that one student. Are the others listed as stored?"""
    inbox, out, _ = graded
    before = rows(out)
    run = autograder("grade", inbox / "group1" / "petrova.ipynb", "--assignment", "attention_scoring",
                     "--output", out, "--force")
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    assert rows(out) == before
    summary = " ".join(run.stdout.split())
    assert "1 graded" in summary and "5 more results in the folder, from earlier runs" in summary, summary
    assert "Submissions: 6." in (out / "report.md").read_text(encoding="utf-8")


def test_show_finds_an_id_as_grades_csv_writes_it_and_suggests_case_twins(graded, tmp_path):
    """A TA's trial: `show` suggested '-dash' (a flag to the shell), KIM got no suggestion though
    kim existed, and "'-dash" as grades.csv writes it was not found. Each as a TA types it now?"""
    inbox, out, _ = graded
    copy = tmp_path / "out"
    shutil.copytree(out, copy)
    dash = json.loads((copy / "sidorov.json").read_text(encoding="utf-8")) | {"student_id": "-dash"}
    (copy / "-dash.json").write_text(json.dumps(dash), encoding="utf-8")
    assert "-dash" in autograder("show", "'-dash", "--output", copy).stdout
    said = " ".join(autograder("show", "--output", copy, "--", "-dosh").stderr.split())
    assert "did you mean \"'-dash\"?" in said, said   # as grades.csv writes it, which show reads (one id rule)
    assert "did you mean 'kim'?" in autograder("show", "KIM", "--output", copy).stderr


def test_a_solution_cell_that_raised_is_named_in_the_summary(tmp_path):
    """A TA's trial: a syntax error that cost a task's points was a warning only, in no list of
    the summary. Is the student named?"""
    import nbformat
    notebook = nbformat.read(EXAMPLES / "attention_scoring" / "correct.ipynb", as_version=4)
    [cell] = [c for c in notebook.cells if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == "masked_softmax"]
    cell.source = "def masked_softmax(X, valid_lens)\n    return X\n"  # the colon forgotten
    (tmp_path / "in").mkdir()
    nbformat.write(notebook, tmp_path / "in" / "oleg.ipynb")
    run = autograder("grade", tmp_path / "in", "--assignment", "attention_scoring", "--output", tmp_path / "out")
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    assert "students whose solution cells raised (1): oleg" in " ".join(run.stdout.split())

"""Usage errors of `autograder grade` are found before anything is graded: exit 2, one
readable line naming what to fix, nothing written (SPEC §3)."""
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from typer.testing import CliRunner

from autograder.cli import app

REPO = Path(__file__).resolve().parents[2]
CORRECT = REPO / "examples" / "attention_scoring" / "correct.ipynb"


def grade(*args: str):
    return CliRunner().invoke(app, ["grade", *map(str, args)])


def expect_usage_error(result, *phrases: str) -> None:
    assert result.exit_code == 2, result.output
    for phrase in phrases:
        assert phrase in result.output, result.output


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has a GPU")
def test_cuda_without_a_gpu_is_a_usage_error(tmp_path):
    """Does --device cuda on a machine without a GPU stop before grading (it graded 4.5/15)?"""
    expect_usage_error(grade(CORRECT, "--assignment", "attention_scoring", "--output", tmp_path / "out",
                             "--device", "cuda"), "no CUDA device")
    assert not (tmp_path / "out").exists()


def test_the_same_notebook_under_two_paths_is_a_usage_error(tmp_path):
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        shutil.copy(CORRECT, tmp_path / folder / "ivanov.ipynb")
    expect_usage_error(grade(tmp_path / "a", tmp_path / "b", "--assignment", "attention_scoring",
                             "--output", tmp_path / "out"), "'ivanov' has 2 submissions")


def test_one_path_given_twice_is_a_usage_error(tmp_path):
    expect_usage_error(grade(CORRECT, CORRECT, "--assignment", "attention_scoring", "--output", tmp_path / "out"),
                       "'correct' has 2 submissions")


def test_a_mistyped_notebook_is_a_usage_error_not_a_student(tmp_path):
    expect_usage_error(grade(tmp_path / "nope.ipynb", "--assignment", "attention_scoring", "--output",
                             tmp_path / "out"), "nope.ipynb: no such file or folder")


def test_output_that_is_a_file_is_a_usage_error(tmp_path):
    (tmp_path / "out").write_text("not a folder")
    expect_usage_error(grade(CORRECT, "--assignment", "attention_scoring", "--output", tmp_path / "out"),
                       "is a file, not a folder")


@pytest.mark.parametrize("jobs", ["-5", "0"])
def test_jobs_below_one_is_a_usage_error(tmp_path, jobs):
    expect_usage_error(grade(CORRECT, "--assignment", "attention_scoring", "--output", tmp_path / "out",
                             "--jobs", jobs), f"--jobs {jobs}")


def test_one_output_folder_holds_one_assignment(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / ".autograder-assignment").write_text("attention_scoring\n")
    bahdanau = REPO / "examples" / "bahdanau" / "correct.ipynb"
    expect_usage_error(grade(bahdanau, "--assignment", "bahdanau", "--output", out),
                       "holds the results of 'attention_scoring'")


def test_an_unknown_student_is_a_usage_error(tmp_path):
    expect_usage_error(grade(CORRECT, "--assignment", "attention_scoring", "--output", tmp_path / "out",
                             "--student", "petrov"), "--student petrov")


def test_yaml_syntax_error_names_the_line(tmp_path):
    config = tmp_path / "grader.yml"
    lines = (REPO / "grader.yml").read_text().splitlines()
    lines[5] = "sandbox: [unclosed"
    config.write_text("\n".join(lines))
    expect_usage_error(grade(CORRECT, "--assignment", "attention_scoring", "--output", tmp_path / "out",
                             "--config", config), "grader.yml: not valid YAML at line")


def test_a_folder_named_like_a_notebook_is_a_folder(tmp_path):
    """Is `x.ipynb/` searched as a folder, not graded as one student's notebook?"""
    from autograder.submissions.find import find_submissions
    folder = tmp_path / "x.ipynb"
    folder.mkdir()
    shutil.copy(CORRECT, folder / "ivanov.ipynb")
    found = find_submissions([folder], "attention_scoring", "attention_scoring.ipynb").submissions
    assert [s.student_id for s in found] == ["ivanov"]


def test_nbgrader_paths_give_the_folder_id(tmp_path):
    """Do submitted/<id>, submitted/<id>/<a> and the notebook inside all name the student <id>?"""
    from autograder.submissions.find import find_submissions, select
    notebook = tmp_path / "submitted" / "ivanov" / "attention_scoring" / "attention_scoring.ipynb"
    notebook.parent.mkdir(parents=True)
    shutil.copy(CORRECT, notebook)
    (tmp_path / "submitted" / "petrov" / "attention_scoring").mkdir(parents=True)
    shutil.copy(CORRECT, tmp_path / "submitted" / "petrov" / "attention_scoring" / "attention_scoring.ipynb")
    for path in (notebook, notebook.parent, notebook.parent.parent):
        found = find_submissions([path], "attention_scoring", "attention_scoring.ipynb").submissions
        assert [s.student_id for s in found] == ["ivanov"], path
    found = find_submissions([tmp_path], "attention_scoring", "attention_scoring.ipynb").submissions
    assert [s.student_id for s in select(found, ["petrov"], [tmp_path])] == ["petrov"]


def test_links_and_special_files_are_refused_without_reading_them(tmp_path):
    """Is a symbolic link (to the TA's notebook, another student's, /etc/shadow) an error for
    that student, with nothing read through it?"""
    from autograder.submissions.find import find_submissions
    shutil.copy(CORRECT, tmp_path / "honest.ipynb")
    (tmp_path / "copier.ipynb").symlink_to(tmp_path / "honest.ipynb")
    (tmp_path / "ta.ipynb").symlink_to(REPO / "assignments" / "attention_scoring" / "attention_scoring.ipynb")
    (tmp_path / "shadow.ipynb").symlink_to("/etc/shadow")
    found = {s.student_id: s
             for s in find_submissions([tmp_path], "attention_scoring", "attention_scoring.ipynb").submissions}
    assert found["honest"].problem is None
    for name in ("copier", "ta", "shadow"):
        assert found[name].problem is not None and found[name].problem.code == "not_regular_file", name


def test_a_broken_book_is_the_courses_error_before_grading(tmp_path):
    """Does a reference/book.py that raises stop the run (exit 2) instead of failing every student?"""
    from autograder.config import ConfigError, load_config
    from autograder.course import Course
    from autograder.grading.task import RunSettings
    (tmp_path / "reference").mkdir()
    (tmp_path / "reference" / "book.py").write_text("undefined_name\n")
    with pytest.raises(ConfigError, match="book.py: the book's code raises NameError"):
        RunSettings.resolve(load_config(), "attention_scoring", device="cpu", course=Course(tmp_path))


@pytest.mark.parametrize("args, status", [(["--help"], 0), (["show", "anyone", "--output", "/nonexistent"], 2)])
def test_the_command_exits_with_its_status_its_output_whole_and_its_exit_handlers_run(tmp_path, args, status):
    """The command leaves without the interpreter's teardown (0.4 s of torch's), yet as
    sys.exit would: the same status, every line it printed reaching a pipe, every at-exit
    handler run (temporary folders removed)."""
    marker = tmp_path / "handler-ran"
    code = ("import atexit, pathlib, sys\n"
            f"atexit.register(pathlib.Path({str(marker)!r}).touch)\n"
            "from autograder.cli import main\n"
            f"sys.argv = ['autograder', *{args!r}]\n"
            "main()\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == status, done.stderr
    assert marker.exists()
    if status == 0:
        assert done.stdout.rstrip().endswith("─╯"), done.stdout  # the help's last box, flushed
    else:
        assert "/nonexistent" in done.stdout + done.stderr


def test_a_folder_a_running_service_holds_is_a_usage_error(tmp_path):
    """Red team 13: `grade` into a folder the service was serving exited 0, and the service's next
    result rewrote grades.csv from memory: the batch's student left it for good. Is the
    service's lock looked at: exit 2, one line, nothing written?"""
    import fcntl
    import os
    state = tmp_path / "out" / ".service"
    state.mkdir(parents=True)
    fd = os.open(state / "lock", os.O_RDWR | os.O_CREAT, 0o644)
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)   # as `autograder serve` holds it
    try:
        result = grade(CORRECT, "--assignment", "attention_scoring", "--output", tmp_path / "out")
    finally:
        os.close(fd)
    expect_usage_error(result, "`autograder serve` is serving from this folder")
    assert len(result.output.strip().splitlines()) == 1
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [".service"]

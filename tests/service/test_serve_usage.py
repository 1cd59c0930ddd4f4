"""``autograder serve``'s usage errors: each is one line and exit 2, said before any slot starts."""
import os
import shutil
import socket

import pytest
from typer.testing import CliRunner

from autograder.cli import app
from autograder.gradebook import remember_course
from autograder.service.serve import _lock

from .server import REPO, make_tokens

runner = CliRunner()
pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed")


@pytest.fixture(scope="module")
def tokens(tmp_path_factory):
    return make_tokens(tmp_path_factory.mktemp("usage"), ["s1"])[0]


def serve(*args: str):
    return runner.invoke(app, ["serve", *args])


def test_usage_errors_are_one_line_each(tokens, tmp_path):
    """Do a missing tokens file, an unknown assignment, an output that is a file, a port out of
    range and an executor that does not exist each give exit 2 and one line naming the fix?"""
    a_file = tmp_path / "file"
    a_file.write_text("x")
    broken = tmp_path / "broken.csv"  # red team 12: an id with a line break, which `tokens` refuses to write
    broken.write_text('student_id,token\n"s1\nadmin",' + "t" * 40 + "\n")
    common = ["--assignment", "attention_scoring", "--output", str(tmp_path / "out"), "--tokens", str(tokens)]
    cases = {
        ("--tokens", str(tmp_path / "none.csv")): "cannot read",
        ("--assignment", "attention_scorin"): "did you mean 'attention_scoring'",
        ("--output", str(a_file)): "is a file, not a folder",
        ("--port", "70000"): "give a port from 1 to 65535",
        ("--executor", "dask"): "--executor dask: use local",
        ("--tokens", str(broken)): "holds a control character",
    }
    for args, said in cases.items():
        done = serve(*common, *args)
        assert done.exit_code == 2 and said in done.output, (args, done.output)
        assert done.output.count("error:") == 1, done.output


def test_a_port_in_use_is_a_usage_error(tokens, tmp_path):
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        done = serve("--assignment", "attention_scoring", "--output", str(tmp_path / "out"), "--tokens", str(tokens),
                     "--port", str(port))
    assert done.exit_code == 2 and f"--port {port}: cannot listen there" in done.output, done.output


def test_a_second_service_on_one_folder_is_refused(tokens, tmp_path):
    """Would two services grade one queue twice? Is the second refused, naming the folder?"""
    out = tmp_path / "out"
    out.mkdir()
    held = _lock(out / ".service")
    done = serve("--assignment", "attention_scoring", "--output", str(out), "--tokens", str(tokens), "--port", "0")
    assert done.exit_code == 2 and "another `autograder serve` is serving from this folder" in done.output, done.output
    os.close(held)


def test_a_folder_recorded_into_an_nbgrader_course_is_refused(tokens, tmp_path):
    """Red team 12: served on a course's results folder, a resubmission changed grades.csv while
    the gradebook (formgrader, nbgrader export) kept the old score, with no word. Refused?"""
    out = tmp_path / "grades"
    out.mkdir()
    remember_course(out, tmp_path / "course")
    done = serve("--assignment", "attention_scoring", "--output", str(out), "--tokens", str(tokens), "--port", "0")
    assert done.exit_code == 2 and "recorded into an nbgrader course's gradebook" in done.output, done.output


def test_exchange_usage_errors_are_one_line_each(tokens, tmp_path):
    """Does a service with no way in, ``--exchange`` without ``--course``, an exchange or course
    that is not there, a course id nbgrader never uses, a feedback folder every user can list
    or a bad extensions file each give exit 2 and one line naming the fix, before anything starts?"""
    exchange = tmp_path / "exchange"
    (exchange / "c1" / "inbound").mkdir(parents=True)
    (exchange / "open" / "inbound").mkdir(parents=True)
    (exchange / "open" / "feedback").mkdir(mode=0o755)
    os.chmod(exchange / "open" / "feedback", 0o755)
    config = tmp_path / "grader.yml"
    config.write_text((REPO / "grader.yml").read_text().replace(
        "  submissions_per_hour: 20 ", "  deadline: 2026-03-01T23:59:00Z\n  extensions: ext.csv\n"
                                       "  submissions_per_hour: 20 "))
    (tmp_path / "ext.csv").write_text("student_id,deadline\ns1,tomorrow\n")
    common = ["--assignment", "attention_scoring", "--output", str(tmp_path / "out")]
    cases = {
        (): "give --tokens TOKENS.csv",
        ("--exchange", str(exchange)): "--exchange ROOT and --course ID go together",
        ("--exchange", str(exchange), "--course", "c2"): "no folder",
        ("--exchange", str(exchange), "--course", "../c1"): "not a course id nbgrader uses",
        ("--exchange", str(exchange), "--course", "open"): "students could read each other's feedback",
        ("--exchange", str(exchange), "--course", "c1", "--config", str(config)): "line 2: 'tomorrow' is not",
    }
    for args, said in cases.items():
        done = serve(*common, *args)
        assert done.exit_code == 2 and said in done.output, (args, done.output)
        assert done.output.count("error:") == 1, done.output
    assert oct((exchange / "c1" / "feedback").stat().st_mode & 0o777) == "0o711"

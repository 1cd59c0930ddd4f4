"""A 202 is kept (SPEC §5): submissions queued when the service is killed are graded after a
restart, and a stop (SIGTERM, or Ctrl-C to the process group) finishes or queues again what
was being graded within 30 s and leaves no process behind (found by the run marker)."""
import os
import shutil
import signal
import sqlite3
import time

import pytest

from tests.processes import parent, snapshot

from .server import config_file, make_tokens, notebook, start

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed")
STOPPED_WITHIN_S = 30


@pytest.fixture
def course(tmp_path):
    tokens, token_of = make_tokens(tmp_path, ["a", "b", "c"])
    return tmp_path, tokens, token_of, config_file(tmp_path)


def statuses(output) -> dict[str, str]:
    db = sqlite3.connect(output / ".service" / "queue.sqlite3")
    found = dict(db.execute("SELECT id, status FROM submissions"))
    db.close()
    return found


def wait_grading(server, student: str, submission_id: str) -> None:
    deadline = time.monotonic() + 240
    while server.status(student, submission_id)["status"] != "grading":
        assert time.monotonic() < deadline, "never started grading"
        time.sleep(0.05)


def test_queued_submissions_survive_kill_9_and_are_graded_after_restart(course):
    """With one slot grading a's notebook and b's and c's queued, after ``kill -9`` of the
    service, is every process of it gone, and does a restarted service grade all three?"""
    folder, tokens, token_of, config = course
    server = start(folder, tokens, token_of, config, jobs=1, name="crash")
    ids = {"a": server.submit("a", notebook("correct", sleep_s=3)).json()["id"]}
    ids |= {student: server.submit(student, notebook("buggy")).json()["id"] for student in ("b", "c")}
    wait_grading(server, "a", ids["a"])
    server.stop(signal.SIGKILL)
    assert server.left() == {}, "processes left after kill -9"
    assert sorted(statuses(server.output).values()) == ["grading", "queued", "queued"]

    again = start(folder, tokens, token_of, config, jobs=1, output=server.output, name="restart")
    try:
        for student, submission_id in ids.items():
            done = again.wait_done(student, submission_id)
            assert done["status"] == "done" and done["result"]["student_id"] == student
            assert (again.output / "history" / student / f"{submission_id}.json").is_file()
        assert "queued again" in again.log.read_text()
    finally:
        again.stop()
    assert again.left() == {}


def test_sigterm_puts_back_what_is_being_graded_and_leaves_nothing(course):
    """With a slot busy for a minute and one submission queued, does SIGTERM stop the service
    within 30 s, keep both queued for the next start, and leave no process of it?"""
    folder, tokens, token_of, config = course
    server = start(folder, tokens, token_of, config, jobs=1, name="term")
    slow = server.submit("a", notebook("correct", sleep_s=60)).json()["id"]
    waiting = server.submit("b", notebook("correct")).json()["id"]
    wait_grading(server, "a", slow)
    sent = time.monotonic()
    status = server.stop(signal.SIGTERM)
    took = time.monotonic() - sent
    assert server.left() == {}, "processes left after SIGTERM"
    assert status == -signal.SIGTERM
    assert took < STOPPED_WITHIN_S, f"stopped in {took:.1f} s"
    assert statuses(server.output) == {slow: "queued", waiting: "queued"}
    assert "2 submissions queued for the next start (1 of them were being graded)" in server.log.read_text()


def test_ctrl_c_to_the_process_group_stops_it_at_once(course):
    """With nothing being graded, does Ctrl-C (SIGINT to the service's process group) end it
    in seconds, with status 130, leaving no process and the folder usable by the next start?"""
    folder, tokens, token_of, config = course
    server = start(folder, tokens, token_of, config, jobs=1, name="int")
    server.wait_done("c", server.submit("c", notebook("correct")).json()["id"])
    server.seen = snapshot(server.marker)
    sent = time.monotonic()
    os.killpg(server.process.pid, signal.SIGINT)
    assert server.process.wait(timeout=60) == 130, server.log.read_text()[-2000:]
    assert time.monotonic() - sent < 10
    assert server.left() == {}
    assert "Traceback" not in server.log.read_text()


def test_a_grading_process_killed_mid_submission_costs_a_regrade_only(course):
    """When the grading processes die while one grades a's notebook (killed from outside, as
    the OOM killer would), is that submission queued again and graded in fresh processes, with
    its real result, and does the service go on?"""
    folder, tokens, token_of, config = course
    server = start(folder, tokens, token_of, config, jobs=1, name="lost")
    try:
        first = server.submit("a", notebook("correct", sleep_s=4)).json()["id"]
        wait_grading(server, "a", first)
        grading = [pid for pid, _ in snapshot(server.marker) if parent(pid) == server.process.pid]
        assert grading, "no grading process found"
        for pid in grading:
            os.kill(pid, signal.SIGKILL)
        done = server.wait_done("a", first)
        assert done["status"] == "done" and not [e for e in done["result"]["errors"] if e["code"] == "grader_failed"]
        assert done["result"]["score"] == server.wait_done("b", server.submit("b", notebook("correct")).json()["id"])[
            "result"]["score"]
        assert "queued again" in server.log.read_text()
    finally:
        server.stop()
    assert server.left() == {}


def test_a_restart_lists_every_result_in_grades_csv(course):
    """After a batch into the service's folder left grades.csv with fewer rows, does the
    service, started again, list every student whose result is in the folder?"""
    folder, tokens, token_of, config = course
    server = start(folder, tokens, token_of, config, jobs=1, name="rows")
    for student in ("a", "b"):
        server.wait_done(student, server.submit(student, notebook("correct")).json()["id"])
    server.stop()
    grades = server.output / "grades.csv"
    grades.write_text(grades.read_text().splitlines()[0] + "\n")   # what a batch of nobody would leave
    again = start(folder, tokens, token_of, config, jobs=1, output=server.output, name="rows-again")
    again.stop()
    assert [row.split(",")[0] for row in grades.read_text().splitlines()[1:]] == ["a", "b"]
    assert again.left() == {}

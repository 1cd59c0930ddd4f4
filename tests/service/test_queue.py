"""The service's queue in SQLite, by itself: one waiting submission per student, students in
turn, one grading at a time per student, the rate over the last hour, and what a restart
finds."""
import sqlite3

import pytest

from autograder.service.queue import WINDOW_S, Accepted, Queue, Refused

NOW = 1_800_000_000.0


def queue(tmp_path) -> Queue:
    return Queue(tmp_path / "queue.sqlite3")


def test_a_newer_submission_replaces_the_waiting_one(tmp_path):
    q = queue(tmp_path)
    assert q.add("a1", "ann", 20, NOW) == Accepted([])
    assert q.add("a2", "ann", 20, NOW + 1) == Accepted(["a1"])
    assert q.get("a1", "ann").status == "replaced" and q.get("a2", "ann").status == "queued"
    assert q.queued() == 1


def test_a_student_grading_waits_and_others_go_first(tmp_path):
    """While ann's first is graded, is her second held back, and bob's taken instead?"""
    q = queue(tmp_path)
    q.add("a1", "ann", 20, NOW)
    assert q.take(NOW).id == "a1"
    q.add("a2", "ann", 20, NOW + 1)
    q.add("b1", "bob", 20, NOW + 2)
    assert q.take(NOW + 3).id == "b1"
    assert q.take(NOW + 3) is None   # ann is being graded: her second waits
    q.finish("a1", NOW + 4)
    assert q.take(NOW + 5).id == "a2"


def test_the_student_served_longest_ago_goes_first(tmp_path):
    """With ann served a minute ago and bob never, is bob's taken first though ann's is older?"""
    q = queue(tmp_path)
    q.add("a1", "ann", 20, NOW)
    q.take(NOW)
    q.finish("a1", NOW + 1)
    q.add("a2", "ann", 20, NOW + 60)
    q.add("b1", "bob", 20, NOW + 61)
    q.add("c1", "cat", 20, NOW + 62)
    assert [q.take(NOW + 63).id for _ in range(3)] == ["b1", "c1", "a2"]


def test_the_rate_counts_accepted_submissions_of_the_last_hour(tmp_path):
    """Is the fourth of three allowed refused with the seconds until the oldest leaves the
    hour, refused ones not counted, and does the window slide?"""
    q = queue(tmp_path)
    for i in range(3):
        assert isinstance(q.add(f"a{i}", "ann", 3, NOW + i * 100), Accepted)
    assert q.add("a3", "ann", 3, NOW + 300) == Refused(int(WINDOW_S - 300))
    assert q.add("a4", "ann", 3, NOW + 301) == Refused(int(WINDOW_S - 301))   # the refusal did not count
    assert q.retry_after("bob", 3, NOW + 300) is None
    assert isinstance(q.add("a5", "ann", 3, NOW + WINDOW_S + 1), Accepted)
    assert q.get("a3", "ann") is None


def test_another_students_submission_is_not_found(tmp_path):
    q = queue(tmp_path)
    q.add("a1", "ann", 20, NOW)
    assert q.get("a1", "bob") is None and q.get("a1", "ann") is not None


def test_a_restart_queues_again_what_was_being_graded(tmp_path):
    """After a service died mid-grading, does a new one find that submission queued, with the
    waiting ones, and the attempts so far?"""
    q = queue(tmp_path)
    q.add("a1", "ann", 20, NOW)
    q.add("b1", "bob", 20, NOW)
    q.take(NOW)
    q.put_back(q.take(NOW).id, 2)
    q.take(NOW)
    del q   # the process dies: no close
    again = queue(tmp_path)
    assert again.recover() == 2
    assert again.queued() == 2
    assert {again.take(NOW).attempts, again.take(NOW).attempts} == {0, 2}


def test_a_failed_add_changes_nothing(tmp_path):
    """If queueing fails half-way (here: an id already taken), is the waiting submission it
    would have replaced still waiting?"""
    q = queue(tmp_path)
    q.add("a1", "ann", 20, NOW)
    q.add("b1", "bob", 20, NOW)
    with pytest.raises(sqlite3.IntegrityError):
        q.add("b1", "ann", 20, NOW + 1)
    assert q.get("a1", "ann").status == "queued" and q.queued() == 2

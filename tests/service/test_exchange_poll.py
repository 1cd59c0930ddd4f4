"""The exchange's poller (``service/exchange.py``) turn by turn, with the service's real queue,
uploads, ledger and outputs but no grading (the loop's part is played here: a result written
as the loop writes it). Hand-in folders are made as ``nbgrader submit`` makes them, by root,
named for root: the owner check passes; the tests with real students' uids are in
``test_exchange.py``."""
import errno
import os
import secrets
import time
from datetime import datetime, timezone
from types import SimpleNamespace

import pytest

from autograder.config import load_config
from autograder.grading.task import RunSettings
from autograder.grading.pipeline import Batch, empty_result
from autograder.service.exchange import handin
from autograder.service.app import Service
from autograder.service.assignments import Assignments
from autograder.service.deadlines import Deadlines
from autograder.service.exchange.poll import Exchange
from autograder.service.exchange.outputs import ExchangeOutputs
from autograder.service.exchange.paths import ExchangePaths
from autograder.service.intake import Uploads
from autograder.service.exchange.ledger import Ledger
from autograder.service.queue import Queue
from autograder.outputs.store import OutputFolder
from autograder.submissions.find import Submission

from .server import notebook

ASSIGNMENT, NOTEBOOK, COURSE = "attention_scoring", "attention_scoring.ipynb", "course101"


@pytest.fixture(scope="module")
def batch() -> Batch:
    config = load_config()
    return Batch(RunSettings.resolve(config, ASSIGNMENT, None, "cpu"), config, b"")


class World:
    """A course in an exchange, and a service's state folder, built anew by ``restart``."""

    def __init__(self, tmp_path, batch: Batch, per_hour: int = 20, deadlines: Deadlines | None = None):
        self.root, self.state, self.batch = tmp_path / "exchange", tmp_path / "out" / ".service", batch
        self.inbound = self.root / COURSE / "inbound"
        self.inbound.mkdir(parents=True, exist_ok=True)
        os.chmod(self.inbound, 0o2733)
        self.per_hour, self.deadlines = per_hour, deadlines or Deadlines()
        self.restart()

    def restart(self) -> None:
        self.state.mkdir(parents=True, exist_ok=True)
        paths = ExchangePaths.check(self.root, COURSE, shared_uid=False)
        self.queue = Queue(self.state / "queue.sqlite3")
        self.uploads = Uploads(self.state / "uploads", NOTEBOOK)
        self.uploads.prune(self.queue.known_ids())
        self.ledger = Ledger(self.state / "exchange.sqlite3", str(paths.course))
        folder = OutputFolder(self.state.parent, ASSIGNMENT, "en")
        self.outputs = ExchangeOutputs(folder, self.batch.settings, self.ledger, self.deadlines, self.state)
        self.pokes = []
        service = Service(ASSIGNMENT, NOTEBOOK, "en", 1, self.per_hour, 1 << 20, None, self.queue, self.uploads,
                          self.outputs, SimpleNamespace(poke=lambda: self.pokes.append(1)),
                          Assignments.of(self.batch), self.deadlines)
        self.exchange = self.outputs.exchange = Exchange(paths, self.ledger, service)
        self.exchange.recover()

    def hand_in(self, student: str = "root", data: bytes | None = None, secret: str | None = None) -> str:
        stamp = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M:%S.%f UTC")
        folder = self.inbound / f"{student}+{ASSIGNMENT}+{stamp}+{secrets.token_urlsafe(9)}"
        folder.mkdir()
        (folder / NOTEBOOK).write_bytes(notebook("correct") if data is None else data)
        (folder / "timestamp.txt").write_text(stamp)
        (folder / handin.SECRET).write_text(secret or secrets.token_hex(64))
        return folder.name

    def secret(self, folder: str) -> str:
        return (self.inbound / folder / handin.SECRET).read_text()

    def page(self, folder: str, notebook_id: str = "attention_scoring"):
        path = self.root / COURSE / "feedback" / handin.feedback_name(self.secret(folder), notebook_id)
        return path.read_text() if path.exists() else None

    def grade_next(self, score: float = 0.0) -> str:
        """What the grading loop does with the next queued submission: its result, written."""
        row = self.queue.take(time.time())
        result = empty_result(self.batch, Submission(row.student_id, self.uploads.path(row.id)))
        result.tasks[0].score = result.score = score   # the task's points too: grades.csv adds them up
        self.outputs.write(row.id, result)
        self.queue.finish(row.id, time.time())
        return row.id


def test_a_hand_in_is_taken_once_and_its_feedback_released_where_nbgrader_looks(tmp_path, batch):
    world = World(tmp_path, batch)
    before = sorted(p.name for p in world.inbound.rglob("*"))
    folder = world.hand_in()
    world.exchange._turn()
    assert world.queue.queued() == 1 and world.pokes
    submission_id = world.grade_next(7.0)
    world.exchange._turn()
    page = world.page(folder)
    assert page is not None and "root" in page
    assert page == world.outputs.kept("root", submission_id, ".html").read_text()
    assert world.ledger.get(submission_id).status == "released"
    feedback = world.root / COURSE / "feedback"
    assert oct(feedback.stat().st_mode & 0o777) == "0o711"
    assert all(oct(p.stat().st_mode & 0o777) == "0o644" for p in feedback.iterdir())
    assert sorted(p.name for p in world.inbound.rglob("*")) == sorted(before + [folder, *(
        f"{n}" for n in (NOTEBOOK, "timestamp.txt", handin.SECRET))])   # inbound/ unchanged but for the hand-in
    world.restart()
    world.exchange._turn()
    assert world.queue.queued() == 0 and world.ledger.folders() == {folder}


def test_a_restart_releases_what_was_graded_but_not_yet_released(tmp_path, batch):
    world = World(tmp_path, batch)
    folder = world.hand_in()
    world.exchange._turn()
    world.outputs.exchange = None   # the service stops between the result and its page
    world.grade_next()
    assert world.page(folder) is None
    world.restart()
    world.exchange._turn()
    assert world.page(folder) is not None


def test_a_secret_copied_from_another_student_is_refused_and_writes_no_page(tmp_path, batch):
    """A hand-in named for ``nobody`` (checked as the shared-uid switch would not check it) that
    carries root's secret: is it refused, leaving root's page as it was?"""
    world = World(tmp_path, batch)
    mine = world.hand_in()
    world.exchange._turn()
    world.grade_next()
    world.exchange._turn()
    page = world.page(mine)
    world.exchange.paths = ExchangePaths.check(world.root, COURSE, shared_uid=True)
    world.hand_in("nobody", data=notebook("buggy"), secret=world.secret(mine))
    world.exchange._turn()
    assert world.queue.queued() == 0 and world.exchange.refused() == 1
    assert world.page(mine) == page


def test_a_hand_in_named_for_another_user_changes_nothing(tmp_path, batch):
    world = World(tmp_path, batch)
    folder = world.hand_in("nobody")
    world.exchange._turn()
    assert world.queue.queued() == 0 and world.exchange.refused() == 1
    assert list((world.root / COURSE / "feedback").iterdir()) == [] and world.page(folder) is None
    assert not list(world.uploads.root.iterdir())


def test_a_notebook_that_is_no_notebook_gets_a_page_saying_why(tmp_path, batch):
    world = World(tmp_path, batch)
    folder = world.hand_in(data=b"\x00 not a notebook")
    world.exchange._turn()
    assert world.queue.queued() == 0 and world.exchange.refused() == 1
    assert "was not graded" in world.page(folder) and "not JSON" in world.page(folder)


def test_above_the_rate_a_hand_in_waits_its_turn_and_is_never_dropped(tmp_path, batch):
    """With one submission an hour, does a second hand-in wait (not refused), a third take its
    place, and does the one waiting survive a restart?"""
    world = World(tmp_path, batch, per_hour=1)
    world.hand_in()
    world.exchange._turn()
    world.grade_next()
    world.hand_in(data=notebook("buggy"))
    world.exchange._turn()
    third = world.hand_in(data=notebook("untouched"))
    for _ in range(3):
        world.exchange._turn()
    assert world.queue.queued() == 0 and world.exchange.refused() == 0
    [waiting] = world.ledger.by_status("waiting")
    assert waiting.folder == third and len(world.ledger.by_status("replaced")) == 1
    world.restart()
    world.exchange._turn()
    assert [entry.folder for entry in world.ledger.by_status("waiting")] == [third]
    assert world.uploads.path(world.ledger.by_status("waiting")[0].submission_id).is_file()


def test_a_late_hand_in_is_feedback_only_and_never_takes_the_on_time_ones_place(tmp_path, batch):
    """Handed in on time, then after the deadline while the first still waits: is the late one
    held until the on-time one is taken, then graded into history/ only, with a warning, while
    the student's result and grades.csv keep the on-time one?"""
    world = World(tmp_path, batch)
    on_time = world.hand_in()
    time.sleep(0.05)
    due = datetime.fromtimestamp(time.time(), timezone.utc)
    time.sleep(0.05)
    late = world.hand_in(data=notebook("buggy"))
    world.deadlines = Deadlines(due)
    world.restart()
    world.exchange._turn()
    assert world.queue.queued() == 1 and len(world.ledger.by_status("waiting")) == 1
    world.grade_next(13.0)
    world.exchange._turn()
    late_id = world.grade_next(2.0)
    world.exchange._turn()
    assert (world.state.parent / "root.json").is_file()
    assert '"score": 13.0' in (world.state.parent / "root.json").read_text()
    kept = world.outputs.kept("root", late_id).read_text()
    assert '"score": 2.0' in kept and "late_handin" in kept
    assert "after your deadline" in world.page(late) and world.page(on_time) is not None
    assert ",13.0," in (world.state.parent / "grades.csv").read_text()


def test_names_that_are_no_utf8_are_taken_or_refused_like_any_other(tmp_path, batch):
    """A folder whose random part is not UTF-8, and one whose only notebook's name is not: is
    the first graded and the second refused, each once, the log and the ledger intact?"""
    world = World(tmp_path, batch)
    odd = world.hand_in()
    os.rename(world.inbound / odd, world.inbound / (odd[:-3] + "\udcff\udcfe!"))
    other = world.hand_in()
    os.rename(world.inbound / other / NOTEBOOK, world.inbound / other / "\udcffwork.ipynb")
    for _ in range(2):
        world.exchange._turn()
    assert world.queue.queued() == 1 and world.exchange.refused() == 1
    assert len(world.ledger.folders()) == 2


def test_a_failure_on_the_services_side_refuses_nothing_and_is_tried_again(tmp_path, batch, monkeypatch):
    """The service's disk full while it copies a hand-in: is the hand-in left untaken (not
    refused), and taken once the disk is back?"""
    world = World(tmp_path, batch)
    world.hand_in()
    real = handin.read

    def disk_full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")
    monkeypatch.setattr(handin, "read", disk_full)
    world.exchange._turn()
    assert world.exchange.refused() == 0 and world.ledger.folders() == set() and not list(world.uploads.root.iterdir())
    monkeypatch.setattr(handin, "read", real)
    world.exchange._unfinished.clear()   # its minute is up
    world.exchange._turn()
    assert world.queue.queued() == 1


def test_a_flood_of_hand_ins_keeps_one_copy_waiting(tmp_path, batch):
    """Above the rate, twenty hand-ins arriving in one turn: does the service keep one copy of the
    newest waiting (the queued one aside), not twenty?"""
    world = World(tmp_path, batch, per_hour=1)
    world.hand_in()
    world.exchange._turn()
    newest = [world.hand_in(data=notebook("buggy")) for _ in range(20)][-1]
    world.exchange._turn()
    assert len(list(world.uploads.root.iterdir())) == 2
    assert [entry.folder for entry in world.ledger.by_status("waiting")] == [newest]
    assert len(world.ledger.by_status("replaced")) == 19 and world.exchange.refused() == 0

"""The grading loop when its executor fails to take a submission (a Ray slot's call refused,
a cluster gone): the submission is tried again, then given the grader's failure; it never
stays "grading" for good, and the loop goes on with the next one."""
import os
import time
from concurrent.futures import Future

from autograder.config import load_config
from autograder.grading.task import RunSettings
from autograder.grading.pipeline import Batch
from autograder.executors.base import ATTEMPTS
from autograder.executors.runmarker import RUN_MARKER
from autograder.service.intake import Uploads
from autograder.service.loop import GradingLoop
from autograder.service.outputs import Outputs
from autograder.service.queue import Queue
from autograder.outputs.store import OutputFolder


class RefusingSlots:
    """An executor whose hand-off raises, as Ray's does for a call it cannot make."""
    size = 1

    def __init__(self):
        self.calls = 0

    def start(self) -> None:
        pass

    def submit(self, submission) -> Future:
        self.calls += 1
        raise TypeError("too many positional arguments")

    def close(self) -> None:
        pass


def test_a_submission_the_executor_refuses_is_failed_not_left_grading(tmp_path):
    config = load_config()
    settings = RunSettings.resolve(config, "attention_scoring", None, "cpu")
    batch = Batch(settings, config, b"", force=True)
    queue = Queue(tmp_path / "queue.sqlite3")
    uploads = Uploads(tmp_path / "uploads", settings.spec.notebook)
    folder = OutputFolder(tmp_path / "out", "attention_scoring", config.language)
    slots = RefusingSlots()
    loop = GradingLoop(batch, queue, slots, uploads, Outputs(folder, settings))
    queue.add("a1", "s1", per_hour=10, now=time.time())
    loop.start()
    loop.poke()
    deadline = time.monotonic() + 30
    while queue.get("a1", "s1").status != "done" and time.monotonic() < deadline:
        time.sleep(0.05)
    loop.stop(1.0)
    assert queue.get("a1", "s1").status == "done"
    assert slots.calls == ATTEMPTS


class InstantSlots:
    """An executor that grades at once (the grader's empty result): the loop's own work alone."""
    size = 1

    def __init__(self, batch):
        self.batch = batch

    def start(self) -> None:
        pass

    def submit(self, submission) -> Future:
        from autograder.grading.pipeline import empty_result
        future = Future()
        future.set_result(empty_result(self.batch, submission))
        return future

    def close(self) -> None:
        pass


def test_a_student_who_hands_in_again_and_again_keeps_only_the_latest_graded_upload(tmp_path):
    """Red team: every upload was kept whole (20 MB x 20 an hour per student, a disk filled by
    one student's script). Once a newer submission is graded the earlier notebook goes (its
    result stays in history/); another student's upload is never touched."""
    config = load_config()
    settings = RunSettings.resolve(config, "attention_scoring", None, "cpu")
    batch = Batch(settings, config, b"", force=True)
    queue = Queue(tmp_path / "queue.sqlite3")
    uploads = Uploads(tmp_path / "uploads", settings.spec.notebook)
    folder = OutputFolder(tmp_path / "out", "attention_scoring", config.language)
    folder.check_usable()
    outputs = Outputs(folder, settings)
    loop = GradingLoop(batch, queue, InstantSlots(batch), uploads, outputs)
    loop.start()

    def hand_in(submission_id: str, student: str) -> None:
        uploads.new(submission_id).write_text("{}")
        queue.add(submission_id, student, per_hour=100, now=time.time())
        loop.poke()
        deadline = time.monotonic() + 30
        while queue.get(submission_id, student).status != "done" and time.monotonic() < deadline:
            time.sleep(0.02)
    hand_in("b1", "bob")
    for n in range(1, 6):
        hand_in(f"m{n}", "mallory")
    loop.stop(1.0)
    outputs.close(0)
    assert sorted(p.parent.name for p in (tmp_path / "uploads").glob("*/*")) == ["b1", "m5"]
    assert sorted(p.stem for p in (tmp_path / "out" / "history" / "mallory").glob("*.json")) == \
        ["m1", "m2", "m3", "m4", "m5"]


def test_the_services_grades_and_report_carry_the_written_answers_points(tmp_path):
    """A TA's trial: while the service wrote into a folder, grades.csv and the report dropped
    the points of manual_points.csv (the export still had them). Read at each writing?"""
    import csv

    from autograder.grading.pipeline import empty_result
    from autograder.submissions.find import Submission
    config = load_config()
    settings = RunSettings.resolve(config, "attention_scoring", None, "cpu")
    batch = Batch(settings, config, b"", force=True)
    folder = OutputFolder(tmp_path / "out", "attention_scoring", config.language)
    folder.check_usable()
    [written] = [t for t in settings.spec.tasks if settings.spec.is_manual(t)]
    outputs = Outputs(folder, settings)
    (folder.path / "manual_points.csv").write_text(f"student_id,task,points\nivanov,{written},1.5\n")
    outputs.write("a1", empty_result(batch, Submission("ivanov", tmp_path / "ivanov.ipynb")))
    with (folder.path / "grades.csv").open() as handle:
        [row] = list(csv.DictReader(handle))
    assert row["student_id"] == "ivanov" and row[written] == "1.5" and row["score"] == "1.5"
    assert outputs.report()
    outputs.close(0)
    assert "1.5" in (folder.path / "report.md").read_text(encoding="utf-8")
    # issue 46: the student's feedback, written by the service, says them too
    assert "written answers 1.5 / 2 (graded by your TA); total 1.5 / 15" in \
        (folder.path / "feedback" / "ivanov.md").read_text(encoding="utf-8")


def _service_of(tmp_path, slots_of=InstantSlots):
    config = load_config()
    settings = RunSettings.resolve(config, "attention_scoring", None, "cpu")
    batch = Batch(settings, config, b"", force=True)
    queue = Queue(tmp_path / "queue.sqlite3")
    uploads = Uploads(tmp_path / "uploads", settings.spec.notebook)
    folder = OutputFolder(tmp_path / "out", "attention_scoring", config.language)
    folder.check_usable()
    return batch, queue, uploads, folder, settings


def _colluding_pair(batch, folder) -> None:
    """Red team 13: two students whose every solution cell is about 60 KB of dead code, alike
    line for line but for one line per block, already graded into the folder."""
    from autograder.grading.pipeline import empty_result
    from autograder.submissions.find import Submission
    blocks = [f"def pad_{i}(x, w):\n    y = torch.tanh(x @ w + {i})\n    z = y.softmax(-1) * {i % 7}\n"
              f"    return (z - y).sum(-1)\n" for i in range(700)]
    for student, changed in (("anna", "tanh"), ("boris", "sigmoid")):
        result = empty_result(batch, Submission(student, folder.path / f"{student}.ipynb"))
        cell = "".join(b if i % 5 else b.replace("tanh", changed) for i, b in enumerate(blocks))
        result.solutions = {task: cell for task in batch.settings.autograded}
        folder.save(result)


def _graded_within(queue, uploads, loop, submission_id: str, student: str, within_s: float = 60) -> float:
    uploads.new(submission_id).write_text("{}")
    queue.add(submission_id, student, per_hour=100, now=time.time())
    loop.poke()
    started = time.monotonic()
    while queue.get(submission_id, student).status != "done" and time.monotonic() - started < within_s:
        time.sleep(0.02)
    return time.monotonic() - started


def test_a_pair_of_padded_cells_delays_no_one_and_no_stop(tmp_path):
    """Red team 13 (critical): marking a colluding pair's shared lines in the class report cost
    lines x marks, and the report was drawn on the grading loop's thread whenever the queue
    emptied: a third student waited 47-95 s, and the service took 181 s to stop. Is the next
    student graded at once while the report is drawn, and is the stop within SPEC §5's 30 s?"""
    batch, queue, uploads, folder, settings = _service_of(tmp_path)
    _colluding_pair(batch, folder)
    outputs = Outputs(folder, settings)
    loop = GradingLoop(batch, queue, InstantSlots(batch), uploads, outputs)
    loop.start()
    try:
        _graded_within(queue, uploads, loop, "c1", "carol")   # the queue empties: the report is due
        time.sleep(0.5)
        waited = _graded_within(queue, uploads, loop, "d1", "dave")
    finally:
        started = time.monotonic()
        loop.stop(1.0)
        outputs.close(within_s=10)
        stopped = time.monotonic() - started
    assert waited < 5, f"dave waited {waited:.1f} s for his result"
    assert stopped < 15, f"stopping took {stopped:.1f} s"


def test_a_report_drawing_past_its_deadline_is_cut_and_a_stop_does_not_wait_for_it(tmp_path, monkeypatch):
    """The class report is drawn in a child process with a deadline: one that hangs (here, a
    child that sleeps) is cut there, and a stop cuts it once the stop's time is spent and
    skips the last report. Nothing of it is left running."""
    from autograder.grading.pipeline import empty_result
    from autograder.service import outputs as service_outputs
    from autograder.submissions.find import Submission
    from tests.processes import snapshot
    batch, queue, uploads, folder, settings = _service_of(tmp_path)
    monkeypatch.setattr(service_outputs, "DRAW", "import sys, time\nsys.stdin.read()\ntime.sleep(600)\n")
    monkeypatch.setattr(service_outputs, "REPORT_EVERY_S", 0.0)
    outputs = Outputs(folder, settings)
    outputs.write("a1", empty_result(batch, Submission("ann", tmp_path / "ann.ipynb")))
    started = time.monotonic()
    assert outputs.report(within_s=1) is False
    assert time.monotonic() - started < 10
    outputs.write("b1", empty_result(batch, Submission("bob", tmp_path / "bob.ipynb")))
    outputs.report_soon()
    time.sleep(2)   # the report thread's child is sleeping now
    assert [command for command in snapshot(os.environ[RUN_MARKER], prefix=True).values()
            if "time.sleep(600)" in command]
    started = time.monotonic()
    outputs.close(within_s=1)
    assert time.monotonic() - started < 5
    assert not [command for command in snapshot(os.environ[RUN_MARKER], prefix=True).values()
                if "time.sleep(600)" in command]

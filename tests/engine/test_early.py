"""Slots launched before the grader's imports (autograder/early.py): when they are launched,
and that a run's grading processes really grade in them."""
import multiprocessing
import os
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from autograder.executors.early import launch_early
from autograder.executors.runmarker import RUN_MARKER

from ..processes import left_after, parent, snapshot

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples" / "attention_scoring"
pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None or os.geteuid() != 0,
                                reason="the sandbox needs root and bubblewrap")


@pytest.mark.parametrize("why, kwargs", [
    ("a GPU run", {"device": "cuda"}),
    ("an assignment grader.yml does not have", {"assignment": "nope"}),
    ("a PATH that does not exist", {"paths": [Path("/nonexistent")]}),
    ("no notebook", {"paths": [REPO / "docs"]}),
    ("a grader.yml that is no YAML", {"config": REPO / "README.md"}),
])
def test_nothing_is_launched_where_the_run_is_not_clear_yet(why, kwargs):
    """Left to prepare(), which says what is wrong: is nothing launched for these?"""
    args = {"paths": [EXAMPLES], "assignment": "attention_scoring", "jobs": 2, "config": None, "device": None,
            "students": []} | kwargs
    assert launch_early(**args) is None, why


def test_one_slot_per_notebook_up_to_jobs():
    early = launch_early([EXAMPLES / "correct.ipynb"], "attention_scoring", 2, None, "cpu", [])
    try:
        assert len(early.sandboxes) == 1
    finally:
        early.close()
    early = launch_early([EXAMPLES], "attention_scoring", 2, None, "cpu", [])
    try:
        assert len(early.sandboxes) == 2 and early.sandboxes[0].uid != early.sandboxes[1].uid
    finally:
        early.close()


def zygote_launcher(line: str) -> bool:
    """The bubblewrap that starts a slot's zygote (not its own child in the namespace, which
    has the same command line, nor the one-off bubblewrap of the sandbox's preflight)."""
    words = line.split()
    return bool(words) and Path(words[0]).name == "bwrap" and "--die-with-parent" in words


def test_a_run_grades_in_the_slots_it_launched_before_its_imports(tmp_path):
    """Is every bubblewrap of a run the grader's own child (launched early, adopted by the
    grading processes, and kept for each one's next notebook: a slot whose zygote's state
    changed on adoption would be replaced by its grading process), and does the run still
    grade right and leave nothing?"""
    marker = f"{os.environ.get(RUN_MARKER, 'tests')}-early-{uuid.uuid4().hex[:8]}"
    for name in ("correct", "buggy"):  # two notebooks for each of the two slots
        for copy in (name, f"{name}_again"):
            shutil.copy(EXAMPLES / f"{name}.ipynb", tmp_path / f"{copy}.ipynb")
    command = [sys.executable, "-m", "autograder.cli", "grade", str(tmp_path), "--assignment", "attention_scoring",
               "--output", str(tmp_path / "out"), "--jobs", "2"]
    grader = subprocess.Popen(command, env={**os.environ, RUN_MARKER: marker}, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True)
    parents, seen, deadline = {}, {}, time.monotonic() + 300
    while grader.poll() is None and time.monotonic() < deadline:
        now = snapshot(marker)
        seen |= now
        for (pid, _), line in now.items():  # the parent first seen: at the end an inner bubblewrap
            if zygote_launcher(line):        # outliving its outer one for a moment is reparented to init
                parents.setdefault(pid, parent(pid))
        time.sleep(0.05)
    bubblewraps = set(parents.items())
    assert grader.wait(timeout=300) == 0, grader.stderr.read()[-3000:]
    launchers = {(pid, ppid) for pid, ppid in bubblewraps if ppid not in {p for p, _ in bubblewraps}}
    assert len(launchers) == 2 and all(ppid == grader.pid for _, ppid in launchers), bubblewraps
    assert left_after(marker, seen) == {}
    assert '"score": 13.0' in (tmp_path / "out" / "correct.json").read_text()


def test_an_adopted_slot_is_ended_at_once_by_the_process_that_adopted_it():
    """A grading process closing its adopted slot (at its exit): is bubblewrap killed, and at
    once? It is the launcher's child, not this process's, so waiting on it finds nothing;
    a single notebook's run once waited seconds for a slot that was never signalled."""
    early = launch_early([EXAMPLES / "correct.ipynb"], "attention_scoring", 1, None, "cpu", [])
    sandbox = early.sandboxes[0]
    launched = sandbox._process.pid
    context = multiprocessing.get_context("fork")
    took = context.SimpleQueue()

    def adopt_and_close():
        sandbox.adopt()
        start = time.monotonic()
        sandbox.close()
        took.put(time.monotonic() - start)
    try:
        grading = context.Process(target=adopt_and_close)
        grading.start()
        grading.join(timeout=120)
        state = Path(f"/proc/{launched}/stat").read_text().rsplit(")", 1)[1].split()[0]
        assert state == "Z", f"bubblewrap is still {state} after the adopting process closed its slot"
        assert took.get() < 2.0
    finally:
        early.close()


def test_slots_closed_right_after_their_launch_leave_nothing(monkeypatch):
    """A usage error closes the slots launched a moment before: does their namespace die with
    them even before its PID 1 has asked to die with its parent? (Killed alone, about one
    bubblewrap in 50 outlived it, and the test session's end found it.)"""
    marker = f"{os.environ.get(RUN_MARKER, 'tests')}-closed-at-once-{uuid.uuid4().hex[:8]}"
    monkeypatch.setenv(RUN_MARKER, marker)
    for _ in range(40):
        launch_early([EXAMPLES], "attention_scoring", 2, None, "cpu", []).close()
    deadline = time.monotonic() + 5
    while snapshot(marker) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert snapshot(marker) == {}

"""A stopped grader leaves nothing running and keeps what it finished (issue 15).

Each test starts a real ``autograder grade --jobs 2`` on a batch of example notebooks,
waits until it has written a result and both sandboxes are up, signals it as a TA would
(Ctrl-C: SIGINT to the process group; ``kill``: SIGTERM; ``kill -9``), and then looks for
the run's processes by its run marker (tests/processes.py), never by name.
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from autograder.executors.runmarker import RUN_MARKER, marker_of
from tests.processes import left_after, parent, snapshot

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples" / "attention_scoring"
BATCH = 8             # long enough that a stop lands mid-batch, short enough to grade whole
STOPPED_WITHIN_S = 10  # "a couple of seconds"; about 1 s measured on a busy 2-core machine
GONE_WITHIN_S = 5
pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed")


@pytest.fixture(scope="module")
def batch(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("batch")
    for i in range(BATCH):
        shutil.copy(EXAMPLES / f"{('correct', 'buggy', 'untouched')[i % 3]}.ipynb", folder / f"s{i}.ipynb")
    return folder


@pytest.fixture(scope="module")
def whole(batch, tmp_path_factory) -> dict[str, dict]:
    """The uninterrupted run's results."""
    out = tmp_path_factory.mktemp("whole")
    run = subprocess.run(command(batch, out), capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stderr[-3000:]
    return results(out)


def command(batch: Path, out: Path) -> list[str]:
    return [sys.executable, "-m", "autograder.cli", "grade", str(batch), "--assignment",
            "attention_scoring", "--jobs", "2", "--output", str(out)]


def results(out: Path) -> dict[str, dict]:
    """Every result present, parsed: a result that is there is complete."""
    return {path.stem: json.loads(path.read_text()) for path in sorted(out.glob("s*.json"))}


def new_marker(name: str) -> str:
    """Under the session's marker, so that the suite's last check would see it too."""
    return f"{os.environ.get(RUN_MARKER, 'tests')}-{name}-{uuid.uuid4().hex[:8]}"


def start(batch: Path, out: Path, marker: str | None, log: Path) -> subprocess.Popen:
    """The grader in a session and process group of its own, as a terminal starts it."""
    env = {k: v for k, v in os.environ.items() if k != RUN_MARKER}
    if marker is not None:
        env[RUN_MARKER] = marker
    with log.open("w") as output:  # the summary goes to stdout, errors to stderr: the log keeps both
        return subprocess.Popen(command(batch, out), env=env, start_new_session=True,
                                stdout=output, stderr=subprocess.STDOUT)


def wait_mid_batch(grader: subprocess.Popen, out: Path, marker: str) -> dict:
    """Until the run has written a result and both zygotes are up (the unmarked children of
    marked processes: bubblewrap clears their environment); returns its processes then."""
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        assert grader.poll() is None, "the grader ended before it could be stopped"
        seen = snapshot(marker)
        zygotes = [pid for pid, _ in seen if marker_of(pid) is None and marker_of(parent(pid)) == marker]
        if len(zygotes) >= 2 and list(out.glob("s*.json")):
            return seen
        time.sleep(0.1)
    pytest.fail("no result and two sandboxes within 600 s")


def mtimes(out: Path) -> dict[str, int]:
    return {path.stem: path.stat().st_mtime_ns for path in out.glob("s*.json")}


@pytest.mark.parametrize("signum, to_group", [(signal.SIGINT, True), (signal.SIGTERM, False)],
                         ids=["ctrl-c to the process group", "sigterm to the grader"])
def test_a_stopped_batch_ends_its_processes_keeps_results_and_resumes(batch, whole, tmp_path, signum, to_group):
    """Does Ctrl-C (SIGINT to the grader's process group) or ``kill`` (SIGTERM) stop the batch
    within seconds, with 128 + the signal, leave no process of the run within 5 s, keep every
    finished result intact, say how to resume, and does the same command then finish the
    batch, grading only what was missing, with the uninterrupted run's results?"""
    out, marker, log = tmp_path / "out", new_marker("stop"), tmp_path / "log.txt"
    grader = start(batch, out, marker, log)
    seen = wait_mid_batch(grader, out, marker)
    sent = time.monotonic()
    (os.killpg if to_group else os.kill)(grader.pid, signum)
    status = grader.wait(timeout=120)
    took = time.monotonic() - sent
    left = left_after(marker, seen, GONE_WITHIN_S)
    assert left == {}, f"left running after {signal.Signals(signum).name}: {left}"
    assert status == 128 + signum, log.read_text()[-3000:]
    assert took < STOPPED_WITHIN_S, f"the grader took {took:.1f} s to stop"

    kept = results(out)
    assert 0 < len(kept) < BATCH, "it stopped mid-batch, not after grading on"
    assert {sid: whole[sid] for sid in kept} == kept
    said = log.read_text()
    assert f"stopped by {signal.Signals(signum).name}" in said and "run the same command again" in said, said

    before = mtimes(out)
    again = subprocess.run(command(batch, out), capture_output=True, text=True, timeout=900,
                           env={**os.environ, RUN_MARKER: new_marker("resume")})
    assert again.returncode == 0, again.stderr[-3000:]
    assert results(out) == whole
    assert {sid: mtimes(out)[sid] for sid in before} == before, "a kept result was graded again"
    assert not list(out.glob(".*.tmp"))


def test_a_killed_grader_leaves_nothing_and_marks_its_processes_itself(batch, tmp_path):
    """Started without a run marker, does the grader carry one of its own that its grading
    processes inherit, and after ``kill -9`` of the grader alone, is every process of the run
    (grading processes, bubblewrap, zygotes) gone within 5 s?"""
    out, log = tmp_path / "out", tmp_path / "stderr.txt"
    grader = start(batch, out, None, log)
    deadline = time.monotonic() + 60
    while (marker := marker_of(grader.pid)) is None and time.monotonic() < deadline:
        time.sleep(0.05)  # it executes itself again, with a marker
    assert marker, "the grader runs without a run marker"
    seen = wait_mid_batch(grader, out, marker)
    workers = [pid for pid, _ in seen if parent(pid) == grader.pid]
    assert len(workers) >= 2 and all(marker_of(pid) == marker for pid in workers), seen
    grader.kill()
    grader.wait(timeout=60)
    left = left_after(marker, seen, GONE_WITHIN_S)
    assert left == {}, f"left running after kill -9: {left}"


def test_a_regrade_stopped_midway_lists_the_whole_class(batch, tmp_path):
    """Red team 3 and a TA's trial: Ctrl-C during a --force regrade rewrote grades.csv with the
    students regraded so far (24 became 4). Does grades.csv still hold every student, the ones
    not reached with their earlier results, and does the summary say to resume without --force?"""
    out, log = tmp_path / "out", tmp_path / "log.txt"
    first = subprocess.run(command(batch, out), capture_output=True, text=True, timeout=900)
    assert first.returncode == 0, first.stderr[-3000:]
    with (out / "grades.csv").open() as handle:
        before = handle.read().splitlines()
    stamps, marker = mtimes(out), new_marker("regrade")
    env = {**{k: v for k, v in os.environ.items() if k != RUN_MARKER}, RUN_MARKER: marker}
    with log.open("w") as output:
        grader = subprocess.Popen([*command(batch, out), "--force"], env=env, start_new_session=True,
                                  stdout=output, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 600
    while mtimes(out) == stamps and time.monotonic() < deadline and grader.poll() is None:
        time.sleep(0.05)
    os.killpg(grader.pid, signal.SIGINT)
    assert grader.wait(timeout=120) == 128 + signal.SIGINT, log.read_text()[-3000:]
    regraded = {sid for sid, stamp in mtimes(out).items() if stamp != stamps[sid]}
    assert 0 < len(regraded) < BATCH, "it stopped mid-batch"
    with (out / "grades.csv").open() as handle:
        assert handle.read().splitlines() == before  # the same notebooks: the same rows, all of them
    said = " ".join(log.read_text().split())
    assert "run the same command again without --force" in said, said
    assert f"{BATCH - len(regraded)} more results in the folder, from earlier runs" in said, said

"""Grading on a Ray cluster (`--executor ray`, issue 14): a head and a worker node started
here, on loopback addresses, each a process group of its own that the test kills itself.

Ray rewrites 127.0.0.1 to the host's outward address, so the head uses 127.0.0.2 and the
worker 127.0.0.3 (loopback too), each with a temp folder of its own, as on two hosts: the
driver attaches to the raylet whose address the session folder names, which must be the
head's (a driver attached to the worker dies with it, and so does every slot it owns). Every Ray
process carries a run marker under the session's (tests/conftest.py), so the session's
last check also finds any Ray process the tests left.
"""
import contextlib
import json
import os
import pickle
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import pytest

from autograder.course import Course
from autograder.executors.ray_nodes import code_digest
from autograder.run import Options, prepare
from autograder.executors.runmarker import RUN_MARKER, processes_of
from tests.processes import left_after, snapshot

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples" / "attention_scoring"
RAY = Path(sys.executable).parent / "ray"
LOOPBACK, WORKER_LOOPBACK = "127.0.0.2", "127.0.0.3"
NODE_OPTIONS = ["--num-cpus", "1", "--object-store-memory", str(100 << 20), "--include-log-monitor", "false",
                "--disable-usage-stats"]

needs_ray = pytest.mark.skipif(not RAY.exists(), reason="Ray is not installed (pip install -e '.[ray]')")
needs_bwrap = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed")


def on_cluster(test):
    """A test that starts Ray nodes and grades on them: slow, needs Ray and bubblewrap."""
    return pytest.mark.slow(needs_ray(needs_bwrap(test)))


class RayNode:
    """One `ray start` node: its daemons stay in the process group `ray start` led."""

    def __init__(self, *args: str):
        self.temp_dir = tempfile.mkdtemp(prefix="agray")  # short: Ray's socket paths must fit in 107 bytes
        self.marker = f"{os.environ[RUN_MARKER]}-ray-{uuid.uuid4().hex[:6]}"
        # Ray's memory monitor off: it counts the whole machine's memory, others' processes too
        env = {**os.environ, RUN_MARKER: self.marker, "RAY_USAGE_STATS_ENABLED": "0",
               "RAY_memory_monitor_refresh_ms": "0"}
        started = time.monotonic()
        start = subprocess.Popen([str(RAY), "start", *args, *NODE_OPTIONS, "--temp-dir", self.temp_dir], env=env,
                                 stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                 start_new_session=True)
        self.group = start.pid
        output, _ = start.communicate(timeout=300)
        self.start_s = time.monotonic() - started
        self.seen = snapshot(self.marker)
        if start.returncode != 0:
            self.kill()
            pytest.fail(f"ray start failed:\n{output[-3000:]}")

    def grading_now(self) -> bool:
        """Is a slot on this node inside a grade() call (Ray titles the actor's process so)?"""
        return any("ray::Slot.grade" in command for command in processes_of(self.marker).values())

    def kill(self) -> dict:
        """SIGKILL the node's process group; returns what of it was still running 30 s later."""
        seen = {**self.seen, **snapshot(self.marker)}
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.group, signal.SIGKILL)
        left = left_after(self.marker, seen, within_s=30)
        shutil.rmtree(self.temp_dir, ignore_errors=True)
        return left


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind((LOOPBACK, 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="module")
def head():
    port = free_port()
    node = RayNode("--head", "--port", str(port), "--node-ip-address", LOOPBACK,
                   "--include-dashboard", "false", "--no-monitor")
    node.address = f"{LOOPBACK}:{port}"
    yield node
    assert node.kill() == {}, "processes of the head node outlived it"


@pytest.fixture
def worker(head):
    node = RayNode("--address", head.address, "--node-ip-address", WORKER_LOOPBACK)
    yield node
    assert node.kill() == {}, "processes of the worker node outlived it"


def grade(*args: str, stderr=None) -> subprocess.CompletedProcess:
    command = [sys.executable, "-c", "from autograder.cli import main; main()", "grade", *args]
    return subprocess.run(command, stdout=subprocess.PIPE, stderr=stderr or subprocess.PIPE, text=True,
                          timeout=900)


def graded(out: Path, student: str) -> dict:
    """A result without what may differ between runs: the time it took, the student id and the
    file name it was graded from."""
    result = json.loads((out / f"{student}.json").read_text())
    result.pop("timing", None)
    result.pop("student_id")
    result.pop("notebook")
    return result


@pytest.fixture(scope="module")
def local_results(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("local")
    run = grade(str(EXAMPLES), "--assignment", "attention_scoring", "--output", str(out), "--jobs", "2")
    assert run.returncode == 0, run.stderr[-3000:]
    return out


@needs_ray
def test_usage_errors_are_said_before_grading(tmp_path):
    """Do an unknown executor, an address without Ray, and an address nothing answers on
    each give exit 2 and one line, before anything is graded?"""
    common = [str(EXAMPLES / "correct.ipynb"), "--assignment", "attention_scoring", "--output", str(tmp_path)]
    cases = {("--executor", "dask"): "--executor dask: use local",
             ("--address", f"{LOOPBACK}:1"): "only a Ray cluster has an address",
             ("--executor", "ray", "--address", f"{LOOPBACK}:{free_port()}"): "no Ray cluster answers there"}
    for args, expected in cases.items():
        run = grade(*common, *args)
        assert run.returncode == 2, (args, run.stderr)
        assert expected in run.stderr and run.stderr.count("error:") == 1, run.stderr
    assert not list(tmp_path.glob("*.json"))


def test_batch_crosses_to_a_node_intact():
    """Does the Batch a slot receives (pickled) keep the source, settings and fingerprint?"""
    run = prepare(Options([EXAMPLES / "correct.ipynb"], "attention_scoring", Path(tempfile.mkdtemp())))
    copy = pickle.loads(pickle.dumps(run.batch))
    assert copy.fingerprint_base == run.batch.fingerprint_base
    assert copy.source == run.batch.source and copy.settings == run.batch.settings
    assert copy.fingerprint(b"{}") == run.batch.fingerprint(b"{}")


def test_a_node_with_other_helpers_is_told_apart(tmp_path):
    """Does the code digest a slot compares with the driver's change when the assignment's
    helper package differs (a node whose checkout was not released again)?"""
    root = tmp_path / "course"
    for folder in ("autograder", "reference"):
        shutil.copytree(REPO / folder, root / folder, ignore=shutil.ignore_patterns("__pycache__"))
    helpers = REPO / "assignments" / "attention_scoring" / "d2l_attention"
    shutil.copytree(helpers, root / "assignments" / "attention_scoring" / "d2l_attention",
                    ignore=shutil.ignore_patterns("__pycache__"))
    course = Course(root)
    before = code_digest(course, "attention_scoring")
    assert before == code_digest(Course(root), "attention_scoring")
    (root / "assignments" / "attention_scoring" / "d2l_attention" / "__init__.py").write_text("# changed\n")
    assert code_digest(course, "attention_scoring") != before


@on_cluster
def test_cluster_grades_exactly_like_the_local_pool(head, worker, local_results, tmp_path):
    """Does `--executor ray` on a head and a worker node give every example notebook the
    same result as the local pool (scores, checks, messages, errors, fingerprints)?"""
    started = time.monotonic()
    scratch_before = set(Path(tempfile.gettempdir()).glob("autograder-ray-*"))
    run = grade(str(EXAMPLES), "--assignment", "attention_scoring", "--output", str(tmp_path),
                "--executor", "ray", "--address", head.address)
    print(f"ray start: head {head.start_s:.1f} s, worker {worker.start_s:.1f} s; "
          f"graded 4 notebooks on the cluster in {time.monotonic() - started:.1f} s")
    assert run.returncode == 0, run.stderr[-3000:]
    for student in ("correct", "buggy", "hostile", "untouched"):
        assert graded(tmp_path, student) == graded(local_results, student), student
    assert set(Path(tempfile.gettempdir()).glob("autograder-ray-*")) <= scratch_before  # each slot cleans up


@on_cluster
def test_cluster_without_a_gpu_refuses_cuda(head, tmp_path):
    """Is `--device cuda` on a cluster without GPUs a usage error (exit 2), whatever this machine has?"""
    run = grade(str(EXAMPLES / "correct.ipynb"), "--assignment", "attention_scoring", "--output", str(tmp_path),
                "--executor", "ray", "--address", head.address, "--device", "cuda")
    assert run.returncode == 2 and "has no GPU" in run.stderr, run.stderr[-2000:]


@on_cluster
def test_a_worker_node_killed_mid_batch_costs_a_regrade_only(head, worker, local_results, tmp_path):
    """When the worker node dies while one of its slots grades, is that submission graded
    again on the head, does the batch finish with the local pool's grades, and does the
    same command then reuse every result?"""
    submitted = tmp_path / "submitted"
    submitted.mkdir()
    kinds = {f"s{i}": ("correct", "buggy")[i % 2] for i in range(8)}
    for student, kind in kinds.items():
        shutil.copy(EXAMPLES / f"{kind}.ipynb", submitted / f"{student}.ipynb")
    out, log = tmp_path / "out", tmp_path / "driver.log"
    command = [sys.executable, "-c", "from autograder.cli import main; main()", "grade", str(submitted),
               "--assignment", "attention_scoring", "--output", str(out),
               "--executor", "ray", "--address", head.address]
    with log.open("w") as stderr:
        driver = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=stderr, text=True)
        try:
            _wait_for(worker.grading_now, driver, within_s=600)
            assert worker.kill() == {}, "processes of the killed node outlived it"
            assert driver.wait(timeout=900) == 0, log.read_text()[-3000:]
        finally:
            if driver.poll() is None:
                driver.kill()
                driver.wait()
    assert "grading it again" in log.read_text(), log.read_text()[-3000:]
    for student, kind in kinds.items():
        assert graded(out, student) == graded(local_results, kind), student

    again = grade(str(submitted), "--assignment", "attention_scoring", "--output", str(out),
                  "--executor", "ray", "--address", head.address)
    assert again.returncode == 0 and "8 unchanged and reused" in again.stdout, again.stdout[-2000:] + again.stderr[-2000:]


def _wait_for(condition, driver: subprocess.Popen, within_s: float) -> None:
    deadline = time.monotonic() + within_s
    while not condition():
        assert driver.poll() is None, "the batch ended before the worker node graded anything"
        assert time.monotonic() < deadline, "the worker node's slot never graded"
        time.sleep(0.05)

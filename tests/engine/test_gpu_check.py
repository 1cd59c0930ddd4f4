"""The GPU check (scripts/gpu_check.sh) in its CPU self-test, so that it cannot rot before
the next session with a GPU runs it once (issue 14); and what it carries there."""
import json
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "scripts"))
import gpu_check_report as report  # noqa: E402 - the scripts folder is not a package
import gpu_check_wheels as wheels  # noqa: E402

from tests.notebooks.cells import ASSIGNMENTS, grader_tasks  # noqa: E402


def autograded() -> list[tuple[str, str]]:
    return [(a, task) for a in ASSIGNMENTS for task, checks in grader_tasks(a).items() if "manual" not in checks]


def probe_wheel(folder: Path) -> None:
    """A one-module wheel and its requirements.txt: the install step runs as on the GPU machine."""
    folder.mkdir()
    with zipfile.ZipFile(folder / "gpu_check_probe-1.0-py3-none-any.whl", "w") as wheel:
        wheel.writestr("gpu_check_probe.py", "CARRIED = True\n")
        wheel.writestr("gpu_check_probe-1.0.dist-info/METADATA",
                       "Metadata-Version: 2.1\nName: gpu-check-probe\nVersion: 1.0\n")
        wheel.writestr("gpu_check_probe-1.0.dist-info/WHEEL",
                       "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
        wheel.writestr("gpu_check_probe-1.0.dist-info/RECORD", "")
    (folder / "requirements.txt").write_text("gpu-check-probe==1.0\n")


@pytest.fixture(scope="module")
def self_test(tmp_path_factory):
    """One run of ``gpu_check.sh --device cpu --quick`` from this venv's python (itself a
    venv, as the GPU machine's python3 is), with a carried wheel to install."""
    if shutil.which("bwrap") is None:
        pytest.skip("bubblewrap is not installed")
    root = tmp_path_factory.mktemp("gpu_check")
    probe_wheel(root / "wheels")
    env = {"PATH": "/usr/bin:/bin", "PYTHON": sys.executable, "WHEELS": str(root / "wheels"),
           "OUT": str(root / "out"), "HOME": str(root)}
    done = subprocess.run(["bash", str(REPO / "scripts" / "gpu_check.sh"), "--device", "cpu", "--quick"],
                          env=env, capture_output=True, text=True, timeout=1800)
    return done, root / "out"


@pytest.mark.slow
def test_cpu_self_test_names_every_task_and_finds_no_difference(self_test):
    """Does the self-test pass, and does its table name every autograded task, with none differing?"""
    done, out = self_test
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    summary = (out / "summary.md").read_text()
    assert "RESULT: PASS" in summary
    for assignment, task in autograded():
        rows = [line for line in summary.splitlines() if line.startswith(f"| {assignment} | {task} |")]
        assert len(rows) == 2, f"{task}: expected a row in both comparisons\n{summary}"
        assert all(row.endswith("| 0 |") for row in rows), rows
    assert "No task's score differs." in summary


@pytest.mark.slow
def test_self_test_installs_the_carried_wheels_and_compares_two_separate_runs(self_test):
    """Were the wheels installed, and do both runs' own result files exist for every student?"""
    done, out = self_test
    assert "installing 1 wheels" in (out / "setup.log").read_text()
    with tarfile.open(out / "results.tar.gz") as archive:
        names = set(archive.getnames())
    for assignment in ASSIGNMENTS:
        for run in ("cpu", "cpu_again"):
            assert f"results/{run}/{assignment}/00-example-correct.json" in names, sorted(names)[:20]
    rows = (out / "scores.csv").read_text().splitlines()
    assert rows[0] == "assignment,student,task,cpu,cpu again,same"
    assert len(rows) > 1 and all(row.endswith(",True") for row in rows[1:])


def write_result(folder: Path, student: str, scores: dict) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    tasks = [{"id": task, "score": score, "max_score": 3.0, "checks": []} for task, score in scores.items()]
    (folder / f"{student}.json").write_text(json.dumps({"student_id": student, "tasks": tasks, "errors": []}))


def test_comparison_reports_a_differing_score_and_a_missing_result(tmp_path):
    """Would a score that differs between devices, or a result missing on one, be caught?"""
    write_result(tmp_path / "cuda", "s1", {"masked_softmax": 3.0, "cost_analysis": None})
    write_result(tmp_path / "cpu", "s1", {"masked_softmax": 2.5, "cost_analysis": None})
    write_result(tmp_path / "cuda", "s2", {"masked_softmax": 3.0})
    rows = report.compare("attention_scoring", ["s1", "s2"], report.read_run(tmp_path / "cuda"),
                          report.read_run(tmp_path / "cpu"), ["masked_softmax"])
    assert [(r.student, r.same) for r in rows] == [("s1", False), ("s2", False)]
    table = "\n".join(report.difference_table(rows, ("cuda", "cpu")))
    assert "| attention_scoring | s1 | masked_softmax | 3 | 2.5 |" in table
    assert "| attention_scoring | s2 | masked_softmax | 3 | no result |" in table


def test_carried_wheels_cover_what_the_grader_imports():
    """Is every distribution that a GPU run imports carried in wheels/, on that machine, or an
    optional import, and is nothing carried that no run imports?"""
    script = ("import json, sys; sys.path.insert(0, 'scripts'); import gpu_check_wheels as w; "
              "print(json.dumps(sorted(w.imported_distributions())))")
    done = subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    imported = set(json.loads(done.stdout.splitlines()[-1]))
    where = "scripts/gpu_check_wheels.py (CARRIED, FROM_MACHINE or OPTIONAL), then make wheels"
    unlisted = imported - set(wheels.CARRIED) - set(wheels.FROM_MACHINE) - set(wheels.OPTIONAL)
    assert not unlisted, f"imported but not listed: {sorted(unlisted)}; add them to {where}"
    unused = set(wheels.CARRIED) - imported
    assert not unused, f"carried but imported by nothing: {sorted(unused)}; drop them from {where}"
    assert not set(wheels.CARRIED) & set(wheels.FROM_MACHINE)

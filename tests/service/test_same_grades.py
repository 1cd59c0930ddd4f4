"""The service grades as the batch does (SPEC §5): the same notebooks get the same score per
task from ``autograder serve`` as from ``autograder grade``."""
import json
import subprocess
import sys

from .server import EXAMPLES, notebook

NAMES = ["correct", "buggy", "untouched", "hostile"]


def task_scores(result: dict) -> dict:
    return {task["id"]: task["score"] for task in result["tasks"]}


def test_the_service_gives_the_batchs_score_per_task(server, tmp_path):
    """Are the example notebooks' per-task scores, seeds and errors' codes the same through the
    service as through ``autograder grade`` on the same files?"""
    ids = {name: server.submit(f"s{20 + i}", notebook(name)).json()["id"] for i, name in enumerate(NAMES)}
    batch = subprocess.run([sys.executable, "-m", "autograder.cli", "grade", str(EXAMPLES / "attention_scoring"),
                            "--assignment", "attention_scoring", "--output", str(tmp_path / "batch")],
                           capture_output=True, text=True, timeout=900)
    assert batch.returncode == 0, batch.stderr[-3000:]
    for i, name in enumerate(NAMES):
        served = server.wait_done(f"s{20 + i}", ids[name])["result"]
        graded = json.loads((tmp_path / "batch" / f"{name}.json").read_text())
        assert task_scores(served) == task_scores(graded), name
        assert served["seed"] == graded["seed"]
        assert [e["code"] for e in served["errors"]] == [e["code"] for e in graded["errors"]], name

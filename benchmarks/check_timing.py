"""Seconds per task and per check when grading a correct submission, in-process, and seconds
per submission of `autograder grade` on a batch.

In-process is the nbgrader path's cost without the sandbox: the reference's own code is graded
with the grader's config and seeds (every check runs, nothing fails). ``--batch N`` grades N
copies of each assignment's bundled correct and buggy notebooks with ``--jobs 2`` and prints the
wall seconds per submission (start-up included, divided by N). Not a test: run it by hand and
say what else was running on the machine.

    .venv/bin/python benchmarks/check_timing.py [--repeat N] [--batch N]
"""
import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import torch

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "student_template" / "bahdanau"))

import reference  # noqa: E402
from autograder.config import load_config  # noqa: E402
from autograder.grading.task import RunSettings, grade_task  # noqa: E402
from autograder.sandbox.client import local_student  # noqa: E402
from autograder.sandbox.runner import Runner  # noqa: E402


def time_tasks(repeat: int) -> dict[str, dict[str, float]]:
    """Median seconds of each check of each task (and of the task), on the reference."""
    torch.set_num_threads(1)
    config = load_config()
    seconds: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for assignment in config.assignments:
        settings = RunSettings.resolve(config, assignment, device="cpu")
        for task_id in settings.autograded:
            for _ in range(repeat):
                runner = Runner()
                runner.use_namespace({name: getattr(reference, name) for name in reference.__all__})
                started = time.perf_counter()
                result = grade_task(local_student(runner), settings, task_id).result
                seconds[task_id]["(task)"].append(time.perf_counter() - started)
                for check in result.checks:
                    seconds[task_id][check.name].append(check.seconds)
                assert result.score == result.max_score, (task_id, [c.name for c in result.checks if not c.passed])
    return {t: {c: statistics.median(v) for c, v in checks.items()} for t, checks in seconds.items()}


def time_batch(count: int) -> dict[str, float]:
    """Wall seconds per submission of `autograder grade --jobs 2` on ``count`` notebooks."""
    out = {}
    for assignment in ("attention_scoring", "bahdanau"):
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp) / "submissions"
            folder.mkdir()
            for i in range(count):
                example = ("correct", "buggy")[i % 2]
                shutil.copy(REPO / "examples" / assignment / f"{example}.ipynb", folder / f"s{i:03d}.ipynb")
            started = time.perf_counter()
            subprocess.run([sys.executable, "-c", "from autograder.cli import main; main()", "grade", str(folder),
                            "--assignment", assignment, "--output", str(Path(tmp) / "out"), "--jobs", "2",
                            "--force"], check=True, capture_output=True, cwd=REPO)
            out[assignment] = (time.perf_counter() - started) / count
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--batch", type=int, default=0, help="also time `autograder grade` on N notebooks")
    args = parser.parse_args()
    totals: dict[str, float] = defaultdict(float)
    for task_id, checks in time_tasks(args.repeat).items():
        print(f"{task_id}: {checks.pop('(task)'):.2f} s")
        for name, value in checks.items():
            print(f"    {value:6.3f} s  {name}")
        totals["bahdanau" if "decoder" in task_id else "attention_scoring"] += sum(checks.values())
    for assignment, value in totals.items():
        print(f"checks of one {assignment} submission (in-process): {value:.2f} s")
    if args.batch:
        for assignment, value in time_batch(args.batch).items():
            print(f"autograder grade --jobs 2, {args.batch} {assignment} notebooks: {value:.2f} s per submission")


if __name__ == "__main__":
    main()

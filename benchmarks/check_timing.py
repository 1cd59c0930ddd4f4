"""Seconds per task and per check family when grading a correct submission, in-process.

The nbgrader path's cost without the sandbox: the reference's own code is graded with the
grader's config and seeds (every check runs, nothing fails). Also times ``autograder grade``
on the bundled correct notebooks when ``--cli`` is given. Not a test: run it by hand and
say what else was running on the machine.

    .venv/bin/python benchmarks/check_timing.py [--repeat N] [--cli]
"""
import argparse
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
from autograder.grading import RunSettings, grade_task  # noqa: E402
from autograder.sandbox.proxy import local_student  # noqa: E402
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


def time_cli() -> dict[str, float]:
    """Wall seconds of `autograder grade --jobs 1` on each assignment's correct example."""
    out = {}
    for assignment in ("attention_scoring", "bahdanau"):
        with tempfile.TemporaryDirectory() as tmp:
            started = time.perf_counter()
            subprocess.run([str(REPO / ".venv" / "bin" / "autograder"), "grade",
                            str(REPO / "examples" / assignment / "correct.ipynb"), "--assignment", assignment,
                            "--output", tmp, "--jobs", "1", "--force"], check=True, capture_output=True)
            out[assignment] = time.perf_counter() - started
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--cli", action="store_true", help="also time `autograder grade` on examples/")
    args = parser.parse_args()
    totals: dict[str, float] = defaultdict(float)
    for task_id, checks in time_tasks(args.repeat).items():
        print(f"{task_id}: {checks.pop('(task)'):.2f} s")
        for name, value in checks.items():
            print(f"    {value:6.3f} s  {name}")
        totals["bahdanau" if "decoder" in task_id else "attention_scoring"] += sum(checks.values())
    for assignment, value in totals.items():
        print(f"checks of one {assignment} submission (in-process): {value:.2f} s")
    if args.cli:
        for assignment, value in time_cli().items():
            print(f"autograder grade --jobs 1, one {assignment} notebook (cold start included): {value:.1f} s")


if __name__ == "__main__":
    main()

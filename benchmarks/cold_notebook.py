"""One correct notebook, cold: `autograder grade` into a fresh results folder against real
`nbgrader autograde` of that one submission in a fresh course, wall seconds, the two
alternated ROUNDS times, medians and their ratio per assignment. Cold means nothing of an
earlier run is there: no results, no recorded hypothesis runs, no gradebook (the course's
`generate_assignment` is set-up, not timed). Not a test: run it by hand on an idle machine.

    .venv/bin/python benchmarks/cold_notebook.py [--rounds 3]
"""
import argparse
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

from grading_throughput import COURSE_CONFIG, REPO, run


def ours(assignment: str, scratch: Path) -> float:
    submitted = scratch / "submitted" / "s000" / assignment
    submitted.mkdir(parents=True)
    shutil.copy(REPO / "examples" / assignment / "correct.ipynb", submitted / f"{assignment}.ipynb")
    return run([sys.executable, "-m", "autograder.cli", "grade", str(scratch / "submitted"),
                "--assignment", assignment, "--output", str(scratch / "results")], scratch)


def theirs(assignment: str, root: Path) -> float:
    (root / "nbgrader_config.py").write_text(COURSE_CONFIG.format(repo=str(REPO), root=str(root)))
    shutil.copytree(REPO / "assignments", root / "source")
    submitted = root / "submitted" / "s000" / assignment
    submitted.mkdir(parents=True)
    shutil.copy(REPO / "examples" / assignment / "correct.ipynb", submitted / f"{assignment}.ipynb")
    run([sys.executable, "-m", "nbgrader", "generate_assignment", assignment], root)
    return run([sys.executable, "-m", "nbgrader", "autograde", assignment], root)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    for assignment in ("attention_scoring", "bahdanau"):
        times: dict[str, list[float]] = {"autograder": [], "nbgrader": []}
        for _ in range(args.rounds):
            for name, grade in (("autograder", ours), ("nbgrader", theirs)):
                scratch = Path(tempfile.mkdtemp(prefix="cold-"))
                try:
                    times[name].append(grade(assignment, scratch))
                finally:
                    shutil.rmtree(scratch)
        mine, nbgrader = (statistics.median(times[k]) for k in ("autograder", "nbgrader"))
        print(f"{assignment}: one correct notebook cold, median of {args.rounds}: autograder {mine:.1f} s "
              f"({', '.join(f'{t:.1f}' for t in times['autograder'])}), nbgrader autograde {nbgrader:.1f} s "
              f"({', '.join(f'{t:.1f}' for t in times['nbgrader'])}), ratio {nbgrader / mine:.1f}x")


if __name__ == "__main__":
    main()

"""Seconds per submission: `autograder grade` vs real `nbgrader autograde`, same verdicts?

Generates COUNT submissions, half per assignment, as varied as a class (``--mix class``, the
default: each notebook holds another variant of the mutation suite, correct or with its own
bug, in its task's cell, the TA's solutions in the others, spread over every task; so each
failure is a new one, paying hypothesis's full search and shrinking) or cycling through the
four bundled notebooks (``--mix examples``: after the first few, every student replays a
recorded run). It grades them both ways, prints
per assignment the seconds per submission, the ratio, where the autograder's time went
(from its timing files: worker start and cells, each check family, the rest), and every
task whose score differs between the two paths, the goals, and the machine's load average
before and after. nbgrader grades a temporary nbgrader course
(only the notebook handed in; it copies the helpers from the source folder); the autograder
grades a copy of its submitted/ folder outside the course, so that the time is grading's
alone (recording into a gradebook is nbgrader's own code: about 1 s per submission, see
README). Not a test: run it by hand on an idle machine.

    .venv/bin/python benchmarks/grading_throughput.py [COUNT] [--jobs N] [--mix class|examples] [--ours-only]

``--ours-only`` grades with the autograder alone (a class of 1,000 takes nbgrader over two hours)
and prints the whole run's wall time beside the seconds per submission.
"""
import argparse
import itertools
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
COURSE_CONFIG = """\
c = get_config()
load_subconfig("nbgrader_config.py", path={repo!r})
c.CourseDirectory.root = {root!r}
c.CourseDirectory.source_directory = "source"
c.CourseDirectory.release_directory = "release"
c.CourseDirectory.db_url = "sqlite:///{root}/gradebook.db"
"""


def examples(assignment: str, into: Path) -> list[Path]:
    found = sorted((REPO / "examples" / assignment).glob("*.ipynb"))
    return [p for p in found if p.stem != "hostile"] + [
        REPO / "student_template" / assignment / f"{assignment}.ipynb"]


def class_of_variants(assignment: str, into: Path) -> list[Path]:
    """One notebook per mutation-suite variant of the assignment (the hostile, sandbox-only
    ones left out: a class is not a red team), in an order that takes each task in turn."""
    sys.path.insert(0, str(REPO))
    from tests.mutants.harness import ASSIGNMENT_OF
    from tests.mutants.report import ALL_MUTANTS
    from tests.mutants.test_sandboxed import submission
    mine = [m for m in ALL_MUTANTS if ASSIGNMENT_OF[m.task_id] == assignment and not m.sandbox_only]
    by_task: dict[str, list] = {}
    for mutant in mine:
        by_task.setdefault(mutant.task_id, []).append(mutant)
    ordered = [m for round_ in itertools.zip_longest(*by_task.values()) for m in round_ if m is not None]
    return [submission(mutant, into) for mutant in ordered]


MIXES = {"class": class_of_variants, "examples": examples}
GOALS = {"attention_scoring": 20, "bahdanau": 15}  # times real nbgrader autograde, at 40 per assignment


def lay_out(root: Path, count: int, mix: str) -> dict[str, list[str]]:
    """submitted/<student>/<assignment>/<assignment>.ipynb, the notebook alone."""
    students: dict[str, list[str]] = {}
    options = {a: MIXES[mix](a, root / "variants") for a in ("attention_scoring", "bahdanau")}
    for i in range(count):
        assignment = ("attention_scoring", "bahdanau")[i % 2]
        student = f"s{i:03d}"
        folder = root / "submitted" / student / assignment
        folder.mkdir(parents=True)
        chosen = options[assignment]
        shutil.copy(chosen[(i // 2) % len(chosen)], folder / f"{assignment}.ipynb")
        students.setdefault(assignment, []).append(student)
    return students


def run(command: list[str], cwd: Path) -> float:
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
    started = time.monotonic()
    subprocess.run(command, cwd=cwd, env=env, check=True, capture_output=True)
    return time.monotonic() - started


def nbgrader_scores(root: Path, assignment: str, students: list[str]) -> dict:
    from nbgrader.api import Gradebook
    with Gradebook(f"sqlite:///{root}/gradebook.db") as gradebook:
        return {(s, g.name.removesuffix("_tests")): g.auto_score
                for s in students
                for g in gradebook.find_submission_notebook(assignment, assignment, s).grades
                if g.name.endswith("_tests")}


def split(folder: Path) -> str:
    """Mean seconds per submission in each grading process, by phase and check family (the
    processes run side by side, so these add up to about jobs x the wall time); then how much
    of the checks' time was spent waiting on the worker (its work and the transport)."""
    phases: dict[str, float] = {}
    requests = waited = 0.0
    files = list((folder / "timing").glob("*.json"))
    for path in files:
        timing = json.loads(path.read_text())
        cells = timing["phases"].get("cells", 0.0)
        requests += timing["phases"].get("worker_requests", 0.0)
        waited += timing["phases"].get("worker_s", 0.0)
        checks = {}
        for task in timing["tasks"].values():
            for name, seconds in task["checks"].items():
                family = name.split(" with ")[0].split(" (")[0]
                checks[family] = checks.get(family, 0.0) + seconds
        rest = timing["phases"].get("total", 0.0) - cells - sum(checks.values())
        for key, value in [("worker start and cells", cells), *checks.items(), ("other", rest)]:
            phases[key] = phases.get(key, 0.0) + value
    n = max(len(files), 1)
    ranked = sorted(phases.items(), key=lambda kv: -kv[1])
    return ("time per submission: " + ", ".join(f"{k} {v / n:.3f} s" for k, v in ranked)
            + f"\n   of the checks' time, waiting on the worker (its work and the transport): {waited / n:.3f} s"
            f" over {requests / n:.0f} requests")


def theirs_and_differences(root: Path, assignment: str, names: list[str]) -> tuple[float, list]:
    """nbgrader autograde's seconds on the assignment, and every task score it gives otherwise."""
    run([sys.executable, "-m", "nbgrader", "generate_assignment", assignment, "--force"], root)
    seconds = run([sys.executable, "-m", "nbgrader", "autograde", assignment, "--force"], root)
    reference, differ = nbgrader_scores(root, assignment, names), []
    for student in names:
        result = json.loads((root / "results" / assignment / f"{student}.json").read_text())
        for task in result["tasks"]:
            theirs_score = reference.get((student, task["id"]))
            if task["score"] is not None and abs(task["score"] - (theirs_score or 0)) > 1e-9:
                differ.append((student, task["id"], task["score"], theirs_score))
    return seconds, differ


def report_ours(root: Path, students: dict, ours: dict, jobs: int) -> None:
    for assignment, names in students.items():
        print(f"{assignment}: {len(names)} submissions, autograder --jobs {jobs} {ours[assignment]:.1f} s, "
              f"{ours[assignment] / len(names):.3f} s per submission")
        print("   " + split(root / "results" / assignment))
    count = sum(len(names) for names in students.values())
    print(f"{count} submissions, both assignments: {sum(ours.values()):.1f} s wall ({sum(ours.values()) / 60:.1f} min)")


def report_both(root: Path, students: dict, ours: dict, theirs: dict, differ: list, jobs: int) -> None:
    for assignment, names in students.items():
        n = len(names)
        ratio = theirs[assignment] / ours[assignment]
        print(f"{assignment}: {n} submissions, autograder --jobs {jobs} {ours[assignment] / n:.3f} s, "
              f"nbgrader {theirs[assignment] / n:.3f} s per submission, "
              f"ratio {ratio:.1f}x (goal {GOALS[assignment]}x: {'met' if ratio >= GOALS[assignment] else 'not met'})")
        print("   " + split(root / "results" / assignment))
    n, total_ours, total_theirs = sum(len(v) for v in students.values()), sum(ours.values()), sum(theirs.values())
    print(f"{n} submissions, autograder --jobs {jobs}: {total_ours / n:.3f} s per submission")
    print(f"{n} submissions, nbgrader autograde (serial): {total_theirs / n:.3f} s per submission")
    print(f"ratio nbgrader / autograder: {total_theirs / total_ours:.1f}x")
    print(f"task scores that differ between the two paths: {len(differ)}")
    for row in differ:
        print("  ", *row)


def load() -> str:
    return ", ".join(f"{value:.2f}" for value in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("count", type=int, nargs="?", default=100)
    parser.add_argument("--jobs", type=int, default=os.cpu_count())
    parser.add_argument("--mix", choices=sorted(MIXES), default="class")
    parser.add_argument("--ours-only", action="store_true", help="skip nbgrader autograde")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="throughput-"))
    (root / "nbgrader_config.py").write_text(COURSE_CONFIG.format(repo=str(REPO), root=str(root)))
    shutil.copytree(REPO / "assignments", root / "source")
    students = lay_out(root, args.count, args.mix)
    shutil.copytree(root / "submitted", root / "plain" / "submitted")
    ours, theirs, differ = {}, {}, []
    print(f"load average before: {load()}")
    for assignment, names in students.items():
        ours[assignment] = run([sys.executable, "-m", "autograder.cli", "grade", str(root / "plain" / "submitted"),
                                "--assignment", assignment, "--output", str(root / "results" / assignment),
                                "--jobs", str(args.jobs), "--force"], root)
        if not args.ours_only:
            theirs[assignment], differing = theirs_and_differences(root, assignment, names)
            differ += differing
    print(f"load average after: {load()} (the runs use every core; before tells what else was running)")
    if args.ours_only:
        report_ours(root, students, ours, args.jobs)
    else:
        report_both(root, students, ours, theirs, differ, args.jobs)
    shutil.rmtree(root)


if __name__ == "__main__":
    main()

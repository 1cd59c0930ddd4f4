"""Seconds per submission: `autograder grade` vs real `nbgrader autograde`, same verdicts?

Generates COUNT submissions (half per assignment, cycling through correct, buggy and
untouched notebooks from examples/ and student_template/), grades them both ways in a
temporary nbgrader course, prints seconds per submission for each, the ratio, and every
task whose score differs between the two paths. Not a test: run it by hand.

    .venv/bin/python benchmarks/grading_throughput.py [COUNT] [--jobs N]
"""
import argparse
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


def variants(assignment: str) -> list[Path]:
    examples = sorted((REPO / "examples" / assignment).glob("*.ipynb"))
    return [p for p in examples if p.stem != "hostile"] + [
        REPO / "student_template" / assignment / f"{assignment}.ipynb"]


def lay_out(root: Path, count: int) -> dict[str, list[str]]:
    """submitted/<student>/<assignment>/<assignment>.ipynb with the helpers beside it."""
    students: dict[str, list[str]] = {}
    for i in range(count):
        assignment = ("attention_scoring", "bahdanau")[i % 2]
        options = variants(assignment)
        student = f"s{i:03d}"
        folder = root / "submitted" / student / assignment
        folder.mkdir(parents=True)
        shutil.copy(options[(i // 2) % len(options)], folder / f"{assignment}.ipynb")
        shutil.copytree(REPO / "student_template" / assignment / "d2l_attention", folder / "d2l_attention")
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


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("count", type=int, nargs="?", default=100)
    parser.add_argument("--jobs", type=int, default=os.cpu_count())
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="throughput-"))
    (root / "nbgrader_config.py").write_text(COURSE_CONFIG.format(repo=str(REPO), root=str(root)))
    shutil.copytree(REPO / "assignments", root / "source")
    students = lay_out(root, args.count)
    ours, theirs, differ = {}, {}, []
    for assignment, names in students.items():
        ours[assignment] = run([sys.executable, "-m", "autograder.cli", "grade", str(root / "submitted"), "--assignment",
                     assignment, "--output", str(root / "results" / assignment), "--jobs", str(args.jobs),
                     "--force"], root)
        run([sys.executable, "-m", "nbgrader", "generate_assignment", assignment, "--force"], root)
        theirs[assignment] = run([sys.executable, "-m", "nbgrader", "autograde", assignment, "--force"], root)
        reference = nbgrader_scores(root, assignment, names)
        for student in names:
            result = json.loads((root / "results" / assignment / f"{student}.json").read_text())
            for task in result["tasks"]:
                if task["score"] is not None and abs(task["score"] - (reference.get((student, task["id"])) or 0)) > 1e-9:
                    differ.append((student, task["id"], task["score"], reference.get((student, task["id"]))))
    for assignment, names in students.items():
        n = len(names)
        print(f"{assignment}: {n} submissions, autograder --jobs {args.jobs} {ours[assignment] / n:.3f} s, "
              f"nbgrader {theirs[assignment] / n:.3f} s per submission, "
              f"ratio {theirs[assignment] / ours[assignment]:.1f}x")
    n, total_ours, total_theirs = args.count, sum(ours.values()), sum(theirs.values())
    print(f"{n} submissions, autograder --jobs {args.jobs}: {total_ours / n:.3f} s per submission")
    print(f"{n} submissions, nbgrader autograde (serial): {total_theirs / n:.3f} s per submission")
    print(f"ratio nbgrader / autograder: {total_theirs / total_ours:.1f}x")
    print(f"task scores that differ between the two paths: {len(differ)}")
    for row in differ:
        print("  ", *row)
    shutil.rmtree(root)


if __name__ == "__main__":
    main()

"""Write a sample class of attention_scoring notebooks for the docs' class report screenshot.

    .venv/bin/python docs/sample_class.py CLASS/          # CLASS/<student>.ipynb, 30 of them
    .venv/bin/autograder grade CLASS/ --assignment attention_scoring --output CLASS_RESULTS/
    .venv/bin/python docs/make_screenshots.py CLASS_RESULTS/

Each student's cells are the mutation suite's variants (tests/mutants), drawn with a fixed seed:
mostly right, some with a catalogued mistake, some with an uncatalogued bug, a few tasks left
untouched; two students hand in one distance_attention with renamed variables and reordered
lines, and two share a copied masked_softmax bug. CLASS/manual_points.csv holds the written
answers' points of half the class: copy it into CLASS_RESULTS/ before grading.
"""
import argparse
import random
import re
import sys
from pathlib import Path

import nbformat

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.mutants.variants_attention import MUTANTS as ATTENTION  # noqa: E402
from tests.mutants.variants_softmax import MUTANTS as SOFTMAX  # noqa: E402
from tests.pages.class_findings import ANNA, BORIS  # noqa: E402

STUDENTS = ["abramov", "belova", "volkov", "gromova", "denisov", "egorova", "zhukov", "zaitseva", "ilyin",
            "kozlova", "lebedev", "morozova", "nikitin", "orlova", "pavlov", "romanova", "sokolov", "tarasova",
            "ulyanov", "fedorova", "khromov", "tsareva", "chernov", "shubina", "shchukin", "yudina", "yakovlev",
            "alekseeva", "bogdanov", "vasilyeva"]
TASKS = ["masked_softmax", "dot_product_attention", "additive_attention", "distance_attention", "bilinear_attention"]


def cells_of(rng: random.Random) -> dict[str, str]:
    """One student's cells: per task a right variant (70 %), a bug (25 %) or none (untouched)."""
    cells = {}
    for task in TASKS:
        right = [m for m in SOFTMAX + ATTENTION if m.task_id == task and m.correct and m.sandbox_only is None]
        wrong = [m for m in SOFTMAX + ATTENTION if m.task_id == task and not m.correct and m.sandbox_only is None
                 and m.grader_misses is None]
        draw = rng.random()
        if draw < 0.7:
            cells[task] = rng.choice(right).source
        elif draw < 0.95:
            cells[task] = rng.choice(wrong).source
    return cells


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    folder = parser.parse_args().folder
    folder.mkdir(parents=True, exist_ok=True)
    rng = random.Random(2026)
    template = nbformat.read(REPO / "student_template" / "attention_scoring" / "attention_scoring.ipynb", as_version=4)
    classes = {student: cells_of(rng) for student in STUDENTS}
    classes["zhukov"]["distance_attention"], classes["tarasova"]["distance_attention"] = ANNA, BORIS
    shared_bug = next(m.source for m in SOFTMAX if m.name == "arange_on_the_cpu")
    classes["orlova"]["masked_softmax"] = shared_bug
    classes["pavlov"]["masked_softmax"] = re.sub(r"\bkeep\b", "visible", shared_bug)
    for student, cells in classes.items():
        notebook = nbformat.from_dict(template)
        for cell in notebook.cells:
            task = cell.metadata.get("nbgrader", {}).get("grade_id")
            if task in cells:
                cell.source = cells[task].strip("\n")
        nbformat.write(notebook, folder / f"{student}.ipynb")
    points = [f"{student},cost_analysis,{rng.choice([0, 1, 1.5, 2, 2])}" for student in STUDENTS[::2]]
    (folder / "manual_points.csv").write_text("student_id,task,points\n" + "\n".join(points) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()

"""The submissions that gpu_check.py grades: the bundled examples and one notebook per
variant of the mutation suite.

A variant's notebook is the solved example notebook (``examples/<assignment>/correct.ipynb``)
with the variant's source in its task's solution cell (the cell whose nbgrader
``grade_id`` is the task id), so every other task keeps its right solution. The variants
and the notebook helpers are the test suite's own (``tests/mutants``, ``tests/notebooks``).
"""
import shutil
from pathlib import Path

import nbformat

from tests.mutants.harness import ASSIGNMENT_OF, Mutant
from tests.mutants.test_mutants import MUTANTS  # every variant the mutation suite has
from tests.notebooks.cells import ASSIGNMENTS, REPO, nbgrader, read

EXAMPLES = REPO / "examples"


def chosen_mutants(quick: bool) -> list[Mutant]:
    """Every variant; with ``quick``, the first buggy one of each task (a partial score,
    where a difference between devices would show; the examples' correct notebook
    already has every task right) that the nbgrader path may run too."""
    if not quick:
        return list(MUTANTS)
    firsts: dict[str, Mutant] = {}
    for mutant in MUTANTS:
        if not mutant.correct and mutant.sandbox_only is None:
            firsts.setdefault(mutant.task_id, mutant)
    return list(firsts.values())


def variant_notebook(mutant: Mutant) -> nbformat.NotebookNode:
    """The solved example notebook with ``mutant``'s source in its task's solution cell."""
    notebook = read(EXAMPLES / ASSIGNMENT_OF[mutant.task_id] / "correct.ipynb")
    cells = [cell for cell in notebook.cells
             if nbgrader(cell).get("solution") and nbgrader(cell).get("grade_id") == mutant.task_id]
    if len(cells) != 1:
        raise ValueError(f"examples/{ASSIGNMENT_OF[mutant.task_id]}/correct.ipynb has {len(cells)} "
                         f"solution cells with grade_id {mutant.task_id!r}; expected one")
    cells[0].source = mutant.source.strip("\n")
    return notebook


def by_priority(mutants: list[Mutant]) -> list[tuple[int, Mutant]]:
    """(rank, mutant), round-robin over the tasks: rank r is a task's r-th variant, so a run
    cut short by its time limit has still graded the first variants of every task."""
    seen: dict[str, int] = {}
    ranked = []
    for mutant in mutants:
        seen[mutant.task_id] = seen.get(mutant.task_id, 0) + 1
        ranked.append((seen[mutant.task_id], mutant))
    return sorted(ranked, key=lambda pair: pair[0])  # stable: the suite's task order within a rank


def build(into: Path, quick: bool) -> dict[str, list[str]]:
    """Write ``into/<assignment>/<student_id>.ipynb``; returns the student ids per assignment,
    in the order ``autograder grade`` takes them (it sorts by file name).

    A student id is ``<rank>-example-<name>`` for an example (rank 00) and
    ``<rank>-<task>-<variant>`` for a variant (see ``by_priority``)."""
    students: dict[str, list[str]] = {assignment: [] for assignment in ASSIGNMENTS}
    for assignment in ASSIGNMENTS:
        (into / assignment).mkdir(parents=True, exist_ok=True)
        for example in sorted((EXAMPLES / assignment).glob("*.ipynb")):
            student = f"00-example-{example.stem}"
            shutil.copyfile(example, into / assignment / f"{student}.ipynb")
            students[assignment].append(student)
    for rank, mutant in by_priority(chosen_mutants(quick)):
        assignment = ASSIGNMENT_OF[mutant.task_id]
        student = f"{rank:02d}-{mutant.id}"
        nbformat.write(variant_notebook(mutant), into / assignment / f"{student}.ipynb")
        students[assignment].append(student)
    return students

"""The released notebooks, run top to bottom as a student would (nbclient, kernel python3).

Solved (the source's solution regions pasted in), every cell runs, demos included; untouched,
every visible check fails with a message that says which task to implement first.
"""
import shutil

import nbformat
import pytest
from nbclient import NotebookClient

from .cells import ASSIGNMENTS, TASK_NAMES, nbgrader, read, solved_copy, source_path

pytestmark = pytest.mark.slow
TIMEOUT_S = 120  # per cell


def run(notebook: nbformat.NotebookNode, folder, allow_errors: bool) -> nbformat.NotebookNode:
    NotebookClient(notebook, timeout=TIMEOUT_S, kernel_name="python3", allow_errors=allow_errors,
                   resources={"metadata": {"path": str(folder)}}).execute()
    return notebook


@pytest.fixture(scope="module")
def student_folders(release_dir, tmp_path_factory):
    """A copy of the release per run, so that kernels write nothing into the session's release."""
    def folder(assignment: str, name: str):
        copy = tmp_path_factory.mktemp(f"{assignment}-{name}") / assignment
        shutil.copytree(release_dir / assignment, copy)
        return copy
    return folder


@pytest.fixture(scope="module")
def solved_runs(student_folders):
    """assignment -> its solved notebook after a full run (computed once per assignment)."""
    runs = {}

    def solved(assignment: str) -> nbformat.NotebookNode:
        if assignment not in runs:
            folder = student_folders(assignment, "solved")
            path = solved_copy(folder / f"{assignment}.ipynb", source_path(assignment),
                               folder / f"{assignment}.ipynb")
            runs[assignment] = run(read(path), folder, allow_errors=False)
        return runs[assignment]
    return solved


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_solved_notebook_runs_top_to_bottom(kernel_env, solved_runs, assignment):
    """Does every cell of the solved release run, visible checks and demos included?"""
    notebook = solved_runs(assignment)   # raises CellExecutionError with the failing cell
    visible = [cell for cell in notebook.cells if nbgrader(cell).get("grade_id", "").endswith("_visible")]
    assert visible and all("пройдены" in cell.outputs[-1].text for cell in visible)


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_heatmap_demos_show_images(kernel_env, solved_runs, assignment):
    """Does every cell that draws a heatmap show it as an image?"""
    drawing = [cell for cell in solved_runs(assignment).cells if "show_heatmaps(" in cell.source
               and nbgrader(cell).get("grade_id", "").endswith("demo")]
    assert drawing
    for cell in drawing:
        assert any("image/png" in output.get("data", {}) for output in cell.outputs), cell.id


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_untouched_visible_checks_say_what_to_implement(kernel_env, student_folders, assignment):
    """Does each visible check of the untouched template fail with a readable message?"""
    folder = student_folders(assignment, "untouched")
    notebook = run(read(folder / f"{assignment}.ipynb"), folder, allow_errors=True)
    visible = {nbgrader(cell)["grade_id"].removesuffix("_visible"): cell for cell in notebook.cells
               if nbgrader(cell).get("grade_id", "").endswith("_visible")}
    assert visible
    for task, cell in visible.items():
        [error] = [output for output in cell.outputs if output.output_type == "error"]
        name = TASK_NAMES[task]
        assert error.ename == "AssertionError"
        assert error.evalue == (f"Сначала реализуйте {name} в ячейке выше / "
                                f"implement {name} in the cell above first")

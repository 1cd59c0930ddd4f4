"""SPEC §1: do the locked cells and visible checks run cleanly for every correct solution?

Each released notebook runs top to bottom (demos included, as a student runs it) with
correct code filled into its solution cells: every correct variant of the mutation suite
(``tests/mutants/variants_*.py``, ``correct=True``) and the book's own code
(``reference/book.py``, ``reference/book_decoder.py``: its ``masked_softmax`` writes into
``X``, its ``AdditiveAttention.forward`` has no default for ``valid_lens``). Variants of
different tasks share a run: run ``i`` fills each task with its ``i``-th variant (cycling),
so an assignment needs as many runs as its task with the most variants, and a failing cell
is reported with the variants of its run.
"""
import inspect
import shutil

import nbformat
import pytest
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

import reference.book
import reference.book_decoder
from tests.mutants import variants_attention, variants_decoders, variants_softmax

from .cells import ASSIGNMENTS, nbgrader, read

pytestmark = pytest.mark.slow
TIMEOUT_S = 300  # per cell: the bahdanau comparison demo trains three models
BOOK = {  # task -> the book's published code for it
    "masked_softmax": inspect.getsource(reference.book.masked_softmax),
    "dot_product_attention": inspect.getsource(reference.book.DotProductAttention),
    "additive_attention": inspect.getsource(reference.book.AdditiveAttention),
    "seq2seq_attention_decoder": inspect.getsource(reference.book_decoder.Seq2SeqAttentionDecoder),
}
TASKS = {
    "attention_scoring": ("masked_softmax", "dot_product_attention", "additive_attention",
                          "distance_attention", "bilinear_attention"),
    "bahdanau": ("seq2seq_attention_decoder", "lstm_attention_decoder", "dot_attention_decoder"),
}


def correct_code(task: str) -> list[tuple[str, str]]:
    """(name, source) of every correct solution known for ``task``: the book's first."""
    mutants = variants_softmax.MUTANTS + variants_attention.MUTANTS + variants_decoders.MUTANTS
    book = [("book", BOOK[task])] if task in BOOK else []
    return book + [(m.name, m.source) for m in mutants if m.task_id == task and m.correct]


def runs(assignment: str) -> list[dict[str, tuple[str, str]]]:
    """Run i: task -> its i-th correct solution, cycling, until every one has been used."""
    code = {task: correct_code(task) for task in TASKS[assignment]}
    count = max(len(solutions) for solutions in code.values())
    return [{task: solutions[i % len(solutions)] for task, solutions in code.items()} for i in range(count)]


RUNS = [pytest.param(assignment, run, id=f"{assignment}-run{i}")
        for assignment in ASSIGNMENTS for i, run in enumerate(runs(assignment))]


def filled(released: nbformat.NotebookNode, run: dict[str, tuple[str, str]]) -> nbformat.NotebookNode:
    notebook = nbformat.from_dict(released)
    for cell in notebook.cells:
        task = nbgrader(cell).get("grade_id")
        if cell.cell_type == "code" and nbgrader(cell).get("solution"):
            cell.source = run[task][1].strip("\n")
    return notebook


def test_every_correct_variant_is_used():
    """Does each task's list hold every correct variant of the suite, and the book's code where it has one?"""
    for assignment, tasks in TASKS.items():
        used = {(task, name) for run in runs(assignment) for task, (name, _) in run.items()}
        assert used == {(task, name) for task in tasks for name, _ in correct_code(task)}
    assert {task for task in BOOK} <= {task for tasks in TASKS.values() for task in tasks}


@pytest.mark.parametrize(("assignment", "run"), RUNS)
def test_released_notebook_runs_with_correct_code(kernel_env, release_dir, tmp_path, assignment, run):
    """Does every cell of the released notebook run, and every visible check pass, with this correct code?"""
    folder = tmp_path / assignment
    shutil.copytree(release_dir / assignment, folder)
    notebook = filled(read(folder / f"{assignment}.ipynb"), run)
    client = NotebookClient(notebook, timeout=TIMEOUT_S, kernel_name="python3",
                            resources={"metadata": {"path": str(folder)}})
    try:
        client.execute()
    except CellExecutionError as error:
        used = ", ".join(f"{task}: {name}" for task, (name, _) in run.items())
        pytest.fail(f"a cell failed with correct code ({used}):\n{error}", pytrace=False)
    visible = [cell for cell in notebook.cells if nbgrader(cell).get("grade_id", "").endswith("_visible")]
    assert visible
    for cell in visible:
        printed = "".join(output.get("text", "") for output in cell.outputs)
        assert "Visible checks for" in printed and "passed" in printed, (cell.id, printed)

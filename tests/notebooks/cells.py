"""Reading the course's nbgrader notebooks: cell roles, solution regions, solved copies.

A source notebook is ``assignments/<a>/<a>.ipynb``; its release is what nbgrader's
``generate_assignment`` makes of it. Cells are matched between the two by their ids,
which nbgrader keeps.
"""
import re
from pathlib import Path

import nbformat
import yaml

REPO = Path(__file__).resolve().parents[2]
ASSIGNMENTS = ("attention_scoring", "bahdanau")
# SPEC §1: the one name each autograded task's solution cell defines.
TASK_NAMES = {
    "masked_softmax": "masked_softmax",
    "dot_product_attention": "DotProductAttention",
    "additive_attention": "AdditiveAttention",
    "distance_attention": "DistanceAttention",
    "bilinear_attention": "BilinearAttention",
    "seq2seq_attention_decoder": "Seq2SeqAttentionDecoder",
    "lstm_attention_decoder": "LSTMAttentionDecoder",
    "dot_attention_decoder": "DotAttentionDecoder",
}
SECRET_REGIONS = (("BEGIN SOLUTION", "END SOLUTION"), ("BEGIN HIDDEN TESTS", "END HIDDEN TESTS"))


def grader_tasks(assignment: str) -> dict:
    """grader.yml's tasks of one assignment: {task: {check: points}} or {task: {"manual": N}}."""
    config = yaml.safe_load((REPO / "grader.yml").read_text())
    return config["assignments"][assignment]["tasks"]


def task_points(checks: dict) -> float:
    return checks["manual"] if "manual" in checks else sum(checks.values())


def source_path(assignment: str) -> Path:
    return REPO / "assignments" / assignment / f"{assignment}.ipynb"


def read(path: Path) -> nbformat.NotebookNode:
    return nbformat.read(path, as_version=4)


def nbgrader(cell) -> dict:
    return cell.metadata.get("nbgrader", {})


def split_regions(source: str) -> tuple[list[str], list[str]]:
    """(lines outside, lines inside) the solution and hidden-test regions of a cell."""
    outside, inside, end = [], [], None
    for line in source.split("\n"):
        if end is None:
            begin = next((e for b, e in SECRET_REGIONS if b in line), None)
            if begin is not None:
                end = begin
            else:
                outside.append(line)
        elif end in line:
            end = None
        else:
            inside.append(line)
    return outside, inside


def without_delimiters(source: str) -> str:
    """A solution cell as the TA wrote it, minus the ``### BEGIN/END SOLUTION`` lines."""
    return "\n".join(line for line in source.split("\n")
                     if not re.search(r"#+\s*(BEGIN|END) SOLUTION", line))


def solved_copy(released: Path, source: Path, into: Path) -> Path:
    """The released notebook with the source's solution regions pasted in; written to ``into``."""
    solutions = {cell.id: without_delimiters(cell.source) for cell in read(source).cells
                 if nbgrader(cell).get("solution")}
    notebook = read(released)
    for cell in notebook.cells:
        if nbgrader(cell).get("solution"):
            cell.source = solutions[cell.id]
    into.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(notebook, into)
    return into

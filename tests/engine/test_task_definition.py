"""Which definition of a task's name is graded: the one its solution cell left, as nbgrader's test
cell right after that cell sees it (SPEC §1: that cell defines the name; §3: both paths give the
same score). A later cell that binds the name again (an unfinished experiment at the end, an old
copy inside another task's cell) is not graded, and the student is told where it was."""
import copy
import json
import shutil
from types import SimpleNamespace

import nbformat
import pytest

from .test_grade_cli import EXAMPLES, grade

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed")

WRONG = "def masked_softmax(X, valid_lens):\n    return torch.softmax(X, dim=-1)  # TODO: the lengths\n"
RIGHT = ("def masked_softmax(X, valid_lens):\n    return d2l_masked_softmax(X, valid_lens)\n")


def _index(notebook, grade_id: str) -> int:
    return next(i for i, c in enumerate(notebook.cells)
                if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == grade_id)


def _variants() -> dict:
    base = nbformat.read(EXAMPLES / "attention_scoring" / "correct.ipynb", as_version=4)
    ms = _index(base, "masked_softmax")
    book = base.cells[ms].source.replace("def masked_softmax(", "def d2l_masked_softmax(", 1)

    scratch = copy.deepcopy(base)  # an experiment left at the end of the notebook
    scratch.cells.append(nbformat.v4.new_code_cell(WRONG))

    in_dot = copy.deepcopy(base)  # an old copy inside the next task's cell
    in_dot.cells[_index(in_dot, "dot_product_attention")].source += "\n\n" + WRONG

    earlier = copy.deepcopy(base)  # the answer in the student's own cell before an empty solution cell
    earlier.cells[ms].source = "# masked_softmax is defined above"
    earlier.cells.insert(ms, nbformat.v4.new_code_cell(book + "\n\n" + RIGHT))

    later = copy.deepcopy(base)  # ...and after it: nbgrader's test, right after the cell, finds no name
    later.cells[ms].source = "# masked_softmax is defined below"
    later.cells.append(nbformat.v4.new_code_cell(book + "\n\n" + RIGHT))
    return {"scratch_at_end": scratch, "copy_in_dot_cell": in_dot,
            "own_cell_before": earlier, "own_cell_after": later}


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    folder, out = tmp_path_factory.mktemp("notebooks"), tmp_path_factory.mktemp("results")
    for name, notebook in _variants().items():
        nbformat.write(notebook, folder / f"{name}.ipynb")
    run = grade(str(folder), "--assignment", "attention_scoring", "--output", str(out), "--jobs", "2")
    assert run.returncode == 0, run.stderr
    return {path.stem: json.loads(path.read_text()) for path in out.glob("*.json")}


def _masked_softmax(result: dict) -> tuple:
    task = next(t for t in result["tasks"] if t["id"] == "masked_softmax")
    return task["score"], task["max_score"]


def _told(result: dict) -> list[str]:
    return [w["message"] for w in result["warnings"] if w["code"] == "redefined_later"]


@pytest.mark.parametrize("student", ["scratch_at_end", "copy_in_dot_cell"])
def test_a_later_definition_is_not_graded_and_the_student_is_told(results, student):
    """Does a wrong masked_softmax defined after the solution cell leave its full points, with a
    warning that names the cell that defined it again?"""
    score, maximum = _masked_softmax(results[student])
    assert score == maximum
    told = _told(results[student])
    assert len(told) == 1 and "masked_softmax" in told[0]
    assert ("dot_product_attention" in told[0]) == (student == "copy_in_dot_cell")


def test_a_definition_before_the_solution_cell_is_graded(results):
    """Is an answer in the student's own cell above an emptied solution cell graded, as nbgrader's
    test cell would find it, without a warning?"""
    score, maximum = _masked_softmax(results["own_cell_before"])
    assert score == maximum and _told(results["own_cell_before"]) == []


def test_a_definition_only_after_the_solution_cell_is_not_there(results):
    """Is an answer defined only after an emptied solution cell graded as not defined, as nbgrader's
    test cell right after the solution cell finds no name?"""
    assert _masked_softmax(results["own_cell_after"])[0] == 0.0


class _Forging:
    """A worker whose reply to ``settle`` is whatever the student made it."""

    def __init__(self, reply):
        self.reply = reply

    def transport(self, request, until=None):
        assert request["op"] == "settle"
        return self.reply


@pytest.mark.parametrize("reply", [
    None, [], {"value": {"masked_softmax": "#3"}}, {"value": [[["masked_softmax"], "#3"]]},
    {"value": [["masked_softmax"]]}, {"value": [["nobody", "#3"], ["masked_softmax", "#99"]]},
    {"value": [["masked_softmax", "#3"]] * 1000}], ids=range(7))
def test_a_forged_settle_reply_only_ever_warns_of_known_names_and_cells(reply):
    """Does a worker's forged reply (not a list, unhashable items, unknown names or cells, a flood)
    never raise and never warn of anything but a known task name in a known cell, once?"""
    from autograder.config import load_config
    from autograder.grading.task import RunSettings
    from autograder.grading.session import Session
    from autograder.sandbox.client import Student
    sandbox = SimpleNamespace(limits=SimpleNamespace(own_cells_s=60))  # only what the constructor reads
    session = Session(sandbox, RunSettings.resolve(load_config(), "attention_scoring"),
                      [("masked_softmax", ""), ("#3", "")], deadline=0.0)
    session.student = Student(_Forging(reply).transport)
    session._settle()
    assert [(w.code, w.task) for w in session.warnings] in ([], [("redefined_later", "masked_softmax")])
    assert len(session.warnings) == (reply == {"value": [["masked_softmax", "#3"]] * 1000})


def test_a_copy_in_another_tasks_cell_is_that_tasks_own(results):
    """Is the wrong masked_softmax pasted into the dot-product cell what that cell's class calls
    while dot_product_attention is checked (as nbgrader's test right after the cell sees it), not
    the book's: the cell as written is the task's solution?"""
    task = next(t for t in results["copy_in_dot_cell"]["tasks"] if t["id"] == "dot_product_attention")
    assert task["score"] < task["max_score"]

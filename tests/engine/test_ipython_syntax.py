"""IPython syntax in a cell costs no points (SPEC §3: the grade does not depend on the path, and
nbgrader runs cells in an IPython kernel): each cell becomes what a kernel runs, and the calls
it makes on ``get_ipython()`` do nothing in the worker."""
import json
import shutil
import time
from pathlib import Path

import nbformat
import pytest
from IPython.core.inputtransformer2 import TransformerManager

from autograder.grading import ipython_syntax
from autograder.grading.assemble import CellPlan, assemble, read_notebook
from autograder.grading.ipython_syntax import STAND_INS, PlainPython, transformed
from tests.engine.test_grade_cli import grade, load, task_scores

REPO = Path(__file__).resolve().parents[2]
SOURCE = nbformat.read(REPO / "assignments" / "attention_scoring" / "attention_scoring.ipynb", as_version=4)


def run(cell: str) -> dict:
    """The cell made plain and run after the stand-ins, as the worker runs it; its namespace."""
    plain, _ = PlainPython()(cell)
    namespace = {"calls": []}
    exec(STAND_INS, namespace)  # noqa: S102 - the grader's own preamble
    exec(compile(plain, "<cell>", "exec"), namespace)  # noqa: S102 - test data
    return namespace


IDIOMS = {  # cell -> the name it still defines
    "torch_softmax?\nx = 1\n": "x",                                   # help, first line
    "x = 1\n??BilinearAttention\n": "x",                              # help, last line
    "x = 1\nBilinearAttention?\n": "x",
    "%matplotlib inline\nx = 1": "x",
    "get_ipython().run_line_magic('matplotlib', 'inline')\nx = 1\n": "x",
    "display('additive')\nx = 1\n": "x",
    "!pip install x\nx = 1\n": "x",
    "x = !ls\n": "x",
    "%timeit calls.append(1)\nx = 1\n": "x",
    "%load_ext autoreload\n%autoreload 2\nx = 1\n": "x",
    "%%bash\nls -l\n\nx = 1\n": "get_ipython",                      # the shell's cell, not Python
    "get_ipython().events.register('post_run_cell', print)\nx = 1\n": "x",
}


@pytest.mark.parametrize("cell", IDIOMS)
def test_a_kernels_idiom_compiles_and_runs_with_the_stand_ins(cell):
    """Does each IPython idiom a kernel accepts run in the worker, defining what the cell defines
    and running no magic, help or shell command?"""
    namespace = run(cell)
    assert IDIOMS[cell] in namespace
    assert namespace["calls"] == []  # %timeit's statement is not run (as when the line was removed)


def test_code_under_time_runs_and_keeps_its_line_numbers():
    """Does ``%%time`` run its body and ``%time x = ...`` its statement, as in a kernel, with the
    student's line numbers (an error on line 3 is reported on line 3)?"""
    assert run("%%time\ny = 2\nz = y + 1\n")["z"] == 3
    assert run("if True:\n    %time w = 4\n")["w"] == 4
    assert run("%%capture\n!ls\nv = 5\n")["v"] == 5
    plain, dropped = PlainPython()("\n%%time\ny = 2\nraise ValueError\n")
    assert dropped and plain.splitlines()[3] == "raise ValueError"


def test_shell_output_is_a_list_and_help_returns_nothing():
    namespace = run("files = !ls\nanswer = get_ipython().run_line_magic('pinfo', 'len')\n")
    assert namespace["files"] == [] and namespace["answer"] is None
    assert namespace["get_ipython"]() is namespace["get_ipython"]()


def test_the_stand_ins_define_get_ipython_and_display_only():
    namespace = {}
    exec(STAND_INS, namespace)  # noqa: S102 - the grader's own preamble
    assert sorted(set(namespace) - {"__builtins__"}) == ["display", "get_ipython"]
    assert namespace["display"]("anything", raw=True) is None


@pytest.mark.parametrize("cell", ["torch.softmax?\nx = 1\n", "x = 1\n??Bilinear\n", "%matplotlib inline\nx = 1\n",
                                  "!pip install x\n", "x = !ls\n", "%timeit f()\n", "%%bash\nls\n", "x = %pwd\n",
                                  "def f():\n    !ls\n    return 1\n", "%time?\n"])
def test_what_the_worker_runs_is_what_a_kernel_runs(cell):
    """Is the cell made exactly what IPython's own transformer makes it (the trusted twin), where
    no code runs under a magic?"""
    assert transformed(cell) == (TransformerManager().transform_cell(cell), True)


@pytest.mark.parametrize("cell", ["x = 1\n", "# why?\nx = 1\n", 's = """Is it?\n"""\n', "y = (1\n     % 2)\n",
                                  "total = (a,\n         b)\n", "def f():\n    ...\n"])
def test_plain_python_runs_as_written_without_a_warning(cell):
    assert PlainPython()(cell) == (cell, False)


def test_a_name_too_long_for_help_falls_back_to_blanking_quickly():
    """IPython's help pattern takes seconds on a long name before ``?``: is such a cell blanked as
    before instead, at once?"""
    started = time.monotonic()
    plain, dropped = PlainPython()("%ls\n" + "a." * 4000 + "a ?\n")
    assert time.monotonic() - started < 0.5
    assert dropped and plain.startswith("\n")


def test_past_the_budget_cells_fall_back_to_blanking_and_the_work_stays_bounded():
    """Does a submission of many cells full of IPython syntax cost the grader about a second at
    most, the cells past the budget getting their % and ! lines blanked (grading's old rule)?"""
    cells = ["%ls\n" * 20 + "a," * 800 + "a\n"] * 200
    plain_python, started = PlainPython(), time.monotonic()
    results = [plain_python(cell) for cell in cells]
    assert time.monotonic() - started < 3  # unbounded: IPython would read each cell 21 times (~40 s)
    assert results[0][0].startswith("get_ipython().run_line_magic('ls', '')")
    assert results[-1] == ("\n" * 20 + "a," * 800 + "a\n", True)


def plan_of(notebook: dict) -> CellPlan:
    plan = CellPlan()
    parsed = read_notebook(Path("s.ipynb"), json.dumps(notebook).encode(), plan)
    assemble(parsed, SOURCE, ["masked_softmax", "bilinear_attention"], plan)
    return plan


def correct() -> dict:
    return json.loads((REPO / "examples" / "attention_scoring" / "correct.ipynb").read_text(encoding="utf-8"))


def cell_of(notebook: dict, gid: str) -> dict:
    return next(c for c in notebook["cells"] if c["metadata"].get("nbgrader", {}).get("grade_id") == gid)


def test_the_plan_runs_the_stand_ins_first_and_warns_once_per_cell_with_ipython_syntax():
    notebook = correct()
    softmax = cell_of(notebook, "masked_softmax")
    softmax["source"] = "torch.softmax?\n%matplotlib inline\n" + "".join(softmax["source"])
    plan = plan_of(notebook)
    assert plan.cells[0] == (ipython_syntax.LABEL, STAND_INS)
    assert [(w.code, w.text.params["cell"]) for w in plan.warnings] == [("magic_removed", "masked_softmax")]
    assert dict(plan.cells)["masked_softmax"].startswith("get_ipython().run_line_magic('pinfo', 'torch.softmax')")


def test_an_honest_notebook_is_planned_as_written():
    plan = plan_of(correct())
    assert not plan.warnings and plan.plain_python.left == ipython_syntax.WORK_BUDGET


def test_a_locked_cell_with_a_magic_runs_as_a_kernel_runs_it_without_telling_the_student():
    """A ``%matplotlib inline`` in the TA's set-up cell must not cost every student the imports."""
    source = nbformat.from_dict(json.loads(json.dumps(SOURCE)))
    imports = next(c for c in source.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "imports")
    imports.source = "%matplotlib inline\n" + imports.source
    plan = CellPlan()
    parsed = read_notebook(Path("s.ipynb"), json.dumps(correct()).encode(), plan)
    assemble(parsed, source, ["masked_softmax"], plan)
    assert dict(plan.cells)["imports"].startswith("get_ipython().run_line_magic('matplotlib', 'inline')\n")
    assert not plan.warnings


def test_a_plan_with_no_cells_gets_no_stand_ins():
    """A notebook whose cells are not cells runs nothing, not even the stand-ins."""
    notebook = correct()
    cell_of(notebook, "masked_softmax")["source"] = 5
    plan = plan_of(notebook)
    assert plan.cells == [] and [e.code for e in plan.errors] == ["invalid_notebook"]


KERNEL_IDIOMS = {  # red team 2 F6: 2/13 under `autograder grade`, 13/13 under nbgrader autograde
    "masked_softmax": lambda code: "torch.softmax?\n%matplotlib inline\n" + code,
    "dot_product_attention": lambda code: "%%time\nget_ipython().run_line_magic('matplotlib', 'inline')\n" + code,
    "additive_attention": lambda code: "display('additive')\n!echo hello\n" + code,
    "distance_attention": lambda code: "from IPython.display import display\ndisplay('distance')\n" + code,
    "bilinear_attention": lambda code: code + "\n??BilinearAttention\nBilinearAttention?\n",
}


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed")
def test_a_notebook_written_for_a_kernel_gets_full_marks_from_the_cli(tmp_path):
    """Does the correct notebook with help requests, magics, shell commands, ``get_ipython()`` and
    ``display`` in its solution cells get every point, as plain nbgrader autograde gives it, with a
    warning naming each cell whose IPython syntax did nothing?"""
    notebook = correct()
    for gid, change in KERNEL_IDIOMS.items():
        cell = cell_of(notebook, gid)
        cell["source"] = change("".join(cell["source"]))
    folder = tmp_path / "submitted" / "kernel" / "attention_scoring"
    folder.mkdir(parents=True)
    (folder / "attention_scoring.ipynb").write_text(json.dumps(notebook))
    run = grade(str(tmp_path / "submitted"), "--assignment", "attention_scoring", "--output", str(tmp_path / "out"))
    assert run.returncode == 0, run.stderr
    result = load(tmp_path / "out", "kernel")
    scores = task_scores(result)
    assert scores.pop("cost_analysis") == (None, 2.0)
    assert all(score == maximum for score, maximum in scores.values()), (scores, result["warnings"])
    warned = sorted(w["message"].split(":")[0] for w in result["warnings"] if w["code"] == "magic_removed")
    assert warned == ["cell additive_attention", "cell bilinear_attention", "cell dot_product_attention",
                      "cell masked_softmax"]
    assert {w["code"] for w in result["warnings"]} == {"magic_removed"} and not result["errors"]

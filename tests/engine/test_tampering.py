"""Tampered and hostile notebooks get no more than the honest score, and harm nobody else.

Every case is graded in ONE run of the CLI (a sandbox start per slot), with short
timeouts and small limits from a test grader.yml so that a hang costs seconds.
"""
import ast
import copy
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import nbformat
import pytest
import yaml

from autograder.checks import TASKS
from autograder.executors.runmarker import RUN_MARKER
from tests.processes import left_after, snapshot

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples" / "attention_scoring"
pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed")


def gid(cell) -> str | None:
    return cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")


def edited(name: str, change) -> nbformat.NotebookNode:
    notebook = copy.deepcopy(nbformat.read(EXAMPLES / f"{name}.ipynb", as_version=4))
    change(notebook)
    return notebook


def delete_tests(nb):
    nb.cells = [c for c in nb.cells if not (gid(c) or "").endswith("_tests")]


def empty_tests_and_raise_points(nb):
    for cell in nb.cells:
        if (gid(cell) or "").endswith("_tests"):
            cell.source = "1000.0"
            cell.metadata["nbgrader"]["points"] = 1000


def swap_grade_ids(nb):
    """The untouched masked_softmax cell labelled as a test, its test cell as the solution."""
    for cell in nb.cells:
        if gid(cell) == "masked_softmax":
            cell.metadata["nbgrader"]["grade_id"] = "masked_softmax_tests"
        elif gid(cell) == "masked_softmax_tests":
            cell.metadata["nbgrader"]["grade_id"] = "masked_softmax"
            cell.source = "from reference import masked_softmax"


def patch_locked_cell(nb):
    for cell in nb.cells:
        if gid(cell) == "imports":
            cell.source += "\nimport torch.testing\ntorch.testing.assert_close = lambda *a, **k: None\ntorch.allclose = lambda *a, **k: True"


def append_cell(source: str):
    """The student's ``source``, added where it is graded: code that defines a task's name goes at
    the end of that task's solution cell (a later cell's definition is not graded, as under
    nbgrader), other code into a new cell at the end."""
    defined = _names_defined(source)
    task = next((task_id for task_id, task in TASKS.items() if task.defines in defined), None)

    def change(nb):
        cell = next((c for c in nb.cells if task is not None and gid(c) == task), None)
        if cell is None:
            nb.cells.append(nbformat.v4.new_code_cell(source))
        else:
            cell.source += "\n\n" + source
    return change


def _names_defined(source: str) -> set[str]:
    """The names a cell's top-level statements bind (def, class, assignment)."""
    try:
        body = ast.parse(source).body
    except SyntaxError:  # IPython syntax: no task's definition to place
        return set()
    names = {node.name for node in body if isinstance(node, (ast.FunctionDef, ast.ClassDef))}
    for node in body:
        for target in [*getattr(node, "targets", []), getattr(node, "target", None)]:
            if isinstance(target, ast.Name):
                names.add(target.id)
    return names


LIAR = '''
import torch
class Liar(torch.Tensor):
    def __eq__(self, other): return True
    def allclose(self, *a, **k): return True
_real = masked_softmax
def masked_softmax(X, valid_lens):
    return torch.zeros_like(X).as_subclass(Liar)
'''
ZEROS = '''
import torch
def masked_softmax(X, valid_lens):
    return torch.zeros_like(X)
'''
SNOOP = '''
import gc, os, sys, builtins
found = [m for m in sys.modules if m.startswith(("reference", "autograder.checks"))]
for path in ("/work/main/assignments", "/work/main/reference", "/work/main/grader.yml"):
    assert not os.path.exists(path), path
try:
    open("/tmp/results/untouched.json", "w").write("{}")
except OSError:
    pass
import socket
try:
    socket.create_connection(("127.0.0.1", 22), timeout=1)
except OSError:
    pass
assert not found, found
'''

HONEST = {"returns_zeros": edited("untouched", append_cell(ZEROS))}  # the liar without its lie
CASES = {  # name -> (notebook, honest counterpart)
    "tests_deleted": (edited("untouched", delete_tests), "untouched"),
    "tests_emptied_points_raised": (edited("untouched", empty_tests_and_raise_points), "untouched"),
    "grade_ids_swapped": (edited("untouched", swap_grade_ids), "untouched"),
    "locked_cell_patched": (edited("buggy", patch_locked_cell), "buggy"),
    "builtins_patched": (edited("buggy", append_cell(
        "import builtins, torch\nbuiltins.abs = lambda x: 0\ntorch.Tensor.__sub__ = lambda a, b: a * 0")), "buggy"),
    "tensor_subclass_liar": (edited("untouched", append_cell(LIAR)), "returns_zeros"),
    "infinite_loop": (edited("correct", append_cell("while True:\n    pass")), "correct"),
    "memory_bomb": (edited("correct", append_cell("blocks = []\nwhile True:\n    blocks.append(bytearray(10**8))")), "correct"),
    "fork_bomb": (edited("correct", append_cell("import os\nwhile True:\n    os.fork()")), "correct"),
    "output_flood": (edited("correct", append_cell("while True:\n    print('x' * 10000)")), "correct"),
    "sigterm_ignored_and_thread_left": (edited("correct", append_cell(
        "import signal, threading, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
        "threading.Thread(target=lambda: time.sleep(10**6), daemon=False).start()")), "correct"),
    "snooping": (edited("correct", append_cell(SNOOP)), "correct"),
}


@pytest.fixture(scope="module")
def graded(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("tamper")
    for name in ("correct", "buggy", "untouched"):
        shutil.copy(EXAMPLES / f"{name}.ipynb", root / f"{name}.ipynb")
    for name, (notebook, _) in CASES.items():
        nbformat.write(notebook, root / f"{name}.ipynb")
    for name, notebook in HONEST.items():
        nbformat.write(notebook, root / f"{name}.ipynb")
    config = yaml.safe_load((REPO / "grader.yml").read_text())
    config["sandbox"].update(cell_timeout_s=3, call_timeout_s=5, submission_timeout_s=120,
                             memory_mb=1024, max_processes=16, max_output_kb=8)
    (root / "grader.yml").write_text(yaml.safe_dump(config))
    out = root / "results"
    command = [sys.executable, "-m", "autograder.cli", "grade", str(root), "--assignment",
               "attention_scoring", "--output", str(out), "--config", str(root / "grader.yml")]
    started = time.monotonic()
    run = subprocess.run(command, capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stderr[-3000:]
    assert time.monotonic() - started < 600  # bounded, whatever the hostile cells do
    return out


def scores(out: Path, name: str) -> dict:
    result = json.loads((out / f"{name}.json").read_text())
    return {task["id"]: task["score"] for task in result["tasks"]}


@pytest.mark.parametrize("case", sorted(CASES))
def test_tampering_never_pays(graded, case):
    """Does a tampered or hostile notebook score no more than its honest counterpart on any task?"""
    honest = scores(graded, CASES[case][1])
    got = scores(graded, case)
    for task, score in got.items():
        if score is not None:
            assert score <= honest[task], (task, score, honest[task])


def test_hostile_cells_cost_nothing_else(graded):
    """Do the crashing, looping and flooding cells leave the correct code its full marks?"""
    for case in ("infinite_loop", "memory_bomb", "fork_bomb", "output_flood",
                 "sigterm_ignored_and_thread_left", "snooping"):
        assert scores(graded, case) == scores(graded, "correct"), case


def test_sandbox_hides_the_grader_from_the_snooping_cell(graded):
    """Did the snooping cell find no reference, hidden tests, grader modules or network?"""
    warnings = json.loads((graded / "snooping.json").read_text())["warnings"]
    assert not [w for w in warnings if w["code"] == "cell_error"], warnings


def test_other_students_are_unaffected(graded):
    result = json.loads((graded / "untouched.json").read_text())
    assert result["student_id"] == "untouched" and result["tasks"]


def test_tampering_is_reported(graded):
    codes = {c: {w["code"] for w in json.loads((graded / f"{c}.json").read_text())["warnings"]}
             for c in ("tests_emptied_points_raised", "grade_ids_swapped", "locked_cell_patched")}
    assert "points_changed" in codes["tests_emptied_points_raised"]
    assert "cell_type_changed" in codes["grade_ids_swapped"]
    assert "locked_cell_edited" in codes["locked_cell_patched"]


def test_killed_batch_resumes_to_the_same_results(tmp_path):
    """Does a batch killed with SIGKILL leave no process of its run behind, and started
    again give the uninterrupted results?"""
    folder = tmp_path / "in"
    folder.mkdir()
    for i in range(4):
        shutil.copy(EXAMPLES / ("correct.ipynb" if i % 2 else "buggy.ipynb"), folder / f"s{i}.ipynb")
    command = [sys.executable, "-m", "autograder.cli", "grade", str(folder), "--assignment",
               "attention_scoring", "--jobs", "1", "--output"]
    whole = subprocess.run([*command, str(tmp_path / "whole")], capture_output=True, timeout=600)
    assert whole.returncode == 0
    marker = f"{os.environ.get(RUN_MARKER, 'tests')}-killed-{uuid.uuid4().hex[:8]}"
    killed = subprocess.Popen([*command, str(tmp_path / "resumed")], start_new_session=True,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              env={**os.environ, RUN_MARKER: marker})
    deadline = time.monotonic() + 300
    while not list((tmp_path / "resumed").glob("s*.json")) and time.monotonic() < deadline:
        time.sleep(0.2)
    seen = snapshot(marker)
    killed.send_signal(signal.SIGKILL)
    killed.wait()
    assert left_after(marker, seen) == {}  # its grading processes and sandboxes die with it
    for path in (tmp_path / "resumed").glob("s*.json"):
        json.loads(path.read_text())  # every file present is complete
    again = subprocess.run([*command, str(tmp_path / "resumed")], capture_output=True, text=True, timeout=600)
    assert again.returncode == 0
    for i in range(4):
        assert (json.loads((tmp_path / "resumed" / f"s{i}.json").read_text())
                == json.loads((tmp_path / "whole" / f"s{i}.json").read_text()))
    assert not list((tmp_path / "resumed").glob(".*.tmp"))

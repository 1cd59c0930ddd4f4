"""Cost tests (SPEC §3, "Work on what a student controls grows with its size, never faster"):
every step of the trusted side that reads, validates, draws, fingerprints or writes what a
student controls, on the same content at 1x, 10x and 100x its size, in the shapes that hurt
(tests/cost.py measures time and peak memory and states the bounds, which
docs/security-bounds.md repeats)."""
import contextlib
import io
import itertools
import json
import secrets
from pathlib import Path

import pytest

from autograder.grading.pipeline import solution_cells
from autograder.grading.assemble import CellPlan
from autograder.outputs import solutions
from autograder.outputs.manual_points import Tasks, read_manual_points
from autograder.outputs.store import OutputFolder
from autograder.report import write_class_report
from autograder.results import CheckResult, Finding, Issue, SubmissionResult, TaskResult, text
from autograder.service import intake
from autograder.service.tokens import Tokens, read_ids
from autograder.submissions.reading import NotJSON, TooLarge, read_kept
from autograder import lms
from tests.cost import assert_linear

REPO = Path(__file__).resolve().parents[2]
ASSIGNMENT = "attention_scoring"
TASK = "distance_attention"   # an exercise: no published code is discounted
_fresh = itertools.count()


def fresh() -> str:
    """A name no earlier run used (content that defeats every cache)."""
    return f"f{next(_fresh)}_{secrets.token_hex(4)}"


def result(student: str, got: str = "", detail: str | None = None) -> SubmissionResult:
    checks = [CheckResult(name="matches the reference", passed=not got, score=0, max_score=1,
                          finding=Finding(problem=text("check.values_differ"), case_code="f(1)", got=got) if got else None)]
    errors = [Issue(code="cell_crashed", task="masked_softmax", message="crashed", detail=detail)] if detail else []
    return SubmissionResult(student_id=student, assignment=ASSIGNMENT, score=0, max_score=1, seed=0, fingerprint="",
                            tasks=[TaskResult(id=TASK, score=0, max_score=1, checks=checks)], errors=errors)


# --- the class report: similar solutions and shared unknown mistakes -----------------------------

def _block(i: int, salt: str) -> str:
    return (f"def step_{salt}_{i}(x, w):\n    y = torch.tanh(x @ w + {i})\n    z = y.softmax(-1) * {i % 7}\n"
            f"    return (z - y).sum(-1)\n")


def _pair_of_cells(scale: int, line, between: str = "", fresh_each: bool = False) -> dict[str, str]:
    """Two students' cells alike line for line but for one line per block (red team 13: the
    marks of a pair's shared lines cost lines x marks); each run's cells are new to every cache
    (a comment), and with ``fresh_each`` their code is too."""
    salt = fresh() if fresh_each else "s"
    blocks = 6 * scale
    a = between.join(line(i, salt) for i in range(blocks))
    b = between.join(line(i, salt) if i % 2 else line(i, salt).replace("tanh", "sigmoid") for i in range(blocks))
    return {"anna": f"# {fresh()}\n{a}", "boris": f"# {fresh()}\n{b}"}


REPORT_SHAPES = {
    "many short lines": lambda n: _pair_of_cells(n, lambda i, s: f"v{i} = w{i} + {i}\n"),
    "blank lines": lambda n: _pair_of_cells(n, _block, between="\n" * 20),
    "one long literal": lambda n: {s: f"PAD = {'x' * 1500 * n!r}\n" + c for s, c in _pair_of_cells(1, _block).items()},
    "fresh each time": lambda n: _pair_of_cells(n, _block, fresh_each=True),
    "many tiny containers": lambda n: _pair_of_cells(n, lambda i, s: f"t{i} = [[{{}}], [{{}}], [()]]\n"),
    "deep nesting": lambda n: _pair_of_cells(n, lambda i, s: f"d{i} = {'(' * 40}{i}{')' * 40}\n"),
}


def _as_class(cells: dict[str, str]):
    return cells, sum(len(c.encode()) for c in cells.values())


def test_the_class_reports_similar_solutions_grow_linearly(tmp_path):
    def report(cells: dict[str, str]) -> None:
        for student, cell in cells.items():
            solutions.save(tmp_path, student, {TASK: cell})
        write_class_report([result(s) for s in cells], tmp_path, "en", {TASK: ["matches the reference"]})

    shapes = {name: (lambda make: lambda n: _as_class(make(n)))(make) for name, make in REPORT_SHAPES.items()}
    assert_linear(report, shapes, seconds=20, per_byte=400, surface="class report: similar solutions")


def _unexplained_class(scale: int) -> tuple[list[SubmissionResult], int]:
    """Students who share unknown mistakes, each with what their code gave (a long ``got``, many
    short lines) and a crashed cell's source and traceback for the TA."""
    salt = fresh()
    got = "".join(f"tensor([{i}., {i}.5])\n" for i in range(8 * scale))
    detail = f"# {salt}\n" + "x = 1\n" * (40 * scale)
    results = [result(f"s{i:03d}", got=got + salt + str(i % 3), detail=detail) for i in range(6)]
    return results, 6 * (len(got) + len(detail))


def test_the_class_reports_unknown_mistakes_grow_linearly(tmp_path):
    def report(results: list[SubmissionResult]) -> None:
        write_class_report(results, tmp_path, "en", {TASK: ["matches the reference"]})

    assert_linear(report, {"many short lines": _unexplained_class}, seconds=20, per_byte=60,
                  surface="class report: unknown mistakes")


# --- the notebook reader and the upload check -----------------------------------------------------

def _notebook(cells: list[dict], metadata: str = "{}") -> bytes:
    base = {"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": cells}
    return json.dumps(base).replace('"metadata": {}', f'"metadata": {metadata}', 1).encode()


def _code_cell(source, nbgrader: str | None = None, outputs: str = "[]") -> dict:
    cell = {"cell_type": "code", "execution_count": None, "metadata": {"nbgrader": "NBGRADER"}, "outputs": "OUTPUTS",
            "source": source}
    return json.loads(json.dumps(cell).replace('"NBGRADER"', nbgrader or '{"grade_id": "masked_softmax", '
                                               '"solution": true, "grade": false, "locked": false}')
                      .replace('"OUTPUTS"', outputs))


NOTEBOOK_SHAPES = {
    "many tiny containers": lambda n: _notebook([_code_cell(
        "x = 1\n", nbgrader='{"grade_id": "t", "x": [' + ",".join(["[{}]"] * (1000 * n)) + "]}")]),
    "tiny containers in outputs": lambda n: _notebook([_code_cell(
        "x = 1\n", outputs="[" + ",".join(['{"data": [[{}]]}'] * (1000 * n)) + "]")]),
    "deep nesting": lambda n: _notebook([_code_cell(
        "x = 1\n", nbgrader='{"grade_id": "t", "x": [' + ",".join(["[" * 60 + "]" * 60] * (40 * n)) + "]}")]),
    "many short lines": lambda n: _notebook([_code_cell(["x\n"] * (3000 * n))]),
    "blank lines": lambda n: _notebook([_code_cell(["\n"] * (3000 * n))]),
    "one long literal": lambda n: _notebook([_code_cell("s = '" + "x" * (10_000 * n) + "'\n")]),
    "many cells, fresh": lambda n: _notebook([_code_cell(f"v_{fresh()} = {i}\n") for i in range(60 * n)]),
}


def _read_or_refuse(data: bytes) -> None:
    with contextlib.suppress(TooLarge, NotJSON):
        read_kept(io.BytesIO(data), 20 << 20)


def test_the_notebook_reader_grows_linearly():
    assert_linear(_read_or_refuse, NOTEBOOK_SHAPES, seconds=10, per_byte=30, surface="notebook reader")


def test_the_upload_check_grows_linearly(tmp_path):
    path = tmp_path / "upload.ipynb"

    def check(data: bytes) -> None:
        path.write_bytes(data)
        with contextlib.suppress(intake.Refusal):
            intake.check_notebook(path, 20 << 20)
    shapes = {**NOTEBOOK_SHAPES, "tiny containers at the top": lambda n: b"[" + b",".join([b"[{}]"] * (1000 * n)) +
              b"]", "tiny containers beside the cells": lambda n: b'{"cells": [], "nbformat": 4, "x": [' +
              b",".join([b"[{}]"] * (1000 * n)) + b"]}"}
    assert_linear(check, shapes, seconds=10, per_byte=30, surface="upload check")


# --- what is kept of a solution cell for the similarity ---------------------------------------------

KEPT_CODE_SHAPES = {   # from 1x on above MAX_SOLUTION_CHARS, where a cell is reduced before its cut
    "many short lines": lambda n: "".join(f"v{i} = {i}\n" for i in range(10_000 * n)),
    "blank lines": lambda n: "x = 1\n" + "\n" * (70_000 * n),
    "one long literal": lambda n: f"PAD = {'x' * 70_000 * n!r}\nx = 1\n",
    "comments": lambda n: "# a note\n" * (8000 * n),
    "a long docstring": lambda n: '"""' + "notes\n" * (12_000 * n) + '"""\nx = 1\n',
    "deep nesting": lambda n: "y = [[{}]]\n" * (7000 * n) + "x = " + "(" * 50 + "1" + ")" * 50 + "\n",
}


def test_what_is_kept_of_a_solution_cell_grows_linearly():
    assert_linear(lambda source: solution_cells(CellPlan(cells=[("t", source)]), ["t"]), KEPT_CODE_SHAPES,
                  seconds=10, per_byte=8, sizes=(1, 10, 50), surface="kept solution cell")


# --- one student's result, feedback and page ------------------------------------------------------

def _result_of_size(scale: int, shape: str) -> tuple[SubmissionResult, int]:
    salt = fresh()
    if shape == "many short lines":
        message = "".join(f"line {i}\n" for i in range(200 * scale))
    elif shape == "one long literal":
        message = "x" * (2000 * scale)
    else:
        message = "\x1b[2J\u202e" * (200 * scale)
    got = f"{salt} " + message
    issues = [Issue(code="cell_error", task="masked_softmax", message=message[:20_000]) for _ in range(scale)]
    checks = [CheckResult(name=f"check {i}", passed=False, score=0, max_score=1, message=message,
                          finding=Finding(problem=text("check.values_differ"), case_code="f(1)", got=got))
              for i in range(3)]
    built = SubmissionResult(student_id=f"s-{salt}", assignment=ASSIGNMENT, score=0, max_score=3, seed=0,
                             fingerprint="", tasks=[TaskResult(id="masked_softmax", score=0, max_score=3,
                                                               checks=checks)], warnings=issues,
                             solutions={"masked_softmax": message})
    return built, len(built.model_dump_json())


def test_a_students_result_feedback_and_page_grow_linearly(tmp_path):
    folder = OutputFolder(tmp_path, ASSIGNMENT, "en")
    folder.check_usable()
    shapes = {shape: (lambda shape: lambda n: _result_of_size(n, shape))(shape)
              for shape in ("many short lines", "one long literal", "control characters")}
    assert_linear(folder.save, shapes, seconds=20, per_byte=60, surface="result, feedback and page")


# --- the CSV writers and readers --------------------------------------------------------------------

def _ids(count: int, shape: str) -> list[str]:
    salt = fresh()
    if shape == "formulas and quotes":
        return [f"=HYPERLINK(\"{i}\",\"{salt}\")'" for i in range(count)]
    if shape == "line breaks":
        return [f"s{i}\r\n{salt}\u2028" for i in range(count)]
    return [f"s{i}-{salt}" for i in range(count)]


def test_grades_csv_grows_linearly(tmp_path):
    folder = OutputFolder(tmp_path, ASSIGNMENT, "en")
    folder.check_usable()
    tasks = [TaskResult(id="masked_softmax", score=1, max_score=3), TaskResult(id="cost_analysis", score=None,
                                                                                max_score=2, manual=True)]

    def write(results: list[SubmissionResult]) -> None:
        folder.write_grades(results, ["masked_softmax", "cost_analysis"])

    def class_of(scale: int, shape: str):
        ids = _ids(40 * scale, shape)
        return [SubmissionResult(student_id=sid, assignment=ASSIGNMENT, score=1, max_score=5, seed=0, fingerprint="",
                                 tasks=tasks) for sid in ids], sum(len(sid) + 20 for sid in ids)
    shapes = {shape: (lambda shape: lambda n: class_of(n, shape))(shape)
              for shape in ("fresh ids", "formulas and quotes", "line breaks")}
    assert_linear(write, shapes, seconds=10, per_byte=300, surface="grades.csv")


def _csv_file(tmp_path: Path, name: str):
    path = tmp_path / name

    def made(text_of):
        def make(scale: int):
            data = text_of(scale)
            return data, len(data.encode())
        return make

    def written(data: str) -> Path:
        path.write_text(data, encoding="utf-8")
        return path
    return made, written


@pytest.mark.parametrize("reader", ["manual_points.csv", "roster", "tokens", "tokens --from"])
def test_the_csv_readers_grow_linearly(tmp_path, reader):
    made, written = _csv_file(tmp_path, "manual_points.csv" if reader == "manual_points.csv" else "input.csv")
    results = [SubmissionResult(student_id="s", assignment=ASSIGNMENT, score=0, max_score=2, seed=0, fingerprint="",
                                tasks=[TaskResult(id="cost_analysis", score=None, max_score=2, manual=True)])]
    work = {
        "manual_points.csv": lambda data: read_manual_points(written(data).parent, Tasks.of_results(results)),
        "roster": lambda data: lms.match(lms.read_roster(written(data)), 1, ["s1", "s2"]),
        "tokens": lambda data: Tokens.load(written(data)),
        "tokens --from": lambda data: read_ids(written(data)),
    }[reader]
    header = {"manual_points.csv": "student_id,task,points\n", "roster": "Student,ID,SIS Login ID\n",
              "tokens": "student_id,token\n", "tokens --from": "id,first_name,last_name\n"}[reader]

    def row(i: int, salt: str, shape: str) -> str:
        cells = {"manual_points.csv": [f"s{i}{salt}", "cost_analysis", "1.5"],
                 "roster": [f"Name {i}", str(i), f"s{i}{salt}"],
                 "tokens": [f"s{i}{salt}", secrets.token_urlsafe(24)],
                 "tokens --from": [f"s{i}{salt}", "Ann", "Lee"]}[reader]
        if shape == "quoted line breaks" and reader != "tokens":
            cells[-1] = f'"{cells[-1]}\r\nmore\u2028"' if reader != "manual_points.csv" else cells[-1]
        return ",".join(cells) + "\n"

    def text_of(shape: str):
        return lambda n: header + (lambda salt: "".join(row(i, salt, shape) +
                                                        ("\n" * 3 if shape == "blank lines" else "")
                                                        for i in range(100 * n)))(fresh())
    shapes = {shape: made(text_of(shape)) for shape in ("many short lines", "blank lines", "quoted line breaks")}
    assert_linear(work, shapes, seconds=10, per_byte=400, surface=f"csv reader: {reader}")

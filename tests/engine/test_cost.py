"""Cost tests (SPEC §3, "Work on what a student controls grows with its size, never faster"):
every step of the trusted side that reads, validates, draws, fingerprints or writes what a
student controls, on the same content at 1x, 10x and 100x its size, in the shapes that hurt
(tests/cost.py measures time and peak memory and states the bounds, which
docs/security-bounds.md repeats)."""
import itertools
import secrets
from pathlib import Path

from autograder.outputs import solutions
from autograder.report import write_class_report
from autograder.results import CheckResult, Finding, Issue, SubmissionResult, TaskResult, text
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

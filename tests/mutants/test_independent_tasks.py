"""One mistake costs points once (SPEC §3): a solution cell that leaves its name undefined (a
syntax error, a deleted cell, a failed import, a renamed function) costs its own task's points,
not those of every task whose code calls that name (red team: a typo in masked_softmax scored
0/13 where the untouched stub scored 10/13)."""
import pytest

from autograder.grading.task import grade_task
from autograder.sandbox.client import local_student
from autograder.sandbox.runner import Runner

from .harness import ASSIGNMENT_OF, notebook_namespace, settings
from .report import ALL_MUTANTS


def correct_cell(task_id: str) -> str:
    return next(m.source for m in ALL_MUTANTS if m.task_id == task_id and m.correct and m.sandbox_only is None)


@pytest.mark.parametrize("task_id", ["dot_product_attention", "additive_attention"])
def test_a_name_another_cell_left_undefined_is_the_books_while_this_task_is_checked(task_id):
    namespace = notebook_namespace()
    del namespace["masked_softmax"]  # its cell raised SyntaxError, or was deleted
    runner = Runner()
    runner.use_namespace(namespace)
    reply = runner.handle({"op": "exec", "args": {"label": task_id, "source": correct_cell(task_id)}})
    assert "error" not in reply, reply
    result = grade_task(local_student(runner), settings(ASSIGNMENT_OF[task_id]), task_id).result
    assert result.score == result.max_score, [c.message for c in result.checks if not c.passed][:2]
    assert "masked_softmax" not in namespace  # unbound again: the student's namespace as it was

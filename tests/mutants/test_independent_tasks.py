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


STALE_COPY = """
def masked_softmax(X, valid_lens):  # the first draft, for (B,) lengths only
    keep = torch.arange(X.shape[-1])[None, None, :] < valid_lens[:, None, None]
    return torch.softmax(X.masked_fill(~keep, -1e6), dim=-1)


class BilinearAttention(nn.Module):
    def __init__(self, query_size, dropout):
        super().__init__()
        self.M = nn.LazyLinear(query_size, bias=False)
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, valid_lens=None):
        scores = torch.bmm(queries, self.M(keys).transpose(1, 2)) / math.sqrt(queries.shape[-1])
        self.attention_weights = masked_softmax(scores, valid_lens)
        return torch.bmm(self.dropout(self.attention_weights), values)
"""


@pytest.mark.parametrize("recorded", [True, False], ids=["worker", "kernel"])
def test_a_name_the_graded_cell_defines_itself_keeps_that_cells_definition(recorded):
    """While bilinear_attention is checked, is the masked_softmax its own cell defines (a stale copy)
    what its class calls, and not the book's, whether the worker recorded what the cell bound or the
    name is found, in a kernel's namespace, by the cell its code came from? Another task's name the
    cell does not define is still the book's."""
    from autograder.checks import book_without, names_to_bind
    from autograder.course import COURSE
    runner = Runner()
    runner.use_namespace(notebook_namespace())
    notebooks_dot = runner.namespace["DotProductAttention"]
    runner.op_exec("bilinear_attention", STALE_COPY, defines="BilinearAttention" if recorded else None)
    own = runner.namespace["masked_softmax"]
    source = book_without(COURSE.book_source("attention_scoring"), "BilinearAttention")
    runner.op_bind(names_to_bind("bilinear_attention"), source, own="BilinearAttention")
    assert runner.namespace["masked_softmax"] is own
    assert runner.namespace["DotProductAttention"] is not notebooks_dot  # the book's, built afresh
    runner.op_unbind()
    assert runner.namespace["masked_softmax"] is own and runner.namespace["DotProductAttention"] is notebooks_dot

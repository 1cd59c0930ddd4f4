"""One round trip where the checks once made several: a build that also sets train mode and
takes the gradients, a call that seeds first. Each answers what the separate requests
answered, bit for bit, errors included; a forged build reply fails the student's checks,
never the grader."""
import pytest
import torch

from autograder.grading.task import grade_task
from autograder.sandbox.client import Student, local_student
from autograder.sandbox.runner import Runner

from .harness import ASSIGNMENT_OF, notebook_namespace, settings
from .variants_attention import MUTANTS as ATTENTION
from .variants_decoders import MUTANTS as DECODERS

DOT = next(m for m in ATTENTION if m.task_id == "dot_product_attention" and m.correct).source
DOT_RETURN = "        return torch.bmm(self.dropout(self.attention_weights), values)"


def _returning(lines: str) -> str:
    """The correct dot-product cell with ``lines`` before its last line (its return)."""
    assert DOT_RETURN in DOT
    return DOT.replace(DOT_RETURN, lines + "\n" + DOT_RETURN)


BAD_BACKWARD = _returning("        self.attention_weights.mul_(1.0)  # in place on what softmax's backward needs")
WRITES_INTO_QUERIES = _returning("        queries.mul_(2.0)  # into what it was given")


def runner_with(source: str, label: str) -> Runner:
    runner = Runner()
    runner.use_namespace(notebook_namespace())
    assert "error" not in runner.handle({"op": "exec", "args": {"label": label, "source": source}})
    return runner


def correct(task_id: str) -> Runner:
    mutant = next(m for m in ATTENTION + DECODERS if m.task_id == task_id and m.correct)
    return runner_with(mutant.source, task_id)


def inputs(dtype=torch.float64) -> list:
    generator = torch.Generator().manual_seed(3)
    return [torch.randn(2, 3, 4, generator=generator, dtype=dtype), torch.randn(2, 5, 4, generator=generator, dtype=dtype),
            torch.randn(2, 5, 2, generator=generator, dtype=dtype), torch.tensor([2, 5])]


def build_args(dropout: float = 0.0, **extra) -> dict:
    return {"name": "DotProductAttention", "args": [dropout], "kwargs": {}, "calls": [], "parameters": {},
            "dtype": "float64", "seed": 0, **extra}


def request(runner: Runner, op: str, **args):
    reply = runner.handle({"op": op, "args": args})
    assert "error" not in reply, reply
    return reply["value"]


def same(a, b) -> bool:
    if isinstance(a, torch.Tensor):
        return isinstance(b, torch.Tensor) and a.dtype == b.dtype and torch.equal(a, b)
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return a == b


@pytest.mark.parametrize("train", [False, True])
def test_a_build_with_its_gradients_answers_as_the_two_requests(train):
    R = torch.randn(2, 3, 2, generator=torch.Generator().manual_seed(4), dtype=torch.float64)
    gradients = {"calls": [[None, inputs()]], "cotangent": R, "first_item": False}
    apart = correct("dot_product_attention")
    handle = request(apart, "build", **build_args())["handle"]
    if train:
        request(apart, "mode", target=handle, train=True)
    expected = request(apart, "gradients", target=handle, **gradients)
    together = correct("dot_product_attention")
    built = request(together, "build", **build_args(train=train, gradients=gradients))
    assert same(built["gradients"]["value"], expected)
    assert together.objects[built["handle"].id].training is train


def test_a_builds_gradients_error_is_the_students_and_the_module_is_kept():
    runner = runner_with(BAD_BACKWARD, "dot_product_attention")
    R = torch.randn(2, 3, 2, dtype=torch.float64)
    built = request(runner, "build", **build_args(gradients={"calls": [[None, inputs()]], "cotangent": R,
                                                             "first_item": False}))
    error = built["gradients"]["error"]
    assert error["type"] == "RuntimeError" and "inplace" in error["message"]
    assert built["handle"].id in runner.objects


def test_a_seeded_call_answers_as_seed_then_call():
    """Train mode at dropout 0.5: the draw depends on the seed, and is the same either way."""
    answers = []
    for fused in (False, True):
        runner = correct("dot_product_attention")
        handle = request(runner, "build", **build_args(0.5, train=True))["handle"]
        call = {"target": handle, "method": None, "args": inputs(torch.float32), "kwargs": {}}
        if fused:
            answers.append(request(runner, "call", **call, seed=7))
        else:
            request(runner, "seed", seed=7)
            answers.append(request(runner, "call", **call))
    assert same(answers[0], answers[1])
    elsewhere = correct("dot_product_attention")
    handle = request(elsewhere, "build", **build_args(0.5, train=True))["handle"]
    moved = request(elsewhere, "call_elsewhere", target=handle, method=None, args=inputs(torch.float32), kwargs={},
                    modules=[handle], seed=7)
    assert same(moved["result"], answers[0])


FORGED = {"no_gradients": lambda value: {k: v for k, v in value.items() if k != "gradients"},
          "gradients_not_a_dict": lambda value: {**value, "gradients": [1, 2]},
          "gradients_value_not_a_dict": lambda value: {**value, "gradients": {"value": 3}}}


@pytest.mark.parametrize("task_id", ["dot_product_attention", "seq2seq_attention_decoder"])
@pytest.mark.parametrize("kind", sorted(FORGED))
def test_a_forged_build_reply_fails_the_gradients_check_not_the_grader(task_id, kind):
    runner, forge = correct(task_id), FORGED[kind]
    honest = local_student(runner).transport

    def transport(message: dict) -> dict:
        reply = honest(message)
        if message["op"] == "build" and message["args"].get("gradients") is not None and "value" in reply:
            return {**reply, "value": forge(reply["value"])}
        return reply
    result = grade_task(Student(transport), settings(ASSIGNMENT_OF[task_id]), task_id).result
    failed = {c.name: c.finding.problem.id for c in result.checks if not c.passed}
    assert "gradients match the reference" in failed
    assert "check.grader_error" not in failed.values(), failed


@pytest.mark.parametrize("source, equal", [(None, True), (WRITES_INTO_QUERIES, False)])
def test_a_call_made_twice_gets_the_very_same_arguments(source, equal):
    """The second call sees what the first left in its arguments; the first result is copied
    before the second call, so a result that aliases an argument is not changed after the fact."""
    runner = correct("dot_product_attention") if source is None else runner_with(source, "dot_product_attention")
    built = request(runner, "build", **build_args(then=[[None, inputs()]], read=[], twice=True))
    first, second = built["then"]["results"]["value"]
    assert torch.equal(first, second) is equal

"""The checks in the book's contexts read what the worker's ``calls_kept`` returns: a worker
the student has rewritten may answer anything. A forged reply fails that student's checks as
their worker's failure; it never becomes the grader's error, and a malformed one never passes."""
import pytest
import torch

from autograder.grading.task import grade_task
from autograder.sandbox.client import Student, local_student
from autograder.sandbox.runner import Runner

from .harness import ASSIGNMENT_OF, notebook_namespace, settings
from .variants_attention import MUTANTS as ATTENTION
from .variants_decoders import MUTANTS as DECODERS

STEP = [torch.zeros(1), {"attention_weights": torch.zeros(1)}]
FORGED = {
    "not_a_dict": [1, 2, 3],
    "too_few_calls": {"at_call": [STEP], "after": [STEP]},
    "steps_not_pairs": {"at_call": [1, 2, 3, 4, 5, 6], "after": [1, 2, 3, 4, 5, 6]},
    "attributes_not_a_dict": {"at_call": [[torch.zeros(1), 7]] * 6, "after": [[torch.zeros(1), 7]] * 6},
    "right_shape_wrong_values": {"at_call": [STEP] * 7, "after": [STEP] * 7, "written": [[]] * 7},  # a decoder's 7
    "written_not_listed": {"at_call": [STEP] * 7, "after": [STEP] * 7},
}


def forging(runner: Runner, forged) -> Student:
    """The runner's answers, except ``calls_kept``'s, which are ``forged``."""
    honest = local_student(runner).transport

    def transport(request: dict) -> dict:
        if request["op"] == "calls_kept":
            return {"value": forged, "stdout": ""}
        return honest(request)
    return Student(transport)


@pytest.mark.parametrize("task_id, checks", [  # the checks whose calls travel as one calls_kept
    ("dot_product_attention", {"matches the reference", "attention_weights match the reference",
                               "deterministic in eval mode", "dropout as nn.Dropout in train mode"}),
    ("seq2seq_attention_decoder", {"step by step equals teacher forcing", "deterministic in eval mode",
                                   "attention weights per step match the reference", "matches the reference"})])
@pytest.mark.parametrize("kind", sorted(FORGED))
def test_a_forged_reply_fails_the_students_checks_not_the_grader(task_id, checks, kind):
    correct = next(m for m in ATTENTION + DECODERS if m.task_id == task_id and m.correct)
    runner = Runner()
    runner.use_namespace(notebook_namespace())
    assert "error" not in runner.handle({"op": "exec", "args": {"label": task_id, "source": correct.source}})
    result = grade_task(forging(runner, FORGED[kind]), settings(ASSIGNMENT_OF[task_id]), task_id).result
    failed = {c.name: c.finding.problem.id for c in result.checks if not c.passed}
    if kind == "right_shape_wrong_values" and task_id == "seq2seq_attention_decoder":
        # well-formed: its step logits are wrong, so no step began from a state carried right,
        # and the per-step weights are judged on the drawn examples alone (as a decoder that
        # carries its state wrong is: the step-by-step check charges it once)
        # (its training context's two calls get seven: malformed; the seven steps wrote into nothing)
        checks = {"step by step equals teacher forcing", "matches the reference"}
    assert set(failed) == checks, failed
    assert "check.grader_error" not in failed.values(), failed


def _forged_perturbed(kind: str):
    """A ``perturbed`` reply forged from the honest one."""
    def forge(honest: dict):
        if kind == "not_a_dict":
            return [1, 2, 3]
        if kind == "inputs_short":
            return {**honest, "inputs": honest["inputs"][:1]}
        if kind == "no_change":  # every shifted output the same as the unshifted one
            same = [honest["output"]] * 4
            return {**honest, "inputs": [same for _ in honest["inputs"]], "parameters": same}
        if kind == "nan_outputs":
            nan = [torch.full_like(honest["output"], float("nan"))] * 4
            return {**honest, "inputs": [nan for _ in honest["inputs"]], "parameters": nan}
        if kind == "wrong_shapes":
            small = [torch.zeros(1)] * 4
            return {**honest, "inputs": [small for _ in honest["inputs"]], "parameters": small}
        raise AssertionError(kind)
    return forge


@pytest.mark.parametrize("kind", ["not_a_dict", "inputs_short", "no_change", "nan_outputs", "wrong_shapes"])
def test_a_forged_perturbed_reply_never_passes_the_gradients(kind):
    """Where the output is wrong, the gradients are judged against the worker's own finite
    differences (``perturbed``): a forged reply fails the check or leaves it not judged, and
    never becomes the grader's error."""
    no_tanh = next(m for m in ATTENTION if m.id == "additive_attention-no_tanh")
    runner = Runner()
    runner.use_namespace(notebook_namespace())
    assert "error" not in runner.handle({"op": "exec", "args": {"label": no_tanh.task_id, "source": no_tanh.source}})
    honest, forge = local_student(runner).transport, _forged_perturbed(kind)

    def transport(request: dict) -> dict:
        reply = honest(request)
        if request["op"] == "perturbed" and "value" in reply:
            return {**reply, "value": forge(reply["value"])}
        return reply
    result = grade_task(Student(transport), settings("attention_scoring"), no_tanh.task_id).result
    gradients = next(c for c in result.checks if c.name == "gradients match the reference")
    assert not gradients.passed and gradients.score == 0
    assert all(c.finding is None or c.finding.problem.id != "check.grader_error" for c in result.checks)

"""Gradients of a wrong forward are judged against the student's own forward (finite
differences, ``gradients.own_forward_judged``). Property: code whose gradients do flow is
never charged there, on any drawn example (scores up to a few hundred, float32 computed
inside float64, additive attention without tanh, a decoder querying the wrong layer), and a
cut gradient is charged, naming what it cuts."""
import pytest
import torch
from hypothesis import HealthCheck, given, settings

from autograder.checks import attention, contexts, decoders
from autograder.checks.core import CheckFailed
from autograder.checks.inputs import attention_cases, decoder_cases
from autograder.sandbox.client import local_student
from autograder.sandbox.runner import Runner

from .harness import notebook_namespace
from .report import ALL_MUTANTS

PROPERTY = settings(max_examples=60, derandomize=True, deadline=None, database=None,
                    suppress_health_check=list(HealthCheck))
FLOWING = ["dot_product_attention-no_sqrt", "dot_product_attention-sqrt_d_in_float32",
           "additive_attention-no_tanh", "distance_attention-positive_distance", "bilinear_attention-no_sqrt"]


def student_of(mutant_id: str):
    mutant = next(m for m in ALL_MUTANTS if m.id == mutant_id)
    runner = Runner()
    runner.use_namespace(notebook_namespace())
    assert "error" not in runner.handle({"op": "exec", "args": {"label": mutant.task_id, "source": mutant.source}})
    return local_student(runner), mutant.task_id


@pytest.mark.parametrize("mutant_id", FLOWING)
def test_flowing_gradients_of_a_wrong_attention_are_never_charged(mutant_id):
    student, task_id = student_of(mutant_id)
    task = attention.MODULES[task_id]

    judged = []

    @PROPERTY
    @given(attention_cases(dtype=torch.float64, same_sizes=not task.different_sizes, hidden=task.hidden))
    def never_charged(case):
        judged.append(attention.gradients_judged(student, task, case, "cpu"))
    never_charged()
    assert sum(judged) >= len(judged) // 3, judged  # most examples judged: not passing by never judging


def test_flowing_gradients_of_a_wrong_decoder_are_never_charged():
    student, task_id = student_of("seq2seq_attention_decoder-first_layer_query")

    judged = []

    @PROPERTY
    @given(decoder_cases(dtype=torch.float64))
    def never_charged(case):
        judged.append(decoders.gradients_judged(student, decoders.DECODERS[task_id], case, "cpu"))
    never_charged()
    assert sum(judged) >= len(judged) // 3, judged


@pytest.mark.parametrize("mutant_id, cut", [
    ("additive_attention-no_tanh_and_keys_projected_without_gradient", "keys"),
    ("distance_attention-positive_distance_and_output_from_detached_weights", "queries"),
    ("dot_attention_decoder-context_after_embedding_and_encoder_outputs_detached", "enc_outputs[0]")])
def test_a_cut_gradient_under_a_wrong_forward_is_charged_by_name(mutant_id, cut):
    student, task_id = student_of(mutant_id)
    module = attention if task_id in attention.MODULES else decoders
    task = (attention.MODULES if module is attention else decoders.DECODERS)[task_id]
    case = attention._attending_case(task) if module is attention else decoders._attending_case()
    with pytest.raises(CheckFailed) as failed:
        module.gradients_judged(student, task, case, "cpu")
    assert failed.value.finding.problem.id == "gradients.own_forward"
    assert failed.value.finding.problem.params["name"] == cut


@pytest.mark.parametrize("mutant_id", ["lstm_attention_decoder-embedding_padding_idx_2",
                                       "lstm_attention_decoder-embedding_padding_idx_last"])
def test_a_gradient_wrong_in_one_row_is_charged_where_a_random_direction_dilutes_it(mutant_id):
    """An ``nn.Embedding`` with ``padding_idx``: the forward reads the row, autograd gives it
    none. Over 300 source steps a random direction over every parameter weighs that row too
    little; the direction where the gradients differ from the reference's weighs it alone."""
    student, task_id = student_of(mutant_id)
    with pytest.raises(CheckFailed) as failed:
        contexts.decoder_gradients_in_train_mode(student, decoders.DECODERS[task_id], "cpu")
    assert failed.value.finding.problem.id == "gradients.own_forward"
    assert failed.value.finding.problem.params["name"] == "embedding.weight"

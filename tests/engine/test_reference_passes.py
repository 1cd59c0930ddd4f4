"""The reference passes every check with full points, 50 times over different seeds.

In-process (the same checks as in the sandbox), with every check of every task: the
searches draw float32 and float64, int32 and int64 lengths, scores of a few hundred,
rows of valid length 0, and decoders without enc_valid_lens.
"""
import pytest

import reference
from autograder.checks import TASKS
from autograder.checks.core import Context, run_check
from autograder.sandbox.client import local_student
from autograder.sandbox.runner import Runner

SEEDS = range(50)
# The reference builds the students' GRU with dropout and one layer, which torch warns about.
pytestmark = pytest.mark.filterwarnings("ignore:dropout option adds dropout")


@pytest.fixture(scope="module")
def student():
    runner = Runner()
    runner.use_namespace({name: getattr(reference, name) for name in reference.__all__})
    return local_student(runner)


def failures(student, task_id: str, seed: int) -> list:
    ctx = Context("reference", task_id, seed)
    outcomes = [run_check(check, student, ctx) for check in TASKS[task_id].checks]
    return [(o.result.name, o.result.finding, o.grader_error) for o in outcomes if not o.result.passed]


@pytest.mark.parametrize("task_id", sorted(TASKS))
def test_reference_passes_every_check_for_50_seeds(student, task_id):
    """Does the reference pass every check of the task, for each of 50 seeds?"""
    failed = {seed: f for seed in SEEDS if (f := failures(student, task_id, seed))}
    assert failed == {}


@pytest.mark.cuda
@pytest.mark.parametrize("task_id", sorted(TASKS))
def test_reference_passes_every_check_on_cuda_itself(task_id):
    """On a GPU, does the reference pass every check there, none judged again on the CPU (which
    would hide a check that the GPU alone breaks, as cuDNN's eval-mode RNN backward did)?"""
    runner = Runner()
    runner.use_namespace({name: getattr(reference, name) for name in reference.__all__})
    student = local_student(runner, "cuda")
    ctx = Context("reference", task_id, 0, device="cuda")
    results = [run_check(check, student, ctx).result for check in TASKS[task_id].checks]
    assert [(r.name, r.finding) for r in results if not r.passed or r.again_on_cpu] == []

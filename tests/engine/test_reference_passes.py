"""The reference passes every check with full points, 50 times over different seeds.

In-process (the same checks as in the sandbox). The training check does not depend on
the seed, so it runs once per decoder instead of 50 times.
"""
import sys
from pathlib import Path

import pytest

import reference
from autograder.checks import TASKS
from autograder.checks.core import Context, run_check
from autograder.sandbox.proxy import local_student
from autograder.sandbox.runner import Runner

SEEDS = range(50)
TRAINING = "learns the synthetic corpus"
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def student():
    sys.path.insert(0, str(REPO / "student_template" / "bahdanau"))  # d2l_attention, for training
    runner = Runner()
    runner.use_namespace({name: getattr(reference, name) for name in reference.__all__})
    yield local_student(runner)
    sys.path.remove(str(REPO / "student_template" / "bahdanau"))


def failures(student, task_id: str, seed: int, skip: str | None = None) -> list:
    ctx = Context("reference", task_id, seed)
    outcomes = [run_check(check, student, ctx) for check in TASKS[task_id].checks if check.name != skip]
    return [(o.result.name, o.result.finding) for o in outcomes if not o.result.passed]


@pytest.mark.parametrize("task_id", sorted(TASKS))
def test_reference_passes_every_check_for_50_seeds(student, task_id):
    """Does the reference pass every check of the task, for each of 50 seeds?"""
    failed = {seed: f for seed in SEEDS if (f := failures(student, task_id, seed, skip=TRAINING))}
    assert failed == {}


@pytest.mark.parametrize("task_id", [t for t in sorted(TASKS) if "decoder" in t])
def test_reference_decoder_learns_the_synthetic_corpus(student, task_id):
    [training] = [c for c in TASKS[task_id].checks if c.name == TRAINING]
    outcome = run_check(training, student, Context("reference", task_id, 0))
    assert outcome.result.passed, outcome.result.finding

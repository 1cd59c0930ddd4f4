"""The reference passes every check with full points, over different seeds (in-process path)."""
import pytest

import reference
import reference.book
from autograder.checks import TASKS
from autograder.checks.core import Context, run_check
from autograder.sandbox.proxy import local_student
from autograder.sandbox.runner import Runner

SEEDS = range(3)  # CI budget; `HYPOTHESIS_PROFILE`-independent. Raise locally for more.
FAST_TASKS = [t for t in TASKS if "decoder" not in t]


def student_with_reference() -> object:
    runner = Runner(book=reference.book)
    runner.use_namespace({name: getattr(reference, name) for name in reference.__all__})
    return local_student(runner)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("task_id", FAST_TASKS)
def test_reference_passes_every_check(task_id, seed):
    """Does the reference itself pass every check of the task, for several seeds?"""
    student = student_with_reference()
    ctx = Context("attention_scoring", task_id, seed)
    failed = [(o.name, str(o.finding)) for o in (run_check(c, student, ctx) for c in TASKS[task_id].checks)
              if not o.passed]
    assert failed == []

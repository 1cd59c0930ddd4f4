"""The mutation suite's own data: enough mutants per task, each a well-formed cell."""
import pytest

from autograder.checks import TASKS
from autograder.texts import CATALOGUE
from autograder.sandbox.runner import Runner

from .harness import TASK_IDS, notebook_namespace
from .report import ALL_MUTANTS, table


@pytest.mark.parametrize("task_id", TASK_IDS)
def test_every_task_has_four_right_variants_and_six_bugs(task_id):
    """Is every autograded task covered by at least 4 right variants and 6 bugs?"""
    mine = [m for m in ALL_MUTANTS if m.task_id == task_id]
    assert sum(m.correct for m in mine) >= 4
    assert sum(not m.correct for m in mine) >= 6


def test_mutants_are_unique_and_name_catalogued_mistakes_only_for_bugs():
    """Are the ids unique, and is every named mistake a CATALOGUE id on a bug?"""
    ids = [m.id for m in ALL_MUTANTS]
    assert len(ids) == len(set(ids))
    assert all(f"mistake.{m.mistake}" in CATALOGUE for m in ALL_MUTANTS if m.mistake)
    assert not [m.id for m in ALL_MUTANTS if m.correct and m.mistake]
    checks = {t: {c.name for c in TASKS[t].checks} for t in TASK_IDS}
    assert all(set(m.must_fail) <= checks[m.task_id] for m in ALL_MUTANTS)


@pytest.mark.parametrize("mutant", ALL_MUTANTS, ids=lambda m: m.id)
def test_mutant_cell_runs_and_defines_its_name(mutant):
    """Does each mutant's cell run in the notebook's namespace and define the task's name?"""
    runner, name = Runner(), TASKS[mutant.task_id].defines
    runner.use_namespace(notebook_namespace())
    before = runner.namespace.get(name)  # the book's version, for the names it publishes
    reply = runner.handle({"op": "exec", "args": {"label": mutant.task_id, "source": mutant.source}})
    assert "error" not in reply, reply["error"]
    assert runner.namespace[name] is not before
    assert runner.op_has(name) in ("class", "function")


def test_report_lists_every_task():
    """Does the report have a row for every autograded task? (printed at the end of a run)"""
    report = table()
    assert all(task_id in report for task_id in TASK_IDS)

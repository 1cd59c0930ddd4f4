"""Recorded hypothesis runs replayed to the next student (checks/core.py ``search``).

The law: for any student, ``search`` ends as a full hypothesis run of that student ends:
passing, or failing with the same shrunk example; and a student whose outcomes follow a
recorded run is judged without running hypothesis again. Shrinking has a budget: at most
``SHRINK_BUDGET`` calls after the first failing example, then the smallest failing example found
so far is shown (a full run's law holds with the same budget).
"""
from dataclasses import dataclass

import pytest
import torch
from hypothesis import strategies as st

from autograder.checks import core
from autograder.checks.core import CheckFailed, Context, fail
from autograder.checks.inputs import Case
from autograder.results import text
from autograder.sandbox.client import StudentError

CTX = Context(assignment="a", task="t", seed=7, check="c", max_examples=20)


@dataclass
class Example:
    values: list

    def copy(self) -> "Example":
        return Example(list(self.values))

    def code(self) -> str:
        return repr(self.values)


EXAMPLES = st.lists(st.integers(0, 50), max_size=6).map(Example)


def fails_above(limit: int):
    def test(case: Example):
        if sum(case.values) > limit:
            raise fail(text("check.grader_error"), got=repr(case.values))
    return test


def raises_on_long(length: int):
    def test(case: Example):
        if len(case.values) >= length:
            raise StudentError("IndexError", "list index out of range")
    return test


def writes_then_fails(case: Example):
    case.values.append(99)  # a test may write into its case: the recording keeps the example drawn
    if len(case.values) > 3:
        raise fail(text("check.grader_error"), got=repr(case.values))


STUDENTS = {"passes": lambda case: None, "fails above 60": fails_above(60), "fails above 120": fails_above(120),
            "raises on length 2": raises_on_long(2), "raises on length 5": raises_on_long(5),
            "writes then fails": writes_then_fails}


def verdict(run) -> str | None:
    """None when it passed; otherwise the failing example as the student is shown it."""
    try:
        run()
    except CheckFailed as failed:
        return failed.finding.got or failed.finding.case_code
    return None


def attempting(test):
    def attempt(case):
        try:
            test(case)
        except StudentError as error:
            raise CheckFailed(core.raised(error, case.code())) from None
    return attempt


def full_run(test) -> str | None:
    """What hypothesis alone decides for this student (its shrinking budgeted), nothing replayed."""
    kept = core._RUNS
    core._RUNS = {}
    try:
        return verdict(lambda: core._recorded(EXAMPLES, attempting(test), ("full run", CTX.check_seed(), 20)))
    finally:
        core._RUNS = kept


@pytest.fixture
def fresh_runs(monkeypatch):
    monkeypatch.setattr(core, "_RUNS", {})
    monkeypatch.setattr(core, "_steps", 0)
    calls = []
    real = core._run_hypothesis
    monkeypatch.setattr(core, "_run_hypothesis", lambda *args: calls.append(args) or real(*args))
    return calls


def test_every_student_ends_as_a_full_run_does_in_any_order(fresh_runs):
    expected = {name: full_run(test) for name, test in STUDENTS.items()}
    assert expected["passes"] is None and expected["fails above 60"] is not None
    fresh_runs.clear()
    order = list(STUDENTS) + list(reversed(STUDENTS)) + list(STUDENTS)
    for name in order:
        assert verdict(lambda test=STUDENTS[name]: core.search(EXAMPLES, test, CTX)) == expected[name], name
    # each distinct behaviour ran hypothesis once; every later student was replayed
    assert len(fresh_runs) == len(STUDENTS)


def test_a_student_that_leaves_a_recorded_run_gets_a_full_run(fresh_runs):
    core.search(EXAMPLES, lambda case: None, CTX)  # records the passing run
    assert len(fresh_runs) == 1
    # passes the first examples as the recorded run did, then fails
    assert verdict(lambda: core.search(EXAMPLES, fails_above(90), CTX)) == full_run(fails_above(90))
    assert len(fresh_runs) == 3  # the search's own full run, and this test's


def test_a_failure_from_another_line_is_another_outcome(fresh_runs):
    """Hypothesis tells failures apart by where they were raised; so does the replay."""
    def fails_elsewhere(case: Example):
        if sum(case.values) > 60:
            raise fail(text("check.grader_error"), got="elsewhere " + repr(case.values))
    core.search(EXAMPLES, lambda case: None, CTX)
    assert verdict(lambda: core.search(EXAMPLES, fails_above(60), CTX)) == full_run(fails_above(60))
    runs = len(fresh_runs)
    got = verdict(lambda: core.search(EXAMPLES, fails_elsewhere, CTX))
    assert got.startswith("elsewhere ") and len(fresh_runs) == runs + 1


def test_the_record_is_bounded(fresh_runs, monkeypatch):
    monkeypatch.setattr(core, "MAX_STEPS", 5)
    for _ in range(3):
        assert verdict(lambda: core.search(EXAMPLES, fails_above(60), CTX)) == full_run(fails_above(60))
    assert core._RUNS == {} and core._steps == 0


TENSORS = st.lists(st.integers(0, 50), max_size=8).map(lambda v: Case({"X": torch.tensor(v, dtype=torch.float64)}))


@pytest.mark.parametrize("limit", [0, 30, 60, 120, 200, 1000])
def test_a_budget_keeps_the_verdict_and_shows_a_failing_example_no_larger_than_the_first(fresh_runs, limit):
    """The verdict is known at the first failing example: the budget never changes it; the
    example shown fails, with no more elements than the first failing one."""
    def fails(case: Case) -> bool:
        return float(case.tensors["X"].sum()) > limit

    def test(case: Case):
        if fails(case):
            raise fail(text("check.grader_error"), got=repr(case.tensors["X"].tolist()))
    seen: list[Case] = []
    shown = verdict(lambda: core.search(TENSORS, lambda case: seen.append(case.copy()) or test(case), CTX))
    unbudgeted = verdict(lambda: core._run_hypothesis(TENSORS, attempting(test), CTX.check_seed(), 20))
    assert (shown is None) == (unbudgeted is None)
    if shown is not None:
        first = next(case for case in seen if fails(case))
        assert fails(seen[-1]) and shown == repr(seen[-1].tensors["X"].tolist())
        assert seen[-1].tensors["X"].numel() <= first.tensors["X"].numel()


@pytest.mark.parametrize("budget", [0, 1, 3])
def test_shrinking_stops_at_its_budget_and_shows_a_failing_example(fresh_runs, monkeypatch, budget):
    monkeypatch.setattr(core, "SHRINK_BUDGET", budget)
    seen = []

    def counted(case: Example):
        seen.append((case.copy(), sum(case.values) > 120))
        fails_above(120)(case)
    shown = verdict(lambda: core.search(EXAMPLES, counted, CTX))
    first = next(i for i, (_, failed) in enumerate(seen) if failed)
    assert len(seen) - first <= budget + 2  # the budget's calls, the call that spends it... and the shown one again
    assert seen[-1][1] and shown == repr(seen[-1][0].values)
    shown_sum = sum(seen[-1][0].values)
    assert shown_sum > 120
    # the next student with these outcomes is replayed: the same example, no hypothesis run
    runs = len(fresh_runs)
    assert verdict(lambda: core.search(EXAMPLES, fails_above(120), CTX)) == shown
    assert len(fresh_runs) == runs


def test_the_smallest_failing_example_is_the_one_shown():
    tensors = [Case({"X": torch.zeros(n)}) for n in (9, 4, 7, 4, 12)]
    calls = [(case, "origin" if i != 2 else None, object() if i != 2 else None) for i, case in enumerate(tensors)]
    assert core._smallest_failing(calls) is tensors[3]  # the fewest elements; of equals, the latest


def diagnosed_above(limit: int, diagnosed: list):
    """Fails above ``limit`` as ``fails_above`` does, and names its mistake later (``CheckFailed.later``):
    the example the naming was done for goes into ``diagnosed``."""
    def test(case: Example):
        try:
            fails_above(limit)(case)
        except CheckFailed as failed:
            failed.later(lambda finding, values=list(case.values): (
                diagnosed.append(values), setattr(finding, "mistake", f"sum {sum(values)}")))
            raise
    return test


@pytest.mark.parametrize("replayed", [False, True])
def test_only_the_failure_a_check_ends_with_is_diagnosed(fresh_runs, replayed):
    """Naming a mistake costs calls of its own (probes, the mistakes' outputs): it is done once, for
    the example shown, not for every failing example the search shrinks through; in a full run and
    in a replay alike, and the name is that example's."""
    if replayed:  # the run the next student follows
        with pytest.raises(CheckFailed):
            core.search(EXAMPLES, diagnosed_above(70, []), CTX)
    diagnosed: list = []
    check = core.Check("c", text("check.grader_error"),
                       lambda student, ctx: core.search(EXAMPLES, diagnosed_above(70, diagnosed), ctx))
    outcome = core._outcome(check, None, CTX)
    assert not outcome.result.passed
    assert len(diagnosed) == 1 and repr(diagnosed[0]) == outcome.result.finding.got
    assert outcome.result.finding.mistake == f"sum {sum(diagnosed[0])}"
    assert len(fresh_runs) == 1  # the replay ran no hypothesis of its own

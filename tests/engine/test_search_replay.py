"""Recorded hypothesis runs replayed to the next student (checks/core.py ``search``).

The law: for any student, ``search`` ends as a full hypothesis run of that student ends:
passing, or failing with the same shrunk example; and a student whose outcomes follow a
recorded run is judged without running hypothesis again.
"""
from dataclasses import dataclass

import pytest
from hypothesis import strategies as st

from autograder.checks import core
from autograder.checks.core import CheckFailed, Context, fail
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


def full_run(test) -> str | None:
    """What hypothesis alone decides for this student, nothing replayed."""
    def attempt(case):
        try:
            test(case)
        except StudentError as error:
            raise CheckFailed(core.raised(error, case.code())) from None
    return verdict(lambda: core._run_hypothesis(EXAMPLES, attempt, CTX.check_seed(), CTX.max_examples))


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

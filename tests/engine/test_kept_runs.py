"""Recorded hypothesis runs on disk (checks/kept_runs.py), shared by a results folder's
grading processes: a run one process recorded is replayed by another exactly as its own
full run would end, without hypothesis; what reads back wrong is never trusted."""
import io
import multiprocessing
import pickle

import pytest
import torch
from hypothesis import strategies as st

from autograder.checks import core, kept_runs
from autograder.checks.core import CheckFailed, Context, fail
from autograder.checks.inputs import Case
from autograder.results import text
from autograder.sandbox.client import StudentError

CTX = Context(assignment="a", task="t", seed=11, check="c", max_examples=20)
CASES = st.lists(st.integers(0, 50), max_size=6).map(
    lambda values: Case({"x": torch.tensor(values, dtype=torch.float64)}, {"length": len(values)}))


def fails_above(limit: int):
    def test(case: Case):
        if case.tensors["x"].sum() > limit:
            raise fail(text("check.grader_error"), got=case.code())
    return test


def raises_on_length(length: int):
    def test(case: Case):
        if case.options["length"] >= length:
            raise StudentError("IndexError", "list index out of range")
    return test


STUDENTS = {"passes": lambda case: None, "fails above 60": fails_above(60), "fails above 120": fails_above(120),
            "raises on length 3": raises_on_length(3)}


def verdict(test) -> str | None:
    try:
        core.search(CASES, test, CTX)
    except CheckFailed as failed:
        return failed.finding.got or failed.finding.case_code
    return None


@pytest.fixture
def hypothesis_runs(monkeypatch, tmp_path):
    """A fresh grading process's state, keeping its runs under tmp_path; the full runs it makes."""
    calls = []
    real = core._run_hypothesis
    monkeypatch.setattr(core, "_run_hypothesis", lambda *args: calls.append(args) or real(*args))

    def fresh_process():
        monkeypatch.setattr(core, "_RUNS", {})
        monkeypatch.setattr(core, "_steps", 0)
        kept_runs.keep_runs_in(tmp_path, "v1")
        calls.clear()
    fresh_process()
    yield calls, fresh_process
    kept_runs.keep_runs_in(None)


def test_another_process_replays_every_recorded_run_without_hypothesis(hypothesis_runs):
    calls, fresh_process = hypothesis_runs
    expected = {name: verdict(test) for name, test in STUDENTS.items()}
    assert expected["passes"] is None and expected["fails above 60"] is not None and calls
    fresh_process()  # another grading process, or a later run, on the same folder
    for name in reversed(STUDENTS):
        assert verdict(STUDENTS[name]) == expected[name], name
    assert calls == []


def test_a_new_way_of_failing_still_gets_its_full_run(hypothesis_runs):
    calls, fresh_process = hypothesis_runs
    verdict(STUDENTS["passes"])
    fresh_process()
    assert verdict(fails_above(90)) is not None and len(calls) == 1
    fresh_process()
    assert verdict(fails_above(90)) is not None and calls == []


def test_another_grader_version_starts_afresh(hypothesis_runs, tmp_path):
    calls, _ = hypothesis_runs
    verdict(STUDENTS["passes"])
    kept_runs.keep_runs_in(tmp_path, "v2")
    core._RUNS.clear()
    calls.clear()
    verdict(STUDENTS["passes"])
    assert len(calls) == 1


def test_a_new_grader_version_removes_the_runs_of_the_others(hypothesis_runs, tmp_path):
    """A TA's trial: one folder of recorded runs per grader version piled up. Does a run of v2
    remove v1's (never read again) and keep its own?"""
    verdict(STUDENTS["passes"])
    v1 = kept_runs.RunFiles(tmp_path, "v1").folder
    assert any(v1.iterdir())
    kept_runs.forget_other_versions(tmp_path, "v1")
    assert any(v1.iterdir())
    kept_runs.forget_other_versions(tmp_path, "v2")
    assert not v1.exists()


def _append_runs(folder, writer: int) -> None:
    files = kept_runs.RunFiles(folder, "v1")
    for i in range(40):
        case = Case({"x": torch.full((50,), float(writer))}, {"i": i})
        files.append(("key",), [(case, None), (case, f"origin {writer}")], core.PASSED)


def test_processes_appending_at_once_leave_every_record_whole(tmp_path):
    context = multiprocessing.get_context("fork")
    writers = [context.Process(target=_append_runs, args=(tmp_path, n)) for n in range(3)]
    for writer in writers:
        writer.start()
    for writer in writers:
        writer.join(timeout=60)
    runs = kept_runs.RunFiles(tmp_path, "v1").new_runs(("key",))
    assert len(runs) == 120
    assert {(calls[1][1], calls[0][0].tensors["x"][0].item()) for calls, _ in runs} == \
        {(f"origin {n}", float(n)) for n in range(3)}


class Planted:
    """A record that would run code if it were unpickled as pickle does."""

    def __reduce__(self):
        return (exec, ("import pathlib; pathlib.Path(__import__('os').environ['PLANTED']).touch()",))


@pytest.mark.parametrize("damage", ["truncated", "garbage", "code"])
def test_a_damaged_or_planted_record_is_never_trusted(hypothesis_runs, tmp_path, monkeypatch, damage):
    """The search runs in full with the right verdict; what the file says after the damage is
    not read; a record that is code runs nothing."""
    calls, fresh_process = hypothesis_runs
    expected = verdict(STUDENTS["fails above 60"])
    (path,) = [p for p in (tmp_path / kept_runs.FOLDER).rglob("*") if p.is_file()]
    planted = tmp_path / "planted"
    monkeypatch.setenv("PLANTED", str(planted))
    data = path.read_bytes()
    if damage == "truncated":
        path.write_bytes(data[:-10])
    elif damage == "garbage":
        path.write_bytes(kept_runs.HEADER.pack(12) + b"not a record")
    else:
        buffer = io.BytesIO()
        pickle.dump({"calls": [Planted()], "end": core.PASSED}, buffer, protocol=2)
        path.write_bytes(kept_runs.HEADER.pack(len(buffer.getvalue())) + buffer.getvalue())
    fresh_process()
    assert verdict(STUDENTS["fails above 60"]) == expected
    assert len(calls) == 1 and not planted.exists()


def test_runs_shipped_with_the_grader_are_replayed_and_never_written(hypothesis_runs, tmp_path):
    """``make`` grades the correct notebooks into a folder of the installed grader; a fresh
    results folder's first correct student then replays those runs without hypothesis, while
    a new way of failing is recorded in the results folder only."""
    calls, fresh_process = hypothesis_runs
    shipped_grading = tmp_path / "install-time grading"
    kept_runs.keep_runs_in(shipped_grading, "v1")
    expected = verdict(STUDENTS["passes"])
    shipped = tmp_path / "shipped"
    (shipped_grading / kept_runs.FOLDER).rename(shipped)
    before = sorted((p, p.read_bytes()) for p in shipped.rglob("*") if p.is_file())

    fresh_process()
    results = tmp_path / "a fresh results folder"
    kept_runs.keep_runs_in(results, "v1", shipped=shipped)
    assert verdict(STUDENTS["passes"]) == expected and calls == []
    assert verdict(fails_above(90)) is not None and len(calls) == 1
    assert sorted((p, p.read_bytes()) for p in shipped.rglob("*") if p.is_file()) == before
    assert [p for p in (results / kept_runs.FOLDER).rglob("*") if p.is_file()]

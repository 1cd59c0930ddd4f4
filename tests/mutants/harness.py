"""Grade one mutant in-process, as the notebook would define it (the nbgrader path).

The namespace is the notebook's: ``math``, ``torch`` and ``nn``, the book's
``masked_softmax``, ``DotProductAttention`` and ``AdditiveAttention`` (the earlier
cells of attention_scoring, the course helpers of bahdanau), and ``AttentionDecoder``
and ``init_seq2seq`` from the course library. The mutant's source is exec'd there like
a solution cell, then graded with ``grade_task`` through ``local_student``: the same
checks as the sandboxed path.
"""
import functools
import math
import warnings
from dataclasses import dataclass

import pytest
import torch
from torch import nn

import reference.book

from autograder.config import load_config
from autograder.grading.task import RunSettings, grade_task
from autograder.feedback import Say
from autograder.feedback.plain import check_message
from autograder.results import CheckResult, TaskResult
from autograder.sandbox.client import local_student
from autograder.sandbox.runner import Runner
from reference.seq2seq import AttentionDecoder, init_seq2seq


ASSIGNMENT_OF = {
    **dict.fromkeys(["masked_softmax", "dot_product_attention", "additive_attention",
                     "distance_attention", "bilinear_attention"], "attention_scoring"),
    **dict.fromkeys(["seq2seq_attention_decoder", "lstm_attention_decoder",
                     "dot_attention_decoder"], "bahdanau"),
}
TASK_IDS = list(ASSIGNMENT_OF)


@dataclass(frozen=True)
class Mutant:
    """A solution cell as a student could write it: right (``correct``) or with one bug.

    ``mistake`` is the CATALOGUE id the grader should name for a bug, or None when the
    catalogue has no entry for it (the bug must then only lose points). ``must_fail``
    names checks that must be among the failed ones (e.g. "runs on any device");
    ``fails_only``, when given, is exactly the set of checks that must fail (one property per
    check: SPEC §3). ``sandbox_only`` says why a mutant is graded on the sandboxed path only
    (a hostile cell that reads the grader's memory, which the nbgrader path shares with it).
    ``grader_misses`` is set, with what the checks miss, where a check misjudges the
    mutant today: its test case is then a strict xfail."""
    task_id: str
    name: str
    source: str
    correct: bool
    mistake: str | None = None
    must_fail: tuple[str, ...] = ()
    grader_misses: str | None = None
    fails_only: tuple[str, ...] | None = None
    sandbox_only: str | None = None

    @property
    def id(self) -> str:
        return f"{self.task_id}-{self.name}"


def notebook_namespace() -> dict:
    """The names the notebook defines before a solution cell (SPEC §1)."""
    torch.set_num_threads(1)
    return {"__name__": "__main__", "math": math, "torch": torch, "nn": nn,
            "masked_softmax": reference.book.masked_softmax,
            "DotProductAttention": reference.book.DotProductAttention,
            "AdditiveAttention": reference.book.AdditiveAttention,
            "AttentionDecoder": AttentionDecoder, "init_seq2seq": init_seq2seq}


@functools.cache
def _config():
    return load_config()


@functools.cache
def settings(assignment: str) -> RunSettings:
    return RunSettings.resolve(_config(), assignment, device="cpu")


@functools.cache
def grade(mutant: Mutant) -> TaskResult:
    """The mutant's grade for its task, from the grader's own config and seed (once per run)."""
    torch.set_num_threads(1)
    warnings.filterwarnings("ignore", "dropout option adds dropout", UserWarning)  # the student's GRU, one layer
    runner = Runner()
    runner.use_namespace(notebook_namespace())
    reply = runner.handle({"op": "exec", "args": {"label": mutant.task_id, "source": mutant.source}})
    assert "error" not in reply, f"the mutant's cell itself raised: {reply['error']}"
    return grade_task(local_student(runner), settings(ASSIGNMENT_OF[mutant.task_id]), mutant.task_id,
                      cell=mutant.source).result


def failed_checks(result: TaskResult) -> list[CheckResult]:
    return [check for check in result.checks if not check.passed]


def describe(result: TaskResult) -> str:
    """The failed checks with their messages, for an assertion's explanation."""
    lines = [f"score {result.score} / {result.max_score}"]
    for check in failed_checks(result):
        lines += [f"FAIL {check.name}", *("    " + line for line in check_message(check, Say("en")).splitlines())]
    return "\n".join(lines)


def names_mistake(result: TaskResult, mistake_id: str) -> bool:
    """Whether some failed check names the catalogue's mistake."""
    return any(check.finding is not None and check.finding.mistake == mistake_id for check in failed_checks(result))


# --- what the tests assert, and what they saw (for the report in conftest.py) ------------------
OUTCOMES: dict[str, dict] = {}  # mutant id -> {"full": bool, "caught": bool, "named": bool | None}


def cases(mutants: list[Mutant], correct: bool) -> list:
    """pytest params for the right (or the buggy) mutants; a known miss is a strict xfail."""
    def marks(m: Mutant) -> list:
        return [pytest.mark.xfail(strict=True, reason=m.grader_misses)] if m.grader_misses else []
    return [pytest.param(m, id=m.id, marks=marks(m)) for m in mutants
            if m.correct == correct and m.sandbox_only is None]


def check_correct(mutant: Mutant) -> None:
    """A right variant must get every point of its task."""
    OUTCOMES[mutant.id] = {"full": None}
    result = grade(mutant)
    OUTCOMES[mutant.id] = {"full": result.score == result.max_score}
    assert result.score == result.max_score, describe(result)


def check_bug(mutant: Mutant) -> None:
    """A bug must lose points, fail its ``must_fail`` checks, and be named when catalogued."""
    OUTCOMES[mutant.id] = {"caught": None, "named": None}  # None: the grader itself raised
    result = grade(mutant)
    failed = {check.name for check in failed_checks(result)}
    named = names_mistake(result, mutant.mistake) if mutant.mistake else None
    OUTCOMES[mutant.id] = {"caught": result.score < result.max_score, "named": named}
    assert result.score < result.max_score, describe(result)
    missing = [name for name in mutant.must_fail if name not in failed]
    assert not missing, f"{missing} should fail\n{describe(result)}"
    if mutant.fails_only is not None:
        assert failed == set(mutant.fails_only), f"only {sorted(mutant.fails_only)} should fail\n{describe(result)}"
    if mutant.mistake:
        assert named, f"no failed check names {mutant.mistake!r}\n{describe(result)}"

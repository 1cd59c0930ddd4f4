"""Code that raises on one kind of lengths, (B, Q) or int32, loses the points of the check that
owns that kind and nothing else (SPEC §3: what it broke and nothing else). Every other check
judges such an example with plain lengths instead (core.judged_plain), says so beside its pass,
and still charges a crash that plain lengths do not avoid: never a pass for code not seen to run.

Blind corpus 9: b46 (masked_softmax raising on 2-D lengths) lost 6 of 9 checks and b35 (one_hot
on int32) 7 of 9, where b05 (2-D lengths read wrongly, no crash) lost 3.
"""
import pytest
import torch
from hypothesis import given, settings

from autograder.checks.core import CheckFailed, Context, fail, judged_plain, search
from autograder.checks.inputs import BATCH_ONE, INT32, TWO_D, Case, kinds_of, plain_form, score_cases
from autograder.results import text
from autograder.sandbox.client import StudentError

from .harness import Mutant, grade
from .variants_spec import MUTANTS

BY_ID = {m.id: m for m in MUTANTS}
TWO_D_CHECK, ONE_D_CHECK = "matches the reference with 2-D valid_lens", "matches the reference with 1-D valid_lens"
LEFT = {TWO_D: TWO_D_CHECK, INT32: ONE_D_CHECK}


def _ctx() -> Context:
    return Context(assignment="attention_scoring", task="masked_softmax", seed=3, check="rows")


@settings(max_examples=60, deadline=None)
@given(score_cases())
def test_the_plain_form_keeps_the_scores_and_holds_no_kind(case):
    plain = plain_form(case, [TWO_D, INT32, BATCH_ONE])
    lens, given_lens = plain.tensors["valid_lens"], case.tensors["valid_lens"]
    assert kinds_of(plain) == []
    once = 1 if BATCH_ONE in kinds_of(case) else len(given_lens)  # a batch of one comes twice
    assert torch.equal(plain.tensors["X"][:once], case.tensors["X"])
    assert lens.dtype == torch.int64 and lens.dim() == 1
    assert torch.equal(lens[:once], given_lens if given_lens.dim() == 1 else given_lens[:, 0])  # first rows
    plain.tensors["X"].add_(1)  # a copy: the example drawn is not changed
    assert not torch.equal(plain.tensors["X"][:once], case.tensors["X"])


def _case(lens) -> Case:
    return Case({"X": torch.zeros(2, 3, 4), "valid_lens": lens})


def _raising_on(kind: str):
    def test(case: Case):
        if kind in kinds_of(case):
            raise StudentError("RuntimeError", "shape mismatch")
    return test


@pytest.mark.parametrize("kind, lens", [(TWO_D, torch.tensor([[1, 2, 3], [4, 1, 2]])),
                                        (INT32, torch.tensor([1, 3], dtype=torch.int32))])
def test_a_crash_of_a_kind_left_to_another_check_is_judged_plain_and_noted(kind, lens):
    ctx = _ctx()
    assert judged_plain(_case(lens), _raising_on(kind), ctx, LEFT)
    assert ctx.plain == [(kind, LEFT[kind])]


def test_a_crash_is_charged_where_the_check_owns_the_kind_or_plain_lengths_raise_too():
    two_d = _case(torch.tensor([[1, 2, 3], [4, 1, 2]]))
    assert not judged_plain(two_d, _raising_on(TWO_D), _ctx(), {INT32: ONE_D_CHECK})  # this check owns 2-D

    def always(case):
        raise StudentError("RuntimeError", "always")
    assert not judged_plain(two_d, always, _ctx(), LEFT)
    assert not judged_plain(_case(torch.tensor([1, 3])), always, _ctx(), LEFT)  # nothing to leave


def test_a_failure_of_the_plain_form_is_this_checks_own():
    def test(case: Case):
        if TWO_D in kinds_of(case):
            raise StudentError("RuntimeError", "shape mismatch")
        raise fail(text("check.grader_error"))
    with pytest.raises(CheckFailed):
        judged_plain(_case(torch.tensor([[1, 2, 3], [4, 1, 2]])), test, _ctx(), LEFT)


def test_a_search_over_code_raising_on_2d_lengths_passes_noted_and_fails_without_leave():
    ctx = _ctx()
    search(score_cases(), _raising_on(TWO_D), ctx, left_to=LEFT)
    assert ctx.plain and ctx.plain[0] == (TWO_D, TWO_D_CHECK)
    with pytest.raises(CheckFailed):
        search(score_cases(), _raising_on(TWO_D), _ctx())


def _checks(mutant: Mutant) -> dict:
    return {c.name: c for c in grade(mutant).checks}


@pytest.mark.parametrize("mutant_id, kind, owner", [
    ("masked_softmax-repeat_interleave_without_the_2d_branch", TWO_D, TWO_D_CHECK),
    ("masked_softmax-one_hot_breaks_on_int32", INT32, ONE_D_CHECK),
    ("dot_product_attention-own_mask_for_1d_lengths_only", TWO_D, TWO_D_CHECK),
    ("additive_attention-own_mask_for_1d_lengths_only", TWO_D, "matches the reference"),
    ("seq2seq_attention_decoder-squeeze_breaks_a_batch_of_one", BATCH_ONE, "matches the reference")])
def test_the_student_reads_which_check_charged_the_crash(mutant_id, kind, owner):
    checks = _checks(BY_ID[mutant_id])
    assert not checks[owner].passed and checks[owner].finding.problem.id == "check.raised"
    noted = [c for c in checks.values() if c.note is not None and c.note.id == f"check.judged_plain.{kind}"]
    assert noted, "no check says where the crash was charged"
    for check in noted:
        assert check.passed and check.note.params["check"].id == f"title.{owner}"


def test_code_that_raises_on_every_lengths_loses_every_check_of_lengths():
    """No vacuous pass: plain lengths raise too, so each check charges the crash itself."""
    checks = _checks(Mutant("masked_softmax", "raises_on_any_lengths", '''
def masked_softmax(X, valid_lens):
    if valid_lens is None:
        return torch.softmax(X, dim=-1)
    raise RuntimeError("lengths are not supported yet")
''', correct=False))
    for name, check in checks.items():
        if name not in ("plain softmax when valid_lens is None", "runs on any device"):
            assert not check.passed and check.note is None, name

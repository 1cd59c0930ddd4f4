"""Checks for ``masked_softmax(X, valid_lens)`` (SPEC §2)."""
import torch

from reference.attention import keep_mask, masked_softmax as reference_softmax

from ..results import text
from ..sandbox.client import StudentError
from .compare import PRECISION, check_shape, check_tensor, close, judged_precise, rounding, some_precise, tolerance
from .core import (Check, CheckBlocked, CheckFailed, Context, MainCheck, PerStudent, fail, in_context, left_to,
                   noted_as_own, raised, search)
from . import devices
from .diagnosis import Observation, at_the_bottom, name_mistake, named_explains, variant_outputs
from .inputs import BATCH_ONE, INT32, TWO_D, WIDE, Case, score_cases, values

NAME = "masked_softmax"
WEIGHTS = text("tensor.attention_weights")


def _fill(X, keep):
    return X.masked_fill(~keep, torch.finfo(X.dtype).min)


def _keep_le(lens, shape):
    return torch.arange(shape[-1]) <= (lens[:, None, None] if lens.dim() == 1 else lens[:, :, None])


def _keep_queries(lens, shape):
    per_query = lens[:, :, None] if lens.dim() == 2 else lens[:, None, None]  # (B, Q or 1, 1)
    return (torch.arange(shape[1])[None, :, None] < per_query).expand(shape)


MISTAKES = {  # what each known mistake outputs, from scores X (B, Q, K) and valid_lens
    "wrong_axis": lambda X, lens: (X if lens is None else _fill(X, keep_mask(lens, X.shape))).softmax(dim=1),
    "mask_value_zero": lambda X, lens: X.masked_fill(~keep_mask(lens, X.shape), 0).softmax(-1),
    "le_instead_of_lt": lambda X, lens: _fill(X, _keep_le(lens, X.shape)).softmax(-1),
    "masking_queries": lambda X, lens: _fill(X, _keep_queries(lens, X.shape)).softmax(-1),
    "lens_2d_as_1d": lambda X, lens: reference_softmax(X, lens[:, 0] if lens.dim() == 2 else lens),
    "ignores_valid_lens": lambda X, lens: X.softmax(-1),
}
PROBES = [Case({"X": values((2, 3, 5), 1.0, seed, torch.float32)[0], "valid_lens": lens})
          for seed, lens in [(7, torch.tensor([1, 3])), (8, torch.tensor([[1, 2, 4], [3, 5, 2]]))]]


def observe(got, case: Case) -> Observation:
    X, lens = case.tensors["X"].double(), case.tensors["valid_lens"]
    mistakes = {mid: (lambda f=f: f(X, lens)) for mid, f in MISTAKES.items()
                if lens is not None or mid == "wrong_axis"}  # without lengths, only the axis can be wrong
    return got, reference_softmax(X, lens), variant_outputs(mistakes)


def diagnose(student, got, case: Case, tol: float):
    def probes():
        for probe in PROBES:
            yield observe(student.call(NAME, *probe.tensors.values()), probe)
    return name_mistake(observe(got, case), probes, tol)


MAIN_CHECK = "matches the reference with 1-D valid_lens"
# The weights the 1-D check's calls returned for float64 scores, per student and device: the
# precision check judges them again, at float64's tolerance.
_FLOAT64 = PerStudent()
# The check that charges a crash on each kind of input; the other checks judge such an
# example in its plain form instead (core.judged_plain).
CHARGED_BY = {TWO_D: "matches the reference with 2-D valid_lens", INT32: MAIN_CHECK, BATCH_ONE: MAIN_CHECK}
# What that check saw, per student: the narrower checks
# (2-D lengths, no lengths, lengths above K) do not charge it again.
_MAIN = PerStudent()


def compare_to_reference(student, case: Case, narrower: bool = False) -> bool:
    """The weights against the reference's. In a ``narrower`` check, after the 1-D check
    failed, weights that its named mistake explains, or that equal the student's own in the
    1-D form (no lengths as K, lengths above K as K, each query's row of 2-D lengths alone),
    are not charged again (SPEC §3: one mistake costs points once); a mistake of the narrower
    form's own (2-D lengths read as 1-D, None not handled) still is."""
    X, lens = case.tensors["X"], case.tensors["valid_lens"]
    got = student.call(NAME, X, lens)
    if not narrower and X.dtype == torch.float64:
        _FLOAT64.get(student, X.device.type, list).append((case, got))
    expected, tol, _ = _expected(X, lens)  # float32's tolerance, float64 inputs too: precision is its own check
    main = _MAIN.get(student, (NAME, X.device.type), MainCheck)  # a GPU run, then the CPU again
    try:
        check_tensor(got, expected, tol, WEIGHTS, case.code, "(B, Q, K)")
    except CheckFailed as failed:
        if narrower and main.failed and _explained(student, got, case, tol, main.named):
            return True

        def named(finding) -> None:
            finding.mistake = diagnose(student, got, case, tol)
            if not narrower:
                main.saw(finding.mistake)
        failed.later(named)
        raise
    return False


def _expected(X, lens) -> tuple[torch.Tensor, float, float]:
    """The reference's weights in float64, float32's tolerance (the mistakes are told apart at it)
    and, for float64 scores, float64's (``precision``)."""
    expected = reference_softmax(X.double(), lens)
    own32 = reference_softmax(X.float(), lens)
    return expected, tolerance(own32, expected) + rounding(X.float()), \
        tolerance(own32, expected, X.dtype) + rounding(X)


def _explained(student, got, case: Case, tol32: float, named: set) -> bool:
    """Whether one of the ``named`` mistakes, or the student's own 1-D form, gives ``got``."""
    if named_explains(named, observe(got, case), tol32):
        return True
    lens = case.tensors["valid_lens"]
    try:
        own = _in_1d_form(student, case)
        if lens is not None and lens.dim() == 2 and close(got, student.call(NAME, case.tensors["X"], None), tol32):
            return False  # the lengths change nothing: no masking to judge (weights attending to nothing)
    except StudentError:
        return False
    return own is not None and close(got, own, tol32, equal_nan=True)


def _in_1d_form(student, case: Case) -> torch.Tensor | None:
    """The student's own weights for ``case`` with 1-D lengths: no lengths as K, lengths above
    K as K, and 2-D lengths one query at a time, each with its (B,) lengths: (B, Q, K), or
    None where a row is not a (B, 1, K) tensor."""
    X, lens = case.tensors["X"], case.tensors["valid_lens"]
    K = X.shape[-1]
    lens = torch.full((X.shape[0],), K) if lens is None else lens.clamp(max=K)
    if lens.dim() == 1:
        return student.call(NAME, X, lens)
    rows = [student.call(NAME, X[:, q:q + 1].contiguous(), lens[:, q].contiguous()) for q in range(X.shape[1])]
    if not all(isinstance(r, torch.Tensor) and tuple(r.shape) == (X.shape[0], 1, K) for r in rows):
        return None
    return torch.cat(rows, 1)  # Q x (B, 1, K) -> (B, Q, K)


def _matches(two_d: bool | None, above_k: bool = False, with_lens: bool = True):
    """A search against the reference; every such check but the 1-D one is narrower."""
    narrower = two_d is not False

    def run(student, ctx: Context) -> None:
        excused = []

        def compare(case: Case) -> None:
            excused.append(compare_to_reference(student, case, narrower))
        others = left_to(CHARGED_BY, ctx)
        search(score_cases(two_d=two_d, above_k=above_k, with_lens=with_lens), compare, ctx, left_to=others)
        if with_lens and not above_k:  # then as a decoder over hundreds of source steps calls it
            in_context(_wide(two_d), compare, ctx, others)
        if two_d is False:  # and call after call
            _in_sequence(student, ctx)
        noted_as_own(any(excused), MAIN_CHECK)
    return run


# Three calls in a row, as a decoder's attention makes them (under torch.no_grad()): the second
# on the first call's X and valid_lens with new values written into them (a tensor freed and made
# again gets the address, so the id, of the one before: nothing may be kept by a tensor's
# identity), the third on new tensors of the same shape (what a call returns belongs to the
# caller: no view of a buffer kept per shape that the next call overwrites).
SEQUENCE_LENS = ([3, 9], [7, 2], [5, 1])


def _in_sequence(student, ctx: Context) -> None:
    """The three calls' weights against the reference's, as each call returned them and (the
    second's) after the third; the first's X is written into by the second call's caller, so
    only as it returned it."""
    cases, reply = _sequence(student, ctx.device)
    code = [_sequence_code(cases, i) for i in range(3)]
    if isinstance(reply, StudentError):
        raise CheckFailed(raised(reply, code[-1])) from None
    for i, case in enumerate(cases):
        X32, lens_i = case.tensors["X"], case.tensors["valid_lens"]
        expected = reference_softmax(X32.double(), lens_i)
        tol = tolerance(reference_softmax(X32, lens_i), expected) + rounding(X32)
        for moment, key in (("now", "at_call"), ("later", "after"))[:1 if i != 1 else 2]:
            check_tensor(reply[key][i][0], expected, tol,
                         text(f"context.softmax_call_{i}", what=WEIGHTS, moment=text(f"context.{moment}")),
                         code[i] if moment == "now" else code[2] + "\n# weights_2, read again", "(B, Q, K)")


def _sequence(student, device: str) -> tuple[list[Case], dict | StudentError]:
    """The three calls' cases, and the worker's reply to them and, in the same round trip, to the
    precision check's two calls over hundreds of keys (float32, then float64: ``_precise``); or
    the error the calls raised. Made once per student."""
    cases = [Case({"X": X, "valid_lens": torch.tensor(lens)}, recipes={"X": recipe})
             for i, lens in enumerate(SEQUENCE_LENS) for X, recipe in [values((2, 4, 9), 10.0, 81 + i, torch.float32)]]

    def run() -> dict | StudentError:
        X, lens = [c.on(device).tensors["X"] for c in cases], [c.on(device).tensors["valid_lens"] for c in cases]
        wide = _wide(two_d=False).on(device)
        calls = [[False, [X[0], lens[0]]],
                 [False, [{"overwrite": [0, 0], "with": X[1]}, {"overwrite": [0, 1], "with": lens[1]}]],
                 [False, [X[2], lens[2]]],
                 [False, [wide.tensors["X"], wide.tensors["valid_lens"]]],
                 [False, [wide.tensors["X"].double(), wide.tensors["valid_lens"]]]]
        try:
            return student.calls_kept(NAME, calls, grad=False)
        except StudentError as error:
            return error
    return cases, _SEQUENCES.get(student, device, run)


# The sequence's reply per student and device: the 1-D and the precision checks read it.
_SEQUENCES = PerStudent()


def _sequence_code(cases: list[Case], i: int) -> str:
    """The calls up to the ``i``-th, as code."""
    lines = ["with torch.no_grad():  # as a decoder's attention calls it, under predict_step"]
    for j, case in enumerate(cases[:i + 1]):
        X_code, lens_code = case.code().split("\n")
        X_code, lens_code = X_code.replace("X =", f"X_{j + 1} =", 1), lens_code.replace(
            "valid_lens =", f"valid_lens_{j + 1} =", 1)
        if j == 1:
            X_code = f"X_1[:] = {X_code.split(' = ', 1)[1]}; X_2 = X_1  # new values into the first call's X"
            lens_code = (f"valid_lens_1[:] = {lens_code.split(' = ', 1)[1]}; valid_lens_2 = valid_lens_1"
                         "  # and into its lengths")
        lines += [f"    {X_code}", f"    {lens_code}",
                  f"    weights_{j + 1} = masked_softmax(X_{j + 1}, valid_lens_{j + 1})"]
    return "\n".join(lines)


def _wide(two_d: bool) -> Case:
    """``WIDE`` keys (more than any table sized for small examples), lengths up to K."""
    X, recipe = values((2, 3, WIDE), 10.0, 61, torch.float32)
    lens = torch.tensor([[3, WIDE, 70], [1, WIDE - 1, 65]] if two_d else [220, WIDE])
    return Case({"X": X, "valid_lens": lens}, recipes={"X": recipe})


def _rows_sum_to_one(student, ctx: Context) -> None:
    def test(case: Case):
        X, lens = case.tensors["X"], case.tensors["valid_lens"]
        got = student.call(NAME, X, lens)
        check_shape(got, X.shape, WEIGHTS, case.code)
        sums = got.double().masked_fill(~keep_mask(lens, X.shape), 0).sum(-1)  # (B, Q): weight on valid keys
        check_tensor(sums, torch.ones_like(sums), 1e-5 + rounding(X), text("softmax.row_sums"), case.code, "(B, Q)")
    search(score_cases(), test, ctx, left_to=left_to(CHARGED_BY, ctx))


def _carries_weight(got, case: Case) -> bool:
    """Whether an example's output shows a law of the weights holding: some row that has a valid
    key puts finite positive weight on its valid keys. An output of zeros shows none (it would
    pass "zero weight beyond valid length" unseen); a softmax left unnormalised, or one whose
    rows partly underflow, still does (its sums are "rows sum to one"'s to charge)."""
    X, lens = case.tensors["X"], case.tensors["valid_lens"]
    rows = (lens if lens.dim() == 2 else lens[:, None].expand(got.shape[:2])) > 0  # (B, Q): a valid key
    mass = got.double().masked_fill(~keep_mask(lens, X.shape), 0).sum(-1)[rows]  # (rows,): weight on valid keys
    return bool((torch.isfinite(mass) & (mass > 1e-6)).any())


def _judged_where_weights(test, cases, ctx: Context) -> None:
    """``search`` with ``test`` failing any example that breaks the law and returning whether
    its output carried weight; the law passes only if some example did, and is blocked by
    "rows sum to one over valid keys" otherwise (never a pass the code was not seen to earn)."""
    judged: list[bool] = []
    search(cases, lambda case: judged.append(test(case)), ctx, left_to=left_to(CHARGED_BY, ctx))
    if not any(judged):
        raise CheckBlocked("rows sum to one over valid keys")


def _zero_beyond(student, ctx: Context) -> None:
    def test(case: Case) -> bool:
        X, lens = case.tensors["X"], case.tensors["valid_lens"]
        got = student.call(NAME, X, lens)
        check_shape(got, X.shape, WEIGHTS, case.code)
        masked = got.double().masked_fill(keep_mask(lens, X.shape), 0)  # weights on keys >= valid_len only
        try:
            check_tensor(masked, torch.zeros_like(masked), 1e-6, text("softmax.beyond_lens"),
                         case.code, "(B, Q, K)")
        except CheckFailed as failed:
            failed.later(lambda finding: setattr(finding, "mistake", diagnose(student, got, case, 1e-5)))
            raise
        return _carries_weight(got, case)
    _judged_where_weights(test, score_cases(), ctx)
    lifted = Case({**BOTTOM.tensors, "X": BOTTOM.tensors["X"] + 1000})  # scores near 0, the same mask
    in_context(BOTTOM, lambda case: at_the_bottom(test, case, lifted), ctx, left_to(CHARGED_BY, ctx))


# Scores at the bottom of the range the checks draw (SPEC §2: within ±1000), padding included:
# a fill value real scores can reach (-1000, -100) gives the masked keys weight here only.
def _bottom_case() -> Case:
    X, recipe = values((2, 3, 5), 0.5, 67, torch.float32, offset=-999.5)  # (B, Q, K) in [-1000, -999]
    return Case({"X": X, "valid_lens": torch.tensor([2, 4])}, recipes={"X": recipe})


BOTTOM = _bottom_case()


def _finite_when_empty(student, ctx: Context) -> None:
    def test(case: Case) -> bool:
        X, lens = case.tensors["X"], case.tensors["valid_lens"]
        lens.view(-1)[0] = 0  # at least one row with nothing to attend to
        got = student.call(NAME, X, lens)
        check_shape(got, X.shape, WEIGHTS, case.code)
        if not torch.isfinite(got).all():
            raise fail(text("softmax.not_finite"), case_code=case.code(),
                       expected=text("softmax.finite_row"), got=str(got[0, 0].tolist()))
        return _carries_weight(got, case)
    _judged_where_weights(test, score_cases(min_len=0), ctx)


def _shape_dtype_device(student, ctx: Context) -> None:
    def test(case: Case):
        case = case.on(ctx.device)
        X, lens = case.tensors["X"], case.tensors["valid_lens"]
        got = student.call(NAME, X, lens)
        check_shape(got, X.shape, WEIGHTS, case.code, "(B, Q, K)")
        if got.dtype != X.dtype or got.device.type != X.device.type:
            raise fail(text("softmax.dtype_device"), case_code=case.code(),
                       expected=f"{X.dtype}, {X.device.type}", got=f"{got.dtype}, {got.device.type}")
    others = left_to(CHARGED_BY, ctx)
    search(score_cases(), test, ctx, max_examples=6, left_to=others)
    for probe in PROBES:  # 1-D and 2-D lengths, always (None is "plain softmax when valid_lens is None"'s)
        in_context(probe, test, ctx, others)


def _on_any_device(student, ctx: Context) -> None:
    """1-D (int64) and 2-D (int32) lengths and none (SPEC §3), then at the size a decoder over
    hundreds of source steps calls it (code may take another path above a size)."""
    def probe(lens, note: str, keys: int = 4) -> devices.Probe:
        X, recipe = values((2, 3, keys), 1.0, 41, torch.float32)
        case = Case({"X": X, "valid_lens": lens}, recipes={"X": recipe})
        return devices.Probe(
            case, note, cpu=lambda c: student.call(NAME, *c.tensors.values()),
            elsewhere=lambda c: student.call_elsewhere(NAME, None, list(c.tensors.values()), []),
            module=False)
    devices.judge([probe(torch.tensor([1, 3]), "valid_lens of shape (B,)"),
                   probe(torch.tensor([[1, 2, 4], [3, 0, 2]], dtype=torch.int32), "valid_lens of shape (B, Q)"),
                   probe(None, "valid_lens=None"),
                   probe(torch.tensor([220, WIDE]), f"{WIDE} keys, valid_lens of shape (B,)", keys=WIDE)],
                  shape_check="output shape, dtype and device")


def _precise(student, ctx: Context) -> None:
    """The weights the 1-D check's calls returned for float64 scores (``_FLOAT64``), then as a
    decoder over hundreds of source steps calls it (float32 scores first: nothing kept of a
    float32 call; with the 1-D check's sequence, ``_sequence``), against the reference at
    float64's tolerance (``compare.judged_precise``)."""
    judged: list[bool] = []

    def judge(got, case: Case, code=None) -> None:
        X, lens = case.tensors["X"], case.tensors["valid_lens"]
        expected, tol32, tol64 = _expected(X, lens)
        judged.append(judged_precise(got, expected, tol64, tol32, text("precision.result", what=WEIGHTS),
                                     code or case.code, "(B, Q, K)", lambda: observe(got, case)[2]))
    for case, got in _FLOAT64.get(student, ctx.device, list):
        judge(got, case)
    wide = _wide(two_d=False)
    X64, lens = wide.tensors["X"].double(), wide.tensors["valid_lens"]
    code = (f"{wide.code()}\nweights = masked_softmax(X, valid_lens)  # float32 first"
            "\nweights = masked_softmax(X.double(), valid_lens)")
    reply = _sequence(student, ctx.device)[1]
    if not isinstance(reply, StudentError):  # a crash there is the value checks' to charge
        judge(reply["at_call"][4][0], Case({"X": X64, "valid_lens": lens}, recipes=wide.recipes), code)
    some_precise(judged, MAIN_CHECK)


def warn_if_writes_input(student, ctx: Context) -> None:
    """Non-scoring: tell the student when their function writes into X (the book's does)."""
    X, lens = torch.tensor([[[1.0, 2.0, 3.0]]]), torch.tensor([1])
    if student.call_watched(NAME, X, lens)["written_args"]:
        ctx.warnings.append(("writes_input", text("softmax.writes_input")))


def _check(name: str, run) -> Check:
    return Check(name, text(f"what.masked_softmax.{name}"), run)


CHECKS = [
    _check("output shape, dtype and device", _shape_dtype_device),
    _check("rows sum to one over valid keys", _rows_sum_to_one),
    _check("zero weight beyond valid length", _zero_beyond),
    _check(MAIN_CHECK, _matches(two_d=False)),
    _check("matches the reference with 2-D valid_lens", _matches(two_d=True)),
    _check("plain softmax when valid_lens is None", _matches(None, with_lens=False)),
    _check("lengths above K mean all valid", _matches(None, above_k=True)),
    _check("finite row for valid length 0", _finite_when_empty),
    _check(PRECISION, _precise),
    Check("runs on any device", devices.WHAT, _on_any_device),
]

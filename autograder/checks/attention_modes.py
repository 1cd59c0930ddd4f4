"""The attention modules' checks in each mode: no dropout in eval mode, dropout exactly as
``nn.Dropout(p)`` on the weights in train mode, and the same results on any device (SPEC §2-3).

Both dropout checks compare the module with itself built with ``dropout=0`` (same weights),
so a wrong score is not charged again here.
"""
import math

import torch
from hypothesis import strategies as st

from ..results import text
from ..sandbox.client import StudentError
from . import devices
from .attention import OUTPUT, AttentionTask, build, build_called, called_twice, inputs
from .compare import check_shape, check_tensor
from .core import Check, CheckBlocked, Context, fail, left_to, search
from .inputs import Case, attention_cases, values

TRAIN_RATES = (0.25, 0.6)     # each checked on its own: a p fixed in the code fails one of them
Z = 4.5                       # the dropped count may stray this many standard deviations from N p


def _deterministic_in_eval(task: AttentionTask):
    """Eval mode with dropout = p: the output equals the module's with dropout=0, and a second
    call with the same tensors gives it again (no dropout, no writes into the inputs)."""
    def run(student, ctx: Context) -> None:
        def test(case: Case):
            p = case.options["p"]
            _, _, expected, _ = build_called(student, task, case, ctx.device, read_weights=False)
            if not isinstance(expected, torch.Tensor):  # the module's own output, to compare with
                raise CheckBlocked("output shape")
            first, second = called_twice(student, task, case, p, ctx.device)
            code = f"\n# module.eval(), dropout={p}"
            check_tensor(first, expected, 1e-6, text("attention.eval_dropout_output"), lambda: case.code() + code)
            check_tensor(second, expected, 1e-6, text("attention.eval_second_call"),
                         lambda: case.code() + code + "\n# ...called twice with the same tensors")
        cases = st.tuples(attention_cases(hidden=task.hidden, min_keys=2), st.sampled_from([0.1, 0.5, 0.9]))
        search(cases.map(lambda c: Case(c[0].tensors, {**c[0].options, "p": c[1]}, c[0].recipes)),
               test, ctx, max_examples=5, left_to=left_to(task.charged_by, ctx))
    return run


def _train_case(task: AttentionTask) -> Case:
    """Small scores (weights spread over every key) and values [I | 1] (K, K + 1): the output
    is then the dropped weights themselves, and their row sum in the last column."""
    B, Q, K = 4, 8, 6
    eye_and_ones = torch.cat([torch.eye(K), torch.ones(K, 1)], dim=1).expand(B, K, K + 1)  # (B, K, K + 1)
    return Case({"queries": values((B, Q, 3), 0.1, 21, torch.float32)[0],
                 "keys": values((B, K, 3), 0.1, 22, torch.float32)[0],
                 "values": eye_and_ones.contiguous(), "valid_lens": None},
                options={"num_hiddens": 3} if task.hidden else {},
                recipes={"values": f"torch.cat([torch.eye({K}), torch.ones({K}, 1)], 1).expand({B}, {K}, {K + 1})"})


def _dropout_in_train(task: AttentionTask):
    """Train mode, p in TRAIN_RATES: each weight is zeroed or scaled by 1/(1-p), about a
    fraction p of them are zeroed (seeded: the same draw for every student), the output is
    the dropped weights times the values, and attention_weights keeps them before dropout."""
    def run(student, ctx: Context) -> None:
        case, device = _train_case(task), ctx.device
        _, plain = build(student, task, case, device=device)
        evaluated = plain(*inputs(case, device=device))  # (B, Q, K + 1): [W | 1] in eval mode, without dropout
        check_shape(evaluated, (4, 8, 7), OUTPUT, case.code, "(B, Q, v)")
        evaluated = evaluated.double().cpu()
        if not ((evaluated[..., -1] - 1).abs() <= 1e-3).all():  # (B, Q): no weights summing to one
            raise CheckBlocked("matches the reference")  # nothing to drop (an output of zeros would pass)
        weights = evaluated[..., :-1]  # (B, Q, K)
        for p in TRAIN_RATES:
            _, module = build(student, task, case, dropout=p, device=device)
            kept_before = _stored(module, case, device)
            module.train()
            got = module.seeded(0, None, *inputs(case, device=device))
            code = f"{case.code()}\n# dropout={p}, module.train(), torch.manual_seed(0)"
            check_shape(got, (4, 8, 7), OUTPUT, code, "(B, Q, v)")
            _judge_train(got.double().cpu(), weights, p, code)
            kept_after = _stored(module, case, device)
            if kept_before is not None and kept_after is not None:
                check_tensor(kept_after, kept_before, 1e-5, text("attention.train_weights"), code, "(B, Q, K)")
    return run


def _judge_train(got: torch.Tensor, weights: torch.Tensor, p: float, code: str) -> None:
    dropped, row_sums = got[..., :-1], got[..., -1]  # (B, Q, K), (B, Q)
    scaled = weights / (1 - p)
    tol = 1e-4 * (1 + scaled.abs().max().item())
    is_zero, is_scaled = dropped.abs() <= tol, (dropped - scaled).abs() <= tol
    if not (is_zero | is_scaled).all():
        raise fail(text("dropout.not_scaled", p=p), case_code=code,
                   expected=text("dropout.zero_or_scaled", factor=1 / (1 - p)),
                   got=str([round(v, 4) for v in dropped.reshape(-1)[:6].tolist()]))
    if ((row_sums - dropped.sum(-1)).abs() > tol).any():
        raise fail(text("attention.dropout_on_output"), case_code=code,
                   expected="dropout(attention_weights) @ values", got="dropout(attention_weights @ values)")
    counted = weights > 1e-3
    n, zeros = int(counted.sum()), int((is_zero & counted).sum())
    if abs(zeros - n * p) > Z * math.sqrt(n * p * (1 - p)) + 1:
        raise fail(text("dropout.rate", p=p), case_code=code,
                   expected=f"{n * p:.0f} / {n}", got=f"{zeros} / {n}")


def _stored(module, case: Case, device: str):
    """The module's attention_weights after a call, or None when it keeps none of the right shape."""
    module(*inputs(case, device=device))
    try:
        kept = module.attr("attention_weights")
    except StudentError:
        return None
    return kept if isinstance(kept, torch.Tensor) and tuple(kept.shape) == (4, 8, 6) else None


def _device(task: AttentionTask):
    """Eval and train mode, with 1-D, 2-D (int32) and no lengths (SPEC §3); where none of these
    runs on the CPU, again with values of the queries' size (keys and values swapped raise a shape
    error otherwise: the output checks charge it, not this one)."""
    def run(student, ctx: Context) -> None:
        def probe(lens, train: bool, note: str, value_size: int = 2) -> devices.Probe:
            case = Case({"queries": values((2, 3, 4), 1.0, 31, torch.float32)[0],
                         "keys": values((2, 5, 4), 1.0, 32, torch.float32)[0],
                         "values": values((2, 5, value_size), 1.0, 33, torch.float32)[0], "valid_lens": lens},
                        options={"num_hiddens": 3} if task.hidden else {})
            built = {}

            def module():
                if "module" not in built:
                    built["module"] = build(student, task, case, dropout=0.5 if train else 0.0, train=train)[1]
                return built["module"]

            def cpu(c):
                return module().seeded(0, None, *inputs(c))

            def elsewhere(c):
                return student.call_elsewhere(module().handle, None, inputs(c), [module().handle], seed=0)
            return devices.Probe(case, note, cpu, elsewhere)
        def probes(value_size: int) -> list[devices.Probe]:
            return [probe(torch.tensor([1, 4]), False, "module.eval()", value_size),
                    probe(None, False, "module.eval(), valid_lens=None", value_size),
                    probe(torch.tensor([[1, 2, 5], [3, 1, 4]], dtype=torch.int32), False, "module.eval()", value_size),
                    probe(torch.tensor([2, 5]), True, "dropout=0.5, module.train()", value_size)]
        devices.judge(probes(2), shape_check="output shape", retry=probes(4))
    return run


def checks(task: AttentionTask) -> list[Check]:
    def check(name: str, run) -> Check:
        return Check(name, text(f"what.attention.{name}"), run)
    return [check("deterministic in eval mode", _deterministic_in_eval(task)),
            check("dropout as nn.Dropout in train mode", _dropout_in_train(task)),
            Check("runs on any device", devices.WHAT, _device(task))]

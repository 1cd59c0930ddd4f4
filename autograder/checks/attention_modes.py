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
from . import contexts, devices
from .attention import OUTPUT, AttentionTask, build, build_called, called_twice, inputs
from .compare import check_shape, check_tensor
from .core import Check, CheckBlocked, Context, fail, left_to, search
from .inputs import WIDE, Case, attention_cases, values

TRAIN_RATES = (0.25, 0.6)     # each checked on its own: a p fixed in the code fails one of them
Z = 4.5                       # the dropped count may stray this many standard deviations from N p


def _deterministic_in_eval(task: AttentionTask):
    """Eval mode with dropout = p: the output equals the module's with dropout=0, and a second
    call with the same tensors gives it again (no dropout, no writes into the inputs)."""
    def run(student, ctx: Context) -> None:
        def test(case: Case):
            p = case.options["p"]
            _, _, expected, _ = build_called(student, task, case, ctx.device, read_weights=False, own_weights=True)
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
        _inputs_untouched(student, task, ctx)
    return run


INPUT_NAMES = ("queries", "keys", "values", "valid_lens")


def _inputs_untouched(student, task: AttentionTask, ctx: Context) -> None:
    """In the book's contexts (``contexts.sequence``: one module called again and again, lengths
    above K in train mode), no call writes into a tensor it is given (SPEC §2: the caller's
    lengths stay the caller's, and a decoder passes the same ones at every step). A sequence
    that raised is the output checks' to charge (a reply that is not the runner's is this
    check's failure too)."""
    calls, reply = contexts.sequence(student, task, ctx.device)
    if isinstance(reply, StudentError):
        if reply.type_name == "ProtocolError":  # a malformed reply never passes
            raise reply
        return
    for call, written in zip(calls, reply["written"], strict=True):
        if written:
            name = INPUT_NAMES[written[0]] if written[0] < len(INPUT_NAMES) else "?"
            raise fail(text("attention.writes_input", name=name), case_code=contexts.call_code(calls, call),
                       expected=text("attention.input_unchanged", name=name),
                       got=text("attention.input_written", name=name))


def _train_case(task: AttentionTask, B: int = 4, Q: int = 8) -> Case:
    """Small scores (weights spread over every key) and values [I | 1] (K, K + 1): the output
    is then the dropped weights themselves, and their row sum in the last column."""
    K = 6
    eye_and_ones = torch.cat([torch.eye(K), torch.ones(K, 1)], dim=1).expand(B, K, K + 1)  # (B, K, K + 1)
    return Case({"queries": values((B, Q, 3), 0.1, 21, torch.float32)[0],
                 "keys": values((B, K, 3), 0.1, 22, torch.float32)[0],
                 "values": eye_and_ones.contiguous(), "valid_lens": None},
                options={"num_hiddens": 3} if task.hidden else {},
                recipes={"values": f"torch.cat([torch.eye({K}), torch.ones({K}, 1)], 1).expand({B}, {K}, {K + 1})"})


def _dropout_in_train(task: AttentionTask):
    """Train mode, p in TRAIN_RATES: each weight is zeroed or scaled by 1/(1-p), about a
    fraction p of them are zeroed (seeded: the same draw for every student), the output is
    the dropped weights times the values, and attention_weights keeps them before dropout;
    another module of the class is built after the first one judged, at another rate (a rate
    kept on the class is the last built module's). At the first rate, then one sentence with
    one query (a decoder's step while translating a sentence: code may take another path
    there); at the last, the same call twice more (``_draws_anew``)."""
    def run(student, ctx: Context) -> None:
        device, case, one = ctx.device, _train_case(task), _train_case(task, B=1, Q=1)
        _, plain, evaluated, _ = build_called(student, task, case, device, read_weights=False, own_weights=True)
        weights = _weights_evaluated(evaluated, case)  # the module at dropout=0, in eval mode
        for p in TRAIN_RATES:
            another = next(r for r in TRAIN_RATES if r != p) if p == TRAIN_RATES[0] else None
            module = _judged_in_train(student, task, case, p, another, weights, device)
            if p == TRAIN_RATES[0]:
                got = module.seeded(0, None, *inputs(one, device=device))
                code = (f"{one.code()}\n# dropout={p}, one sentence, one query\n"
                        "module.train(); torch.manual_seed(0); module(queries, keys, values)")
                check_shape(got, (1, 1, 7), OUTPUT, code, "(B, Q, v)")
                _judge_train(got.double().cpu(), _weights_evaluated(plain(*inputs(one, device=device)), one), p, code)
            else:
                _draws_anew(module, case, p, weights, device)
    return run


def _weights_evaluated(evaluated, case: Case) -> torch.Tensor:
    """The weights of a module at dropout 0 in eval mode, from its output on a ``_train_case``
    ([W | 1]); blocked by the output check where the rows hold no weights summing to one."""
    B, Q = case.tensors["queries"].shape[:2]
    check_shape(evaluated, (B, Q, 7), OUTPUT, case.code, "(B, Q, v)")
    evaluated = evaluated.double().cpu()
    if not ((evaluated[..., -1] - 1).abs() <= 1e-3).all():  # (B, Q): no weights summing to one
        raise CheckBlocked("matches the reference")  # nothing to drop (an output of zeros would pass)
    return evaluated[..., :-1]  # (B, Q, K)


def _judged_in_train(student, task: AttentionTask, case: Case, p: float, another: float | None, weights,
                     device: str):
    """A module at rate ``p`` (with ``another``, a second module built after it at that rate), the
    first called in train mode (seeded) and judged; where it keeps (B, Q, K) attention_weights in
    eval mode, those it keeps in train mode are the same, before dropout. Returns the module (in
    train mode)."""
    B, Q, K = *case.tensors["queries"].shape[:2], case.tensors["keys"].shape[1]
    _, module, _, kept_before = build_called(student, task, case, device, own_weights=True, dropout=p)
    if another is not None:
        build(student, task, case, dropout=another, device=device, own_weights=True)
    module.train()
    got = module.seeded(0, None, *inputs(case, device=device))
    code = (f"{case.code()}\nmodule = {task.name}(..., dropout={p})\n"
            + (f"another = {task.name}(..., dropout={another})  # built after it\n" if another is not None else "")
            + "module.train(); torch.manual_seed(0); module(queries, keys, values)")
    check_shape(got, (B, Q, 7), OUTPUT, code, "(B, Q, v)")
    _judge_train(got.double().cpu(), weights, p, code)
    if _kept(kept_before, (B, Q, K)):
        try:
            kept_after = module.attr("attention_weights")
        except StudentError:
            return module
        if _kept(kept_after, (B, Q, K)):
            check_tensor(kept_after, kept_before, 1e-5, text("attention.train_weights"), code, "(B, Q, K)")
    return module


def _kept(weights, shape: tuple) -> bool:
    return isinstance(weights, torch.Tensor) and tuple(weights.shape) == shape


def _draws_anew(module, case: Case, p: float, weights, device: str) -> None:
    """The module (train mode, called once) called twice more with the same tensors: each call
    drops other weights, at the same rate. Seeding the global generator inside forward (at its
    start or at its end) drops the same ones every time, and resets the caller's random stream;
    a rate the calls change drops otherwise at the later calls."""
    args = inputs(case, device=device)
    reply = module.calls_kept([[True, args], [True, args]], [], grad=True)
    first, second = (reply["at_call"][i][0] for i in range(2))
    code = (f"{case.code()}\n# dropout={p}\nmodule.train()\nmodule(queries, keys, values)  # the call judged above\n"
            "first = module(queries, keys, values)\nsecond = module(queries, keys, values)  # no seeding in between")
    for got in (first, second):
        check_shape(got, (*weights.shape[:2], 7), OUTPUT, code, "(B, Q, v)")
        _judge_train(got.double().cpu(), weights, p, code)
    if bool((first == second).all()):
        raise fail(text("dropout.same_every_call"), case_code=code,
                   expected=text("dropout.drawn_anew"), got=text("dropout.same_draw"))


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


def _device(task: AttentionTask):
    """Eval and train mode, with 1-D, 2-D (int32) and no lengths (SPEC §3), small, with hundreds of
    keys (the book's contexts' size) and for one sentence's one query; where none of these runs on
    the CPU, again with values of the queries' size (keys and values swapped raise a shape error
    otherwise: the output checks charge it, not this one)."""
    def run(student, ctx: Context) -> None:
        def probe(lens, train: bool, note: str, value_size: int = 2, keys: int = 5, batch: int = 2,
                  queries: int = 3) -> devices.Probe:
            made = {name: values(shape, 1.0, seed, torch.float32) for name, shape, seed in (
                ("queries", (batch, queries, 4), 31), ("keys", (batch, keys, 4), 32),
                ("values", (batch, keys, value_size), 33))}
            case = Case({name: t for name, (t, _) in made.items()} | {"valid_lens": lens},
                        options={"num_hiddens": 3} if task.hidden else {},
                        recipes={name: recipe for name, (_, recipe) in made.items()})
            built = {}

            def cpu(c):  # built and called on the CPU in one round trip
                _, built["module"], output, _ = build_called(student, task, c, read_weights=False, own_weights=True,
                                                             dropout=0.5 if train else 0.0, train=train)
                return output

            def elsewhere(c):
                module = built["module"]
                return student.call_elsewhere(module.handle, None, inputs(c), [module.handle], seed=0)
            return devices.Probe(case, note, cpu, elsewhere)
        def probes(value_size: int) -> list[devices.Probe]:
            # small and at the book's contexts' size, in both modes, and one sentence's one query
            # (code may take another path above a size, or for one)
            return [probe(torch.tensor([1, 4]), False, "module.eval()", value_size),
                    probe(None, False, "module.eval(), valid_lens=None, one sentence, one query", value_size,
                          batch=1, queries=1),
                    probe(torch.tensor([[3, WIDE, 70], [1, 9, WIDE]], dtype=torch.int32), False,
                          f"module.eval(), {WIDE} keys", value_size, WIDE),
                    probe(torch.tensor([220, WIDE]), True, f"dropout=0.5, module.train(), {WIDE} keys", value_size,
                          WIDE)]
        devices.judge(probes(2), shape_check="output shape", retry=probes(4))
    return run


def checks(task: AttentionTask) -> list[Check]:
    def check(name: str, run) -> Check:
        return Check(name, text(f"what.attention.{name}"), run)
    return [check("deterministic in eval mode", _deterministic_in_eval(task)),
            check("dropout as nn.Dropout in train mode", _dropout_in_train(task)),
            Check("runs on any device", devices.WHAT, _device(task))]

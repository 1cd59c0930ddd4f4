"""Checks for the attention modules: dot-product, additive, distance, bilinear (SPEC §2).

The student's module is built through the proxy with the contract's constructor
arguments, lazily initialised by one forward, and given the reference's weights by
parameter name; outputs are compared in eval mode against the reference in float64.
"""
import copy
import math
from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import Tensor

from reference import attention as ref

from ..results import text
from .compare import check_shape, check_tensor, tolerance
from .core import Check, CheckFailed, Context, fail, search
from .devices import WHAT as DEVICE_WHAT, on_meta
from .diagnosis import Observation, name_mistake, variant_outputs
from .inputs import Case, attention_cases, randomize, values
from .softmax import MISTAKES as SOFTMAX_MISTAKES

OUTPUT = text("tensor.attention_output")
WEIGHTS = text("tensor.stored_weights")
Scores = Callable[[torch.nn.Module, Tensor, Tensor], Tensor]  # (module, queries, keys) -> (B, Q, K)


def _dot(module, q, k):
    return q @ k.transpose(1, 2)  # (B, Q, D) @ (B, D, K) -> (B, Q, K)


def _sq_dist(module, q, k):
    return ((q.unsqueeze(2) - k.unsqueeze(1)) ** 2).sum(-1)  # (B, Q, K)


def _additive(module, q, k, squash=torch.tanh):
    features = squash(module.W_q(q).unsqueeze(2) + module.W_k(k).unsqueeze(1))  # (B, Q, K, H)
    return module.w_v(features).squeeze(-1)  # (B, Q, K)


def _root_d(q):
    return math.sqrt(q.shape[-1])


@dataclass(frozen=True)
class AttentionTask:
    """What differs between the four attention tasks."""
    name: str
    reference: type
    init: Callable[[Case, float], dict]       # constructor arguments
    scores: Scores                             # the right scores, for softmax mistakes
    mistaken_scores: dict[str, Scores]         # known mistakes in the score function
    different_sizes: bool = False              # queries and keys may differ in size
    hidden: bool = False                       # takes num_hiddens
    two_d_check: bool = False                  # a separate check for 2-D valid_lens


MODULES = {
    "dot_product_attention": AttentionTask(
        "DotProductAttention", ref.DotProductAttention, lambda case, p: {"dropout": p},
        lambda m, q, k: _dot(m, q, k) / _root_d(q),
        {"no_sqrt": _dot, "scale_by_d": lambda m, q, k: _dot(m, q, k) / q.shape[-1]}, two_d_check=True),
    "additive_attention": AttentionTask(
        "AdditiveAttention", ref.AdditiveAttention,
        lambda case, p: {"num_hiddens": case.options["num_hiddens"], "dropout": p}, _additive,
        {"no_tanh": lambda m, q, k: _additive(m, q, k, squash=lambda x: x)}, different_sizes=True,
        hidden=True),
    "distance_attention": AttentionTask(
        "DistanceAttention", ref.DistanceAttention, lambda case, p: {"dropout": p},
        lambda m, q, k: -_sq_dist(m, q, k) / (2 * _root_d(q)),
        {"positive_distance": lambda m, q, k: _sq_dist(m, q, k) / (2 * _root_d(q)),
         "distance_not_squared": lambda m, q, k: -_sq_dist(m, q, k).sqrt() / (2 * _root_d(q)),
         "missing_half": lambda m, q, k: -_sq_dist(m, q, k) / _root_d(q),
         "no_sqrt": lambda m, q, k: -_sq_dist(m, q, k) / 2}),
    "bilinear_attention": AttentionTask(
        "BilinearAttention", ref.BilinearAttention,
        lambda case, p: {"query_size": case.tensors["queries"].shape[-1], "dropout": p},
        lambda m, q, k: q @ m.M(k).transpose(1, 2) / _root_d(q),
        {"no_sqrt": lambda m, q, k: q @ m.M(k).transpose(1, 2),
         "M_on_queries": lambda m, q, k: m.M(q) @ k.transpose(1, 2) / _root_d(q)},
        different_sizes=True),
}


def _inputs(case: Case) -> list:
    t = case.tensors
    return [t["queries"], t["keys"], t["values"], t["valid_lens"]]


def build(student, task: AttentionTask, case: Case, dropout: float = 0.0, device: str = "cpu"):
    """The reference module and the student's, with the reference's weights, in eval mode."""
    reference = task.reference(**task.init(case, dropout)).eval()
    with torch.no_grad():
        reference(*_inputs(case))  # lazy initialisation
        randomize(reference, seed=0)
    module = student.new(task.name, **task.init(case, dropout))
    module.eval()
    weights = {name: p.detach() for name, p in reference.named_parameters()}
    if weights:
        module(*_inputs(case))  # lazy initialisation of the student's module
        missing = module.load_parameters(weights)
        if missing:
            raise fail(text("attention.parameters_missing", missing=", ".join(missing),
                            names=", ".join(sorted(weights))), case_code=case.code())
    if device != "cpu":
        module.to(device=device)
    return reference, module


def _observe(task: AttentionTask, reference, case: Case, got) -> Observation:
    """The student's output, the reference's and each known mistake's, on ``case``."""
    r64 = copy.deepcopy(reference).double()
    q, k, v, lens = (None if t is None else t.double() if t.is_floating_point() else t
                     for t in _inputs(case))
    with torch.no_grad():
        expected = r64(q, k, v, lens)
        scores = task.scores(r64, q, k)  # (B, Q, K)
        mistakes = {mid: (lambda f=f: ref.masked_softmax(f(r64, q, k), lens) @ v)
                    for mid, f in task.mistaken_scores.items()}
        mistakes |= {mid: (lambda f=f: f(scores, lens) @ v) for mid, f in SOFTMAX_MISTAKES.items()
                     if lens is not None or mid == "wrong_axis"}
        return got, expected, variant_outputs(mistakes)


def _diagnose(student, task: AttentionTask, reference, case: Case, got, tol: float, device: str):
    def probes():
        for lens in (torch.tensor([1, 3]), torch.tensor([[1, 2, 4], [3, 5, 2]])):
            probe = Case({"queries": values((2, 3, 4), 2.0, 11, torch.float32)[0],
                          "keys": values((2, 5, 4), 2.0, 12, torch.float32)[0],
                          "values": values((2, 5, 2), 2.0, 13, torch.float32)[0], "valid_lens": lens},
                         options={"num_hiddens": 3})
            probe_reference, module = build(student, task, probe, device=device)
            yield _observe(task, probe_reference, probe, module(*_inputs(probe.on(device))))
    return name_mistake(_observe(task, reference, case, got), probes, tol)


def compare_to_reference(student, task: AttentionTask, case: Case, device: str) -> None:
    reference, module = build(student, task, case, device=device)
    got = module(*_inputs(case.on(device)))
    got_weights = module.attr("attention_weights")
    with torch.no_grad():
        reference64 = copy.deepcopy(reference).double()
        expected = reference64(*[t.double() if t is not None and t.is_floating_point() else t
                                 for t in _inputs(case)])
        tol = tolerance(reference(*_inputs(case)), expected)
    try:
        check_tensor(got, expected, tol, OUTPUT, case.code(), "(B, Q, v)")
    except CheckFailed as failed:
        failed.finding.mistake = _diagnose(student, task, reference, case, got, tol, device)
        raise
    check_tensor(got_weights, reference64.attention_weights, max(tol, 1e-5), WEIGHTS, case.code(), "(B, Q, K)")


def _matches(task: AttentionTask, two_d: bool | None = None, same_sizes: bool = True):
    def run(student, ctx: Context) -> None:
        cases = attention_cases(two_d=two_d, same_sizes=same_sizes, hidden=task.hidden,
                                with_lens=True if two_d else None)
        search(cases, lambda case: compare_to_reference(student, task, case, ctx.device), ctx)
    return run


def _shapes(task: AttentionTask):
    def run(student, ctx: Context) -> None:
        def test(case: Case):
            _, module = build(student, task, case, device=ctx.device)
            q, k, v, _ = _inputs(case)
            check_shape(module(*_inputs(case.on(ctx.device))), (q.shape[0], q.shape[1], v.shape[-1]),
                        OUTPUT, case.code(), "(B, Q, v)")
            check_shape(module.attr("attention_weights"), (q.shape[0], q.shape[1], k.shape[1]),
                        WEIGHTS, case.code(), "(B, Q, K)")
        search(attention_cases(same_sizes=not task.different_sizes, hidden=task.hidden), test, ctx,
               max_examples=5)
    return run


def _dropout(task: AttentionTask):
    """Against the student's own module without dropout (so that a wrong score is not
    charged again here): with dropout=1, eval mode gives the same output; train mode gives
    zeros and keeps the weights from before dropout in attention_weights."""
    def run(student, ctx: Context) -> None:
        def test(case: Case):
            inputs = _inputs(case.on(ctx.device))
            _, plain = build(student, task, case, dropout=0.0, device=ctx.device)
            expected, expected_weights = plain(*inputs), plain.attr("attention_weights")
            _, module = build(student, task, case, dropout=1.0, device=ctx.device)
            check_tensor(module(*inputs), expected, 1e-5, text("attention.eval_dropout_output"),
                         case.code() + "\n# module.eval()")
            module.train()
            check_tensor(module(*inputs), torch.zeros_like(expected), 1e-6, text("attention.train_dropout_output"),
                         case.code() + "\n# module.train()")
            check_tensor(module.attr("attention_weights"), expected_weights, 1e-5,
                         text("attention.train_weights"), case.code() + "\n# module.train()")
        search(attention_cases(with_lens=True, hidden=task.hidden), test, ctx, max_examples=5)
        _dropout_on_weights(student, task, ctx.device)
    return run


def _dropout_on_weights(student, task: AttentionTask, device: str) -> None:
    """With values all ones and p=0.5, dropout on the weights leaves each output at twice
    the surviving weight, mostly strictly between 0 and 2; dropout on the output gives
    only 0 or 2. Small inputs keep the weights spread out, so the difference shows."""
    case = Case({"queries": values((4, 8, 3), 0.1, 21, torch.float32)[0],
                 "keys": values((4, 6, 3), 0.1, 22, torch.float32)[0],
                 "values": torch.ones(4, 6, 1), "valid_lens": None}, options={"num_hiddens": 3})
    _, module = build(student, task, case, dropout=0.5, device=device)
    module.train()
    student.seed(0)
    got = module(*_inputs(case.on(device)))
    check_shape(got, (4, 8, 1), OUTPUT, case.code(), "(B, Q, v)")
    between = ((got > 0.01) & (got < 1.99)).sum().item()
    if between == 0:
        raise fail(text("attention.dropout_on_output"), case_code=case.code() + "\n# module.train()",
                   expected="dropout(attention_weights) @ values", got="dropout(attention_weights @ values)")


def _meta(task: AttentionTask):
    def run(student, ctx: Context) -> None:
        case = Case({"queries": torch.zeros(2, 3, 4), "keys": torch.zeros(2, 5, 4),
                     "values": torch.zeros(2, 5, 2), "valid_lens": torch.tensor([1, 4])},
                    options={"num_hiddens": 3})
        _, module = build(student, task, case)

        def call(c: Case):
            module.to(device=c.tensors["queries"].device.type)
            return module(*_inputs(c))
        on_meta(call, case, expected_shape=(2, 3, 2))
    return run


def checks_for(task_id: str) -> list[Check]:
    task = MODULES[task_id]

    def check(name: str, run) -> Check:
        return Check(name, text(f"what.attention.{name}"), run)
    checks = [check("output and attention_weights shapes", _shapes(task)),
              check("matches the reference", _matches(task, two_d=False if task.two_d_check else None))]
    if task.two_d_check:
        checks.append(check("matches the reference with 2-D valid_lens", _matches(task, two_d=True)))
    if task.different_sizes:
        checks.append(check("queries and keys of different sizes", _matches(task, same_sizes=False)))
    checks += [check("dropout only in train mode", _dropout(task)),
               Check("runs on any device", DEVICE_WHAT, _meta(task))]
    return checks

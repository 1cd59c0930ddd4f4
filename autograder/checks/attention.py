"""Checks for the attention modules: dot-product, additive, distance, bilinear (SPEC §2).

The student's module is built through the sandbox's client with the contract's constructor
arguments, lazily initialised by one forward, and given the reference's weights by
parameter name; values are compared in eval mode against the reference in float64.
One property per check (SPEC §3): the output, the stored ``attention_weights``, the law
that links them, the gradients, dropout in each mode and the device are judged apart,
so a module whose output is right but that keeps no weights loses the weights' points only.
"""
import functools
import math
from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import Tensor

from reference import attention as ref

from ..results import text
from ..sandbox.client import Built, StudentError, gradients_reply, gradients_request, then_reply
from . import gradients
from .compare import (PRECISION, call_float64, case_key, check_shape, check_tensor, close, float64_twin, heatmap,
                      in_dtype, judged_precise, reference_result, some_precise, tolerance)
from .core import (Check, CheckFailed, Context, Kept, MainCheck, PerStudent, fail, in_context, left_to, noted_as_own,
                   search)
from .diagnosis import Observation, at_the_bottom, name_mistake, named_explains, variant_outputs
from .inputs import BATCH_ONE, INT32, TWO_D, WIDE, Case, attention_cases, randomize, values
from .softmax import MISTAKES as SOFTMAX_MISTAKES

OUTPUT = text("tensor.attention_output")
WEIGHTS = text("tensor.stored_weights")
WEIGHTS_CHECK = "attention_weights match the reference"
BUILD_SEED = 0  # the random state every student module is built from (build_remote)
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
    older_signature: str | None = None         # the older book's constructor, as a call

    @property
    def charged_by(self) -> dict[str, str]:
        """The check that charges a crash on each kind of input (core.judged_plain)."""
        return {TWO_D: "matches the reference with 2-D valid_lens" if self.two_d_check else "matches the reference",
                INT32: "matches the reference", BATCH_ONE: "matches the reference"}


MODULES = {
    "dot_product_attention": AttentionTask(
        "DotProductAttention", ref.DotProductAttention, lambda case, p: {"dropout": p},
        lambda m, q, k: _dot(m, q, k) / _root_d(q),
        {"no_sqrt": _dot, "scale_by_d": lambda m, q, k: _dot(m, q, k) / q.shape[-1]}, two_d_check=True),
    "additive_attention": AttentionTask(
        "AdditiveAttention", ref.AdditiveAttention,
        lambda case, p: {"num_hiddens": case.options["num_hiddens"], "dropout": p}, _additive,
        {"no_tanh": lambda m, q, k: _additive(m, q, k, squash=lambda x: x)}, different_sizes=True,
        hidden=True, older_signature="AdditiveAttention(key_size, query_size, num_hiddens, dropout)"),
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
SIGNATURES = {"AdditiveAttention": "AdditiveAttention(num_hiddens, dropout)"}


def inputs(case: Case, dtype=None, device: str | None = None) -> list:
    """queries, keys, values, valid_lens, on ``device`` and the floating ones in ``dtype`` when
    given (otherwise where and as they are)."""
    def moved(x):
        return x.to(device=device, dtype=dtype if dtype is not None and x.is_floating_point() else None)
    t = case.tensors
    return [None if x is None else moved(x) for x in (t["queries"], t["keys"], t["values"], t["valid_lens"])]


def build(student, task: AttentionTask, case: Case, dropout: float = 0.0, device: str = "cpu", train: bool = False,
          own_weights: bool = False):
    """The reference module (float32, CPU) and the student's with the reference's weights, in
    eval mode (train mode with ``train``), in the case's dtype and on ``device`` (the run's:
    CUDA on a GPU runner). Lazy layers are initialised by a float32 forward on the CPU first.
    A contract parameter the module does not have fails the check, unless ``own_weights`` (a
    check that compares the module with itself): the module then keeps its own in its place,
    the same in every build (SPEC §3: only the checks that need the copied weights fail)."""
    reference, module, _, _ = _build(student, task, case, dropout, device, read=None, train=train,
                                     own_weights=own_weights)
    return reference, module


def build_with_gradients(student, task: AttentionTask, case: Case, dropout: float, device: str, train: bool,
                         request: dict) -> tuple:
    """``build`` (train mode with ``train``), then the worker's ``gradients`` ``request``
    (``gradients.request``) on the module, in the same round trip: (reference, module, the
    reply, or the ``StudentError`` it raised)."""
    reference, module, _, reply = _build(student, task, case, dropout, device, read=None, train=train,
                                         gradients=request)
    return reference, module, reply


def build_called(student, task: AttentionTask, case: Case, device: str = "cpu", read_weights: bool = True,
                 own_weights: bool = False, dropout: float = 0.0, train: bool = False):
    """``build`` (at ``dropout``, in train mode with ``train``, ``own_weights`` as there), then the
    module called on the case on ``device`` and its ``attention_weights`` read (with
    ``read_weights``), in the same round trip: (reference, module, output, weights). The call's
    error is raised, as a separate call would raise it; the weights are a value, the
    ``StudentError`` reading them raised, or None when not read."""
    names = ["attention_weights"] if read_weights else []
    reference, module, then, _ = _build(student, task, case, dropout, device, read=names, train=train,
                                        own_weights=own_weights)
    results, read = then_results(then, 1, names)
    return reference, module, results[0], read.get("attention_weights")


def called_twice(student, task: AttentionTask, case: Case, dropout: float, device: str) -> tuple:
    """``build`` at ``dropout`` (its own weights where the contract's are missing), then the module
    called on the case on ``device`` twice with the same tensors, in the same round trip: (first
    output (copied before the second call), second output); the call's error is raised."""
    _, _, then, _ = _build(student, task, case, dropout, device, read=[], twice=True, own_weights=True)
    first, second = then_results(then, 2)[0]
    return first, second


def _build(student, task: AttentionTask, case: Case, dropout: float, device: str, read: list | None,
           train: bool = False, gradients: dict | None = None, twice: bool = False, own_weights: bool = False):
    """``build``'s work; with ``read`` (a list), also the call on the case (made ``twice``, with
    ``twice``) and those attributes; with ``gradients``, also the worker's ``gradients`` on the
    built module (``build_remote``)."""
    reference, weights = reference_module(task, case, dropout)
    calls = [[None, inputs(case, torch.float32)]] if weights else []  # the student's lazy layers
    dtype = "float64" if case.tensors["queries"].dtype == torch.float64 else None
    then = None if read is None else [[None, inputs(case, device=device)]]
    try:
        module, missing, done, grads = build_remote(
            student, task.name, [], task.init(case, dropout), calls, weights, dtype,
            None if device == "cpu" else device, then, read, train, gradients, twice)
    except StudentError:
        if task.older_signature is None or not _takes_older_arguments(student, task, case, dropout):
            raise
        raise fail(text("attention.older_signature", got=task.older_signature,
                        expected=SIGNATURES[task.name]), case_code=case.code(),
                   mistake="older_additive_signature") from None
    if missing and not own_weights:
        raise fail(text("attention.parameters_missing", missing=", ".join(missing),
                        names=", ".join(f"`{name}`" for name in sorted({n.split(".")[0] for n in weights}))),
                   case_code=case.code())
    return reference, module, done, grads


# The reference modules, by task, constructor arguments and input sizes: all that their lazy
# initialisation and random weights depend on.
_REFERENCES = Kept()


def reference_module(task: AttentionTask, case: Case, dropout: float) -> tuple[torch.nn.Module, dict]:
    """The reference module for the case's sizes, in eval mode, lazily initialised and given
    its random weights; and those weights by name. Built once per process and sizes: the
    checks only call it (its stored weights are read after a call of their own)."""
    kwargs = task.init(case, dropout)

    def make():
        reference = task.reference(**kwargs).eval()
        with torch.no_grad():
            reference(*inputs(case, torch.float32))  # lazy initialisation
            randomize(reference, seed=0)
        return reference, {name: p.detach() for name, p in reference.named_parameters()}
    sizes = tuple(case.tensors[name].shape[-1] for name in ("queries", "keys", "values"))
    return _REFERENCES.get((task.name, tuple(sorted(kwargs.items())), sizes), make)


def build_remote(student, name: str, args: list, kwargs: dict, calls: list, parameters: dict,
                 dtype: str | None, device: str | None, then: list | None = None,
                 read: list | None = None, train: bool = False, gradients: dict | None = None,
                 twice: bool = False) -> Built:
    """The worker's ``build``: the student's module, eval mode (train mode with ``train``),
    lazily initialised by ``calls``, with ``parameters`` copied by name, in ``dtype`` on
    ``device``; the names not found; with ``then``, those calls' results (the last call made
    again with the same arguments, with ``twice``) and the attributes ``read`` after them
    (runner's ``_then``; an empty dict without); and with ``gradients``
    (the ``gradients`` request's arguments but the target), that request's value or the
    ``StudentError`` it raised (None without). Every build starts from the same random state
    (``BUILD_SEED``), so parameters the reference has no twin for (a bias that cancels in the
    softmax, an extra layer) are the same in two builds that a check compares."""
    return student.build(name, args, kwargs, calls, parameters, dtype, device, BUILD_SEED, then, read, train,
                         gradients, twice)


def then_results(then: dict, calls: int, names: list[str] = ()) -> tuple[list, dict]:
    """``build_remote``'s ``then`` results and attributes (``client.then_reply``), the student's
    error raised (as a separate call would raise it)."""
    results, read = then_reply(then, calls, list(names))
    if isinstance(results, StudentError):
        raise results
    return results, read


def _takes_older_arguments(student, task: AttentionTask, case: Case, dropout: float) -> bool:
    """Whether the class is built by the older book's (key_size, query_size, num_hiddens, dropout)."""
    q, k = case.tensors["queries"], case.tensors["keys"]
    try:
        student.new(task.name, k.shape[-1], q.shape[-1], case.options["num_hiddens"], dropout)
    except StudentError:
        return False
    return True


def expected(reference, case: Case) -> tuple[Tensor, Tensor, float]:
    """The reference's output and weights in float64, and float32's tolerance for the output (for
    float64 inputs too: their precision is a check of its own, ``precision``)."""
    def compute():
        with torch.no_grad():
            output = call_float64(reference, *inputs(case, torch.float64))
            weights = reference.attention_weights  # float64: read before the float32 call below
            tol = tolerance(reference(*inputs(case, torch.float32)), output)
        return output, weights, tol
    return reference_result("attention output", compute, reference, case.tensors, case.options)


def _observe(task: AttentionTask, reference, case: Case, got, weights: bool) -> Observation:
    """The student's output (or weights), the reference's and each known mistake's."""
    r64 = float64_twin(reference)
    q, k, v, lens = inputs(case, torch.float64)
    with torch.no_grad():
        right = r64(q, k, v, lens)
        scores = task.scores(r64, q, k)  # (B, Q, K)
        made = {mid: (lambda f=f: ref.masked_softmax(f(r64, q, k), lens)) for mid, f in task.mistaken_scores.items()}
        made |= {mid: (lambda f=f: f(scores, lens)) for mid, f in SOFTMAX_MISTAKES.items()
                 if lens is not None or mid == "wrong_axis"}
        out = (lambda w: w) if weights else (lambda w: w @ v)  # (B, Q, K) @ (B, K, v) -> (B, Q, v)
        mistakes = {mid: (lambda m=m: out(m())) for mid, m in made.items()}
        return got, r64.attention_weights if weights else right, variant_outputs(mistakes)


def _diagnose(student, task: AttentionTask, reference, case: Case, got, tol: float, weights: bool,
              device: str):
    def probes():
        for lens in (torch.tensor([1, 3]), torch.tensor([[1, 2, 4], [3, 5, 2]])):
            probe = _probe_case(lens)
            probe_reference, module = build(student, task, probe, device=device)
            probe_got = module(*inputs(probe, device=device))
            if weights:
                probe_got = module.attr("attention_weights")
            yield _observe(task, probe_reference, probe, probe_got, weights)
    return name_mistake(_observe(task, reference, case, got, weights), probes, tol)


# The student's eval-mode output and stored weights per case, for one student: the output and
# the weights checks draw the same examples, so the weights check reads what the output
# check's calls returned instead of calling again.
_CALLED = PerStudent()


def called(student, task: AttentionTask, case: Case, device: str) -> tuple:
    """(reference, the student's output, its attention_weights or the StudentError reading them)."""
    def call() -> tuple:
        reference, module, got, weights = build_called(student, task, case, device)
        _BUILT.get(student, (task.name, device), list).append((case, reference, module, got, weights))
        return reference, got, weights
    return _CALLED.get(student, case_key(task.name, device, case), call)


# The modules the output checks built, in order, per student, task and device: (case, reference,
# module, its output, the attention_weights it kept).
_BUILT = PerStudent()


def modules_built(student, task: AttentionTask, device: str) -> list[tuple]:
    """The modules the output checks built for their examples, one per example, in order (each was
    built after the ones before it, beside them: ``contexts.judge_side_by_side``), with what they
    returned (the precision check judges the float64 ones again)."""
    return _BUILT.get(student, (task.name, device), list)


# What the output check saw, per student, task and device: the narrower checks (2-D
# valid_lens, queries and keys of different sizes) do not charge it again.
_MAIN = PerStudent()


def compare_output(student, task: AttentionTask, case: Case, device: str, narrower: bool = False) -> bool:
    """The output against the reference's. In a ``narrower`` check, after the output check
    failed, an output that its named mistake explains, or (2-D valid_lens) that equals the
    student's own with each query's lengths alone (the 1-D form), is not charged again (SPEC
    §3: one mistake costs points once); the narrower property (the sizes, the 2-D lengths)
    is still judged."""
    reference, got, got_weights = called(student, task, case, device)
    output, weights, tol = expected(reference, case)
    main = _MAIN.get(student, (task.name, device), MainCheck)
    try:
        check_tensor(got, output, tol, OUTPUT, case.code, "(B, Q, v)")
    except CheckFailed as failed:
        if narrower and main.failed and _explained(student, task, reference, case, got, tol, main.named, device):
            return True
        def named(finding) -> None:
            finding.mistake = _diagnose(student, task, reference, case, got, _diagnosis_tol(tol, case), False,
                                        device)
            if not narrower:
                main.saw(finding.mistake)
            finding.heatmap = heatmap(got_weights, weights)
        failed.later(named)
        raise
    return False


def _explained(student, task: AttentionTask, reference, case: Case, got, tol: float, named: set,
               device: str) -> bool:
    """Whether one of the ``named`` mistakes, or the student's own 1-D form, gives ``got``."""
    if named_explains(named, _observe(task, reference, case, got, weights=False), max(tol, 1e-5)):
        return True
    lens = case.tensors["valid_lens"]
    if lens is None or lens.dim() != 2 or not isinstance(got, Tensor):
        return False
    try:
        unmasked = called(student, task, Case({**case.tensors, "valid_lens": None}, options=case.options), device)[1]
        own = _in_1d_form(student, task, case, device)
    except StudentError:
        return False
    # an output the lengths do not change shows no masking to judge (code attending to nothing)
    return not close(got, unmasked, max(tol, 1e-5)) and own is not None \
        and close(got, own, max(tol, 1e-5), equal_nan=True)


def _in_1d_form(student, task: AttentionTask, case: Case, device: str) -> Tensor | None:
    """The student's output for ``case``'s 2-D lengths, one query at a time with its (B,)
    lengths: (B, Q, v), or None where a row is not a (B, 1, ...) tensor."""
    lens, rows = case.tensors["valid_lens"], []
    for q in range(lens.shape[1]):
        one = Case({**case.tensors, "queries": case.tensors["queries"][:, q:q + 1].contiguous(),
                    "valid_lens": lens[:, q].contiguous()}, options=case.options)
        rows.append(called(student, task, one, device)[1])
    if not all(isinstance(r, Tensor) and r.dim() == 3 and r.shape[:2] == (lens.shape[0], 1) for r in rows):
        return None
    return torch.cat(rows, 1)  # Q x (B, 1, v) -> (B, Q, v)


def compare_weights(student, task: AttentionTask, case: Case, device: str) -> None:
    reference, _, got = called(student, task, case, device)
    if isinstance(got, StudentError):
        raise got
    _, weights, tol = expected(reference, case)
    try:
        check_tensor(got, weights, max(tol, 1e-5), WEIGHTS, case.code, "(B, Q, K)")
    except CheckFailed as failed:
        def named(finding) -> None:
            finding.mistake = _diagnose(student, task, reference, case, got, _diagnosis_tol(tol, case), True,
                                        device)
            finding.heatmap = heatmap(got, weights)
        failed.later(named)
        raise


def _diagnosis_tol(tol: float, case: Case) -> float:
    """The tolerance a known mistake must explain the output within: float64's for float64 inputs."""
    return max(tol * in_dtype(case.tensors["queries"].dtype), 1e-5)


def _precise(task: AttentionTask):
    """The outputs the output checks' calls returned for float64 inputs (``modules_built``), then a
    module called in float32 first and converted with ``module.to(torch.float64)`` (as PyTorch
    users convert one) over hundreds of keys, against the reference at float64's tolerance
    (``compare.judged_precise``)."""
    def run(student, ctx: Context) -> None:
        judged = [_judged_precise(task, reference, case, got, case.code)
                  for case, reference, _, got, _ in modules_built(student, task, ctx.device)
                  if case.tensors["queries"].dtype == torch.float64]
        judged.append(_converted(student, task, ctx.device))
        some_precise(judged, "matches the reference")
    return run


def _judged_precise(task: AttentionTask, reference, case: Case, got, code) -> bool:
    output, _, tol = expected(reference, case)
    return judged_precise(got, output, tol * in_dtype(torch.float64), tol, text("precision.result", what=OUTPUT),
                            code, "(B, Q, v)", lambda: _observe(task, reference, case, got, weights=False)[2])


def _converted(student, task: AttentionTask, device: str) -> bool:
    """A module built and called in float32 (its own weights: the call that initialises lazy
    layers), then given the reference's weights, converted with ``module.to(torch.float64)``
    and called on the same inputs in float64, in one round trip: nothing kept of the float32
    call (a scale, a buffer, a cache) may change the float64 one."""
    made = {name: values(shape, 2.0, seed, torch.float64) for name, shape, seed in (
        ("queries", (2, 3, 5), 87), ("keys", (2, WIDE, 5), 88), ("values", (2, WIDE, 2), 89))}  # 1/√5: not exact
    case = Case({name: t for name, (t, _) in made.items()} | {"valid_lens": torch.tensor([220, WIDE])},
                options={"num_hiddens": 3} if task.hidden else {},
                recipes={name: recipe for name, (_, recipe) in made.items()})
    code = (f"{case.code()}\nmodule = {task.name}(...); module.eval()\n"
            "module(queries.float(), keys.float(), values.float(), valid_lens)  # float32 first\n"
            "module.to(torch.float64)\nmodule(queries, keys, values, valid_lens)")
    reference, weights = reference_module(task, case, 0.0)
    try:
        built = build_remote(student, task.name, [], task.init(case, 0.0), [[None, inputs(case, torch.float32)]],
                             weights, "float64", None if device == "cpu" else device,
                             [[None, inputs(case, device=device)]], [])
        got = then_results(built.then, 1)[0][0]
    except StudentError:  # a crash is the value checks' to charge (hundreds of keys: the contexts')
        return False
    if built.missing:
        raise fail(text("attention.parameters_missing", missing=", ".join(built.missing),
                        names=", ".join(f"`{name}`" for name in sorted({n.split(".")[0] for n in weights}))),
                   case_code=case.code())
    return _judged_precise(task, reference, case, got, code)


def _matches(task: AttentionTask, compare, two_d: bool | None = None, same_sizes: bool = True,
             examples_of: str | None = None, bottom: bool = False):
    """A search comparing with the reference; ``examples_of`` names the check whose examples
    (seed) it shares; with ``bottom``, then scores near -1000 (``bottom_case``) where the
    inputs alone set them."""
    def run(student, ctx: Context) -> None:
        cases = attention_cases(two_d=two_d, same_sizes=same_sizes, hidden=task.hidden,
                                with_lens=True if two_d else None)
        excused, others = [], left_to(task.charged_by, ctx)

        def test(case: Case) -> None:
            excused.append(compare(student, task, case, ctx.device))
        search(cases, test, ctx.for_check(examples_of) if examples_of else ctx, left_to=others)
        if bottom and (case := bottom_case(task)) is not None:
            lifted = Case({**case.tensors, "keys": case.tensors["keys"] * 0.01}, options=case.options)  # scores near 0
            in_context(case, lambda case: at_the_bottom(test, case, lifted), ctx, others)
        noted_as_own(any(excused), "matches the reference")
    return run


def bottom_case(task: AttentionTask) -> Case | None:
    """Scores between -1000 and -999 on every key, padding included (SPEC §2: scores anywhere
    within ±1000), for the modules whose scores the inputs alone set (d = 1): dot-product
    (queries 10, keys near -100) and distance (queries 0, keys near 44.7, -k²/2). A fill value
    real scores can reach gives the masked keys weight here only."""
    if task.name == "DotProductAttention":
        queries, q_recipe = torch.full((2, 3, 1), 10.0), "torch.full((2, 3, 1), 10.0)"
        keys, k_recipe = values((2, 5, 1), 0.05, 68, torch.float32, offset=-99.95)  # (B, K, 1) in [-100, -99.9]
    elif task.name == "DistanceAttention":
        queries, q_recipe = torch.zeros(2, 3, 1), "torch.zeros(2, 3, 1)"
        keys, k_recipe = values((2, 5, 1), 0.01, 68, torch.float32, offset=44.71)  # (B, K, 1): k² near 2000
    else:
        return None
    vals, v_recipe = values((2, 5, 2), 2.0, 69, torch.float32)
    return Case({"queries": queries, "keys": keys, "values": vals, "valid_lens": torch.tensor([2, 4])},
                recipes={"queries": q_recipe, "keys": k_recipe, "values": v_recipe})


def _shape(task: AttentionTask):
    def run(student, ctx: Context) -> None:
        def test(case: Case):
            _, _, got, _ = build_called(student, task, case, ctx.device, read_weights=False, own_weights=True)
            q, _, v, _ = inputs(case)
            check_shape(got, (q.shape[0], q.shape[1], v.shape[-1]), OUTPUT, case.code, "(B, Q, v)")
        others = left_to(task.charged_by, ctx)
        search(attention_cases(same_sizes=not task.different_sizes, hidden=task.hidden, min_len=0),
               test, ctx, max_examples=5, left_to=others)
        for lens in (torch.tensor([1, 3]), torch.tensor([[1, 2, 4], [3, 5, 2]])):  # 1-D and 2-D lengths, always
            in_context(_probe_case(lens), test, ctx, others)
    return run


def _probe_case(lens) -> Case:
    """A fixed small example (2 sentences, 3 queries, 5 keys) with these valid_lens."""
    return Case({"queries": values((2, 3, 4), 2.0, 11, torch.float32)[0],
                 "keys": values((2, 5, 4), 2.0, 12, torch.float32)[0],
                 "values": values((2, 5, 2), 2.0, 13, torch.float32)[0], "valid_lens": lens},
                options={"num_hiddens": 3})


def _law(task: AttentionTask):
    """Eval mode: output == attention_weights @ values row by row, rows of valid length 0
    included (SPEC §2), and finite there (as masked_softmax's rows are). The law passes when
    no (B, Q, K) weights are kept, and where the output is the reference's: the weights check
    charges weights that are not the weights (scores kept instead), and a module whose output
    is right loses the weights' points only (SPEC §3)."""
    def run(student, ctx: Context) -> None:
        def test(case: Case):
            case.tensors["valid_lens"].view(-1)[0] = 0  # at least one row with nothing to attend to
            reference, _, got, weights = build_called(student, task, case, ctx.device, own_weights=True)
            q, k, v, lens = inputs(case, device=ctx.device)
            check_shape(got, (q.shape[0], q.shape[1], v.shape[-1]), OUTPUT, case.code, "(B, Q, v)")
            empty = (lens if lens.dim() == 2 else lens[:, None].expand(q.shape[:2])) == 0  # (B, Q)
            if not torch.isfinite(got[empty]).all():
                raise fail(text("attention.empty_row_not_finite"), case_code=case.code(),
                           expected=text("softmax.finite_row"), got=str(got[empty][0].tolist()))
            if not isinstance(weights, Tensor) or tuple(weights.shape) != (q.shape[0], q.shape[1], k.shape[1]):
                return
            output, _, tol = expected(reference, case)
            if close(got, output, tol):
                return
            product = weights.double() @ v.double()  # (B, Q, K) @ (B, K, v) -> (B, Q, v)
            tol = (1e-9 if q.dtype == torch.float64 else 1e-5) * (1 + product.abs().nan_to_num().max().item())
            check_tensor(got, product, tol, text("attention.law_output"), case.code, "(B, Q, v)")
        search(attention_cases(with_lens=True, min_len=0, same_sizes=not task.different_sizes,
                               hidden=task.hidden), test, ctx, max_examples=max(5, ctx.max_examples // 2),
               left_to=left_to(task.charged_by, ctx))
    return run


def _gradients(task: AttentionTask):
    """In float64, the gradients with respect to queries, keys, values and every parameter
    equal the reference's (SPEC §2; no row of valid length 0), where the output is right."""
    def run(student, ctx: Context) -> None:
        judged: list[bool] = []
        def judge(case: Case) -> None:
            judged.append(gradients_judged(student, task, case, ctx.device))
        search(attention_cases(same_sizes=not task.different_sizes, hidden=task.hidden, dtype=torch.float64),
               judge, ctx, max_examples=max(5, ctx.max_examples // 2), left_to=left_to(task.charged_by, ctx))
        if not any(judged):  # the drawn examples had one key each, or a wrong output
            in_context(_attending_case(task), judge)
        gradients.some_judged(judged)
    return run


def _attending_case(task: AttentionTask) -> Case:
    """A fixed float64 example whose output depends on the attention (4 keys, lengths 2 and 4)."""
    queries, q_recipe = values((2, 2, 3), 2.0, 7, torch.float64)
    keys, k_recipe = values((2, 4, 2 if task.different_sizes else 3), 2.0, 8, torch.float64)
    vals, v_recipe = values((2, 4, 2), 2.0, 9, torch.float64)
    return Case({"queries": queries, "keys": keys, "values": vals, "valid_lens": torch.tensor([2, 4])},
                options={"num_hiddens": 3} if task.hidden else {},
                recipes={"queries": q_recipe, "keys": k_recipe, "values": v_recipe})


def gradients_judged(student, task: AttentionTask, case: Case, device: str, train: bool = False,
                     code: str | None = None) -> bool:
    """Fail on the first of the student's gradients that is wrong, on the float64 ``case`` (the
    module in train mode at dropout 0 when ``train``): against the reference's where the output
    is right, against the student's own forward where not (``gradients``); False when not
    judged (an example where the output cannot show the attention, or an output that does not
    change with the keys: without tanh, additive attention's output does not change with the
    queries, and its gradients are still judged)."""
    q, k, v, lens = inputs(case)
    R = gradients.cotangent((q.shape[0], q.shape[1], v.shape[-1]), seed=q.numel())
    sent = inputs(case, device=device)
    calls, names = [[None, sent]], ["queries", "keys", "values"]
    reference, module, reply = build_with_gradients(student, task, case, 0.0, device, train,
                                                    gradients_request(calls, R.to(device), first_item=False))
    reply = gradients_reply(reply)
    output, expected_inputs, expected_params = reference_result(
        "attention gradients", lambda: gradients.reference_gradients(
            lambda leaves, params: call_float64(reference, *leaves, lens, params=params), [q, k, v],
            reference, R), reference, [q, k, v, lens], R)
    if not _informative(case):
        return False
    return gradients.compare(reply, output, names, expected_inputs, expected_params, code or case.code()) or \
        gradients.own_forward_judged(module, calls, reply, R, sent[:3], names, expected_params, [1],
                                     code or case.code(), first_item=False)


def _informative(case: Case) -> bool:
    """Whether the output depends on the attention at all: more than one output value, and a
    query with two valid keys or more (with one, any weights give the same output). Gradients
    judged on other examples alone would pass code that attends to nothing."""
    q, k, v, lens = inputs(case)
    if q.shape[0] * q.shape[1] * v.shape[-1] < 2 or k.shape[1] < 2:
        return False
    return lens is None or bool((lens.clamp(max=k.shape[1]) >= 2).any())


def checks_for(task_id: str) -> list[Check]:
    """The checks on values; attention_modes.py adds dropout and the device."""
    task = MODULES[task_id]

    def check(name: str, run) -> Check:
        return Check(name, text(f"what.attention.{name}"), run)
    checks = [check("output shape", _shape(task)),
              check("matches the reference", _matches(task, compare_output, two_d=False if task.two_d_check else None,
                                                      bottom=True))]
    narrower = functools.partial(compare_output, narrower=True)
    if task.two_d_check:
        checks.append(check("matches the reference with 2-D valid_lens", _matches(task, narrower, two_d=True)))
    if task.different_sizes:
        checks.append(check("queries and keys of different sizes", _matches(task, narrower, same_sizes=False)))
    return checks + [check(WEIGHTS_CHECK,  # the output check's examples
                           _matches(task, compare_weights, two_d=False if task.two_d_check else None,
                                    examples_of="matches the reference")),
                     check("output equals attention_weights @ values", _law(task)),
                     check("gradients match the reference", _gradients(task)),
                     check(PRECISION, _precise(task))]

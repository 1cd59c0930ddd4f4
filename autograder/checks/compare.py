"""Expected vs got, written for a student: where the largest difference is, and by how much."""
import copy
import math
import weakref
from collections.abc import Callable

import torch
from torch import Tensor
from torch.func import functional_call
from torch.utils._pytree import tree_map

from ..results import Heatmap, Text, text
from ..sandbox.protocol import Handle, Named, Opaque, data_bytes
from .core import CheckBlocked, CheckFailed, Kept, fail

METHODS = {"method", "function", "builtin_function_or_method", "method-wrapper", "functools.partial"}


def kind_of(value) -> Text:
    """What the student's code gave, where it is not what was expected, in the course's words:
    never a type name of ours (``Opaque``, ``Handle``: what stayed in the worker) or Python's
    (``NoneType``, ``method``). By ``type()``, which runs none of the value's code."""
    kind = type(value)
    if value is None:
        return text("kind.none")
    if issubclass(kind, Tensor):
        return text("kind.tensor", shape=str(tuple(value.shape)))
    if kind is list or kind is tuple:
        return text(f"kind.{kind.__name__}", count=len(value))
    if kind is Handle or kind is Named:
        return text("kind.object")
    if kind in (bool, int, float, str):
        return text("kind.value", value=repr(value)[:40])
    name = value.type_name if kind is Opaque else kind.__name__
    if name in METHODS:
        return text("kind.method")
    if name.startswith("tensor"):  # a tensor that cannot cross as data (another layout, the meta device)
        return text("kind.other_tensor")
    return text("kind.other", type=name)


def excerpt(t: Tensor, limit: int = 8, at: int = 0) -> str:
    """The row of the last axis that holds flat index ``at`` (the largest difference), rounded,
    at most ``limit`` values around it: enough to see what went wrong, where it went wrong."""
    if t.device.type == "meta":  # no values to show (the device check's emulation runs elsewhere)
        return f"(a tensor of shape {tuple(t.shape)}, values not read)"
    if not t.dim():
        return f"[{t.item():.4g}]"
    width = t.shape[-1]
    row = t.detach().double().cpu().reshape(-1, width)[at // width] if width else t.reshape(-1)  # (width,)
    start = max(0, min(at % width - limit // 2, width - limit)) if width else 0
    shown = ", ".join(f"{v:.4g}" for v in row[start:start + limit].tolist())
    return f"[{'..., ' if start else ''}{shown}{', ...' if start + limit < row.numel() else ''}]"


def tolerance(reference32: Tensor, reference64: Tensor, dtype: torch.dtype = torch.float32) -> float:
    """Allowed error for a result computed in ``dtype``: in float32, a floor plus a multiple of
    the reference's own float32 error; in float64 the same, scaled by float64's rounding
    (``in_dtype``), so that code computing a float64 input in float32 inside loses the points."""
    own_error = (reference32.double() - reference64).abs().max().item() if reference64.numel() else 0.0
    scale = reference64.abs().max().item() if reference64.numel() else 0.0
    return (1e-5 + 1e-5 * scale + 50 * own_error) * in_dtype(dtype)


def in_dtype(dtype: torch.dtype) -> float:
    """How much finer ``dtype`` rounds than float32, with a margin of 16 (1 for float32 and
    below): an error that float32 rounding allows, as float64's. A right form's error scales
    with its dtype's eps; float32 inside a float64 computation keeps float32's."""
    if not dtype.is_floating_point or torch.finfo(dtype).eps >= torch.finfo(torch.float32).eps:
        return 1.0
    return 16 * torch.finfo(dtype).eps / torch.finfo(torch.float32).eps


def rounding(scores: Tensor) -> float:
    """How far float rounding alone may move weights computed from ``scores``: a few units in
    the last place of the largest score. An equally right form (``X - logsumexp(X)``, say)
    rounds a score of 1000 in float32 by 6e-5, where the reference's form rounds far less."""
    if not scores.numel() or not scores.is_floating_point():
        return 0.0
    return 4 * torch.finfo(scores.dtype).eps * scores.detach().abs().max().item()


CaseCode = str | Callable[[], str] | None  # the failing input as code, written only on failure


def _code(case_code: CaseCode) -> str | None:
    return case_code() if callable(case_code) else case_code


def check_shape(got, shape: tuple, what: Text, case_code: CaseCode, shape_names: str = "") -> None:
    """Raise unless ``got`` is a tensor of ``shape`` (its values are not looked at)."""
    if not isinstance(got, Tensor):
        raise fail(text("compare.not_tensor", what=what, kind=kind_of(got)), case_code=_code(case_code))
    if tuple(got.shape) != tuple(shape):
        raise fail(text("compare.wrong_shape", what=what), case_code=_code(case_code),
                   expected=f"{tuple(shape)} {shape_names}".strip(), got=str(tuple(got.shape)))


def check_tensor(got, expected: Tensor, tol: float, what: Text, case_code: CaseCode,
                 shape_names: str = "") -> None:
    """Raise unless ``got`` is a tensor of ``expected``'s shape, equal within ``tol``."""
    check_shape(got, tuple(expected.shape), what, case_code, shape_names)
    diff = (got.double().cpu() - expected.double().cpu()).abs()
    if diff.numel() == 0:
        return
    diff = torch.where(torch.isnan(diff), torch.full_like(diff, float("inf")), diff)
    worst = int(diff.reshape(-1).argmax())
    if diff.reshape(-1)[worst] <= tol:
        return
    index = tuple(int(i) for i in torch.unravel_index(torch.tensor(worst), diff.shape))
    got_value = got.double().cpu().reshape(-1)[worst].item()
    expected_value = expected.double().cpu().reshape(-1)[worst].item()
    raise fail(text("compare.values_differ", what=what), case_code=_code(case_code),
               expected=excerpt(expected, at=worst), got=excerpt(got, at=worst),
               difference=text("compare.difference", size=_number(abs(got_value - expected_value)),
                               index=str(index), expected=_number(expected_value), got=_number(got_value),
                               tol=_number(tol)))


def _number(value: float) -> float | str:
    """A number for a text to write as the student's language does (its template gives the
    digits); "nan" or "inf" as they are (a result's JSON holds no NaN)."""
    return value if math.isfinite(value) else str(value)


def close(a, b: Tensor, tol: float, equal_nan: bool = False) -> bool:
    """Whether ``a`` is a tensor equal to ``b`` within ``tol`` (for diagnosing mistakes); with
    ``equal_nan``, NaN equals NaN and an infinity itself (the student's own output twice)."""
    if not isinstance(a, Tensor) or tuple(a.shape) != tuple(b.shape) or a.device.type == "meta":
        return False
    a, b = a.double().cpu(), b.double().cpu()
    near = (a - b).abs() <= tol
    if equal_nan:
        near |= (a == b) | (a.isnan() & b.isnan())
    return bool(near.all())


HEATMAP_LIMIT = 20  # rows and columns shown on the pages


def heatmap(got, expected: Tensor) -> Heatmap | None:
    """The student's attention weights beside the reference's on the failing example: the
    first batch row, (queries, keys), at most 20 x 20, rounded. None when ``got`` cannot be
    drawn (not a tensor of ``expected``'s shape, or not finite)."""
    if not isinstance(got, Tensor) or tuple(got.shape) != tuple(expected.shape) or got.dim() != 3:
        return None
    got0, expected0 = got[0].double().cpu(), expected[0].double().cpu()  # (Q, K)
    if not torch.isfinite(got0).all():
        return None
    return Heatmap(got=_rounded(got0), expected=_rounded(expected0))


def _rounded(matrix: Tensor) -> list[list[float]]:
    return [[round(v, 3) for v in row] for row in matrix[:HEATMAP_LIMIT, :HEATMAP_LIMIT].tolist()]


def float64_parameters(module: torch.nn.Module, requires_grad: bool = False) -> dict[str, Tensor]:
    """The module's parameters as float64 copies (leaves when ``requires_grad``)."""
    return {name: p.detach().double().requires_grad_(requires_grad) for name, p in module.named_parameters()}


def call_float64(module: torch.nn.Module, *args, params: dict[str, Tensor] | None = None):
    """``module(*args)`` with float64 parameters, without copying the module (torch.func): the
    reference's float64 twin, as ``deepcopy(module).double()`` would be, at a fraction of the cost."""
    return functional_call(module, params if params is not None else float64_parameters(module), args)


def float64_twin(module: torch.nn.Module, cls: type | None = None) -> torch.nn.Module:
    """A float64 deep copy of a reference module (of class ``cls`` where given: a known mistake's)
    for computations of its own, without what earlier calls left on the module (its stored
    attention weights, a tensor or a list of them, which may carry autograd history and then
    cannot be deep-copied): the reference modules are shared by every check (``Kept``), and the
    twin's own calls store their own. Made once per module and class while the module is
    unchanged (``derived``: the diagnosis computes each known mistake on many examples)."""
    return derived(module, ("float64 twin", cls), lambda: _copied_float64(module, cls))


def _copied_float64(module: torch.nn.Module, cls: type | None) -> torch.nn.Module:
    own = {id(t) for t in (*module.parameters(), *module.buffers())}  # (an RNN lists its own in _flat_weights)

    def left_by_a_call(value) -> bool:
        items = value if isinstance(value, list) else [value]
        return any(isinstance(t, Tensor) and id(t) not in own for t in items)
    left = {id(value): None for owner in module.modules() for value in vars(owner).values() if left_by_a_call(value)}
    twin = copy.deepcopy(module, left).double()
    if cls is not None:
        twin.__class__ = cls
    return twin


# The reference's results, by everything they are computed from: replayed examples are the
# same for every student (core.search), so each example's reference results are computed once
# per grading process, not once per student.
_RESULTS = Kept(4096)


def reference_result(what: str, make: Callable, *depends_on):
    """``make()``, the computation named ``what``: a pure function of ``depends_on`` (tensors,
    reference modules, plain values), computed once per process for equal values; each caller
    gets its own copy of the tensors."""
    kept = _RESULTS.get((what, fingerprint(depends_on)), lambda: _copied(make()))
    return _copied(kept)


def _copied(value):
    return tree_map(lambda v: v.clone() if isinstance(v, Tensor) else v, value)


def case_key(name: str, device: str, case) -> tuple:
    """What a value made per student from one example is kept by: the task or check ``name``,
    the device and the example's exact values (``fingerprint``)."""
    return name, device, fingerprint((case.tensors, case.options))


def fingerprint(value):
    """A hashable stand-in, equal exactly when the values are: tensors by dtype, shape, device
    and bytes; modules by class, structure (their repr), mode, parameters and buffers;
    containers item by item; plain values with their type (so that 1 is not True)."""
    if isinstance(value, Tensor):
        t = value.detach()
        data = b"" if t.device.type == "meta" else data_bytes(t.cpu().contiguous())
        return "tensor", t.dtype, tuple(t.shape), t.device.type, data
    if isinstance(value, torch.nn.Module):
        return _module_fingerprint(value)
    if isinstance(value, (list, tuple)):
        return type(value).__name__, tuple(fingerprint(v) for v in value)
    if isinstance(value, dict):
        return "dict", tuple((key, fingerprint(v)) for key, v in value.items())
    if value is None or isinstance(value, (bool, int, float, str, torch.dtype, type)):
        return type(value).__name__, value
    raise TypeError(f"no fingerprint for a {type(value).__name__}")


def _module_fingerprint(module: torch.nn.Module) -> tuple:
    """A module's fingerprint (every result computed from a reference module fingerprints it again)."""
    return derived(module, "fingerprint", lambda: (
        "module", type(module), repr(module), module.training,
        tuple((name, fingerprint(p)) for name, p in module.named_parameters()),
        tuple((name, fingerprint(b)) for name, b in module.named_buffers())))


def derived(module: torch.nn.Module, what, make: Callable):
    """``make()``, the value ``what`` derived from ``module`` as it is now: kept while the module's
    mode and its parameters and buffers (the same tensors, none written since: their versions)
    are unchanged, made again otherwise."""
    state = (module.training, tuple((id(t), t._version) for t in (*module.parameters(), *module.buffers())))
    kept = _DERIVED.get(module)
    if kept is None or kept[0] != state:
        kept = _DERIVED[module] = (state, {})
    if what not in kept[1]:
        kept[1][what] = make()
    return kept[1][what]


_DERIVED: "weakref.WeakKeyDictionary[torch.nn.Module, tuple]" = weakref.WeakKeyDictionary()  # module -> (state, values)


# --- precision, one property (SPEC §3) --------------------------------------------------------
# On float64 inputs, a result off by float32's rounding fails one check of its own, named for it
# (the catalogue's ``float32_inside``), and no other. The value checks judge float64 inputs at
# float32's tolerance; this check judges the same examples (the task's output check's, whose calls
# it reads again) at float64's: a result within float64's tolerance of the reference's float64
# result is precise. So is one within it of a known mistake's float64 result (the value checks
# charge the mistake, once). A result within float32's tolerance of either, and not float64's, is
# float32 inside: a ``.float()``, ``torch.tensor(d)`` (int64, so its square root is float32), a
# float32 constant or buffer such as ``1/√d`` (which ``module.to(torch.float64)`` converts, keeping
# its float32 rounding), or a cache made at a float32 call and used at a float64 one. A result
# farther from all of them is the value checks' to judge, not this one's; where no example could be
# judged (a wrong output everywhere), the check is not judged either: blocked by the output check.
PRECISION = "float64 computed in float64"


def judged_precise(got, expected: Tensor, tol64: float, tol32: float, what: Text, case_code: CaseCode,
                   shape_names: str, mistakes: Callable[[], dict[str, Tensor | None]]) -> bool:
    """True when ``got`` (a float64 example's result) is float64-precise, against the reference's
    ``expected`` or one of the known ``mistakes``' results (computed only when needed); raises,
    naming ``float32_inside``, when it is off by float32's rounding only; False when it is
    farther off than that (not judged here)."""
    if close(got, expected, tol64):
        return True
    wrong = [t for t in mistakes().values() if t is not None]
    if any(close(got, t, tol64) for t in wrong):
        return True
    nearest = next((t for t in [expected, *wrong] if close(got, t, tol32)), None)
    if nearest is None:
        return False
    try:
        check_tensor(got, nearest, tol64, what, case_code, shape_names)
    except CheckFailed as failed:
        failed.finding.mistake = "float32_inside"
        raise
    return True


def some_precise(judged: list[bool], by: str) -> None:
    """Blocked by the output check ``by`` when no example's result could be judged for precision."""
    if not any(judged):
        raise CheckBlocked(by)

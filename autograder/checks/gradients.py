"""Gradient flow (SPEC §2): with the reference's weights, the gradients of one loss with
respect to the inputs and to every parameter the contract names are the right ones.

The loss is ``(output * R).sum()`` for a fixed random ``R``, in float64. The worker computes
the student's gradients (``gradients`` request: values, no verdict). Where the student's
output is the reference's, they are compared with the reference's, one tensor at a time.
Where it is not (a formula mistake, which the output check charges), they are compared with
the student's own forward instead: along a random direction of each input, and of the
parameters together, the change of the loss measured by finite differences of the student's
outputs (``perturbed`` request) equals the one its gradients give. So one mistake costs the
output's points once (SPEC §3), and what forward values cannot show is still caught: weights
or states detached from the graph, parameters that get no gradient, in-place edits that
break autograd (the student's error is shown).
"""
from collections.abc import Callable

import torch
from torch import Tensor
from torch.utils._pytree import tree_flatten

from ..results import text
from ..sandbox import vector_jacobian
from ..sandbox.client import RemoteModule
from .compare import close, float64_parameters
from .core import CheckBlocked, fail

MISSING = object()
OUTPUT_CHECK = "matches the reference"  # the check whose examples' outputs gradients are judged on


def cotangent(shape: tuple, seed: int) -> Tensor:
    """The fixed weights ``R`` (float64) of the loss ``(output * R).sum()``."""
    return torch.randn(shape, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)


def reference_gradients(forward: Callable[[list[Tensor], dict[str, Tensor]], Tensor], inputs: list[Tensor],
                        module: torch.nn.Module, R: Tensor) -> tuple[Tensor, list[Tensor], dict[str, Tensor]]:
    """The reference's float64 output, and its gradients: of every input in ``inputs`` (made
    leaves here) and of every parameter of ``module`` (float64 copies, passed to
    ``forward(leaves, params)``), for the cotangent ``R``."""
    leaves = [t.detach().double().requires_grad_() for t in inputs]
    params = float64_parameters(module, requires_grad=True)
    output = forward(leaves, params)
    grads = vector_jacobian(output, leaves + list(params.values()), R)
    zeros = [torch.zeros_like(t) for t in leaves + list(params.values())]
    grads = [z if g is None else g for g, z in zip(grads, zeros, strict=True)]
    return output.detach(), grads[:len(leaves)], dict(zip(params, grads[len(leaves):], strict=True))


def compare(reply: dict, expected_output: Tensor, input_names: list[str], expected_inputs: list[Tensor],
            expected_params: dict[str, Tensor], case_code: str) -> bool:
    """True when the output and every gradient equal the reference's; fail where the output
    does and a gradient is missing (None, or a parameter not found). False otherwise: a wrong
    output has other gradients than the reference's, and an output that only coincides with
    the reference's here (a missing 1/sqrt(d) where the softmax saturates) too; then
    ``own_forward_judged`` judges them against the student's own forward."""
    output = reply.get("output")
    scale = expected_output.abs().max().item() if expected_output.numel() else 0.0
    if not close(output, expected_output, 1e-6 * (1 + scale)):
        return False
    got_inputs = tree_flatten(reply["inputs"])[0]
    pairs = list(zip(input_names, got_inputs, expected_inputs, strict=False))  # the worker's list may be short
    pairs += [(name, reply["parameters"].get(name, MISSING), g) for name, g in expected_params.items()]
    for name, got, expected in pairs:
        if got is MISSING:
            raise fail(text("gradients.missing_parameter", name=name), case_code=case_code)
        scale = expected.abs().max().item() if expected.numel() else 0.0
        if got is None:
            if scale > 1e-12:
                raise fail(text("gradients.none", name=name), case_code=case_code,
                           expected=text("gradients.some"), got="None")
            continue
        if not close(got, expected, 1e-7 + 1e-6 * scale):
            return False
    return True


def some_judged(judged: list[bool]) -> None:
    """After a search whose examples returned ``judged``: blocked by the output check when no
    example's gradients could be judged (an output of zeros, of NaN, no tensor at all, or one
    that does not change with what it attends to would otherwise pass, never compared)."""
    if not any(judged):
        raise CheckBlocked(OUTPUT_CHECK)


# The finite differences' step, relative to each input's largest value (and absolute for the
# parameters), by the precision the output carries: small enough that a score of 1000 stays
# in its linear range, large enough that float32 rounding (code computing float64 inputs in
# float32 inside) stays far below the change measured.
STEP = {"float64": 1e-5, "float32": 1e-3}
AGREEMENT = 1e-3  # finite differences and gradients agree to this share of the change's size
SHIFTS = (1.0, -1.0, 0.5, -0.5)  # central differences at the step and at half of it (Richardson)


def own_forward_judged(module: RemoteModule, calls: list, reply: dict, R: Tensor, leaves: list[Tensor],
                       input_names: list[str], parameters: dict[str, Tensor], depend_on: list[int],
                       case_code: str, first_item: bool = True) -> bool:
    """Where ``compare`` could not judge: fail on the first input (or the parameters)
    along whose random direction the change of ``(output * R).sum()``, by finite differences
    of the student's own outputs, differs from what its gradients give; True when judged.
    Judged only where the output is a finite tensor that changes with every input in
    ``depend_on`` (the keys, the encoder's outputs: code attending to nothing gets nothing
    here) and a second run gives the same output. ``leaves`` are the floating-point inputs as
    sent, in ``calls``' order; ``parameters`` the contract's, by name (their shapes)."""
    output = reply.get("output")
    if not _finite_like(output, R):
        return False
    precision = "float32" if torch.equal(output.double().float().double(), output.double()) else "float64"
    noise = 8 * torch.finfo(getattr(torch, precision)).eps * float((R * output.double().cpu()).abs().sum())
    generator = torch.Generator().manual_seed(len(leaves))
    units = [STEP[precision] * (1 + t.abs().max().item()) for t in leaves] + [STEP[precision]]  # each step
    deltas = [unit * torch.randn(t.shape, generator=generator, dtype=t.dtype)
              for unit, t in zip(units, leaves, strict=False)]
    param_deltas = {name: STEP[precision] * torch.randn(p.shape, generator=generator, dtype=torch.float64)
                    for name, p in parameters.items()}
    device = leaves[0].device if leaves else torch.device("cpu")
    perturbed = _perturbed(module, calls, first_item, device, [[s * d for s in SHIFTS] for d in deltas],
                           [{n: s * d for n, d in param_deltas.items()} for s in SHIFTS])
    if len(perturbed["inputs"]) != len(leaves) or not _finite_like(perturbed.get("output"), R) \
            or not close(perturbed["output"], output.cpu(), 1e-10 * (1 + output.abs().max().item())):
        return False  # another output on a second run: the determinism checks charge that
    got_inputs = tree_flatten(reply["inputs"])[0]
    groups = [(name, perturbed["inputs"][i], [(got_inputs[i] if i < len(got_inputs) else None, deltas[i])])
              for i, name in enumerate(input_names)]
    if param_deltas:
        groups.append((text("gradients.the_parameters"), perturbed["parameters"],
                       [(reply["parameters"].get(n), d) for n, d in param_deltas.items()]))
    measured = [(name, _change(outputs, R), _predicted(along)) for name, outputs, along in groups]
    if any(change is None for _, change, _ in measured):
        return False  # not outputs
    # Rounding's share of a difference quotient is about eps / STEP of the largest change (more
    # than eps of the output where its terms cancel): below that, no change is measured.
    eps = torch.finfo(getattr(torch, precision)).eps
    noise = max(noise, 100 * eps / STEP[precision] * max(change[1] for _, change, _ in measured))
    if any(measured[i][1][1] <= noise for i in depend_on):
        return False  # an output that does not change with what it attends to
    at = next((i for i, (_, change, predicted) in enumerate(measured) if _disagree(change, predicted, noise)), None)
    if at is None:
        _along_the_difference(module, calls, reply, R, parameters, STEP[precision], noise, device, first_item,
                              case_code)
        return True
    name, (by_differences, _), (by_gradients, _) = measured[at]
    if at == len(leaves):  # the parameters' joint direction: which one
        name = _which_parameter(module, calls, reply, R, param_deltas, noise, device, first_item) or name
    raise fail(text("gradients.own_forward", name=name), case_code=case_code,  # per unit of the direction
               expected=text("gradients.by_differences", value=f"{by_differences / units[at]:.6g}"),
               got=text("gradients.by_autograd", value=f"{by_gradients / units[at]:.6g}"))


def _along_the_difference(module: RemoteModule, calls: list, reply: dict, R: Tensor, expected: dict[str, Tensor],
                          step: float, noise: float, device, first_item: bool, case_code: str) -> None:
    """Fail when, along the direction in which the student's parameter gradients differ from the
    reference's, the change of the student's own output disagrees with the gradients. A random
    direction over every parameter dilutes a gradient wrong in one row (an ``nn.Embedding`` with
    ``padding_idx``, whose row gets no gradient while the forward still reads it) below the
    agreement's tolerance; this direction weighs exactly that row. Where the student's forward is
    another function than the reference's, the direction is just one more (a right gradient
    agrees along every direction)."""
    got = {name: reply["parameters"].get(name) for name in expected}
    differences = {name: got[name].double().cpu() - g for name, g in expected.items()
                   if isinstance(got[name], Tensor) and tuple(got[name].shape) == tuple(g.shape)}
    largest = max((float(d.abs().max()) for d in differences.values() if d.numel()), default=0.0)
    if largest <= 1e-7 * (1 + max((float(g.abs().max()) for g in expected.values() if g.numel()), default=0.0)):
        return
    deltas = {name: step * d / largest for name, d in differences.items()}
    shifts = [{n: s * d for n, d in deltas.items()} for s in SHIFTS]
    perturbed = _perturbed(module, calls, first_item, device, [], shifts)
    change = _change(perturbed["parameters"], R)
    predicted = _predicted([(got[name], d) for name, d in deltas.items()])
    if change is None or not _disagree(change, predicted, noise):
        return
    name = max(differences, key=lambda n: float(differences[n].abs().max()))
    raise fail(text("gradients.own_forward", name=name), case_code=case_code,  # per unit of the direction
               expected=text("gradients.by_differences", value=f"{change[0] / step:.6g}"),
               got=text("gradients.by_autograd", value=f"{predicted[0] / step:.6g}"))


def _disagree(change: tuple[float, float], predicted: tuple[float, float], noise: float) -> bool:
    """Whether the measured change and the gradients' differ beyond rounding and truncation."""
    (by_differences, size), (by_gradients, gradient_size) = change, predicted
    return abs(by_differences - by_gradients) > AGREEMENT * (size + gradient_size) + noise


def _perturbed(module: RemoteModule, calls: list, first_item: bool, device, inputs: list, parameters: list) -> dict:
    """The worker's ``perturbed`` reply for these shifts (sent on ``device``)."""
    return module.perturbed(calls, first_item, [[d.to(device) for d in shifts] for shifts in inputs],
                            [{n: d.to(device) for n, d in shift.items()} for shift in parameters])


def _finite_like(value, R: Tensor) -> bool:
    return isinstance(value, Tensor) and value.is_floating_point() and tuple(value.shape) == tuple(R.shape) \
        and value.device.type != "meta" and bool(torch.isfinite(value).all())


def _change(outputs, R: Tensor) -> tuple[float, float] | None:
    """The directional derivative of ``(output * R).sum()`` from the outputs at the ``SHIFTS``
    (central differences at the step and at half of it, Richardson-extrapolated), and the
    size of the change (the sum of its terms' magnitudes); None when they are not outputs."""
    if not isinstance(outputs, list) or len(outputs) != len(SHIFTS) or not all(_finite_like(o, R) for o in outputs):
        return None
    plus, minus, half_plus, half_minus = (o.double().cpu() for o in outputs)
    at_step = float((R * (plus - minus)).sum()) / 2
    at_half = float((R * (half_plus - half_minus)).sum()) / 2
    return (8 * at_half - at_step) / 3, float((R * (plus - minus)).abs().sum()) / 2


def _predicted(along: list) -> tuple[float, float]:
    """The same change by the student's gradients (None: no gradient): the sum of
    ``gradient * delta``, and the sum of its terms' magnitudes."""
    total, size = 0.0, 0.0
    for gradient, delta in along:
        if isinstance(gradient, Tensor) and tuple(gradient.shape) == tuple(delta.shape):
            terms = gradient.double().cpu() * delta
            total, size = total + float(terms.sum()), size + float(terms.abs().sum())
    return total, size


def _which_parameter(module: RemoteModule, calls: list, reply: dict, R: Tensor, param_deltas: dict, noise: float,
                     device, first_item: bool) -> str | None:
    """The first parameter whose own finite differences disagree with its gradient (the
    parameters' joint direction did)."""
    for name, delta in param_deltas.items():
        perturbed = _perturbed(module, calls, first_item, device, [], [{name: s * delta} for s in SHIFTS])
        change = _change(perturbed["parameters"], R)
        if change is None:
            continue
        if _disagree(change, _predicted([(reply["parameters"].get(name), delta)]), noise):
            return name
    return None

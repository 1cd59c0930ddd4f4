"""Gradient equivalence (SPEC §2): with the reference's weights, the gradients of one loss
with respect to the inputs and to every parameter the contract names equal the reference's.

The loss is ``(output * R).sum()`` for a fixed random ``R``, in float64. The worker computes
the student's gradients (``gradients`` request: values, no verdict); they are compared here
with the reference's, one tensor at a time, on the examples where the output is right. This
catches what forward values cannot show: weights or states detached from the graph,
parameters that get no gradient, in-place edits that break autograd (the student's error
is shown).
"""
from collections.abc import Callable

import torch
from torch import Tensor
from torch.utils._pytree import tree_flatten

from ..results import text
from ..sandbox import vector_jacobian
from ..sandbox.proxy import StudentError
from .compare import check_tensor, close, float64_parameters
from .core import CheckBlocked, fail

WHAT_INPUT = "tensor.gradient_of"
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


def student_gradients(student, handle, calls: list, R: Tensor, first_item: bool = True) -> dict:
    """The worker's ``gradients`` reply: output, input gradients (flattened), parameter
    gradients. The output is the last call's result, or its first item (``first_item``: a
    decoder's logits; an attention module returns one tensor, and a tuple is no output)."""
    reply = student.request("gradients", target=handle, calls=calls, cotangent=R, first_item=first_item)
    if not isinstance(reply, dict) or not isinstance(reply.get("parameters"), dict) \
            or not isinstance(reply.get("inputs"), list):
        raise StudentError("ProtocolError", "gradients: malformed reply")
    return reply


def compare(reply: dict, expected_output: Tensor, input_names: list[str], expected_inputs: list[Tensor],
            expected_params: dict[str, Tensor], case_code: str) -> bool:
    """Fail on the first gradient that is missing or differs from the reference's; True when
    judged. Judged only where the student's output equals the reference's: a wrong output has
    wrong gradients too, and its own check charges it (one property per check, SPEC §3)."""
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
        check_tensor(got, expected, 1e-7 + 1e-6 * scale, text(WHAT_INPUT, name=name), case_code)
    return True


def some_judged(judged: list[bool]) -> None:
    """After a search whose examples ``compare`` returned ``judged``: blocked by the output
    check when no example had the right output to judge gradients of (an output of zeros, of
    NaN, or no tensor at all would otherwise pass, its gradients never compared)."""
    if not any(judged):
        raise CheckBlocked(OUTPUT_CHECK)

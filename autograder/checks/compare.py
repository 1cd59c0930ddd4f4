"""Expected vs got, written for a student: where the largest difference is, and by how much."""
import torch
from torch import Tensor

from .core import Finding, Text


def excerpt(t: Tensor, limit: int = 8) -> str:
    """The first row of the last axis, rounded: enough to see what went wrong."""
    if t.device.type == "meta":
        return f"(meta tensor of shape {tuple(t.shape)})"
    row = t.detach().double().cpu().reshape(-1, t.shape[-1])[0] if t.dim() else t.reshape(1)
    shown = ", ".join(f"{v:.4g}" for v in row[:limit].tolist())
    return f"[{shown}{', ...' if row.numel() > limit else ''}]"


def tolerance(reference32: Tensor, reference64: Tensor) -> float:
    """Allowed error: a floor, plus a multiple of the reference's own float32 error."""
    own_error = (reference32.double() - reference64).abs().max().item() if reference64.numel() else 0.0
    scale = reference64.abs().max().item() if reference64.numel() else 0.0
    return 1e-5 + 1e-5 * scale + 50 * own_error


def check_tensor(got, expected: Tensor, tol: float, what: Text, case_code: str | None,
                 shape_names: str = "") -> None:
    """Raise a ``Finding`` unless ``got`` is a tensor of ``expected``'s shape within ``tol``."""
    if not isinstance(got, Tensor):
        kind = type(got).__name__ if not hasattr(got, "type_name") else got.type_name
        raise Finding((f"{what[0]}: expected a tensor, got {kind}",
                       f"{what[1]}: ожидался тензор, получено {kind}"), case_code)
    if tuple(got.shape) != tuple(expected.shape):
        raise Finding((f"{what[0]}: wrong shape", f"{what[1]}: неверная форма"), case_code,
                      expected=f"{tuple(expected.shape)} {shape_names}".strip(), got=str(tuple(got.shape)))
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
    raise Finding((f"{what[0]}: values differ", f"{what[1]}: значения отличаются"), case_code,
                  expected=excerpt(expected), got=excerpt(got),
                  difference=(f"largest difference {abs(got_value - expected_value):.3g} at index {index}: "
                              f"expected {expected_value:.6g}, got {got_value:.6g} (tolerance {tol:.1e})",
                              f"наибольшее отличие {abs(got_value - expected_value):.3g} в позиции {index}: "
                              f"ожидалось {expected_value:.6g}, получено {got_value:.6g} (допуск {tol:.1e})"))


def close(a, b: Tensor, tol: float) -> bool:
    """Whether ``a`` is a tensor equal to ``b`` within ``tol`` (for diagnosing mistakes)."""
    if not isinstance(a, Tensor) or tuple(a.shape) != tuple(b.shape) or a.device.type == "meta":
        return False
    return bool(((a.double().cpu() - b.double().cpu()).abs() <= tol).all())

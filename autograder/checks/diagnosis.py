"""Naming a known mistake: the one whose output explains what the student's code returned.

On the small failing case several mistakes often coincide (with one query and two keys,
ignoring ``valid_lens`` and ``<=`` give the same weights), so candidates are narrowed on
fixed probe inputs that tell them apart, and a single candidate must explain them too. A
mistake is named only when exactly one is left.
"""
from collections.abc import Callable, Iterator

from torch import Tensor

from ..sandbox.client import StudentError
from .compare import close
from .core import CheckFailed

Observation = tuple[object, Tensor, dict[str, Tensor | None]]  # got, expected, mistakes' outputs


def variant_outputs(mistakes: dict[str, Callable[[], Tensor]]) -> dict[str, Tensor | None]:
    """Each mistake's output, or None where it does not apply (e.g. sizes that do not fit)."""
    outputs = {}
    for mistake_id, compute in mistakes.items():
        try:
            outputs[mistake_id] = compute()
        except (RuntimeError, TypeError, AttributeError, IndexError, ValueError):
            outputs[mistake_id] = None
    return outputs


def name_mistake(failing: Observation, probes: Callable[[], Iterator[Observation]],
                 tol: float) -> str | None:
    """The id of the one known mistake that explains the student's output, or None."""
    got, expected, variants = failing
    alive = {m for m, wrong in variants.items()
             if wrong is not None and close(got, wrong, tol) and not close(wrong, expected, tol)}
    if alive:  # one left on a small example can still be a coincidence (one key, a row underflowed)
        try:
            for got, _, variants in probes():
                alive &= {m for m, wrong in variants.items() if wrong is not None and close(got, wrong, tol)}
                if not alive:
                    break
        except StudentError:
            return None
    return alive.pop() if len(alive) == 1 else None


def named_explains(named: set[str], observation: Observation, tol: float) -> bool:
    """Whether one of the mistakes in ``named`` (those an earlier check named) gives the
    student's output on this observation, within ``tol``."""
    got, _, variants = observation
    return any(variants.get(m) is not None and close(got, variants[m], tol) for m in named)


FILL_IN_RANGE = "fill_not_below_the_scores"


def at_the_bottom(test: Callable, case, lifted) -> None:
    """``test`` on ``case``, whose scores are near -1000 on every key (padding included); where it
    fails there but holds on ``lifted`` (the same example with ordinary scores), the mask is
    right and its fill value is not below every real score: that mistake is named."""
    try:
        test(case)
    except CheckFailed as failed:
        try:
            test(lifted)
        except (CheckFailed, StudentError):
            raise failed from None
        failed.later(lambda finding: setattr(finding, "mistake", FILL_IN_RANGE))  # after the test's own naming
        raise

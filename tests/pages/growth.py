"""How the cost of a step grows with its input: time and peak memory at 1x, 10x and 100x.

A small local helper for the written answers' cost tests (SPEC §3: work on what a student
controls grows with its size, never faster). ``measure`` runs ``work(n)`` for each scale,
best of a few runs for the time (a shared machine is noisy; the garbage collector paused:
``_timed``) and tracemalloc's peak for the memory; ``assert_linear`` checks that 10 times the
input costs at most ``slack`` times 10 as much as the step before it (a quadratic step costs
100 times as much).
"""
import gc
import time
import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass

SCALES = (1, 10, 100)


@dataclass(frozen=True)
class Cost:
    scale: int
    seconds: float
    peak_bytes: int


def measure(work: Callable[[int], object], scales: tuple[int, ...] = SCALES, repeat: int = 3) -> list[Cost]:
    costs = []
    for scale in scales:
        seconds = min(_timed(work, scale) for _ in range(repeat))
        tracemalloc.start()
        try:
            work(scale)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        costs.append(Cost(scale, seconds, peak))
    return costs


def _timed(work: Callable[[int], object], scale: int) -> float:
    """One run's seconds, with the cyclic garbage collector paused: its passes come when the
    whole process has allocated enough, so they land on one scale or another by chance (a
    4x input measured 20x slower with a pass in it, 4x without)."""
    gc.collect()
    gc.disable()
    try:
        started = time.perf_counter()
        work(scale)
        return time.perf_counter() - started
    finally:
        gc.enable()


def assert_linear(costs: list[Cost], slack: float = 3.0, floor_s: float = 0.002) -> None:
    """Each step up in scale costs at most ``slack`` times the scale's ratio, in time (above a
    ``floor_s`` of timer noise) and in peak memory."""
    for small, large in zip(costs, costs[1:]):
        ratio = large.scale / small.scale
        assert large.seconds <= slack * ratio * max(small.seconds, floor_s), (small, large)
        assert large.peak_bytes <= slack * ratio * max(small.peak_bytes, 64 << 10), (small, large)

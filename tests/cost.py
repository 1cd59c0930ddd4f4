"""Cost tests (SPEC §3: work on what a student controls grows with its size, never faster).

One line per surface::

    assert_linear(lambda data: read_kept(io.BytesIO(data), LIMIT), SHAPES, seconds=2, per_byte=20)

``SHAPES`` maps a shape's name (``"many tiny containers"``, ``"deep nesting"``, ``"many short
lines"``, ``"one long literal"``, ``"fresh each time"``) to a function of a scale (1, 10, 100)
that makes the content: ``str``, ``bytes``, or a pair ``(content, its size in bytes)`` for
content of another type. Each is made anew for every run, so a shape that puts something fresh
in it defeats a cache. For each shape the helper measures the work at every scale (the best of a
few runs for time, one run under ``tracemalloc`` for the peak of Python's allocations, numpy's
included) and asserts that, from each scale to the next (about 10 times the bytes):

- time grows at most ``slack`` times as much as the bytes (``slack`` 3: 30 times for 10 times the
  bytes, where a quadratic step grows 100 times);
- peak memory grows at most ``slack`` times as much as the bytes;
- at the largest scale, the time is under ``seconds`` and the peak under ``per_byte`` times the
  content's bytes plus ``base_bytes``: the bounds the security notes state.

Ratios between scales are compared, not absolute times, so a loaded machine does not fail them
(the best of the runs is taken, and a scale that takes less than ``FLOOR_S`` is not compared on
time: it measures the clock). Work that allocates outside Python (a C parser's buffers, a child
process) is measured where it runs instead: the service's upload check by the service's own peak
resident memory (tests/service/test_api.py).

``COST_LOG=path`` appends each measurement as a JSON line (surface, shape, scale, bytes, seconds,
peak), for the notes.
"""
import gc
import json
import os
import time
import tracemalloc
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass

SIZES = (1, 10, 100)
FLOOR_S = 0.01        # below this a run measures the clock, not the work
FLOOR_BYTES = 64 << 10


@dataclass(frozen=True)
class Cost:
    shape: str
    scale: int
    size: int        # bytes of content
    seconds: float   # best of the runs
    peak: int        # peak of Python's allocations during one run, bytes


def _made(make: Callable[[int], object], scale: int) -> tuple[object, int]:
    made = make(scale)
    if isinstance(made, tuple):
        return made
    return made, len(made.encode("utf-8", "surrogatepass") if isinstance(made, str) else made)


def measure(work: Callable[[object], object], make: Callable[[int], object], shape: str, scale: int,
            runs: int = 2) -> Cost:
    """The cost of ``work`` on content ``make(scale)`` (made anew for each run)."""
    best = float("inf")
    for _ in range(runs):
        content, size = _made(make, scale)
        gc.collect()
        started = time.perf_counter()
        work(content)
        best = min(best, time.perf_counter() - started)
        del content
    content, size = _made(make, scale)
    gc.collect()
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        before = tracemalloc.get_traced_memory()[0]
        work(content)
        peak = tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()
    return Cost(shape, scale, size, best, peak)


def assert_linear(work: Callable[[object], object], shapes: Mapping[str, Callable[[int], object]], *,
                  seconds: float, per_byte: float, base_bytes: int = 4 << 20, sizes: tuple[int, ...] = SIZES,
                  slack: float = 3.0, surface: str | None = None) -> dict[str, list[Cost]]:
    """Assert that ``work``'s time and peak memory grow no faster than linearly in the content of
    every shape, and stay under the stated bounds at the largest size; returns the measurements."""
    surface = surface or getattr(work, "__name__", "work")
    found: dict[str, list[Cost]] = {}
    problems: list[str] = []
    for shape, make in shapes.items():
        costs = [measure(work, make, shape, scale) for scale in sizes]
        found[shape] = costs
        _log(surface, costs)
        problems += _problems(shape, costs, seconds, per_byte, base_bytes, slack)
    if problems:
        table = "\n".join(f"    {c.shape:<22} x{c.scale:<4} {c.size:>11,} B {c.seconds:9.4f} s {c.peak:>13,} B peak"
                          for costs in found.values() for c in costs)
        raise AssertionError(f"{surface}: {problems[0]}\n" + "\n".join(f"  {p}" for p in problems[1:]) +
                             f"\n  measured:\n{table}")
    return found


def _problems(shape: str, costs: list[Cost], seconds: float, per_byte: float, base_bytes: int,
              slack: float) -> list[str]:
    problems = []
    for small, large in zip(costs, costs[1:]):
        grown = large.size / max(small.size, 1)
        if small.seconds >= FLOOR_S and large.seconds > small.seconds * grown * slack:
            problems.append(f"{shape}: time grew {large.seconds / small.seconds:.0f}x from x{small.scale} to "
                            f"x{large.scale} ({grown:.0f}x the bytes; at most {grown * slack:.0f}x)")
        if large.peak > max(small.peak, FLOOR_BYTES) * grown * slack:
            problems.append(f"{shape}: peak memory grew {large.peak / max(small.peak, 1):.0f}x from x{small.scale} "
                            f"to x{large.scale} ({grown:.0f}x the bytes; at most {grown * slack:.0f}x)")
    last = costs[-1]
    if last.seconds > seconds:
        problems.append(f"{shape}: {last.seconds:.2f} s for {last.size:,} bytes (bound {seconds} s)")
    if last.peak > per_byte * last.size + base_bytes:
        problems.append(f"{shape}: peak {last.peak:,} bytes for {last.size:,} bytes of content (bound "
                        f"{per_byte:g} per byte + {base_bytes:,})")
    return problems


def _log(surface: str, costs: list[Cost]) -> None:
    path = os.environ.get("COST_LOG")
    if path:
        with open(path, "a", encoding="utf-8") as log:
            for cost in costs:
                log.write(json.dumps({"surface": surface, **asdict(cost)}) + "\n")


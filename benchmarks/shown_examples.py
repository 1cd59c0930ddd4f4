"""How large are the failing examples students are shown, and what does a failing check cost?

Grades every mutation-suite variant in this process (the nbgrader path's checks, as
``tests/mutants`` does) and, for every drawn search that fails, records the size of the example
the student is shown: its tensors' elements, and the largest of B, Q, K, T (the batch, queries,
keys or source steps: a tensor's dimensions). Prints the median, the 90th percentile and the
largest of each, the number of failing searches, and the seconds the whole suite took. Run it
before and after a change to the search (its budget, its order) and compare the lines.

    .venv/bin/python benchmarks/shown_examples.py [--assignment NAME] [--json FILE]

Not a test: the numbers are for the docs' Measured page and the change's note.
"""
import argparse
import json
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from autograder.checks import core  # noqa: E402
from autograder.checks.inputs import Case  # noqa: E402
from tests.mutants.harness import ASSIGNMENT_OF, grade  # noqa: E402
from tests.mutants.report import ALL_MUTANTS  # noqa: E402

SHOWN: list[dict] = []


def size_of(case) -> dict | None:
    """Elements and the largest dimension of a drawn example's tensors."""
    if not isinstance(case, Case):
        return None
    tensors = [t for t in case.tensors.values() if t is not None]
    return {"elements": core._elements(case),  # the size the search shows the smallest of
            "largest_dim": max((max(t.shape, default=1) for t in tensors), default=0)}


def measuring(search):
    """``core.search`` that records the example the failure it raises was found on (the last
    example that raised: hypothesis, and a replay, end on the example they report)."""
    def measured(strategy, test, ctx, *args, **kwargs):
        last = []

        def remembering(case):
            try:
                test(case)
            except BaseException:
                last[:] = [case]
                raise
        try:
            search(strategy, remembering, ctx, *args, **kwargs)
        except core.CheckFailed:
            if last and (size := size_of(last[0])) is not None:
                SHOWN.append({"check": ctx.check, **size})
            raise
    return measured


def percentile(values: list[int], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else 0


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--assignment", choices=["attention_scoring", "bahdanau"])
    parser.add_argument("--json", type=Path, help="also write every shown example's size here")
    args = parser.parse_args()
    core.search = measuring(core.search)
    for module in list(sys.modules.values()):  # the check modules imported search by name
        if getattr(module, "__name__", "").startswith("autograder.checks.") and hasattr(module, "search"):
            module.search = core.search
    mutants = [m for m in ALL_MUTANTS if m.sandbox_only is None
               and (args.assignment is None or ASSIGNMENT_OF[m.task_id] == args.assignment)]
    started = time.monotonic()
    for mutant in mutants:
        grade(mutant)
    seconds = time.monotonic() - started
    for key in ("elements", "largest_dim"):
        values = [s[key] for s in SHOWN]
        print(f"shown examples' {key}: median {statistics.median(values) if values else 0}, "
              f"90th percentile {percentile(values, 0.9)}, largest {max(values, default=0)}")
    print(f"{len(SHOWN)} failing searches over {len(mutants)} variants; {seconds:.1f} s in this process")
    if args.json:
        args.json.write_text(json.dumps(SHOWN))


if __name__ == "__main__":
    main()

"""Upload-to-done latency of `autograder serve` under a burst: is feedback seconds away?

Starts the real service (``--jobs`` slots, default one per core) for one assignment, warms
it (two rounds of every example variant, so every slot has started and recorded its
hypothesis runs), then has BURST students hand in within two seconds (evenly spread), each
polling its submission every 0.1 s until it is done. Prints every submission's latency
(from the start of its upload to the poll that saw it done), p50 and p95, the service's own
grading time per submission (from its log), and the machine's load (``uptime``) before and
after: the numbers mean little on a machine others are using. Not a test: run it by hand.

    .venv/bin/python benchmarks/service_latency.py [--assignment attention_scoring] [--burst 12] [--jobs N]
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.service.server import config_file, make_tokens, start  # noqa: E402

POLL_S = 0.1
SPREAD_S = 2.0


def variants(assignment: str) -> dict[str, bytes]:
    """The example notebooks (correct, buggy, untouched) and the released template, by name."""
    examples = sorted((REPO / "examples" / assignment).glob("*.ipynb"))
    template = REPO / "student_template" / assignment / f"{assignment}.ipynb"
    paths = {p.stem: p for p in examples if p.stem != "hostile"} | {"template": template}
    return {name: path.read_bytes() for name, path in paths.items()}


def hand_in(server, student: str, data: bytes, latencies: dict) -> None:
    started = time.monotonic()
    submission_id = server.submit(student, data).json()["id"]
    while server.status(student, submission_id)["status"] != "done":
        time.sleep(POLL_S)
    latencies[student] = time.monotonic() - started


def burst(server, students: list[str], notebooks: list[bytes], spread_s: float) -> dict[str, float]:
    """Student i hands in notebook i (cycling), ``spread_s`` / (n - 1) after student i - 1."""
    latencies: dict[str, float] = {}
    threads = []
    for i, student in enumerate(students):
        thread = threading.Thread(target=hand_in, args=(server, student, notebooks[i % len(notebooks)], latencies))
        thread.start()
        threads.append(thread)
        time.sleep(spread_s / max(1, len(students) - 1))
    for thread in threads:
        thread.join()
    return latencies


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--assignment", default="attention_scoring", choices=["attention_scoring", "bahdanau"])
    parser.add_argument("--burst", type=int, default=12)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args()
    named = variants(args.assignment)
    notebooks, names = list(named.values()), list(named)
    warm = [f"warm{i}" for i in range(2 * len(notebooks))]
    students = [f"s{i:02d}" for i in range(args.burst)]
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        tokens, token_of = make_tokens(folder, warm + students)
        server = start(folder, tokens, token_of, config_file(folder), jobs=args.jobs, name="bench",
                       assignment=args.assignment)
        try:
            for round_ in range(2):
                burst(server, warm[round_ * len(notebooks):(round_ + 1) * len(notebooks)], notebooks, 0)
            before = uptime()
            latencies = burst(server, students, notebooks, SPREAD_S)
            after = uptime()
        finally:
            server.stop()
        grading = {student: float(seconds) for student, seconds in
                   re.findall(r"graded \w+ of (s\d+): .* in ([\d.]+) s", server.log.read_text())}
    kinds = {student: names[i % len(names)] for i, student in enumerate(students)}
    report(args, latencies, grading, kinds, before, after)


def uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def report(args, latencies: dict[str, float], grading: dict[str, float], kinds: dict[str, str],
           before: str, after: str) -> None:
    values = list(latencies.values())
    print(f"{args.assignment}: {args.burst} students within {SPREAD_S:g} s, {args.jobs} slots, warm service")
    for student, seconds in sorted(latencies.items()):
        print(f"  {student} ({kinds[student]}): {seconds:.2f} s upload to done, grading {grading[student]:.2f} s")
    print(f"latency p50 {percentile(values, 0.5):.2f} s, p95 {percentile(values, 0.95):.2f} s, "
          f"max {max(values):.2f} s (goal: p50 <= 2 s, p95 <= 5 s); polled every {POLL_S:g} s")
    print(f"grading alone (the service's log): mean {statistics.mean(grading.values()):.2f} s, "
          f"max {max(grading.values()):.2f} s per submission")
    print(f"load before: {before}\nload after:  {after}")


if __name__ == "__main__":
    main()

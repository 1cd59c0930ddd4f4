"""What grading on a Ray cluster costs on this machine, against the local pool.

Starts a Ray head and a worker node (one CPU each, on the loopback addresses 127.0.0.2/3),
grades COUNT copies of the attention_scoring examples (correct, buggy, untouched) with
`--executor ray` (two slots, one per node) and with the local pool (`--jobs 2`), and
prints: seconds from `ray start` to the first result, seconds from the command to the first
result, and seconds per submission once running (first result to last) on each. Kills its
Ray nodes by their process groups at the end. Not a test: run it by hand.

    .venv/bin/python benchmarks/ray_overhead.py [COUNT]
"""
import argparse
import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
RAY = Path(sys.executable).parent / "ray"
LOOPBACK = "127.0.0.2"  # Ray rewrites 127.0.0.1 to the host's outward address
WORKER_LOOPBACK = "127.0.0.3"  # as on another host: the driver attaches to the head's raylet
NODE = ["--num-cpus", "1", "--object-store-memory", str(100 << 20), "--include-log-monitor", "false",
        "--disable-usage-stats"]


def lay_out(folder: Path, count: int) -> None:
    kinds = ["correct", "buggy", "untouched"]
    for i in range(count):
        shutil.copy(REPO / "examples" / "attention_scoring" / f"{kinds[i % 3]}.ipynb", folder / f"s{i:03d}.ipynb")


def ray_start(temp: str, *args: str) -> int:
    """Starts a node with a temp folder of its own (as on its own host: the driver attaches
    to the node its session folder names); returns its process group (the daemons stay in it)."""
    env = {**os.environ, "RAY_memory_monitor_refresh_ms": "0"}  # it counts others' processes too
    start = subprocess.Popen([str(RAY), "start", *args, *NODE, "--temp-dir", temp], start_new_session=True, env=env,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    if start.wait(timeout=300) != 0:
        raise SystemExit("ray start failed")
    return start.pid


def grade(submitted: Path, out: Path, *extra: str) -> tuple[float, float, float]:
    """(seconds to the first result, to the last, number graded) from the command's start."""
    started = time.time()
    run = subprocess.run([sys.executable, "-c", "from autograder.cli import main; main()", "grade", str(submitted),
                          "--assignment", "attention_scoring", "--output", str(out), *extra],
                         capture_output=True, text=True)
    if run.returncode != 0:
        raise SystemExit(f"grading failed ({run.returncode}):\n{run.stderr[-3000:]}")
    times = sorted(p.stat().st_mtime for p in out.glob("s*.json"))
    return times[0] - started, times[-1] - started, len(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("count", type=int, nargs="?", default=24)
    count = parser.parse_args().count
    work = Path(tempfile.mkdtemp(prefix="agraybench"))
    (work / "in").mkdir()
    lay_out(work / "in", count)
    first, last, n = grade(work / "in", work / "local", "--jobs", "2")
    print(f"local pool --jobs 2: first result {first:.1f} s, then {(last - first) / (n - 1):.2f} s per submission")

    groups, temps = [], [tempfile.mkdtemp(prefix="agray"), tempfile.mkdtemp(prefix="agray")]
    try:
        with socket.socket() as probe:
            probe.bind((LOOPBACK, 0))
            port = probe.getsockname()[1]
        started = time.time()
        groups.append(ray_start(temps[0], "--head", "--port", str(port), "--node-ip-address", LOOPBACK,
                                "--include-dashboard", "false", "--no-monitor"))
        head_s = time.time() - started
        groups.append(ray_start(temps[1], "--address", f"{LOOPBACK}:{port}", "--node-ip-address", WORKER_LOOPBACK))
        nodes_s = time.time() - started
        first, last, n = grade(work / "in", work / "ray", "--executor", "ray", "--address", f"{LOOPBACK}:{port}")
        print(f"ray (head + 1 worker, 2 slots): ray start {head_s:.1f} s (head) + {nodes_s - head_s:.1f} s "
              f"(worker); first result {first:.1f} s after the command, {nodes_s + first:.1f} s after "
              f"`ray start`; then {(last - first) / (n - 1):.2f} s per submission")
    finally:
        for group in groups:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(group, signal.SIGKILL)
        for temp in temps:
            shutil.rmtree(temp, ignore_errors=True)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

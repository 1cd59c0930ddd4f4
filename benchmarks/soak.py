"""Soak: one `autograder grade` run over many submissions; does anything grow? (issue 15)

    .venv/bin/python benchmarks/soak.py [N] [--jobs 2] [--every 50] [--keep]
    .venv/bin/python benchmarks/soak.py --quick     # N = 100, a sample every 10

Generates N attention_scoring submissions: correct, buggy and untouched notebooks in turn,
and every tenth a hostile one, cycling through the hostile cases of
tests/engine/test_tampering.py, examples/attention_scoring/hostile.ipynb and hostile cells
of tests/sandbox/ (imported, not copied). Grades them in ONE run (``--jobs``, short limits
as in test_tampering), and every ``--every`` finished submissions reads from /proc: the
grader's RSS, each grading process's and each zygote's RSS, open descriptors (the grader's,
and those of the grader's side: the grader, grading processes, bubblewrap, zygotes), files
under the run's temp folder (its TMPDIR) and under each sandbox's /tmp, and the run's
processes (found by its run marker, autograder/executors/runmarker.py: the grader's side, and apart
the workers under the zygotes, which come and go).
Prints a table, writes benchmarks/soak.png (and the samples beside it, soak.json), and
checks the bound:

    FLAT: after a warm-up of the first tenth of the batch, the mean of the last three
    samples is within 10 % of the mean of the first three, for the largest grading
    process's RSS and the largest zygote's; for the grader's too, plus 0.15 MB per
    submission graded in between (it keeps every result, 0.13 MB measured, for the
    summary and the class report); no sample after the warm-up has more open descriptors or
    processes on the grader's side than the first one after it, nor more files in the
    run's temp folder (hypothesis keeps a small cache there), nor are there more at the
    end; and when the run ends, none of its processes is left.

Exit status 1 when the bound does not hold. Not a test: it takes about an hour for 1,000
submissions on a busy 2-core machine.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import nbformat
import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from autograder.executors.runmarker import RUN_MARKER, marker_of, processes_of  # noqa: E402
from tests.engine import test_tampering as tampering  # noqa: E402
from tests.sandbox import test_kernel_state, test_resources, test_zygote  # noqa: E402

EXAMPLES = REPO / "examples" / "attention_scoring"
HONEST = ("correct", "buggy", "untouched")
SOAK_LIMITS = dict(cell_timeout_s=3, call_timeout_s=5, submission_timeout_s=120,  # as test_tampering
                   memory_mb=1024, max_processes=16, max_output_kb=8)
GROWTH = 0.10  # the RSS bound: last window within 10 % of the first after the warm-up
KEPT_MB = 0.15  # and for the grader, per result it keeps for the summary and class report (0.13 MB measured)


def hostile_cases() -> dict[str, nbformat.NotebookNode]:
    """Every hostile notebook: the tampering cases, the example, and sandbox attacks
    appended to the correct notebook."""
    cases = {name: notebook for name, (notebook, _) in tampering.CASES.items()}
    cases["hostile_example"] = nbformat.read(EXAMPLES / "hostile.ipynb", as_version=4)
    cells = {"busy_children": test_resources.BUSY_CHILDREN, "children_hold_memory": test_resources.CHILDREN_HOLD,
             "memfd_memory": test_resources.HOLD_MEMFDS, "kernel_state_planted": test_kernel_state.PLANT,
             **{f"zygote_poisoned_{name}": source for name, source in test_zygote.POISON.items()}}
    for name, source in cells.items():
        cases[name] = tampering.edited("correct", tampering.append_cell(source))
    return cases


def generate(folder: Path, count: int) -> dict[str, str]:
    """``count`` notebooks in ``folder``; returns student id -> what it is."""
    hostile = hostile_cases()
    names, kinds = sorted(hostile), {}
    for i in range(count):
        student = f"s{i:04d}"
        if i % 10 == 9:
            kinds[student] = names[(i // 10) % len(names)]
            nbformat.write(hostile[kinds[student]], folder / f"{student}.ipynb")
        else:
            kinds[student] = HONEST[i % 3]
            shutil.copy(EXAMPLES / f"{kinds[student]}.ipynb", folder / f"{student}.ipynb")
    return kinds


def soak_config(path: Path) -> Path:
    config = yaml.safe_load((REPO / "grader.yml").read_text())
    config["sandbox"].update(SOAK_LIMITS)
    path.write_text(yaml.safe_dump(config))
    return path


def rss_mb(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def fds(pid: int) -> int:
    try:
        return len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return 0


def files_under(folder: Path) -> int:
    return sum(len(files) + len(dirs) for _, dirs, files in os.walk(folder))


def parent(pid: int) -> int:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return 0


def descendants(roots: list[int], run: dict[int, str]) -> set[int]:
    children: dict[int, list[int]] = {}
    for pid in run:
        children.setdefault(parent(pid), []).append(pid)
    found, stack = set(), list(roots)
    while stack:
        for child in children.get(stack.pop(), []):
            found.add(child)
            stack.append(child)
    return found


def sample(done: int, grader: int, marker: str, tmp: Path, out: Path, timed: set[str]) -> dict:
    """One row: what the run holds now. The grader's side (the grader, its grading processes,
    bubblewrap, the zygotes) must stay flat; the workers under the zygotes come and go with
    each submission (and a hostile one forks up to max_processes), so they are counted apart."""
    run = processes_of(marker)
    grading = sorted(pid for pid in run if parent(pid) == grader)
    # a zygote: unmarked (bubblewrap cleared its environment), with a marked parent
    zygotes = sorted(pid for pid in run if marker_of(pid) is None and marker_of(parent(pid)) == marker)
    workers = descendants(zygotes, run)
    ours = [pid for pid in run if pid not in workers]
    new = [path for path in (out / "timing").glob("s*.json") if path.name not in timed]
    timed.update(path.name for path in new)  # mean over the submissions since the last sample
    seconds = [json.loads(path.read_text())["phases"].get("total", 0.0) for path in new]
    return {"done": done, "grader_mb": rss_mb(grader), "grading_mb": [rss_mb(p) for p in grading],
            "zygote_mb": [rss_mb(p) for p in zygotes], "grader_fds": fds(grader),
            "run_fds": sum(fds(p) for p in ours), "tmp_files": files_under(tmp),
            "sandbox_tmp_files": sum(files_under(Path(f"/proc/{p}/root/tmp")) for p in zygotes),
            "processes": len(ours), "workers": len(workers), "mean_s": sum(seconds) / max(len(seconds), 1)}


def soak(count: int, jobs: int, every: int, work: Path) -> tuple[list[dict], dict, int]:
    """Grades ``count`` generated submissions in one run, sampling every ``every``."""
    batch, out, tmp = work / "submissions", work / "results", work / "tmp"
    for folder in (batch, tmp):
        folder.mkdir(parents=True)
    kinds = generate(batch, count)
    marker = f"soak-{uuid.uuid4().hex[:12]}"
    command = [sys.executable, "-m", "autograder.cli", "grade", str(batch), "--assignment", "attention_scoring",
               "--jobs", str(jobs), "--output", str(out), "--config", str(soak_config(work / "soak.yml"))]
    env = {**os.environ, RUN_MARKER: marker, "TMPDIR": str(tmp)}
    samples, mark, timed = [], every, set()
    with (work / "grader.log").open("w") as log:
        grader = subprocess.Popen(command, env=env, stdout=log, stderr=log, start_new_session=True, cwd=REPO)
        while grader.poll() is None:
            done = len(list(out.glob("s*.json"))) if out.is_dir() else 0
            if mark <= done < count:  # the last result is followed by the run's shutdown
                samples.append(sample(done, grader.pid, marker, tmp, out, timed))
                print(row(samples[-1]), flush=True)
                mark = (done // every + 1) * every
            time.sleep(0.25)
    time.sleep(1)
    end = {"status": grader.returncode, "results": len(list(out.glob("s*.json"))), "kinds": kinds,
           "left": processes_of(marker), "tmp_files": files_under(tmp)}
    return samples, end, every


COLUMNS = ("done", "grader MB", "grading MB", "zygote MB", "fds grader/side", "tmp files run/sandbox",
           "procs side/workers", "s/sub (window)")


def row(s: dict) -> str:
    def many(values):
        return "/".join(f"{v:.0f}" for v in values) or "-"
    cells = (s["done"], f"{s['grader_mb']:.0f}", many(s["grading_mb"]), many(s["zygote_mb"]),
             f"{s['grader_fds']}/{s['run_fds']}", f"{s['tmp_files']}/{s['sandbox_tmp_files']}",
             f"{s['processes']}/{s['workers']}", f"{s['mean_s']:.2f}")
    return " | ".join(str(c) for c in cells)


def verdict(samples: list[dict], end: dict, count: int) -> list[str]:
    """What breaks the FLAT bound (module docstring); empty when it holds."""
    problems = []
    if end["status"] != 0 or end["results"] != count:
        problems.append(f"the run ended with status {end['status']} and {end['results']} of {count} results")
    if end["left"]:
        problems.append(f"processes of the run left after it ended: {end['left']}")
    after = [s for s in samples if s["done"] > count // 10]
    if len(after) < 4:
        return problems + [f"only {len(after)} samples after the warm-up: sample more often (--every)"]
    if end["tmp_files"] > after[0]["tmp_files"]:
        problems.append(f"{end['tmp_files']} files left in the run's temp folder, {after[0]['tmp_files']} "
                        f"after the warm-up")
    return problems + growth(after)


def growth(after: list[dict]) -> list[str]:
    """RSS: last three samples against the first three; counts: against the first."""
    problems = []
    series = {"grader RSS": lambda s: s["grader_mb"], "grading process RSS": lambda s: max(s["grading_mb"], default=0),
              "zygote RSS": lambda s: max(s["zygote_mb"], default=0)}
    graded = sum(s["done"] for s in after[-3:]) / 3 - sum(s["done"] for s in after[:3]) / 3
    for name, value in series.items():
        first = sum(map(value, after[:3])) / 3
        last = sum(map(value, after[-3:])) / 3
        bound = first * (1 + GROWTH) + (KEPT_MB * graded if name == "grader RSS" else 0)
        if last > bound:
            problems.append(f"{name} grew from {first:.0f} MB to {last:.0f} MB (bound: {bound:.0f} MB)")
    for key in ("grader_fds", "run_fds", "processes", "tmp_files"):
        if (most := max(s[key] for s in after)) > after[0][key]:
            problems.append(f"{key} rose from {after[0][key]} to {most}")
    return problems


def plot(samples: list[dict], path: Path, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    done = [s["done"] for s in samples]
    fig, axes = plt.subplots(2, 2, figsize=(11, 7), sharex=True)
    rss = axes[0][0]
    rss.plot(done, [s["grader_mb"] for s in samples], label="grader", lw=2)
    for key, label in (("grading_mb", "grading process"), ("zygote_mb", "zygote")):
        for i in range(max(len(s[key]) for s in samples)):
            rss.plot(done, [s[key][i] if i < len(s[key]) else None for s in samples], label=f"{label} {i + 1}")
    rss.set(title="RSS (MB)", ylim=(0, None))
    panels = ((axes[0][1], "open descriptors", ("grader_fds", "run_fds")),
              (axes[1][0], "files in temp folders", ("tmp_files", "sandbox_tmp_files")),
              (axes[1][1], "processes; seconds per submission (window mean)", ("processes", "workers", "mean_s")))
    for axis, name, keys in panels:
        for key in keys:
            axis.plot(done, [s[key] for s in samples], label=key, marker=".")
        axis.set(title=name, ylim=(0, None))
    for axis in axes.flat:
        axis.legend(fontsize=7)
        axis.grid(alpha=0.3)
    for axis in axes[1]:
        axis.set_xlabel("submissions graded")
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("count", type=int, nargs="?", default=1000)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--every", type=int, default=None, help="sample every this many results (default 50)")
    parser.add_argument("--quick", action="store_true", help="100 submissions, a sample every 10")
    parser.add_argument("--plot", type=Path, default=REPO / "benchmarks" / "soak.png")
    parser.add_argument("--keep", action="store_true", help="keep the submissions, results and log")
    args = parser.parse_args()
    count = 100 if args.quick else args.count
    every = args.every or (10 if args.quick else 50)
    work = Path(tempfile.mkdtemp(prefix="soak-"))
    started = time.monotonic()
    print(f"{count} submissions in {work}; a sample every {every}\n{' | '.join(COLUMNS)}", flush=True)
    samples, end, every = soak(count, args.jobs, every, work)
    minutes = (time.monotonic() - started) / 60
    title = f"soak: {count} submissions in one run, --jobs {args.jobs}, {minutes:.0f} min"
    if samples:
        plot(samples, args.plot, title)
        args.plot.with_suffix(".json").write_text(json.dumps({"title": title, "samples": samples, "end": {
            **end, "left": len(end["left"]), "kinds": sorted(set(end["kinds"].values()))}}, indent=1))
    problems = verdict(samples, end, count)
    print(f"{title}; plot: {args.plot}\nend: exit status {end['status']}, {end['results']} results, "
          f"{len(end['left'])} processes of the run left, {end['tmp_files']} files in its temp folder")
    print("FLAT: the bound holds" if not problems else "NOT FLAT:\n  " + "\n  ".join(problems))
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()

"""What one gpu_check run has found so far, and how it runs its commands.

Every command's output goes to ``gpu_check.log``; every stage adds a line to
``summary.md``, which is rewritten at once, so that a run killed at its time limit still
leaves its findings in OUT. With a budget, a command still running at its deadline is
stopped (SIGTERM: ``autograder grade`` keeps every result it wrote), and what it did not
grade is reported as not compared: the verdict is then INCOMPLETE, never PASS.
"""
import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import gpu_check_report as report

SCRIPTS = Path(__file__).resolve().parent
REPO = SCRIPTS.parent
RESERVE_S = 20  # kept back from the budget to write the summary and the archive
STOP_GRACE_S = 30  # after SIGTERM, before SIGKILL
STOPPED = 124  # the exit status of a command stopped at its deadline (or never started)


@dataclass
class Job:
    name: str
    process: subprocess.Popen | None  # None: not started, the budget was spent
    output: Path
    started: float
    ended: float | None = None
    status: int | None = None


class Check:
    def __init__(self, out: Path, work: Path, device: str, jobs: int, budget_s: float, quick: bool):
        self.out, self.work, self.device, self.jobs, self.quick = out, work, device, jobs, quick
        self.labels = ("cuda", "cpu") if device == "cuda" else ("cpu", "cpu again")
        self.devices = (device, "cpu")
        self.started = time.monotonic()
        self.deadline = self.started + budget_s - RESERVE_S if budget_s else None
        self.facts: dict = {}
        self.stages: list[tuple[str, str, str]] = []  # (name, ok | FAIL | PARTIAL, detail)
        self.sections: list[tuple[str, list[str]]] = []
        self.timing: list[str] = []
        self.differences = 0
        self.log = (out / "gpu_check.log").open("w", encoding="utf-8")

    # --- running things ---------------------------------------------------------------
    def until(self, share: float = 1.0, at_most: float | None = None) -> float | None:
        """A deadline: ``share`` of the budget left (None without a budget), or ``at_most`` s."""
        now = time.monotonic()
        limits = [now + at_most] if at_most else []
        if self.deadline is not None:
            limits.append(now + share * max(0.0, self.deadline - now))
        return min(limits) if limits else None

    def start(self, name: str, command: list[str], env: dict | None = None, deadline: float | None = None) -> Job:
        output = self.work / "logs" / f"{len(self.stages):02d}-{name.replace(' ', '_').replace('/', '_')}.log"
        output.parent.mkdir(exist_ok=True)
        if deadline is not None and deadline - time.monotonic() < 10:
            output.write_text("not started: the time budget is spent\n")
            return Job(name, None, output, time.monotonic())
        with output.open("w") as handle:
            process = subprocess.Popen(command, cwd=REPO, env=env, stdout=handle, stderr=subprocess.STDOUT)
        return Job(name, process, output, time.monotonic())

    def wait(self, jobs: list[Job], deadline: float | None) -> None:
        """Until every job has ended, noting when each did; at ``deadline``, stop the rest."""
        running = [job for job in jobs if job.process is not None and job.status is None]
        while running and (deadline is None or time.monotonic() < deadline):
            for job in running:
                if job.process.poll() is not None:
                    job.ended, job.status = time.monotonic(), job.process.returncode
            running = [job for job in running if job.status is None]
            time.sleep(0.2 if running else 0)
        for job in jobs:
            if job.status is None:
                if job.process is not None:
                    _stop(job.process)
                job.ended, job.status = time.monotonic(), STOPPED

    def finish(self, job: Job, deadline: float | None) -> tuple[int, float, str]:
        """Wait for ``job`` until ``deadline``, then stop it: (exit status, seconds, output)."""
        self.wait([job], deadline)
        seconds = job.ended - job.started
        output = job.output.read_text(encoding="utf-8", errors="replace")
        if job.status == STOPPED:
            output += f"\nstopped at its deadline after {seconds:.0f} s\n"
        self.log.write(f"\n===== {job.name} (exit {job.status}, {seconds:.1f} s)\n{output}")
        self.log.flush()
        return job.status, seconds, output

    def run(self, name: str, command: list[str], at_most: float, share: float = 1.0):
        deadline = self.until(share, at_most)
        return self.finish(self.start(name, command, None, deadline), deadline)

    def inkernel(self, label: str, device: str, ids: list[str], shards: int, deadline: float | None) -> list[Job]:
        """Start the nbgrader path on ``device`` in ``shards`` processes (priority order kept)."""
        env = dict(os.environ, **({"CUDA_VISIBLE_DEVICES": ""} if device == "cpu" else {}))
        jobs = []
        for i in range(min(shards, len(ids))):
            out = self.work / f"inkernel_{label.replace(' ', '_')}_{i}.json"
            command = [sys.executable, str(SCRIPTS / "gpu_check_inkernel.py"), str(out), *ids[i::shards]]
            jobs.append(self.start(f"nbgrader path {label} shard {i}", command, env, deadline))
        return jobs

    def inkernel_results(self, label: str, device: str, jobs: list[Job], ids: list[str],
                         deadline: float | None) -> dict:
        """Wait for the shards; {mutant id: result}; a stage line says how far they got."""
        self.wait(jobs, deadline)
        statuses = [self.finish(job, deadline)[0] for job in jobs]
        found, cuda_used = {}, []
        for i in range(len(jobs)):
            out = self.work / f"inkernel_{label.replace(' ', '_')}_{i}.json"
            if out.exists():
                data = json.loads(out.read_text())
                found.update(data["results"])
                cuda_used.append(data["cuda_used"])
        errors = sum(bool(r.get("grader_error")) for r in found.values())
        failed = sum(rc not in (0, STOPPED) for rc in statuses)
        state = "ok" if len(found) == len(ids) and not failed else "FAIL" if failed else "PARTIAL"
        if cuda_used and all(cuda_used) != (device == "cuda"):
            state = "FAIL"  # the path did not run where it was asked to
        self.stage(f"nbgrader path on {device} ({label})", state,
                   f"{len(found)}/{len(ids)} variants, {failed} shard(s) failed, {errors} grader error(s), "
                   f"CUDA used: {sorted(set(cuda_used))}")
        return found

    # --- reporting ----------------------------------------------------------------------
    def stage(self, name: str, state: str | bool, detail: str) -> None:
        state = {True: "ok", False: "FAIL"}.get(state, state)
        self.stages.append((name, state, detail))
        print(f"gpu_check: {state:7} {name}: {detail}", flush=True)
        self.write()

    def section(self, title: str, lines: list[str]) -> None:
        self.sections.append((title, lines))
        self.write()

    def add_comparison(self, title: str, rows: list[report.Row], csv_name: str, not_compared: int) -> None:
        report.write_csv(self.out / csv_name, rows, self.labels)
        differ = sum(not r.same for r in rows)
        self.differences += differ
        note = f"; {not_compared} submission(s) not graded by both runs in time" if not_compared else ""
        self.section(f"{title}: every task compared ({self.labels[0]} vs {self.labels[1]}{note})",
                     report.task_table(rows, self.labels))
        self.section(f"{title}: tasks whose score differs ({differ})", report.difference_table(rows, self.labels))

    def write(self) -> None:
        lines = [f"# gpu_check --device {self.device}{' --quick' if self.quick else ''}: "
                 f"{self.labels[0]} vs {self.labels[1]}", "", "| stage | result | detail |", "|---|---|---|"]
        lines += [f"| {name} | {state} | {detail.replace('|', '/')} |" for name, state, detail in self.stages]
        for title, body in self.sections:
            lines += ["", f"## {title}", "", *body]
        if self.timing:
            lines += ["", "## Time per submission (autograder grade, wall clock)", "",
                      "| assignment | run | slots | graded | wall s | s per submission | "
                      "steady s per submission and slot | grader's own s per submission |",
                      "|---|---|---:|---:|---:|---:|---:|---:|", *self.timing]
        lines += ["", self.verdict()]
        (self.out / "summary.md").write_text("\n".join(lines) + "\n", encoding="utf-8")

    def verdict(self) -> str:
        failed = [name for name, state, _ in self.stages if state == "FAIL"]
        partial = [name for name, state, _ in self.stages if state == "PARTIAL"]
        result = "FAIL" if failed or self.differences else "INCOMPLETE" if partial else "PASS"
        named = "; ".join(failed + partial)
        return (f"RESULT: {result}: {len(self.stages)} stages, {len(failed)} failed, {len(partial)} cut short"
                f"{' (' + named + ')' if named else ''}, {self.differences} task scores differ, "
                f"{time.monotonic() - self.started:.0f} s")

    def finish_all(self) -> int:
        """Exit status: 0 PASS, 1 FAIL, 3 INCOMPLETE (no difference found in what ran)."""
        self.write()
        print((self.out / "summary.md").read_text(encoding="utf-8"), flush=True)
        self.log.close()
        return {"PASS": 0, "INCOMPLETE": 3}.get(self.verdict().split()[1].rstrip(":"), 1)


def _stop(process: subprocess.Popen) -> None:
    """SIGTERM (autograder grade then stops and keeps what it wrote), then SIGKILL."""
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=STOP_GRACE_S)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()

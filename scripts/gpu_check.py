"""Grade everything on CUDA and on the CPU, and say where the scores differ (issue 14).

Run by ``scripts/gpu_check.sh`` (which prepares the interpreter); stages, in order:

1. the machine: python, torch, the GPU, bwrap, the CUDA libraries' search path;
2. a sandboxed worker computes on the device (``gpu_check_smoke.py``);
3. ``pytest -m cuda`` on the test files that carry the mark;
4. ``autograder grade --device D`` on the bundled examples and one notebook per
   mutation-suite variant (``gpu_check_build.py``), on each device, per assignment;
5. the same variants on the nbgrader path, in-process (``gpu_check_inkernel.py``), which
   tells the checks' device behaviour apart from the sandbox's.

``summary.md`` in OUT is rewritten after every stage (a run cut short by its time limit
still reports); ``scores.csv`` holds every score compared, ``gpu_check.log`` every
command's output, ``results.tar.gz`` every result JSON. Exit status 0 only when every
stage passed and no task's score differs.
"""
import argparse
import json
import os
import subprocess
import sys
import tarfile
import traceback
from dataclasses import dataclass
from pathlib import Path

SCRIPTS = Path(__file__).resolve().parent
sys.path.insert(0, str(SCRIPTS))
import gpu_check_report as report  # noqa: E402 - the scripts folder is not a package
from gpu_check_build import build, by_priority, chosen_mutants  # noqa: E402
from gpu_check_stages import STOPPED, Check  # noqa: E402

from tests.mutants.harness import ASSIGNMENT_OF  # noqa: E402
from tests.notebooks.cells import ASSIGNMENTS, REPO, grader_tasks  # noqa: E402


def autograded(assignment: str) -> list[str]:
    return [task for task, checks in grader_tasks(assignment).items() if "manual" not in checks]


def environment(check: Check) -> None:
    probe = ("import json, sys, torch\n"
             "cuda = torch.cuda.is_available()\n"
             "print(json.dumps({'python': sys.version.split()[0], 'torch': torch.__version__,\n"
             "  'cuda': cuda, 'cuda_version': torch.version.cuda, 'gpus': torch.cuda.device_count(),\n"
             "  'gpu': torch.cuda.get_device_name(0) if cuda else None}))")
    rc, _, output = check.run("torch", [sys.executable, "-c", probe], at_most=120)
    facts = json.loads(output.strip().splitlines()[-1]) if rc == 0 else {"probe": output[-500:]}
    for name, command in (("nvidia-smi", "nvidia-smi -L"), ("bwrap", "bwrap --version"),
                          ("libcuda", "ldconfig -p | grep -m3 libcuda"), ("kernel", "uname -sr")):
        facts[name] = subprocess.run(command, shell=True, capture_output=True, text=True).stdout.strip()
    facts.update({k: v for k, v in os.environ.items()
                  if k in ("LD_LIBRARY_PATH", "CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES")})
    (check.out / "env.txt").write_text(json.dumps(facts, indent=1) + "\n")
    check.facts = facts
    ok = rc == 0 and (check.device == "cpu" or facts.get("cuda") is True)
    check.stage("machine", ok, ", ".join(f"{k} {facts.get(k)}" for k in ("python", "torch", "cuda", "gpu")))


def sandbox_smoke(check: Check) -> None:
    rc, _, output = check.run("sandbox smoke", [sys.executable, str(SCRIPTS / "gpu_check_smoke.py"),
                                                 check.device], at_most=180)
    try:
        found = json.loads(output.strip().splitlines()[-1])
    except (ValueError, IndexError):
        found = {"ok": False, "output": output[-300:]}
    shown = {k: v for k, v in found.items() if k != "traceback"}
    check.stage(f"sandboxed worker computes on {check.device}", rc == 0 and found.get("ok") is True,
                json.dumps(shown, default=str)[:600])


def cuda_tests(check: Check) -> None:
    files = sorted(str(p.relative_to(REPO)) for p in (REPO / "tests").rglob("test_*.py")
                   if "pytest.mark.cuda" in p.read_text(encoding="utf-8"))
    if not files:
        check.stage("pytest -m cuda", False, "no test file carries the cuda mark")
        return
    # plugins are not loaded by themselves (PYTEST_DISABLE_PLUGIN_AUTOLOAD: the machine's own
    # may not suit the carried pytest); the tests' time limits need pytest-timeout
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "pytest_timeout",
               "-m", "cuda", "-q", *files]
    rc, _, output = check.run("pytest -m cuda", command, at_most=600, share=0.2)
    last = (output.strip().splitlines() or ["no output"])[-1]
    state = "ok" if rc == 0 else "PARTIAL" if rc == STOPPED else "FAIL"
    check.stage(f"pytest -m cuda ({len(files)} files)", state, last)


@dataclass(frozen=True)
class Run:
    """One ``autograder grade`` of one assignment on one device."""
    label: str
    device: str
    assignment: str
    jobs: int
    into: Path

    def command(self, check: Check) -> list[str]:
        return [sys.executable, "-m", "autograder.cli", "grade", str(check.work / "submissions" / self.assignment),
                "--assignment", self.assignment, "--output", str(self.into), "--device", self.device,
                "--jobs", str(self.jobs), "--force"]


def grade_all(check: Check, students: dict[str, list[str]]) -> dict:
    """``autograder grade`` every assignment on both devices; {(label, assignment): Scores}.

    On a GPU machine the four runs go at once (the CUDA runs have one slot per GPU, the
    CPU runs share the other cores), under one deadline; the self-test runs them one
    after the other. A run stopped at the deadline keeps the results it wrote."""
    parallel = check.device == "cuda"
    cpu_jobs = max(1, (check.jobs - 4) // 2) if parallel else check.jobs
    deadline = check.until(share=0.65)
    plan = [Run(label, device, assignment, check.jobs if device == "cuda" else cpu_jobs,
                check.work / "results" / label.replace(" ", "_") / assignment)
            for label, device in zip(check.labels, check.devices, strict=True) for assignment in ASSIGNMENTS]
    started = [check.start(f"grade {r.label} {r.assignment}", r.command(check), deadline=deadline)
               if parallel else None for r in plan]
    check.wait([job for job in started if job], deadline)
    runs = {}
    for run, job in zip(plan, started, strict=True):
        job = job or check.start(f"grade {run.label} {run.assignment}", run.command(check), deadline=deadline)
        runs[(run.label, run.assignment)] = record(check, run, check.finish(job, deadline),
                                                   len(students[run.assignment]))
    return runs


def record(check: Check, run: Run, finished: tuple[int, float, str], count: int) -> report.Scores:
    """A run's stage line and timing row; its scores, read back from its output folder."""
    rc, seconds, output = finished
    scores = report.read_run(run.into)
    scores.stopped = rc == STOPPED
    graded = len(scores.errors)  # every result file names its student there
    state = "ok" if rc == 0 and graded == count else "PARTIAL" if rc == STOPPED else "FAIL"
    last = (output.strip().splitlines() or [""])[-1][:200]
    check.stage(f"autograder grade --device {run.device} {run.assignment} ({run.label})", state,
                f"{graded}/{count} graded, exit {rc}, {seconds:.1f} s; {last}")
    slots = min(run.jobs, check.facts.get("gpus") or 1) if run.device == "cuda" else run.jobs
    steady, own = report.seconds_per_submission(run.into, sorted(scores.errors), slots)
    per = f"{seconds / graded:.2f}" if graded else "-"
    check.timing.append(f"| {run.assignment} | {run.label} | {slots} | {graded} | {seconds:.1f} | {per} "
                        f"| {steady} | {own} |")
    return scores


def compare_cli(check: Check, students: dict[str, list[str]], runs: dict) -> None:
    rows, not_compared = [], 0
    for assignment in ASSIGNMENTS:
        a, b = (runs[(label, assignment)] for label in check.labels)
        both = [s for s in students[assignment] if _graded_or_due(s, a) and _graded_or_due(s, b)]
        not_compared += len(students[assignment]) - len(both)
        rows += report.compare(assignment, both, a, b, autograded(assignment))
    check.add_comparison("autograder grade (sandboxed)", rows, "scores.csv", not_compared)
    if check.device == "cuda":
        for assignment in ASSIGNMENTS:
            into = check.work / "results" / check.labels[0].replace(" ", "_") / assignment
            check.section(f"Checks that failed on CUDA only ({assignment}; judged again on the CPU, passed there)",
                          report.failed_on_gpu_only(into))
    check.section("Error codes in the results (a hint, not a verdict)",
                  report.error_codes({f"{label} {a}": runs[(label, a)] for label, a in runs}))


def _graded_or_due(student: str, run: report.Scores) -> bool:
    """Compared unless the run was stopped for time before it reached this student (a run
    that ended on its own and has no result for a student is a difference)."""
    return not run.stopped or student in run.errors


def compare_inkernel(check: Check, ids: list[str]) -> None:
    """The nbgrader path on both devices: at once on a GPU machine, else one after the other."""
    deadline = check.until()
    parallel = check.device == "cuda"
    shards = (min(4, check.jobs), max(1, check.jobs - 4)) if parallel else (check.jobs, check.jobs)
    found, pending = {}, []
    for label, device, count in zip(check.labels, check.devices, shards, strict=True):
        jobs = check.inkernel(label, device, ids, count, deadline)
        if parallel:
            pending.append((label, device, jobs))
        else:
            found[label] = check.inkernel_results(label, device, jobs, ids, deadline)
    for label, device, jobs in pending:
        found[label] = check.inkernel_results(label, device, jobs, ids, deadline)
    if check.device == "cuda":
        cuda_use(check, found[check.labels[0]])
    both = [i for i in ids if all(i in found[label] for label in check.labels)]
    rows = []
    for mutant_id in both:
        task = mutant_id.split("-")[0]  # a mutant id is <task>-<variant>
        scores = [found[label][mutant_id]["score"] for label in check.labels]
        rows.append(report.Row(ASSIGNMENT_OF[task], mutant_id, task, *scores))
    check.add_comparison("nbgrader path (in-process, no sandbox)", rows, "scores_nbgrader_path.csv",
                         len(ids) - len(both))


def cuda_use(check: Check, results: dict) -> None:
    """Did each task's checks put anything on the GPU? Checks that never leave the CPU
    find no difference between the devices, and prove nothing."""
    by_task: dict[str, list[int]] = {}
    for result in results.values():
        by_task.setdefault(result["task"], []).append(result.get("cuda_allocations") or 0)
    lines = ["| task | variants graded | CUDA allocations (most over its variants) |", "|---|---:|---:|"]
    lines += [f"| {task} | {len(counts)} | {max(counts)} |" for task, counts in by_task.items()]
    check.section("CUDA use of the checks, per task (nbgrader path)", lines)
    idle = [task for task, counts in by_task.items() if max(counts) == 0]
    check.stage("every task's checks ran on CUDA (nbgrader path)", bool(by_task) and not idle,
                f"never on CUDA: {', '.join(idle)}" if idle else f"{len(by_task)} tasks")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", choices=("cuda", "cpu"), default="cuda",
                        help="cuda: CUDA against CPU; cpu: CPU against itself (the self-test)")
    parser.add_argument("--quick", action="store_true", help="the examples and one buggy variant per task")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="grading workers")
    parser.add_argument("--budget-s", type=float, default=0, help="stop starting stages after this (0: none)")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--work", type=Path, required=True)
    args = parser.parse_args()
    check = Check(args.out, args.work, args.device, args.jobs, args.budget_s, args.quick)
    try:
        environment(check)
        sandbox_smoke(check)
        cuda_tests(check)
        students = build(args.work / "submissions", args.quick)
        compare_cli(check, students, grade_all(check, students))
        # hostile variants (sandbox_only) would attack this very process on the nbgrader path
        compare_inkernel(check, [m.id for _, m in by_priority(chosen_mutants(args.quick)) if m.sandbox_only is None])
    except Exception:  # the check's own failure: still leave the summary and the results
        check.stage("gpu_check itself", False, traceback.format_exc()[-1500:])
    if (args.work / "results").exists():  # the results and timings, not the feedback pages
        with tarfile.open(args.out / "results.tar.gz", "w:gz") as archive:
            archive.add(args.work / "results", arcname="results", filter=_data_only)
    sys.exit(check.finish_all())


def _data_only(member: tarfile.TarInfo) -> tarfile.TarInfo | None:
    return member if member.isdir() or member.name.endswith((".json", ".csv")) else None


if __name__ == "__main__":
    main()

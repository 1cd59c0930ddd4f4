"""Reading two runs' grades and writing what gpu_check.py found, as Markdown and CSV.

A run's grades are read only through the CLI's documented output: ``DIR/<student_id>.json``
with ``tasks[].id`` and ``tasks[].score`` (SPEC §3). Manual tasks (score null) are not
compared: nothing grades them.
"""
import csv
import json
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Scores:
    """One run of one assignment: {(student, task): score}, error codes per student (every
    student with a result is a key), and whether the run was stopped before its end."""
    scores: dict[tuple[str, str], float] = field(default_factory=dict)
    errors: dict[str, list[str]] = field(default_factory=dict)
    stopped: bool = False


def read_run(folder: Path) -> Scores:
    run = Scores()
    for path in sorted(folder.glob("*.json")):
        try:
            result = json.loads(path.read_text(encoding="utf-8"))
            student = result["student_id"]
            tasks = result["tasks"]
        except (ValueError, KeyError, TypeError):
            continue  # not a result
        run.errors[student] = sorted({str(e.get("code")) for e in result.get("errors", [])})
        for task in tasks:
            if task.get("score") is not None:
                run.scores[(student, task["id"])] = float(task["score"])
    return run


@dataclass(frozen=True)
class Row:
    assignment: str
    student: str
    task: str
    a: float | None  # None: no result in that run
    b: float | None

    @property
    def same(self) -> bool:
        return self.a is not None and self.b is not None and abs(self.a - self.b) <= 1e-9


def compare(assignment: str, students: list[str], a: Scores, b: Scores, tasks: list[str]) -> list[Row]:
    """A row per (student, autograded task) that either run scored or should have."""
    rows = []
    for student in students:
        for task in tasks:
            rows.append(Row(assignment, student, task, a.scores.get((student, task)),
                            b.scores.get((student, task))))
    return rows


def task_table(rows: list[Row], labels: tuple[str, str]) -> list[str]:
    """Markdown: every task compared, with how many submissions agreed."""
    lines = [f"| assignment | task | submissions | same on {labels[0]} and {labels[1]} | differ |",
             "|---|---|---:|---:|---:|"]
    for assignment, task in dict.fromkeys((r.assignment, r.task) for r in rows):  # in grader.yml's order
        mine = [r for r in rows if (r.assignment, r.task) == (assignment, task)]
        same = sum(r.same for r in mine)
        lines.append(f"| {assignment} | {task} | {len(mine)} | {same} | {len(mine) - same} |")
    return lines


def difference_table(rows: list[Row], labels: tuple[str, str]) -> list[str]:
    differ = [r for r in rows if not r.same]
    if not differ:
        return ["No task's score differs."]
    lines = [f"| assignment | student | task | {labels[0]} | {labels[1]} |", "|---|---|---|---:|---:|"]
    for r in differ:
        lines.append(f"| {r.assignment} | {r.student} | {r.task} | {_score(r.a)} | {_score(r.b)} |")
    return lines


def _score(value: float | None) -> str:
    return "no result" if value is None else f"{value:g}"


def write_csv(path: Path, rows: list[Row], labels: tuple[str, str]) -> None:
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["assignment", "student", "task", labels[0], labels[1], "same"])
        for r in rows:
            writer.writerow([r.assignment, r.student, r.task, "" if r.a is None else r.a,
                             "" if r.b is None else r.b, r.same])


def error_codes(runs: dict[str, Scores]) -> list[str]:
    """Markdown: how many submissions of each run carry each error code (a hint, not a verdict)."""
    lines = []
    for label, run in runs.items():
        counts: dict[str, int] = {}
        for codes in run.errors.values():
            for code in codes:
                counts[code] = counts.get(code, 0) + 1
        listed = ", ".join(f"{code} x{n}" for code, n in sorted(counts.items())) or "none"
        lines.append(f"- {label}: {listed}")
    return lines


def seconds_per_submission(folder: Path, students: list[str], slots: int) -> tuple[str, str]:
    """(steady, own): seconds per submission and slot once running, from the spread of the
    result files' write times; and the mean of the grader's own per-submission timing
    (``timing/<student>.json``, ``phases.total``) where it writes one ("-" otherwise)."""
    times = sorted((folder / f"{s}.json").stat().st_mtime for s in students if (folder / f"{s}.json").exists())
    steady = f"{(times[-1] - times[0]) / (len(times) - 1) * slots:.2f}" if len(times) > 1 else "-"
    totals = []
    for student in students:
        try:
            totals.append(float(json.loads((folder / "timing" / f"{student}.json").read_text())["phases"]["total"]))
        except (OSError, ValueError, KeyError, TypeError):
            continue
    return steady, f"{sum(totals) / len(totals):.2f}" if totals else "-"


def failed_on_gpu_only(folder: Path) -> list[str]:
    """Markdown: the checks that failed on the GPU and passed when judged again on the CPU
    (``timing/<student>.json`` names the checks judged again; the result says how they ended),
    per task and check, with up to three students. Expected for code that works on the CPU
    only (the device check charges it); for right code, a check that the GPU alone breaks."""
    found: dict[tuple[str, str], list[str]] = {}
    for path in sorted((folder / "timing").glob("*.json")):
        try:
            again = {task: set(t.get("again_on_cpu", [])) for task, t in json.loads(path.read_text())["tasks"].items()}
            result = json.loads((folder / path.name).read_text(encoding="utf-8"))
            for task in result["tasks"]:
                for check in task.get("checks", []):
                    if check["passed"] and check["name"] in again.get(task["id"], ()):
                        found.setdefault((task["id"], check["name"]), []).append(result["student_id"])
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            continue  # not a result, or a run stopped while writing
    lines = ["| task | check | submissions | for example |", "|---|---|---:|---|"]
    lines += [f"| {task} | {name} | {len(students)} | {', '.join(students[:3])} |"
              for (task, name), students in sorted(found.items())]
    return lines if found else ["none"]

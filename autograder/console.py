"""What ``autograder grade`` prints while it runs and when it is done.

The progress goes to stderr: on a terminal a rich display (a bar with the count, the time
and an estimate, and a line per slot naming the submission and the phase it is in); else
nothing there. Everything worth keeping (a line per finished submission when stdout is not
a terminal, then the summary) goes to stdout, so ``> log.txt`` keeps it.
"""
import contextlib
import sys
import time

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from .files import written_out as shown

out = Console(soft_wrap=True, highlight=False)                 # stdout: the log
err = Console(stderr=True, soft_wrap=True, highlight=False)    # stderr: progress and errors
SHOWN_NOT_GRADED = 20  # the summary lists this many of the notebooks it did not grade, then counts


class Estimate:
    """Seconds left, from the pace since the first result (the first one also pays the run's
    start: the imports, the sandboxes, the first full hypothesis runs)."""

    def __init__(self, total: int):
        self.total, self.times = total, []

    def done(self) -> None:
        self.times.append(time.monotonic())

    def seconds_left(self) -> float | None:
        if len(self.times) < 2:
            return None
        pace = (self.times[-1] - self.times[0]) / (len(self.times) - 1)
        return pace * (self.total - len(self.times))

    def text(self) -> str:
        left = self.seconds_left()
        return "" if not left else f"about {left:.0f} s left"


@contextlib.contextmanager
def progress(total: int):
    """(on_done(result, cached), on_progress(slot, student, phase)) for a run of ``total``."""
    estimate = Estimate(total)
    if not err.is_terminal:
        def on_done(result, cached: bool) -> None:
            estimate.done()
            note = " (unchanged, reused)" if cached else ""
            out.print(f"[{len(estimate.times)}/{total}] {escaped(result.student_id)}: autograded "
                      f"{result.autograded_score:g}/{result.autograded_max:g}{note}  {estimate.text()}".rstrip())
            sys.stdout.flush()
        yield on_done, None
        return
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  TextColumn("{task.fields[left]}"), console=err, transient=True) as bar:
        overall = bar.add_task("graded", total=total, left="")
        slots: dict[int, int] = {}

        def on_done(result, cached: bool) -> None:
            estimate.done()
            bar.update(overall, advance=1, left=estimate.text())

        def on_progress(slot: int, student_id: str, phase: str) -> None:
            if slot not in slots:
                slots[slot] = bar.add_task("", total=None, left="")
            bar.update(slots[slot], description=f"  slot {slot + 1}: {escaped(student_id)} · {phase}")
        yield on_done, on_progress


def summary(run, seconds: float) -> None:
    _task_table(run, seconds)
    _scores(run)
    _not_graded(run)
    _problems(run)
    _where_things_are(run)


def _task_table(run, seconds: float) -> None:
    """Per task: how many students got every point, and the mean (written answers: the TA's)."""
    results = list(run.results.values())
    parts = [f"{len(run.results) - len(run.reused) - len(run.kept) - len(run.earlier)} graded",
             f"{len(run.reused)} unchanged and reused"]
    if run.kept:
        parts.append(f"{len(run.kept)} kept from earlier runs (not selected by --student)")
    title = f"{len(run.submissions)} submissions found: {', '.join(parts)}, in {seconds:.1f} s"
    if run.earlier:
        title += (f"; {len(run.earlier)} more results in the folder, from earlier runs, are listed as they are "
                  f"(not under these paths{', or not reached before the stop' if run.stopped_by is not None else ''})")
    table = Table(title=title)
    table.add_column("task")
    table.add_column("students with every point", justify="right")
    table.add_column("mean points", justify="right")
    spec = run.batch.settings.spec
    for task_id in spec.tasks:
        if spec.is_manual(task_id):
            table.add_row(task_id, "written answer", "graded by the TA")
            continue
        tasks = [t for r in results if (t := r.task(task_id)) is not None]
        full = sum(t.score is not None and t.score >= t.max_score for t in tasks)
        mean = sum(t.score or 0.0 for t in tasks) / len(tasks) if tasks else 0.0
        table.add_row(task_id, f"{full} of {len(tasks)}", f"{mean:.2f} / {spec.points(task_id):g}")
    out.print(table)


def _scores(run) -> None:
    """The class's mean, autograded and with the written answers' points entered so far."""
    from .outputs.totals import class_lines
    if run.totals:
        out.print("; ".join(class_lines(run.totals, "en")), markup=False)


def _not_graded(run) -> None:
    if run.not_graded:
        out.print(f"found and not graded ({len(run.not_graded)}):")
        for name, why in run.not_graded[:SHOWN_NOT_GRADED]:
            out.print(f"  {shown(name)}: {shown(why)}", markup=False)
        if len(run.not_graded) > SHOWN_NOT_GRADED:
            out.print(f"  ... and {len(run.not_graded) - SHOWN_NOT_GRADED} more")
    unselected = sorted(s.student_id for s in run.submissions
                        if s.student_id not in run.results and run.selected is not None
                        and s.student_id not in run.selected)
    if unselected:
        out.print(f"no result yet, not selected by --student ({len(unselected)}): {shown(', '.join(unselected))}",
                  markup=False)


def _problems(run) -> None:
    from .run import signal_name
    with_errors = sorted(sid for sid, r in run.results.items() if r.errors)
    if with_errors:
        out.print(f"students with errors ({len(with_errors)}): {shown(', '.join(with_errors))} "
                  f"(see their feedback in {run.folder.path / 'feedback'})", markup=False)
    raised = sorted(sid for sid, r in run.results.items()
                    if sid not in with_errors and any(w.code == "cell_error" and w.task for w in r.warnings))
    if raised:
        out.print(f"students whose solution cells raised ({len(raised)}): {shown(', '.join(raised))} "
                  "(a warning in their results: the task's checks fail from there)", markup=False)
    elsewhere = sorted(sid for sid, r in run.results.items() if any(w.code == "other_notebook" for w in r.warnings))
    if elsewhere:
        out.print(f"graded from another notebook than {run.batch.settings.spec.notebook} ({len(elsewhere)}): "
                  f"{shown(', '.join(elsewhere))} (each result names the file graded)", markup=False)
    for note in run.folder.notes:
        out.print(f"[yellow]note:[/yellow] {escaped(note)}")
    if run.failed:
        out.print(f"[red]the grader failed on[/red] {escaped(', '.join(sorted(run.failed)))}: "
                  f"run the same command again to grade them")
    if run.stopped_by is not None:
        out.print(f"[yellow]stopped by {signal_name(128 + run.stopped_by)}:[/yellow] "
                  f"{len(run.to_grade) - len(run.missing)} of {len(run.to_grade)} graded and kept in "
                  f"{escaped(str(run.folder.path))}; run the same command again"
                  f"{' without --force' if run.batch.force else ''} to grade the other {len(run.missing)}"
                  f"{' (their earlier results are listed until then)' if run.earlier else ''}")


def _where_things_are(run) -> None:
    out.print(f"results: {run.folder.path} (grades.csv, <student>.json, feedback/)", markup=False)
    if run.report is not None:
        out.print(f"class report: {run.report}", markup=False)
    if run.answers is not None:
        points = run.answers.parent / "manual_points.csv"
        written = " (written now: a row per student, the points empty)" if run.blank_points is not None else ""
        out.print(f"written answers: {run.answers}; enter their points in {points}{written}, then run the same "
                  "command again", markup=False)
    if run.nbgrader is not None:
        out.print(f"nbgrader course: {run.nbgrader.root} (gradebook and autograded/ updated)", markup=False)


def escaped(value: str) -> str:
    """Text from a submission (an id, a note naming a file, a message) inside a line with rich
    markup: no markup of its own, and its control characters written out."""
    from rich.markup import escape
    return escape(shown(value))

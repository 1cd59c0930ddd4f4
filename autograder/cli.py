"""The command line (SPEC §3): thin verbs over library calls.

    autograder grade PATH... --assignment NAME --output DIR
    autograder export DIR --format csv|canvas|moodle --output FILE [--roster LMS.csv] [--column NAME] [--match COLUMN]
    autograder release

Exit status: 0 the batch ran, 2 usage or grader.yml error, 1 the grader itself failed,
128 + the signal's number when stopped by SIGINT or SIGTERM (finished results are kept).
"""
import contextlib
import gc
import sys
import time
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

from .runmarker import carry as carry_run_marker

app = typer.Typer(add_completion=False, help="Autograder for the D2L attention unit.")
console = Console(stderr=True, soft_wrap=True, highlight=False)


@app.callback()
def main_callback() -> None:
    """Grade notebooks of the attention unit in a sandbox (see README)."""


@app.command()
def grade(
    paths: Annotated[list[Path], typer.Argument(help="notebooks, nbgrader submitted/ folders or course roots")],
    assignment: Annotated[str, typer.Option(help="assignment name, e.g. attention_scoring")],
    output: Annotated[Path, typer.Option(help="folder for <student_id>.json, grades.csv and feedback/")],
    jobs: Annotated[Optional[int], typer.Option(help="sandboxed workers in parallel (default: one per core)")] = None,
    seed: Annotated[Optional[int], typer.Option(help="hypothesis seed for the whole run")] = None,
    force: Annotated[bool, typer.Option(help="re-grade even unchanged submissions")] = False,
    config: Annotated[Optional[Path], typer.Option(help="grader.yml to use instead of the repo's")] = None,
    device: Annotated[Optional[str], typer.Option(help="cpu, cuda or auto (default: grader.yml)")] = None,
    student: Annotated[Optional[list[str]], typer.Option(help="grade only this student (repeatable)")] = None,
    executor: Annotated[str, typer.Option(help="local (this machine) or ray (a Ray cluster, see README)")] = "local",
    address: Annotated[Optional[str], typer.Option(help="the Ray cluster's address, HOST:PORT "
                                                        "(default: the cluster running on this machine)")] = None,
) -> None:
    """Grade every submission found under PATHS and write the results to OUTPUT."""
    from .config import ConfigError
    from .run import Options, prepare
    options = Options(paths, assignment, output, jobs, seed, force, config, device, student or [], executor, address)
    try:
        run = prepare(options)
    except ConfigError as error:
        for line in str(error).splitlines():
            console.print(f"[red]error:[/red] {line}")
        raise typer.Exit(2) from None
    started = time.monotonic()
    try:
        with _progress(len(run.submissions)) as on_done:
            status = run.execute(on_done)
    except Exception as error:  # noqa: BLE001 - the grader's own failure, said once, here
        console.print(f"[red]grader failure:[/red] {type(error).__name__}: {error}")
        raise typer.Exit(1) from None
    _summary(run, time.monotonic() - started)
    raise typer.Exit(status)


@app.command()
def export(
    folder: Annotated[Path, typer.Argument(help="the --output folder of autograder grade")],
    format: Annotated[str, typer.Option("--format", help="csv, canvas (fills a column of Canvas's gradebook "
                                                         "CSV) or moodle (Moodle's grade-import CSV)")],
    output: Annotated[Path, typer.Option(help="the file to write")],
    roster: Annotated[Optional[Path], typer.Option(help="the gradebook CSV downloaded from the LMS "
                                                        "(canvas: required; moodle: its users only)")] = None,
    column: Annotated[Optional[str], typer.Option(help="the grade column: Canvas's 'Title (id)' header "
                                                       "(default: the assignment's), Moodle's (default: "
                                                       "the assignment's name)")] = None,
    match: Annotated[Optional[str], typer.Option(help="the roster column holding our student ids "
                                                      "(default: SIS Login ID on Canvas, username on Moodle)")] = None,
) -> None:
    """Write FOLDER's grades (autograded plus the written answers entered) for a spreadsheet or an LMS."""
    from .config import ConfigError
    from .export import ExportOptions
    from .export import export as write_export
    try:
        done = write_export(ExportOptions(folder, format, output, roster, column, match))
    except ConfigError as error:
        for line in str(error).splitlines():
            console.print(f"[red]error:[/red] {line}")
        raise typer.Exit(2) from None
    for note in done.notes:
        console.print(f"[yellow]note:[/yellow] {note}")
    console.print(f"wrote {done.path}: {done.students} students with a score")


@app.command()
def release(
    into: Annotated[Optional[Path], typer.Option(help="folder for the student versions "
                                                     "(default: the repository's student_template/)")] = None,
) -> None:
    """Generate the student notebooks and helpers from assignments/ with nbgrader."""
    from . import release as releasing
    try:
        written = releasing.release(into=into)
    except releasing.ReleaseError as error:
        console.print(f"[red]release failed:[/red] {error}")
        raise typer.Exit(1) from None
    console.print(f"released {len(written)} files")


@contextlib.contextmanager
def _progress(total: int):
    """A rich progress bar with ETA on a terminal; plain lines otherwise (CI, logs)."""
    if console.is_terminal:
        with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                      TimeRemainingColumn(), console=console) as bar:
            task = bar.add_task("grading", total=total)
            yield lambda result, cached: bar.update(task, advance=1, description=result.student_id)
        return
    done, started = [0], time.monotonic()

    def on_done(result, cached: bool) -> None:
        done[0] += 1
        eta = (time.monotonic() - started) / done[0] * (total - done[0])
        note = " (unchanged, reused)" if cached else ""
        console.print(f"[{done[0]}/{total}] {result.student_id}: autograded "
                      f"{result.autograded_score:g}/{result.autograded_max:g}{note}  eta {eta:.0f} s")
        sys.stderr.flush()
    yield on_done


def _summary(run, seconds: float) -> None:
    _task_table(run, seconds)
    _scores_and_problems(run)
    _where_things_are(run)


def _task_table(run, seconds: float) -> None:
    """Full marks per task, over the submissions graded (written answers: by the TA)."""
    results = list(run.results.values())
    table = Table(title=f"{len(results)} of {len(run.submissions)} submissions graded in {seconds:.1f} s "
                        f"({len(run.reused)} reused)")
    table.add_column("task")
    table.add_column("full marks", justify="right")
    for task_id in run.batch.settings.spec.tasks:
        if run.batch.settings.spec.is_manual(task_id):
            table.add_row(task_id, "graded by the TA")
            continue
        tasks = [t for r in results if (t := r.task(task_id)) is not None]
        full = sum(t.score is not None and t.score >= t.max_score for t in tasks)
        table.add_row(task_id, f"{full}/{len(tasks)}")
    console.print(table)


def _scores_and_problems(run) -> None:
    from .run import signal_name
    from .totals import class_lines
    results = list(run.results.values())
    if run.totals:
        console.print("; ".join(class_lines(run.totals, "en")))
    with_errors = sorted(sid for sid, r in run.results.items() if r.errors)
    if with_errors:
        console.print(f"students with errors ({len(with_errors)}): {', '.join(with_errors)} "
                      f"(see their feedback in {run.folder.path / 'feedback'})")
    for note in run.folder.notes:
        console.print(f"[yellow]note:[/yellow] {note}")
    if run.failed:
        console.print(f"[red]the grader failed on[/red] {', '.join(sorted(run.failed))}: "
                      f"run the same command again to grade them")
    if run.stopped_by is not None:
        console.print(f"[yellow]stopped by {signal_name(128 + run.stopped_by)}:[/yellow] "
                      f"{len(results)} of {len(run.submissions)} graded and kept in {run.folder.path}; "
                      f"run the same command again to grade the other {len(run.missing)}")


def _where_things_are(run) -> None:
    console.print(f"results: {run.folder.path} (grades.csv, <student>.json, feedback/)")
    if run.report is not None:
        console.print(f"class report: {run.report}")
    if run.nbgrader is not None:
        console.print(f"nbgrader course: {run.nbgrader.root} (gradebook and autograded/ updated)")


def main() -> None:
    carry_run_marker()  # first: the run's processes are found by it (autograder/runmarker.py)
    try:
        sys.exit(app())
    finally:
        # Exiting, the interpreter garbage-collects everything imported (torch, hypothesis,
        # nbformat): a second of CPU after the results are written, many seconds between
        # a Ctrl-C and the prompt on a busy machine. Collections skip frozen objects; they
        # are freed all the same.
        gc.freeze()


if __name__ == "__main__":
    main()

"""The command line (SPEC §3): thin verbs over library calls.

    autograder grade PATH... --assignment NAME --output DIR
    autograder tokens STUDENT_ID... [--from FILE] --output TOKENS.csv
    autograder serve --assignment NAME --output DIR --tokens TOKENS.csv [--host 127.0.0.1] [--port 8000]
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
        _usage_error(error)
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
def tokens(
    output: Annotated[Path, typer.Option(help="the new TOKENS.csv (student_id,token); never overwritten")],
    students: Annotated[Optional[list[str]], typer.Argument(help="student ids", show_default=False)] = None,
    from_file: Annotated[Optional[Path], typer.Option("--from", help="a file of student ids: one a line, or "
                                                                     "nbgrader's roster CSV (its id column)")] = None,
) -> None:
    """Write a fresh random token for each student, for `autograder serve --tokens`."""
    from .config import ConfigError
    from .service.tokens import read_ids, write_tokens
    try:
        ids = [*(students or []), *(read_ids(from_file) if from_file else [])]
        write_tokens(ids, output)
    except ConfigError as error:
        _usage_error(error)
    console.print(f"wrote {len(ids)} tokens to {output} (readable by you only); give each student their own")


@app.command()
def serve(
    assignment: Annotated[str, typer.Option(help="assignment name, e.g. attention_scoring")],
    output: Annotated[Path, typer.Option(help="folder for <student_id>.json, grades.csv, feedback/ and history/")],
    tokens: Annotated[Path, typer.Option(help="the students' tokens, as `autograder tokens` wrote them")],
    host: Annotated[str, typer.Option(help="address to listen on (a reverse proxy with TLS goes in front)")] = (
        "127.0.0.1"),
    port: Annotated[int, typer.Option(help="port to listen on (0: any free port)")] = 8000,
    jobs: Annotated[Optional[int], typer.Option(help="grading slots (default: one per core)")] = None,
    config: Annotated[Optional[Path], typer.Option(help="grader.yml to use instead of the repo's")] = None,
    device: Annotated[Optional[str], typer.Option(help="cpu, cuda or auto (default: grader.yml)")] = None,
    seed: Annotated[Optional[int], typer.Option(help="hypothesis seed (default: per assignment and task)")] = None,
    executor: Annotated[str, typer.Option(help="local (this machine) or ray (a Ray cluster, see README)")] = "local",
    address: Annotated[Optional[str], typer.Option(help="the Ray cluster's address, HOST:PORT")] = None,
) -> None:
    """Grade students' submissions over HTTP as they hand them in, into OUTPUT (README: the service)."""
    from .config import ConfigError
    from .service.serve import ServeOptions, prepare, run
    try:
        prepared = prepare(ServeOptions(assignment, output, tokens, host, port, jobs, config, device, seed,
                                        executor, address))
    except ConfigError as error:
        _usage_error(error)
    try:
        run(prepared)
    except KeyboardInterrupt:  # the signal uvicorn stopped for, raised again once everything ended
        raise typer.Exit(130) from None
    except Exception as error:  # noqa: BLE001 - the service's own failure, said once, here
        console.print(f"[red]grader failure:[/red] {type(error).__name__}: {error}")
        raise typer.Exit(1) from None


def _usage_error(error: Exception) -> None:
    for line in str(error).splitlines():
        console.print(f"[red]error:[/red] {line}")
    raise typer.Exit(2) from None


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
    results = list(run.results.values())
    if results:
        first = results[0]
        mean = sum(r.autograded_score for r in results) / len(results)
        console.print(f"mean autograded score {mean:.2f} / {first.autograded_max:g}; manual points pending "
                      f"{first.manual_max:g} per student (written answers, graded by the TA)")
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

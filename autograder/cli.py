"""The command line (SPEC §3): thin verbs over library calls.

    autograder grade PATH... --assignment NAME --output DIR
    autograder show STUDENT_ID --output DIR
    autograder export DIR --format csv|canvas|moodle --output FILE [--roster LMS.csv] [--column NAME] [--match COLUMN]
                      [--rescale | --as-is]
    autograder tokens STUDENT_ID... [--from FILE] --output TOKENS.csv
    autograder serve --assignment NAME --output DIR --tokens TOKENS.csv [--host 127.0.0.1] [--port 8000]
    autograder serve --assignment NAME --output DIR --exchange ROOT --course COURSE_ID [--tokens TOKENS.csv]
    autograder release

Exit status: 0 the batch ran, 2 usage or grader.yml error, 1 the grader itself failed,
128 + the signal's number when stopped by SIGINT or SIGTERM (finished results are kept).
"""
import atexit
import gc
import os
import sys
import time
from pathlib import Path
from typing import Annotated, Optional

import typer

from .console import err, escaped, out, progress, summary
from .executors.choice import HELP as EXECUTORS
from .executors.choice import LOCAL
from .executors.runmarker import carry as carry_run_marker

app = typer.Typer(add_completion=False, help="Autograder for the D2L attention unit.")


@app.callback()
def main_callback() -> None:
    """Grade notebooks of the attention unit in a sandbox (the docs: `make docs`, docs/)."""


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
    executor: Annotated[str, typer.Option(help=EXECUTORS)] = LOCAL,
    address: Annotated[Optional[str], typer.Option(help="the Ray cluster's address, HOST:PORT "
                                                        "(default: the cluster running on this machine)")] = None,
) -> None:
    """Grade every submission found under PATHS and write the results to OUTPUT."""
    from .executors.early import launch_early  # first, before the heavy imports below: its zygotes start meanwhile
    early = launch_early(paths, assignment, jobs, config, device, student or []) if executor == LOCAL else None
    from .config import ConfigError
    from .run import Options, prepare
    options = Options(paths, assignment, output, jobs, seed, force, config, device, student or [], executor, address)
    try:
        run = prepare(options, early=early)
    except ConfigError as error:
        if early is not None:
            early.close()
        _usage_error(error)
    started = time.monotonic()
    try:
        with progress(len(run.to_grade)) as (on_done, on_progress):
            status = run.execute(on_done, on_progress)
    except Exception as error:  # noqa: BLE001 - the grader's own failure, said once, here
        err.print(f"[red]grader failure:[/red] {escaped(f'{type(error).__name__}: {error}')}")
        raise typer.Exit(1) from None
    summary(run, time.monotonic() - started)
    raise typer.Exit(status)


@app.command()
def show(
    student_id: Annotated[str, typer.Argument(help="the student's id, as in grades.csv")],
    output: Annotated[Path, typer.Option(help="the folder `autograder grade --output` wrote")],
) -> None:
    """One student's result: the score per task and per check, errors, where the feedback is."""
    from .config import ConfigError
    from .show import show_result
    try:
        show_result(student_id, output, out)
    except ConfigError as error:
        _usage_error(error)


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
    rescale: Annotated[bool, typer.Option("--rescale", help="canvas: where the column's Points Possible differs "
                                                            "from the results' maximum, write each score rescaled "
                                                            "to it (else nothing is written)")] = False,
    as_is: Annotated[bool, typer.Option("--as-is", help="canvas: where the column's Points Possible differs from "
                                                        "the results' maximum, write the scores as they are")] = False,
) -> None:
    """Write FOLDER's grades (autograded plus the written answers entered) for a spreadsheet or an LMS."""
    from .config import ConfigError
    from .export import AS_IS, RESCALE, ExportOptions
    from .export import export as write_export
    if rescale and as_is:
        _usage_error(ConfigError("--rescale and --as-is: give one (rescale the scores to Canvas's Points "
                                 "Possible, or write them as they are)"))
    points = RESCALE if rescale else AS_IS if as_is else None
    try:
        done = write_export(ExportOptions(folder, format, output, roster, column, match, points))
    except ConfigError as error:
        _usage_error(error)
    for note in done.notes:
        out.print(f"[yellow]note:[/yellow] {escaped(note)}")
    out.print(f"wrote {done.path}: {done.students} students with a score")


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
    out.print(f"wrote {len(ids)} tokens to {output} (readable by you only); give each student their own")


@app.command()
def serve(
    assignment: Annotated[str, typer.Option(help="assignment name, e.g. attention_scoring")],
    output: Annotated[Path, typer.Option(help="folder for <student_id>.json, grades.csv, feedback/ and history/")],
    tokens: Annotated[Optional[Path], typer.Option(help="the students' tokens, as `autograder tokens` wrote them "
                                                        "(hand-ins on the service's page)")] = None,
    exchange: Annotated[Optional[Path], typer.Option(
        help="nbgrader's Exchange.root: also take hand-ins from Jupyter's Assignments tab "
             "(docs: Handing in from Jupyter)")] = None,
    course: Annotated[Optional[str], typer.Option(help="the course id in the exchange (CourseDirectory.course_id)")] = (
        None),
    host: Annotated[str, typer.Option(help="address to listen on (a reverse proxy with TLS goes in front)")] = (
        "127.0.0.1"),
    port: Annotated[int, typer.Option(help="port to listen on (0: any free port)")] = 8000,
    jobs: Annotated[Optional[int], typer.Option(help="grading slots (default: one per core)")] = None,
    config: Annotated[Optional[Path], typer.Option(help="grader.yml to use instead of the repo's")] = None,
    device: Annotated[Optional[str], typer.Option(help="cpu, cuda or auto (default: grader.yml)")] = None,
    seed: Annotated[Optional[int], typer.Option(help="hypothesis seed (default: per assignment and task)")] = None,
    executor: Annotated[str, typer.Option(help=EXECUTORS)] = LOCAL,
    address: Annotated[Optional[str], typer.Option(help="the Ray cluster's address, HOST:PORT")] = None,
) -> None:
    """Grade students' submissions over HTTP as they hand them in, into OUTPUT."""
    from .config import ConfigError
    from .service.serve import ServeOptions, prepare_service, run
    try:
        prepared = prepare_service(ServeOptions(assignment, output, tokens, host, port, jobs, config, device, seed,
                                                executor, address, exchange, course))
    except ConfigError as error:
        _usage_error(error)
    try:
        run(prepared)
    except KeyboardInterrupt:  # the signal uvicorn stopped for, raised again once everything ended
        raise typer.Exit(130) from None
    except Exception as error:  # noqa: BLE001 - the service's own failure, said once, here
        err.print(f"[red]grader failure:[/red] {escaped(f'{type(error).__name__}: {error}')}")
        raise typer.Exit(1) from None


def _usage_error(error: Exception) -> None:
    """A usage error: one line per mistake on stderr, exit 2."""
    for line in str(error).splitlines():
        err.print(f"[red]error:[/red] {escaped(line)}")
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
        err.print(f"[red]release failed:[/red] {escaped(str(error))}")
        raise typer.Exit(1) from None
    out.print(f"released {len(written)} files")


def main() -> None:
    carry_run_marker()  # first: the run's processes are found by it (autograder/executors/runmarker.py)
    try:
        app()
    except SystemExit as done:
        _exit_now(done.code)
    finally:
        # Exiting, the interpreter garbage-collects everything imported (torch, hypothesis,
        # nbformat): a second of CPU after the results are written, many seconds between
        # a Ctrl-C and the prompt on a busy machine. Collections skip frozen objects; they
        # are freed all the same.
        gc.freeze()


def _exit_now(code) -> None:
    """Leave as ``sys.exit(code)`` would, without the interpreter's teardown of every module
    it imported (torch's alone takes 0.4 s, after the results are written): the at-exit
    handlers run (temporary folders removed, child processes joined, logs flushed) and the
    streams are flushed first."""
    if code is not None and not isinstance(code, int):
        print(code, file=sys.stderr)
        code = 1
    atexit._run_exitfuncs()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code or 0)


if __name__ == "__main__":
    main()

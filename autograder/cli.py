"""``autograder grade PATH... --assignment NAME --output DIR`` (SPEC §3): a thin verb over
``pipeline``. Exit status: 0 the batch ran, 2 usage or grader.yml error, 1 grader failure."""
import contextlib
import os
import sys
import time
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

app = typer.Typer(add_completion=False, help="Autograder for the D2L attention unit.")
console = Console(stderr=True, soft_wrap=True)


@app.callback()
def main_callback() -> None:
    """Grade notebooks of the attention unit in a sandbox (see README)."""


@app.command()
def grade(
    paths: Annotated[list[Path], typer.Argument(help="notebooks, nbgrader submitted/ folders or course roots")],
    assignment: Annotated[str, typer.Option(help="assignment name, e.g. attention_scoring")],
    output: Annotated[Path, typer.Option(help="folder for <student_id>.json, grades.csv and feedback/")],
    jobs: Annotated[int, typer.Option(help="sandboxed workers in parallel (default: one per core)")] = 0,
    seed: Annotated[Optional[int], typer.Option(help="hypothesis seed for the whole run")] = None,
    force: Annotated[bool, typer.Option(help="re-grade even unchanged submissions")] = False,
    config: Annotated[Optional[Path], typer.Option(help="grader.yml to use instead of the repo's")] = None,
    device: Annotated[Optional[str], typer.Option(help="cpu, cuda or auto (default: grader.yml)")] = None,
) -> None:
    """Grade every submission found under PATHS and write the results to OUTPUT."""
    from .config import ConfigError, load_config
    try:
        import torch
        torch.set_num_threads(1)  # tiny ops are much slower with a thread pool here
        from .pipeline import Batch, find_submissions, run_batch
        cfg = load_config(config)
        spec = cfg.assignment(assignment)
        wanted = device or cfg.device
        if wanted not in ("auto", "cpu", "cuda"):
            raise ConfigError(f"--device {wanted!r}: use cpu, cuda or auto")
        run_on = "cuda" if wanted == "cuda" or (wanted == "auto" and torch.cuda.is_available()) else "cpu"
        submissions = find_submissions(paths, assignment, spec.notebook)
        if not submissions:
            raise ConfigError(f"no submissions found under {', '.join(map(str, paths))}")
        batch = Batch(cfg, assignment, output, run_on, seed, force)
    except ConfigError as error:
        console.print(f"[red]error:[/red] {error}", highlight=False)
        raise typer.Exit(2) from None
    started = time.monotonic()
    try:
        with _progress(len(submissions)) as on_done:
            results = run_batch(batch, submissions, jobs or os.cpu_count() or 1, on_done)
    except Exception as error:
        console.print(f"[red]grader failure:[/red] {type(error).__name__}: {error}", highlight=False)
        raise typer.Exit(1) from None
    _summary(results, list(spec.tasks), time.monotonic() - started)


@contextlib.contextmanager
def _progress(total: int):
    """A rich progress bar with ETA on a terminal; plain lines otherwise (CI, logs)."""
    if console.is_terminal:
        with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                      TimeRemainingColumn(), console=console) as bar:
            task = bar.add_task("grading", total=total)
            yield lambda result, cached: bar.update(task, advance=1, description=result["student_id"])
        return
    done, started = [0], time.monotonic()

    def on_done(result: dict, cached: bool) -> None:
        done[0] += 1
        eta = (time.monotonic() - started) / done[0] * (total - done[0])
        note = " (unchanged, reused)" if cached else ""
        console.print(f"[{done[0]}/{total}] {result['student_id']}: {result['score']:g}/{result['max_score']:g}"
                      f"{note}  eta {eta:.0f} s", highlight=False)
    yield on_done


def _summary(results: list[dict], task_ids: list[str], seconds: float) -> None:
    table = Table(title=f"{len(results)} submissions graded in {seconds:.1f} s")
    table.add_column("task")
    table.add_column("pass rate", justify="right")
    for task_id in task_ids:
        scored = [t for r in results for t in r["tasks"] if t["id"] == task_id and t["score"] is not None]
        rate = sum(t["score"] >= t["max_score"] for t in scored) / len(scored) if scored else None
        table.add_row(task_id, "manual" if rate is None else f"{rate:.0%}")
    console.print(table)
    mean = sum(r["score"] for r in results) / len(results) if results else 0.0
    with_errors = sum(bool(r["errors"]) for r in results)
    console.print(f"students: {len(results)}  mean score: {mean:.2f}  submissions with errors: {with_errors}")


def main() -> None:
    sys.exit(app())


if __name__ == "__main__":
    main()

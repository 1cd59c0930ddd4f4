"""``autograder show ID --output DIR``: one student's result on the console, for the TA.

The score per task and per check, the first line of each failed check's message (in the
folder's language, as the student reads it; a task not attempted yet in one line), the
warnings and errors, the notebook that was graded, and where the feedback pages are. Reads the
stored result only; grades nothing.
"""
import difflib
from pathlib import Path

from rich.console import Console
from rich.table import Table

from .config import ConfigError
from .console import escaped
from .files import spreadsheet_safe
from .submissions.ids import file_stem, given
from .outputs.manual_points import Tasks
from .outputs.store import OutputFolder
from .outputs.totals import Entered, Total, entered_in, total_line, total_of
from .texts import render


def show_result(student_id: str, folder: Path, console: Console) -> None:
    """Print ``student_id``'s result in ``folder``; ``ConfigError`` when there is none."""
    store = OutputFolder.existing(folder)
    result = store.load(given(student_id))   # as grades.csv writes it, as every reader of an id reads it
    if result is None:
        raise ConfigError(_unknown(student_id, folder, store))
    total = total_of(result, _entered(store, result))
    console.print(f"[bold]{escaped(result.student_id)}[/bold] · {escaped(result.assignment)} · "
                  f"{escaped(total_line(total, 'en'))}")
    if result.notebook:
        console.print(f"graded: {escaped(result.notebook)}")
    console.print(_checks_table(result, total))
    for kind, issues in (("error", result.errors), ("warning", result.warnings)):
        for issue in issues:
            task = f" ({issue.task})" if issue.task else ""
            console.print(f"{kind}{escaped(task)}: {escaped(issue.code)}: {escaped(issue.message)}")
    stem = file_stem(result.student_id)
    for page in (folder / "feedback" / f"{stem}.html", folder / "feedback" / f"{stem}.md"):
        if page.is_file():
            console.print(f"feedback: {escaped(str(page))}")


def _checks_table(result, total: Total) -> Table:
    table = Table(show_header=True, box=None, pad_edge=False)
    table.add_column("task / check")
    table.add_column("points", justify="right")
    table.add_column("what went wrong")
    for task in result.tasks:
        untouched = task.not_attempted
        table.add_row(f"[bold]{escaped(task.id)}[/bold]", _task_points(task, total),
                      "" if untouched is None else escaped(render(untouched, result.language)))
        for check in task.checks if untouched is None else []:
            mark = "[green]✔[/green]" if check.passed else "[red]✘[/red]"
            first = next((line.strip() for line in check.message.splitlines() if line.strip()), "")
            table.add_row(f"  {mark} {escaped(check.name)}", f"{check.score:g} / {check.max_score:g}",
                          "" if check.passed else escaped(first[:160]))
    return table


def _task_points(task, total: Total) -> str:
    """An autograded task's score; a written answer's points as entered by the TA, or that they
    are not entered yet."""
    if not task.manual:
        return f"{task.score:g} / {task.max_score:g}"
    if task.id in total.written:
        return f"{total.written[task.id]:g} / {task.max_score:g} (written answer, entered)"
    return f"– / {task.max_score:g} (written answer, not entered yet)"


def _unknown(student_id: str, folder: Path, store: OutputFolder) -> str:
    known = [result.student_id for result in store.load_all()]
    close = [sid for sid in known if sid.casefold() == student_id.casefold()] or \
        difflib.get_close_matches(student_id, known, n=3)
    hint = f"; did you mean {' or '.join(map(_typed, close))}?" if close else (
        f"; it has {len(known)} results (grades.csv lists them)" if known else "; it has no results yet")
    return f"no result of {student_id!r} in {folder}{hint}"


def _typed(student_id: str) -> str:
    """The id as it is typed on the command line: as grades.csv writes it, and one that starts
    with ``-`` after ``--``."""
    written = spreadsheet_safe(student_id)
    if written.startswith("-"):
        return f"{written!r} (type it last, after --: autograder show --output DIR -- {written})"
    return repr(written)


def _entered(store: OutputFolder, result) -> Entered:
    """The written answers' points entered for the folder (its gradebook, manual_points.csv)."""
    return entered_in(store.path, store.assignment, Tasks.of_results([result]))

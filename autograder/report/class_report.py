"""The TA's class report: ``DIR/report.html`` and ``DIR/report.md``.

What a lecturer reads before the next lecture: how the scores spread (autograded, and the
written answers once entered), which tasks and checks the class passed, which known mistakes
it made and who made them, the failures no known mistake explains that students share, which
solutions are alike, whose submission had errors (with the crashed cell's source and
traceback), and where the grading time went. The numbers come from ``class_stats``; this
module only lays them out, and writes the two tables beside the report: ``similarity.csv``
(``task,student_a,student_b,similarity``) and ``unexplained.csv`` (``task,check,group,student_id``).
"""
from pathlib import Path

from .. import texts
from ..course import COURSE, Course
from ..files import csv_text
from ..results import SubmissionResult, text
from ..outputs.totals import total_line
from .similarity import Pair, discounted_code, kept_cells, similar_pairs
from . import class_markdown, class_sections
from .class_markdown import SIMILARITY_CSV, UNEXPLAINED_CSV, phases_text, summary_texts
from .class_stats import ClassStats, Rate, bin_width, by_task, summarise
from ..pages.markup import bar, code_block, document, esc, ident, image, number, say, table, write_atomically
from ..pages.student import check_title, issue_line, mistake_name

VISIBLE_TIMINGS = 10  # the slowest submissions shown; the others fold away
TIMING_WIDTHS = (26, 13, 31, 17, 13)


def write_class_report(results: list[SubmissionResult], folder: Path, language: str,
                       task_checks: dict[str, list[str]], entered: dict[str, dict[str, float]] | None = None,
                       course: Course = COURSE) -> tuple[Path, Path]:
    """Write ``folder/report.html``, ``report.md``, ``similarity.csv`` and ``unexplained.csv``
    for ``results`` (every result of the folder); ``task_checks`` is grader.yml's tasks with
    their check names, in order (manual: []); ``entered`` the written answers' points known
    (student -> task -> points). The solution cells compared are those kept in ``folder``."""
    stats = summarise(results, task_checks, entered, _similar_of(results, folder, course))
    html_path, markdown_path = folder / "report.html", folder / "report.md"
    write_atomically(html_path, report_html(stats, language))
    write_atomically(markdown_path, class_markdown.report_markdown(stats, language))
    write_atomically(folder / SIMILARITY_CSV, csv_text(
        ["task", "student_a", "student_b", "similarity"],
        ([p.task, p.student_a, p.student_b, p.similarity] for p in stats.similar)))
    write_atomically(folder / UNEXPLAINED_CSV, csv_text(
        ["task", "check", "group", "student_id"],
        ([g.task, g.check, g.number, student] for g in stats.unexplained for student in g.students)))
    return html_path, markdown_path


def write_class_report_of(job: dict) -> tuple[Path, Path]:
    """``write_class_report`` of a job as JSON data (``report_job`` makes one): how a process of
    its own draws the report of results it did not grade (the service's, SPEC §3)."""
    results = [SubmissionResult.model_validate(data) for data in job["results"]]
    return write_class_report(results, Path(job["folder"]), job["language"], job["task_checks"], job["entered"])


def report_job(results: list[SubmissionResult], folder: Path, language: str, task_checks: dict[str, list[str]],
               entered: dict[str, dict[str, float]]) -> dict:
    """What ``write_class_report_of`` needs, as JSON data."""
    return {"results": [r.model_dump(mode="json", exclude={"solutions"}) for r in results],
            "folder": str(folder), "language": language, "task_checks": task_checks, "entered": entered}


def _similar_of(results: list[SubmissionResult], folder: Path, course: Course) -> tuple[list[Pair], list[str]]:
    """The similar pairs among the cells kept in ``folder``, and who had none to compare."""
    if not results:
        return [], []
    cells = kept_cells(folder, [r.student_id for r in results])
    not_compared = sorted(r.student_id for r in results if not cells.get(r.student_id) and not r.errors)
    return similar_pairs(cells, discounted_code(course, results[0].assignment)), not_compared


def report_html(stats: ClassStats, language: str) -> str:
    title = texts.render(text("page.report.title", assignment=stats.assignment), language)
    if not stats.students:
        return document(title, f"<h1>{esc(title)}</h1><p>{say(text('page.report.empty'), language)}</p>",
                        language)
    # The class's mistakes right after the task summary: what a lecturer reads first.
    parts = [f"<h1>{esc(title)}</h1>", _scores(stats, language), _tasks(stats, language),
             _mistakes(stats, language), class_sections.unexplained(stats, language),
             class_sections.similar(stats, language),
             _checks(stats, language), _errors(stats, language), _warnings(stats, language),
             _timing(stats, language), _slow_checks(stats, language)]
    return document(title, "".join(parts), language)


def _h2(label: str, language: str) -> str:
    return f"<h2>{say(text(label), language)}</h2>"


def _share(rate: Rate, language: str) -> str:
    percent = number(round(100 * rate.share), language)
    return f"{rate.passed} / {rate.total} ({percent} %){bar(rate.share)}"


def _scores(stats: ClassStats, language: str) -> str:
    labels = (texts.render(text("page.report.hist_x", max=number(stats.autograded_max, language)), language),
              texts.render(text("page.report.hist_y"), language))
    mean = texts.render(text("page.report.mean", mean=number(stats.mean, language)), language)
    from ..pages import figures  # matplotlib on first use (a run imports it while its slots grade)
    png = figures.score_histogram(stats.scores, stats.autograded_max, bin_width(stats.autograded_max),
                                  labels, mean)
    alt = texts.render(text("page.report.distribution"), language)
    summary = "".join(f"<p>{esc(line)}</p>" for line in summary_texts(stats, language))
    return f"{summary}{_h2('page.report.distribution', language)}<figure>{image(png, alt)}</figure>"


def _tasks(stats: ClassStats, language: str) -> str:
    rows = [[ident(rate.task), _share(rate, language),
             f"{number(rate.mean_score, language)} / {number(rate.max_score, language)}"]
            for rate in stats.task_rates]
    rows += [[f"{ident(w.task)}<br><small>{say(text('page.report.written'), language)}</small>",
              say(text("page.report.entered", entered=w.entered, count=w.total), language),
              f"{number(w.mean_score, language)} / {number(w.max_score, language)}"] for w in stats.written]
    headers = [say(text("term.task"), language), say(text("page.report.full_marks"), language),
               say(text("page.report.mean_score"), language)]
    explain = say(text("page.report.pass_rate_explained", count=stats.students), language)
    return (f"{_h2('page.report.tasks', language)}<p class=\"explain\">{explain}</p>"
            f"{table(headers, rows, (38, 37, 25))}{_grades(stats, language)}")


def _grades(stats: ClassStats, language: str) -> str:
    """Every student's grade, autograded and written, folded away (grades.csv has the numbers)."""
    rows = [[ident(t.student_id), esc(total_line(t, language))] for t in stats.totals]
    headers = [say(text("page.student"), language), say(text("page.report.grade"), language)]
    more = say(text("page.report.all_grades", count=len(rows)), language)
    return f"<details><summary>{more}</summary>{table(headers, rows, (30, 70))}</details>"


def _checks(stats: ClassStats, language: str) -> str:
    parts = [_h2("page.report.checks", language)]
    headers = [say(text("term.check"), language), say(text("term.pass_rate"), language)]
    for task in dict.fromkeys(rate.task for rate in stats.check_rates):
        rows = [[check_title(rate.check, language), _share(rate, language)]
                for rate in stats.check_rates if rate.task == task]
        parts.append(f"<h3>{ident(task)}</h3>{table(headers, rows, (62, 38))}")
    return "".join(parts)


def _mistakes(stats: ClassStats, language: str) -> str:
    head = _h2("page.report.mistakes", language)
    explain = f'<p class="explain">{say(text("page.report.mistakes_explained"), language)}</p>'
    undiagnosed = f"<p>{say(text('page.report.undiagnosed', count=stats.undiagnosed), language)}</p>"
    if stats.not_attempted:
        undiagnosed += f"<p>{say(text('page.report.not_attempted', count=stats.not_attempted), language)}</p>"
    if not stats.mistakes:
        return f"{head}<p>{say(text('page.report.no_mistakes'), language)}</p>{undiagnosed}"
    rows = []
    for entry in stats.mistakes:
        places = "; ".join(f"{ident(task)}: {', '.join(check_title(c, language) for c in checks)}"
                           for task, checks in by_task(entry.places).items())
        students = ", ".join(ident(s) for s in sorted(entry.students))
        rows.append([f"{mistake_name(entry.mistake, language)}<br><small>{places}</small>",
                     str(len(entry.students)), students])
    headers = [say(text("page.report.mistake"), language), say(text("page.report.count"), language),
               say(text("page.report.students"), language)]
    return f"{head}{explain}{table(headers, rows, (47, 17, 36), numeric={1})}{undiagnosed}"


def _errors(stats: ClassStats, language: str) -> str:
    head = _h2("page.report.errors", language)
    if not stats.with_errors:
        return f"{head}<p>{say(text('page.report.no_errors'), language)}</p>"
    parts = [head]
    detail_label = say(text("page.report.detail"), language)
    for result in stats.with_errors:
        items = []
        for issue in result.errors:
            detail = (f"<details open><summary>{detail_label}</summary>{code_block(issue.detail)}</details>"
                      if issue.detail else "")
            items.append(f"<li>{issue_line(issue, language)}{detail}</li>")
        parts.append(f'<h3>{ident(result.student_id)}</h3><ul class="issues">{"".join(items)}</ul>')
    return "".join(parts)


def _warnings(stats: ClassStats, language: str) -> str:
    """Each distinct warning once, with the students who got it (a common one, such as the
    book's in-place masked_softmax, would otherwise fill the page)."""
    if not stats.with_warnings:
        return ""
    who: dict[str, list[str]] = {}
    for result in stats.with_warnings:
        for issue in result.warnings:
            who.setdefault(issue_line(issue, language), []).append(result.student_id)
    label = say(text("page.report.who"), language)
    items = "".join(f"<li>{line}<br><small>{label}: {', '.join(ident(s) for s in students)}</small></li>"
                    for line, students in who.items())
    return f'{_h2("feedback.warnings", language)}<ul class="issues">{items}</ul>'


def _timing(stats: ClassStats, language: str) -> str:
    rows = [[ident(t.student), number(t.total, language), esc(phases_text(t.phases, language)),
             f"{number(t.requests, language)}; {number(t.worker_s, language)}", number(t.peak_mb, language)]
            for t in stats.timings]
    headers = [say(text("page.student"), language), say(text("page.report.total_s"), language),
               say(text("page.report.phases_s"), language), say(text("page.report.worker"), language),
               say(text("page.report.peak_mb"), language)]
    explain = say(text("page.report.timing_explained"), language)
    shown = table(headers, rows[:VISIBLE_TIMINGS], TIMING_WIDTHS, numeric={1, 3, 4})
    if len(rows) > VISIBLE_TIMINGS:
        more = say(text("page.report.more_students", count=len(rows) - VISIBLE_TIMINGS), language)
        shown += (f"<details><summary>{more}</summary>"
                  f"{table(headers, rows[VISIBLE_TIMINGS:], TIMING_WIDTHS, numeric={1, 3, 4})}</details>")
    return f"{_h2('page.report.timing', language)}<p class=\"explain\">{explain}</p>{shown}"


def _slow_checks(stats: ClassStats, language: str) -> str:
    rows = [[f"{ident(c.task)}: {check_title(c.check, language)}", number(c.mean_s, language),
             f"{number(c.max_s, language)} ({ident(c.slowest_student)})"] for c in stats.slow_checks]
    headers = [say(text("term.check"), language), say(text("page.report.mean_s"), language),
               say(text("page.report.slowest_for"), language)]
    return f"{_h2('page.report.slowest', language)}{table(headers, rows, (52, 18, 30), numeric={1})}"

"""The class report as Markdown (``DIR/report.md``): the HTML report's content in text, for a
terminal, an e-mail or a repository. Student text is escaped (a student id can hold ``|`` or
backticks), and the score distribution is drawn in characters.
"""
import math
from statistics import mean

from .. import texts
from ..files import visible
from ..feedback.escape import code, fenced, md
from ..results import Finding, text
from .class_stats import ClassStats, Rate, bin_width, by_task
from .similarity import FLAG
from ..outputs.totals import total_line
from ..pages.markup import number

SIMILARITY_CSV, UNEXPLAINED_CSV = "similarity.csv", "unexplained.csv"
LISTED_PAIRS = 50  # pairs of a task listed at most (similarity.csv has them all)

HISTOGRAM_WIDTH = 30


def _say(text_id: str, language: str, **params) -> str:
    return md(texts.render(text(text_id, **params), language))


def _catalogued(text_id: str, fallback: str, language: str) -> str:
    if text_id in texts.CATALOGUE:
        return md(texts.render(text(text_id), language))
    return code(fallback)


def _table(headers: list[str], rows: list[list[str]]) -> list[str]:
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    return lines + ["| " + " | ".join(row) + " |" for row in rows] + [""]


def _share(rate: Rate) -> str:
    return f"{rate.passed} / {rate.total} ({round(100 * rate.share)} %)"


def summary_texts(stats: ClassStats, language: str) -> list[str]:
    """The report's opening sentences (the HTML report's too), as plain text."""
    full = sum(1 for s in stats.scores if s >= stats.autograded_max > 0)
    lines = [text("page.report.summary", count=stats.students,
                  mean=number(stats.mean, language), median=number(stats.median, language),
                  max=number(stats.autograded_max, language), full=full,
                  zero=sum(1 for s in stats.scores if s == 0))]
    entered = [t for t in stats.totals if t.manual is not None and t.manual_tasks]
    if stats.manual_tasks and entered:
        lines.append(text("page.report.written_entered", tasks=", ".join(stats.manual_tasks), entered=len(entered),
                          count=stats.students, mean=number(mean(t.manual for t in entered), language),
                          max=number(stats.manual_max, language),
                          total_mean=number(mean(t.score for t in entered), language),
                          total_max=number(stats.autograded_max + stats.manual_max, language)))
    elif stats.manual_tasks:
        lines.append(text("page.report.manual_pending", tasks=", ".join(stats.manual_tasks),
                          max=number(stats.manual_max, language)))
    return [texts.render(line, language) for line in lines]


def phases_text(phases: dict[str, float], language: str) -> str:
    """``reading 0.1; cells 2.2; checks 3.4`` (``;``: Russian writes 1,2), each phase named in
    ``language`` (a phase the catalogue does not name keeps the pipeline's name)."""
    return "; ".join(f"{_phase(name, language)} {number(seconds, language)}" for name, seconds in phases.items())


def _phase(name: str, language: str) -> str:
    return texts.render(text(f"phase.{name}"), language) if f"phase.{name}" in texts.CATALOGUE else name


def histogram(scores: list[float], maximum: float) -> list[str]:
    """The score distribution as bars of characters, one line per bin (the HTML plot's bins):
    ``from–to`` includes ``from`` and excludes ``to``, but the last bin holds full marks."""
    width = bin_width(maximum)
    bins = max(1, math.ceil(maximum / width))
    counts = [0] * bins
    for score in scores:
        counts[min(bins - 1, max(0, int(score / width)))] += 1
    top = max(counts) or 1
    return [f"{i * width:6g}–{(i + 1) * width:<6g} {'█' * round(HISTOGRAM_WIDTH * n / top):<{HISTOGRAM_WIDTH}} {n}"
            for i, n in enumerate(counts)]


def report_markdown(stats: ClassStats, language: str) -> str:
    title = _say("page.report.title", language, assignment=stats.assignment)
    lines = [f"# {title}", ""]
    if not stats.students:
        return "\n".join(lines + [_say("page.report.empty", language), ""])
    lines += [md(line) + "\n" for line in summary_texts(stats, language)]
    lines += [f"## {_say('page.report.distribution', language)}", "",
              *fenced("\n".join(histogram(stats.scores, stats.autograded_max))), ""]
    lines += _tasks(stats, language) + _mistakes(stats, language) + _unexplained(stats, language)
    lines += _similar(stats, language) + _checks(stats, language)
    lines += _errors(stats, language)
    lines += _warnings(stats, language)
    lines += _timing(stats, language)
    rows = [[f"{code(c.task)}: {_check(c.check, language)}", number(c.mean_s, language),
             f"{number(c.max_s, language)} ({code(c.slowest_student)})"] for c in stats.slow_checks]
    lines += [f"## {_say('page.report.slowest', language)}", "",
              *_table([_say("term.check", language), _say("page.report.mean_s", language),
                       _say("page.report.slowest_for", language)], rows)]
    return "\n".join(lines)


def _timing(stats: ClassStats, language: str) -> list[str]:
    rows = [[code(t.student), number(t.total, language), md(phases_text(t.phases, language)),
             f"{number(t.requests, language)}; {number(t.worker_s, language)}", number(t.peak_mb, language)]
            for t in stats.timings]
    headers = [_say(label, language) for label in ("page.student", "page.report.total_s", "page.report.phases_s",
                                                   "page.report.worker", "page.report.peak_mb")]
    return [f"## {_say('page.report.timing', language)}", "", _say("page.report.timing_explained", language), "",
            *_table(headers, rows)]


def _check(name: str, language: str) -> str:
    return _catalogued(f"title.{name}", name, language)


def _tasks(stats: ClassStats, language: str) -> list[str]:
    lines = [f"## {_say('page.report.tasks', language)}", "",
             _say("page.report.pass_rate_explained", language, count=stats.students), ""]
    rows = [[code(r.task), _share(r), f"{number(r.mean_score, language)} / {number(r.max_score, language)}"]
            for r in stats.task_rates]
    rows += [[f"{code(w.task)} ({_say('page.report.written', language)})",
              _say("page.report.entered", language, entered=w.entered, count=w.total),
              f"{number(w.mean_score, language)} / {number(w.max_score, language)}"] for w in stats.written]
    grades = [[code(t.student_id), md(total_line(t, language))] for t in stats.totals]
    return (lines + _table([_say("term.task", language), _say("page.report.full_marks", language),
                            _say("page.report.mean_score", language)], rows)
            + [f"### {_say('page.report.grade', language)}", ""]
            + _table([_say("page.student", language), _say("page.report.grade", language)], grades))


def _checks(stats: ClassStats, language: str) -> list[str]:
    rows = [[code(r.task), _check(r.check, language), _share(r)] for r in stats.check_rates]
    return [f"## {_say('page.report.checks', language)}", "",
            *_table([_say("term.task", language), _say("term.check", language),
                     _say("term.pass_rate", language)], rows)]


def _mistakes(stats: ClassStats, language: str) -> list[str]:
    lines = [f"## {_say('page.report.mistakes', language)}", "",
             _say("page.report.mistakes_explained", language), ""]
    if stats.mistakes:
        rows = [[_catalogued(f"mistake.{m.mistake}", m.mistake, language), str(len(m.students)),
                 ", ".join(code(s) for s in sorted(m.students)),
                 "; ".join(f"{code(task)}: {', '.join(_check(c, language) for c in checks)}"
                           for task, checks in by_task(m.places).items())]
                for m in stats.mistakes]
        lines += _table([_say("page.report.mistake", language), _say("page.report.count", language),
                         _say("page.report.students", language), _say("page.report.named_in", language)], rows)
    else:
        lines += [_say("page.report.no_mistakes", language), ""]
    lines += [_say("page.report.undiagnosed", language, count=stats.undiagnosed), ""]
    if stats.not_attempted:
        lines += [_say("page.report.not_attempted", language, count=stats.not_attempted), ""]
    return lines


def _errors(stats: ClassStats, language: str) -> list[str]:
    lines = [f"## {_say('page.report.errors', language)}", ""]
    if not stats.with_errors:
        return lines + [_say("page.report.no_errors", language), ""]
    for result in stats.with_errors:
        lines += [f"### {code(result.student_id)}", ""]
        for issue in result.errors:
            lines += [f"- {_issue(issue, language)}", ""]
            if issue.detail:
                lines += ["  " + line for line in fenced(issue.detail)] + [""]
    return lines


def _warnings(stats: ClassStats, language: str) -> list[str]:
    """Each distinct warning once, with the students who got it."""
    if not stats.with_warnings:
        return []
    who: dict[str, list[str]] = {}
    for result in stats.with_warnings:
        for issue in result.warnings:
            who.setdefault(_issue(issue, language), []).append(code(result.student_id))
    lines = [f"## {_say('feedback.warnings', language)}", ""]
    return lines + [f"- {line} — {', '.join(students)}" for line, students in who.items()] + [""]


def _issue(issue, language: str) -> str:
    task = f" ({code(issue.task)})" if issue.task else ""
    message = texts.render(issue.text, language) if issue.text is not None else issue.message
    return f"{code(issue.code)}{task}: {md(message)}"


def _unexplained(stats: ClassStats, language: str) -> list[str]:
    lines = [f"## {_say('page.report.unexplained', language)}", "",
             _say("page.report.unexplained_explained", language, file=UNEXPLAINED_CSV), ""]
    if not stats.unexplained:
        return lines + [_say("page.report.no_unexplained", language), ""]
    place = None
    for group in (g for g in stats.unexplained if len(g.students) > 1):
        if (group.task, group.check) != place:
            place = (group.task, group.check)
            lines += [f"### {code(group.task)}: {_check(group.check, language)}", ""]
        size = _say("page.report.group_size", language, count=len(group.students))
        lines += [f"#### {_say('page.report.group', language, number=group.number)} · {size}", "",
                  ", ".join(code(s) for s in group.students), ""]
        lines += _example(group.finding, language) if group.finding is not None else fenced(group.message) + [""]
    single = [[f"{code(g.task)}: {_check(g.check, language)}", str(g.number), code(g.students[0])]
              for g in stats.unexplained if len(g.students) == 1]
    if single:
        lines += [_say("page.report.single_groups", language, count=len(single)), "",
                  *_table([_say("term.check", language), _say("page.report.group", language, number="").strip(),
                           _say("page.student", language)], single)]
    return lines


def _example(finding: Finding, language: str) -> list[str]:
    lines = [md(texts.render(finding.problem, language)), ""]
    if finding.case_code:
        lines += [f"{_say('feedback.input', language)}:", "", *fenced(finding.case_code), ""]
    for label, value in (("feedback.expected", finding.expected), ("feedback.got", finding.got)):
        if value is not None:
            shown = fenced(value) if isinstance(value, str) else [md(texts.render(value, language))]
            lines += [f"{_say(label, language)}:", "", *shown, ""]
    return lines


def _similar(stats: ClassStats, language: str) -> list[str]:
    lines = [f"## {_say('page.report.similar', language)}", "",
             _say("page.report.similar_explained", language, flag=number(FLAG, language), file=SIMILARITY_CSV), ""]
    if not stats.similar:
        lines += [_say("page.report.no_similar", language), ""]
    rows = [[code(p.task), f"{code(p.student_a)} · {code(p.student_b)}", number(p.similarity, language)]
            for p in listed(stats.similar)]
    if rows:
        lines += _table([_say("term.task", language), _say("page.report.pair", language),
                         _say("page.report.similarity", language)], rows)
    if stats.not_compared:
        lines += [_say("page.report.not_compared", language, count=len(stats.not_compared),
                       students=", ".join(map(visible, stats.not_compared))), ""]
    return lines


def listed(pairs: list) -> list:
    """The first LISTED_PAIRS pairs of each task (the others are in similarity.csv)."""
    seen: dict[str, int] = {}
    kept = []
    for pair in pairs:
        seen[pair.task] = seen.get(pair.task, 0) + 1
        if seen[pair.task] <= LISTED_PAIRS:
            kept.append(pair)
    return kept

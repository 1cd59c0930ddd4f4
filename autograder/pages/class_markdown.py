"""The class report as Markdown (``DIR/report.md``): the HTML report's content in text, for a
terminal, an e-mail or a repository. Student text is escaped (a student id can hold ``|`` or
backticks), and the score distribution is drawn in characters.
"""
import math

from .. import texts
from ..markdown import code, fenced, md
from ..results import text
from .class_stats import ClassStats, Rate, bin_width, by_task
from .markup import number

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
    if stats.manual_tasks:
        lines.append(text("page.report.manual_pending", tasks=", ".join(stats.manual_tasks),
                          max=number(stats.manual_max, language)))
    return [texts.render(line, language) for line in lines]


def phases_text(phases: dict[str, float], language: str) -> str:
    """``setup 1.2; checks 3.4`` (``;``: Russian writes 1,2): phase names are the pipeline's."""
    return "; ".join(f"{name} {number(seconds, language)}" for name, seconds in phases.items())


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
    lines += _tasks(stats, language) + _mistakes(stats, language) + _checks(stats, language)
    lines += _errors(stats, language)
    lines += _warnings(stats, language)
    rows = [[code(t.student), number(t.total, language), md(phases_text(t.phases, language))]
            for t in stats.timings]
    lines += [f"## {_say('page.report.timing', language)}", "", _say("page.report.timing_explained", language), "",
              *_table([_say("page.student", language), _say("page.report.total_s", language),
                       _say("page.report.phases_s", language)], rows)]
    rows = [[f"{code(c.task)}: {_check(c.check, language)}", number(c.mean_s, language),
             f"{number(c.max_s, language)} ({code(c.slowest_student)})"] for c in stats.slow_checks]
    lines += [f"## {_say('page.report.slowest', language)}", "",
              *_table([_say("term.check", language), _say("page.report.mean_s", language),
                       _say("page.report.slowest_for", language)], rows)]
    return "\n".join(lines)


def _check(name: str, language: str) -> str:
    return _catalogued(f"title.{name}", name, language)


def _tasks(stats: ClassStats, language: str) -> list[str]:
    lines = [f"## {_say('page.report.tasks', language)}", "",
             _say("page.report.pass_rate_explained", language, count=stats.students), ""]
    rows = [[code(r.task), _share(r), f"{number(r.mean_score, language)} / {number(r.max_score, language)}"]
            for r in stats.task_rates]
    return lines + _table([_say("term.task", language), _say("page.report.full_marks", language),
                           _say("page.report.mean_score", language)], rows)


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
    return lines + [_say("page.report.undiagnosed", language, count=stats.undiagnosed), ""]


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

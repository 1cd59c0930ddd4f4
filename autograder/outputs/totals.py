"""A student's grade in one place: the autograded points, the written answers' points where
the TA has entered them, and the total; and the class's means of them.

One view, many writers (STYLE §16): the console summary, the class report and
``autograder export`` take their numbers and their words from here. The result's own
``score`` (SPEC §3) stays the autograded sum; a written answer counts once its points are
entered (formgrader in an nbgrader course, else ``manual_points.csv``), and a total with a
written answer not yet entered says so.
"""
from dataclasses import dataclass
from statistics import mean

from .. import texts
from ..files import clean_text
from ..results import SubmissionResult, text
from ..texts import number


@dataclass(frozen=True)
class Total:
    student_id: str
    autograded: float
    autograded_max: float
    manual: float | None            # the written answers' points once all are entered, else None
    manual_max: float
    manual_tasks: tuple[str, ...] = ()

    @property
    def score(self) -> float:
        """Autograded plus the written answers' points; the autograded part alone while those
        are not entered."""
        return round(self.autograded + (self.manual or 0.0), 6)

    @property
    def max_score(self) -> float:
        return self.autograded_max + self.manual_max


def total_of(result: SubmissionResult, entered: dict[str, dict[str, float]]) -> Total:
    """``result``'s total with ``entered`` (student id -> written task -> points)."""
    if not result.tasks:  # nothing was split into tasks: the result's own score and maximum
        return Total(result.student_id, result.score, result.max_score, 0.0, 0.0)
    written = tuple(task.id for task in result.tasks if task.manual)
    points = entered.get(clean_text(result.student_id), {})
    known = [points.get(task) for task in written]
    manual = None if any(p is None for p in known) else float(sum(known))
    return Total(result.student_id, result.autograded_score, result.autograded_max, manual,
                 result.manual_max, written)


def total_line(total: Total, language: str) -> str:
    """"autograded 11 / 13, written answers 2 / 2 entered, 13 / 15" (or "not entered yet")."""
    numbers = {"auto": number(total.autograded, language), "auto_max": number(total.autograded_max, language),
               "manual_max": number(total.manual_max, language), "score": number(total.score, language),
               "max": number(total.max_score, language)}
    if not total.manual_max:
        return texts.render(text("grades.total_autograded", auto=numbers["auto"], auto_max=numbers["auto_max"]),
                            language)
    if total.manual is None:
        return texts.render(text("grades.total_pending", **numbers), language)
    return texts.render(text("grades.total", manual=number(total.manual, language), **numbers), language)


def class_lines(totals: list[Total], language: str) -> list[str]:
    """The class's mean autograded score, then what is known of the written answers."""
    if not totals:
        return []
    first = max(totals, key=lambda t: len(t.manual_tasks))
    lines = [texts.render(text("grades.class_autograded", mean=number(mean(t.autograded for t in totals), language),
                               max=number(first.autograded_max, language)), language)]
    if not first.manual_tasks:
        return lines
    tasks = ", ".join(first.manual_tasks)
    entered = [t for t in totals if t.manual is not None and t.manual_tasks]
    if not entered:
        return lines + [texts.render(text("grades.class_pending", tasks=tasks,
                                          max=number(first.manual_max, language)), language)]
    return lines + [texts.render(text(
        "grades.class_entered", tasks=tasks, entered=len(entered), count=len(totals),
        mean=number(mean(t.manual for t in entered), language), max=number(first.manual_max, language),
        total_mean=number(mean(t.score for t in entered), language),
        total_max=number(first.max_score, language)), language)]

"""A student's grade in one place: the autograded points, the written answers' points where
the TA has entered them, and the total; and the class's means of them.

One view, many writers (STYLE §16): grades.csv, ``show``, ``export``, the console summary, the
class report and the service take their numbers and their words from here: ``entered_in``
reads the written answers' points known for a results folder (the nbgrader gradebook it was
recorded into, with manual_points.csv over it), and ``total_of`` makes a student's total.
The result's own ``score`` stays the autograded sum; a total is what the student has so far
(SPEC §3): the autograded points plus each written answer's points once they are entered
(formgrader in an nbgrader course, else ``manual_points.csv``), and a total with a written
answer not yet entered says so.
"""
from dataclasses import dataclass, field
from pathlib import Path
from statistics import mean

from .. import texts
from ..files import clean_text
from ..gradebook import recorded_points
from ..results import SubmissionResult, text
from ..submissions.ids import student_id
from ..texts import number
from .manual_points import ManualPoints, Tasks, read_manual_points

Entered = dict[str, dict[str, float]]   # student id -> written task -> points


@dataclass(frozen=True)
class Total:
    student_id: str
    autograded: float
    autograded_max: float
    manual: float | None            # the written answers' points once all are entered, else None
    manual_max: float
    manual_tasks: tuple[str, ...] = ()
    written: dict[str, float] = field(default_factory=dict)   # the written tasks' points entered so far

    @property
    def score(self) -> float:
        """What the student has so far: the autograded points plus the written answers' points
        entered (all of them, some, or none yet)."""
        return round(self.autograded + (self.entered or 0.0), 6)

    @property
    def entered(self) -> float | None:
        """The written answers' points entered so far (None while none is entered)."""
        return float(sum(self.written.values())) if self.written else None

    @property
    def max_score(self) -> float:
        return self.autograded_max + self.manual_max


def entered_in(folder: Path, assignment: str, tasks: Tasks, manual: ManualPoints | None = None) -> Entered:
    """Every written answer's points known for ``folder``'s results: the gradebook's, its
    students' folder names read into ids by the one rule a folder's name is read by
    (``ids.student_id``: ``a\b`` and a folder literally named ``a\\b`` stay two students),
    with manual_points.csv (``manual``, when read already) over them where both hold a
    student's task. ``ManualPointsError`` or ``CourseError`` when either cannot be read."""
    manual = manual if manual is not None else read_manual_points(folder, tasks)
    merged = {student_id(student): dict(points)
              for student, points in recorded_points(folder, assignment, list(tasks.manual)).items()}
    for student, points in manual.points.items():
        merged.setdefault(student, {}).update(points)
    return merged


def total_of(result: SubmissionResult, entered: Entered) -> Total:
    """``result``'s total with ``entered`` (student id -> written task -> points)."""
    points = entered.get(clean_text(result.student_id), {})
    if not result.tasks:  # nothing was split into tasks: the result's own score and maximum
        return Total(result.student_id, result.score, result.max_score, 0.0, 0.0, (), dict(points))
    written = tuple(task.id for task in result.tasks if task.manual)
    known = [points.get(task) for task in written]
    manual = None if any(p is None for p in known) else float(sum(known))
    return Total(result.student_id, result.autograded_score, result.autograded_max, manual,
                 result.manual_max, written, {task: points[task] for task in written if task in points})


def total_line(total: Total, language: str) -> str:
    """"autograded 11 / 13, written answers 2 / 2 entered, 13 / 15" (or "not entered yet")."""
    numbers = {"auto": number(total.autograded, language), "auto_max": number(total.autograded_max, language),
               "manual_max": number(total.manual_max, language), "score": number(total.score, language),
               "max": number(total.max_score, language)}
    if not total.manual_max:
        return texts.render(text("grades.total_autograded", auto=numbers["auto"], auto_max=numbers["auto_max"]),
                            language)
    if total.manual is None and total.entered is not None:  # some written answers entered, not all
        return texts.render(text("grades.total_partial", manual=number(total.entered, language), **numbers),
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

"""The written answers' points of an nbgrader course that a results folder was recorded into.

``autograder grade`` on an nbgrader course leaves ``DIR/.nbgrader-course`` (the course root),
so that ``autograder export DIR`` and the class report read the TA's formgrader points from
that course's gradebook later, through nbgrader's own API, without being told where it is.
"""
from collections.abc import Iterable
from pathlib import Path

from .where import CourseError

MARKER = ".nbgrader-course"


def remember_course(folder: Path, root: Path) -> None:
    (folder / MARKER).write_text(str(root.resolve()) + "\n", encoding="utf-8")


def has_gradebook(folder: Path) -> bool:
    """Whether ``folder``'s results were recorded into an nbgrader course (whose formgrader is
    where the TA grades the written answers)."""
    return (folder / MARKER).is_file()


def recorded_points(folder: Path, assignment: str, tasks: Iterable[str]) -> dict[str, dict[str, float]]:
    """Points per student and written task from the gradebook ``folder`` was recorded into
    ({} when it was recorded into none); CourseError when that course cannot be read."""
    marker = folder / MARKER
    if not marker.is_file():
        return {}
    root = Path(marker.read_text(encoding="utf-8").strip())
    hint = f"move it back, or delete {marker} to go on without its written answers' points"
    if not (root / "nbgrader_config.py").is_file() and not (root / "gradebook.db").is_file():
        raise CourseError(f"{marker}: the results were recorded into the nbgrader course {root}, "
                          f"which is not there any more; {hint}")
    from .nbgrader_course import NbgraderCourse  # nbgrader's import takes seconds: only for a course
    try:
        return NbgraderCourse(root).manual_scores(assignment, tasks)
    except CourseError as error:
        raise CourseError(f"{error} ({hint})") from None

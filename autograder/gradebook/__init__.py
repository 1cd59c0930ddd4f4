"""``autograder grade`` on an nbgrader course stands in for ``nbgrader autograde`` (SPEC §4).

For each graded submission, ``NbgraderCourse.record`` runs nbgrader's own ``Autograde``
converter, with the course's ``nbgrader_config.py``, on ``submitted/<student>/<assignment>/``:
first its sanitizing steps (clear the outputs; restore locked cells, test cells and points
from the gradebook), preceded by ``RestoreCellRoles`` (every cell's nbgrader role comes from
the gradebook, so a forged or duplicated cell cannot make nbgrader fail for that student);
then its autograding steps with one step swapped. nbgrader's ``Execute`` would run the
student's code and the hidden tests in an unsandboxed kernel; ``WriteAutograderOutputs``
instead writes into each ``<task>_tests`` cell what the sandboxed autograder found: the
task's report as printed text and its score as the cell's value (nbgrader's partial
credit). nbgrader's ``SaveAutoGrades`` then stores the grades exactly as it would after
executing, so the gradebook and ``autograded/`` hold what ``nbgrader autograde`` would have
left (students, submissions with their ``timestamp.txt``, late penalties, written answers
scored 0 when untouched and left for formgrader otherwise), and formgrader, ``export``,
``generate_feedback`` and ``release_feedback`` work unchanged. The hidden test cells' source
is replaced by a one-line comment, so feedback never shows it.

Torch-free. Call it from the driver process only: the gradebook is one sqlite file.

    course = NbgraderCourse.detect(paths)            # None: not an nbgrader course (course_root: the same,
                                                     # without importing nbgrader)
    course.check(assignment, notebook, points)       # before grading; CourseError = usage error
    course.record(result, submitted_notebook)        # per result; RecordError names the student
    recorded_points(results_folder, assignment, tasks)   # the TA's written answers' points, later
"""
import importlib

from .written_points import has_gradebook, recorded_points, remember_course
from .where import CourseError, RecordError, course_root

_LAZY = {"NbgraderCourse": "nbgrader_course", "swap_execute": "nbgrader_course", "RestoreCellRoles": "steps",
         "WriteAutograderOutputs": "steps"}  # these import nbgrader (seconds): only when used
__all__ = ["CourseError", "NbgraderCourse", "RecordError", "RestoreCellRoles", "WriteAutograderOutputs",
           "course_root", "has_gradebook", "recorded_points", "remember_course", "swap_execute"]


def __getattr__(name: str):
    if name in _LAZY:
        return getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

"""`autograder export` reads the written answers' points from the nbgrader gradebook that the
results were recorded into (through nbgrader's own API), with manual_points.csv over them."""
import csv

import pytest
from nbgrader.api import Gradebook
from typer.testing import CliRunner

from autograder.cli import app
from autograder.gradebook import NbgraderCourse, remember_course
from autograder.submissions.ids import student_id
from autograder.outputs.store import OutputFolder

from .course import ASSIGNMENT, MANUAL_TASK
from .test_record import NOTEBOOK_ID, course, hand_in, result  # noqa: F401 - course is a fixture

pytestmark = pytest.mark.slow


def test_export_takes_formgraders_points_and_the_file_over_them(course, tmp_path):  # noqa: F811
    """Does export give the TA's formgrader points, nbgrader's 0 for an untouched answer, an empty
    cell for an answer still waiting for the TA, and a manual_points.csv row over the gradebook?"""
    nbgrader_course, out = NbgraderCourse.detect([course.root]), tmp_path / "grades"
    store = OutputFolder(out, ASSIGNMENT, "en")
    store.check_usable()
    remember_course(out, course.root)
    for student, answered in (("graded", True), ("left_blank", False), ("waiting", True), ("corrected", True)):
        graded = result(student, {"masked_softmax": 1.0})
        nbgrader_course.record(graded, hand_in(course, student, answered=answered))
        store.save(graded)
    with Gradebook(course.db_url) as gradebook:
        for student, points in (("graded", 1.5), ("corrected", 0.5)):
            grade = gradebook.find_grade(MANUAL_TASK, NOTEBOOK_ID, ASSIGNMENT, student)
            grade.manual_score, grade.needs_manual_grade = points, False
        gradebook.db.commit()
    (out / "manual_points.csv").write_text(f"student_id,task,points\ncorrected,{MANUAL_TASK},2\n")
    expected = {"graded": "1.5", "left_blank": "0.0", "waiting": "", "corrected": "2.0"}
    assert exported(out, tmp_path) == expected
    # red team 3: a regrade (--force, grader.yml edited, a new grader) records again, and nbgrader
    # flags the TA's grade for review again; its points still count, as nbgrader export counts them
    for student in ("graded", "corrected"):
        nbgrader_course.record(result(student, {"masked_softmax": 0.5}), hand_in(course, student, answered=True))
    assert exported(out, tmp_path) == expected


def exported(out, tmp_path) -> dict[str, str]:
    done = CliRunner().invoke(app, ["export", str(out), "--format", "csv", "--output", str(tmp_path / "lms.csv")])
    assert done.exit_code == 0, done.output
    assert "written answers not entered for 1 of 4 students" in done.output and "waiting" in done.output
    with open(tmp_path / "lms.csv", newline="") as handle:
        return {row["student_id"]: row["manual"] for row in csv.DictReader(handle)}


def test_a_course_that_moved_away_is_one_line(tmp_path):
    """Does a folder whose nbgrader course is gone exit 2 saying where it was and what to do?"""
    out = tmp_path / "grades"
    store = OutputFolder(out, ASSIGNMENT, "en")
    store.check_usable()
    store.save(result("someone", {}))
    remember_course(out, tmp_path / "moved")
    done = CliRunner().invoke(app, ["export", str(out), "--format", "csv", "--output", str(tmp_path / "lms.csv")])
    assert done.exit_code == 2 and "which is not there any more" in done.output and ".nbgrader-course" in done.output


def test_written_points_reach_the_student_whose_folder_it_is(course, tmp_path):  # noqa: F811
    """Red team 12: the gradebook was read by our escaped id, so the folder a\\b got the TA's points
    of a folder literally named a\\\\b, and that one none. Does each get its own?"""
    nbgrader_course, out = NbgraderCourse.detect([course.root]), tmp_path / "grades"
    store = OutputFolder(out, ASSIGNMENT, "en")
    store.check_usable()
    remember_course(out, course.root)
    folders = {"a\\b": 0.5, "a\\\\b": 2.0}
    for folder in folders:
        graded = result(student_id(folder), {})
        nbgrader_course.record(graded, hand_in(course, folder, answered=True))
        store.save(graded)
    with Gradebook(course.db_url) as gradebook:
        for folder, points in folders.items():
            grade = gradebook.find_grade(MANUAL_TASK, NOTEBOOK_ID, ASSIGNMENT, folder)
            grade.manual_score, grade.needs_manual_grade = points, False
        gradebook.db.commit()
    done = CliRunner().invoke(app, ["export", str(out), "--format", "csv", "--output", str(tmp_path / "lms.csv")])
    assert done.exit_code == 0, done.output
    with open(tmp_path / "lms.csv", newline="") as handle:
        manual = {row["student_id"]: row["manual"] for row in csv.DictReader(handle)}
    assert manual == {student_id(folder): str(points) for folder, points in folders.items()}

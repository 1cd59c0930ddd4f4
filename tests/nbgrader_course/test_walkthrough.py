"""The docs' nbgrader walk-through (docs/ta/nbgrader.md), run for real: `autograder grade` stands in for autograde.

One module-scoped course goes from ``generate_assignment`` to ``release_feedback`` with three
students (solved, untouched, buggy) who fetch, submit and fetch feedback through nbgrader's
exchange. What each step left behind is kept, then plain ``nbgrader autograde`` grades the same
submissions for comparison; the tests below read what was kept.
"""
import csv
import html
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from nbgrader.api import Gradebook
from nbgrader.apps.api import NbGraderAPI
from nbgrader.coursedir import CourseDirectory
from nbgrader.utils import parse_utc
from traitlets.config.loader import PyFileConfigLoader

from autograder.results import SubmissionResult

from ..engine.totals_everywhere import totals_everywhere
from ..notebooks.cells import nbgrader
from .course import ASSIGNMENT, MANUAL_TASK, NOTEBOOK, STUDENTS, Course, walkthrough_commands, verb

pytestmark = pytest.mark.slow
NOTEBOOK_ID = Path(NOTEBOOK).stem
MANUAL_POINTS = {"solved": 1.5}  # what the TA gives the one answered written question
HIDDEN_SOURCE = ("BEGIN HIDDEN TESTS", "autograder.in_kernel", 'grade("')


def option(command: str, name: str) -> str:
    words = shlex.split(command)
    return words[words.index(name) + 1]


def students_submit(course: Course, command: str, kept: dict) -> None:
    for student, solve in STUDENTS.items():
        course.submit(student, solve)


def after_grading(course: Course, command: str, kept: dict) -> None:
    """Read the CLI's results, keep what it recorded and what formgrader shows, then grade the
    written answer."""
    output = course.root / option(command, "--output")
    kept["results"] = {student: SubmissionResult.model_validate_json((output / f"{student}.json").read_text())
                       for student in STUDENTS}
    with open(output / "grades.csv", newline="") as handle:
        kept["grades_csv"] = {row["student_id"]: row for row in csv.DictReader(handle)}
    kept["autograded"] = {student: course.autograded(student) for student in STUDENTS}
    kept["formgrader"] = formgrader_data(course)
    grade_written_answers(course)


def formgrader_data(course: Course) -> dict:
    """Per student: formgrader's submission summary (nbgrader's NbGraderAPI) and the grades of
    each cell (the gradebook rows its grading page edits)."""
    config = PyFileConfigLoader("nbgrader_config.py", path=str(course.root)).load_config()
    api = NbGraderAPI(coursedir=CourseDirectory(config=config), config=config)
    data = {student: {"submission": api.get_submission(ASSIGNMENT, student)} for student in STUDENTS}
    with Gradebook(course.db_url) as gradebook:
        for student in STUDENTS:
            notebook = gradebook.find_submission_notebook(NOTEBOOK_ID, ASSIGNMENT, student)
            data[student]["grades"] = {grade.name: {"auto_score": grade.auto_score,
                                                    "needs_manual_grade": grade.needs_manual_grade}
                                       for grade in notebook.grades}
        data["timestamps"] = {student: gradebook.find_submission(ASSIGNMENT, student).timestamp
                              for student in STUDENTS}
    return data


def grade_written_answers(course: Course) -> None:
    """What formgrader's grade form does (its GradeHandler.put), through nbgrader's gradebook API."""
    with Gradebook(course.db_url) as gradebook:
        for student, points in MANUAL_POINTS.items():
            grade = gradebook.find_grade(MANUAL_TASK, NOTEBOOK_ID, ASSIGNMENT, student)
            grade.manual_score = points
            grade.needs_manual_grade = False
        gradebook.db.commit()


def keep_export(course: Course, command: str, kept: dict) -> None:
    with open(course.root / option(command, "--to"), newline="") as handle:
        kept["export"] = {row["student_id"]: row for row in csv.DictReader(handle)}


def keep_our_export(course: Course, command: str, kept: dict) -> None:
    with open(course.root / option(command, "--output"), newline="") as handle:
        kept["our_export"] = {row["student_id"]: row for row in csv.DictReader(handle)}


def grade_again(course: Course, kept: dict) -> None:
    """After formgrader: the TA runs the walk-through's `autograder grade` again; every place a
    total is read (totals_everywhere) is kept."""
    [command] = [c for c in kept["commands"] if verb(c) == "autograder grade"]
    kept["said"]["again"] = course.run(command)
    output = course.root / option(command, "--output")

    def autograder(*args):
        return subprocess.run([sys.executable, "-c", "from autograder.cli import main; main()", *map(str, args)],
                              cwd=course.root, env=course.env(), capture_output=True, text=True, timeout=600)
    scratch = course.root.parent / "totals"
    scratch.mkdir()
    kept["totals"] = totals_everywhere(output, list(STUDENTS), scratch, autograder)
    kept["answers_page"] = (output / "answers.html").exists()


def students_fetch_feedback(course: Course, command: str, kept: dict) -> None:
    kept["feedback"] = {student: html.unescape(course.fetch_feedback(student)) for student in STUDENTS}


AFTER = {"nbgrader release_assignment": students_submit, "autograder grade": after_grading,
         "nbgrader export": keep_export, "autograder export": keep_our_export,
         "nbgrader release_feedback": students_fetch_feedback}


@pytest.fixture(scope="module")
def kept(tmp_path_factory) -> dict:
    course = Course(tmp_path_factory.mktemp("nbgrader"))
    course.require_helpers()
    kept: dict = {"course": course, "commands": walkthrough_commands(), "said": {}}
    for command in kept["commands"]:
        kept["said"][verb(command)] = course.run(command)
        if verb(command) in AFTER:
            AFTER[verb(command)](course, command, kept)
    grade_again(course, kept)
    course.run(f"nbgrader autograde {ASSIGNMENT} --force")  # plain nbgrader, for comparison
    with Gradebook(course.db_url) as gradebook:
        kept["plain"] = {student: {grade.name: grade.auto_score for grade in
                                   gradebook.find_submission_notebook(NOTEBOOK_ID, ASSIGNMENT, student).grades}
                         for student in STUDENTS}
    return kept


def autograded_tasks(result: SubmissionResult) -> dict[str, float]:
    return {task.id: task.score for task in result.tasks if not task.manual and task.score is not None}


def points(result: SubmissionResult, manual: bool) -> tuple[float, float]:
    """(score, max score) of the written answers (manual) or of the autograded tasks."""
    tasks = [task for task in result.tasks if (task.manual or task.score is None) == manual]
    return sum(task.score or 0.0 for task in tasks), sum(task.max_score for task in tasks)


def test_walkthrough_goes_from_generate_assignment_to_release_feedback(kept):
    """Does the docs' walk-through run nbgrader's whole workflow, with the autograder in it?"""
    verbs = [verb(command) for command in kept["commands"]]
    wanted = ["nbgrader generate_assignment", "nbgrader release_assignment", "nbgrader collect",
              "autograder grade", "nbgrader export", "nbgrader generate_feedback", "nbgrader release_feedback"]
    assert [v for v in verbs if v in wanted] == wanted
    assert "nbgrader autograde" not in verbs


def test_the_students_differ(kept):
    """Are the three submissions graded differently (full marks, nothing, something between)?"""
    results = kept["results"]
    (solved, solved_max), (untouched, _), (buggy, buggy_max) = (
        points(results[student], manual=False) for student in ("solved", "untouched", "buggy"))
    assert solved == solved_max and untouched == 0 and 0 < buggy < buggy_max


@pytest.mark.parametrize("student", STUDENTS)
def test_formgrader_lists_the_submission_as_autograded(kept, student):
    """Does formgrader show the student's submission as autograded, with the autograder's total?"""
    submission, result = kept["formgrader"][student]["submission"], kept["results"][student]
    assert submission["autograded"] and submission["submitted"]
    assert (submission["code_score"], submission["max_code_score"]) == pytest.approx(points(result, manual=False))
    assert submission["max_written_score"] == pytest.approx(points(result, manual=True)[1])


@pytest.mark.parametrize("student", STUDENTS)
def test_formgrader_shows_each_tasks_score(kept, student):
    """Does each test cell's grade in the gradebook hold the autograder's score for its task?"""
    grades = kept["formgrader"][student]["grades"]
    for task, score in autograded_tasks(kept["results"][student]).items():
        assert grades[f"{task}_tests"] == {"auto_score": pytest.approx(score), "needs_manual_grade": False}, task


def test_written_answer_waits_for_the_ta_only_when_answered(kept):
    """As nbgrader does: an answered written question waits for the TA, an untouched one scores 0."""
    grades = {student: kept["formgrader"][student]["grades"][MANUAL_TASK] for student in STUDENTS}
    assert grades["solved"] == {"auto_score": None, "needs_manual_grade": True}
    assert grades["untouched"] == grades["buggy"] == {"auto_score": 0, "needs_manual_grade": False}
    assert kept["formgrader"]["solved"]["submission"]["needs_manual_grade"]


@pytest.mark.parametrize("student", STUDENTS)
def test_submission_time_is_the_students(kept, student):
    """Is the submission recorded at the time in its timestamp.txt (what late penalties use)?"""
    course = kept["course"]
    written = course.submitted(student).parent / "timestamp.txt"
    assert kept["formgrader"]["timestamps"][student] == parse_utc(written.read_text()).replace(tzinfo=None)


@pytest.mark.parametrize("student", STUDENTS)
def test_export_total_is_grades_csv_plus_manual_points(kept, student):
    """Does `nbgrader export` give the autograder's score plus the points the TA gave by hand?"""
    exported, ours = kept["export"][student], kept["grades_csv"][student]
    assert float(exported["score"]) == pytest.approx(float(ours["score"]) + MANUAL_POINTS.get(student, 0.0))
    assert float(exported["max_score"]) == pytest.approx(float(ours["max_score"]))


@pytest.mark.parametrize("student", STUDENTS)
def test_autograder_export_agrees_with_nbgrader_export(kept, student):
    """Does `autograder export` give each student the total `nbgrader export` gives (formgrader's
    points read from the gradebook), with the written answer's points in their own column?"""
    ours, nbgrader_total = kept["our_export"][student], kept["export"][student]
    assert float(ours["score"]) == pytest.approx(float(nbgrader_total["score"]))
    assert float(ours["max_score"]) == pytest.approx(float(nbgrader_total["max_score"]))
    assert float(ours["manual"]) == MANUAL_POINTS.get(student, 0.0)   # untouched answers: nbgrader's 0


@pytest.mark.parametrize("student", STUDENTS)
def test_released_feedback_holds_the_autograders_report(kept, student):
    """Does the feedback nbgrader releases show each task's score and every failed check's message?"""
    page, result = kept["feedback"][student], kept["results"][student]
    for task in result.tasks:
        if not task.manual and task.score is not None:
            assert f"{task.id}: {task.score:g} / {task.max_score:g}" in page, task.id
        for check in task.checks:
            assert check.passed or check.message.splitlines()[0] in page, check.name


@pytest.mark.parametrize("student", STUDENTS)
def test_feedback_and_autograded_notebook_never_show_hidden_tests(kept, student):
    """Is the hidden test cells' source gone from the autograded notebook and the released feedback?"""
    assert not [marker for marker in HIDDEN_SOURCE if marker in kept["feedback"][student]]
    for cell in kept["autograded"][student].cells:
        if nbgrader(cell).get("grade_id", "").endswith("_tests"):
            assert len(cell.source.splitlines()) == 1 and cell.source.startswith("#")


@pytest.mark.parametrize("student", STUDENTS)
def test_plain_nbgrader_autograde_gives_the_same_task_scores(kept, student):
    """Does plain `nbgrader autograde` (hidden tests in the kernel, only the notebook handed in)
    give every task the score the autograder gave?"""
    plain = kept["plain"][student]
    for task, score in autograded_tasks(kept["results"][student]).items():
        assert plain[f"{task}_tests"] == pytest.approx(score), task


def test_the_gradebooks_written_points_reach_every_place_a_total_is_read(kept):
    """Issue 46, on an nbgrader course: after the TA grades the written answer in formgrader and
    runs `autograder grade` again, do grades.csv, the class report, `show`, the csv, Canvas and
    Moodle exports and each feedback page give every student `nbgrader export`'s total?"""
    want = {student: float(row["score"]) for student, row in kept["export"].items()}
    assert want["solved"] == 15.0 - 2.0 + MANUAL_POINTS["solved"]
    for place in ("grades.csv", "report", "show", "feedback", "csv", "moodle", "canvas"):
        assert kept["totals"][place] == pytest.approx(want), place
    assert not kept["answers_page"]                 # formgrader shows the answers in an nbgrader course


def test_the_released_helper_package_is_not_listed_as_an_archive(kept):
    """Issue 46: every student's released d2l_attention.zip was "an archive, not read: unpack it
    where it lies and grade again", once per student. Not listed now?"""
    for said in (kept["said"]["autograder grade"], kept["said"]["again"]):
        assert "d2l_attention.zip" not in said and "an archive, not read" not in said, said

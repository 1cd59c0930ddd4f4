"""``NbgraderCourse.record`` and ``check`` on a real course after ``nbgrader generate_assignment``.

The results are built here (task scores chosen per test), so these tests pin down what the
gradebook and the autograded notebook get from a result, without grading anything.
"""
import shutil
from datetime import datetime
from pathlib import Path

import nbformat
import pytest
from nbgrader.api import Gradebook

from autograder.gradebook import CourseError, NbgraderCourse, RecordError, WriteAutograderOutputs, swap_execute
from autograder.results import CheckResult, Finding, Issue, SubmissionResult, TaskResult, text

from ..notebooks.cells import grader_tasks, nbgrader, read, task_points
from .course import ASSIGNMENT, MANUAL_TASK, NOTEBOOK, Course, solve

pytestmark = pytest.mark.slow
NOTEBOOK_ID = NOTEBOOK.removesuffix(".ipynb")
TASKS = grader_tasks(ASSIGNMENT)
AUTOGRADED = {task: task_points(checks) for task, checks in TASKS.items() if "manual" not in checks}
SUBMITTED_AT = "2024-03-01 10:00:00.000000 UTC"


@pytest.fixture(scope="module")
def course(tmp_path_factory) -> Course:
    course = Course(tmp_path_factory.mktemp("record"))
    course.run(f"nbgrader generate_assignment {ASSIGNMENT}")
    (course.root / "submitted").mkdir()  # what `nbgrader collect` makes; hand_in fills it
    return course


def hand_in(course: Course, student: str, answered: bool = False) -> Path:
    """The released notebook in submitted/<student>/, solved when ``answered``, with its timestamp."""
    path = course.submitted(student)
    path.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(course.root / "release" / ASSIGNMENT / NOTEBOOK, path)
    if answered:
        solve(path)
    (path.parent / "timestamp.txt").write_text(SUBMITTED_AT)
    return path


def result(student: str, scores: dict[str, float], **issues: list[Issue]) -> SubmissionResult:
    """A result with ``scores`` per autograded task (full marks where absent), one check per task."""
    tasks = []
    for task, max_score in AUTOGRADED.items():
        score = scores.get(task, max_score)
        finding = Finding(problem=text("compare.values_differ", what=task), expected="[1, 0]", got="[0.73, 0.27]")
        tasks.append(TaskResult(id=task, score=score, max_score=max_score, checks=[CheckResult(
            name="matches the reference", passed=score == max_score, score=score, max_score=max_score,
            finding=None if score == max_score else finding)]))
    tasks.append(TaskResult(id=MANUAL_TASK, score=None, max_score=TASKS[MANUAL_TASK]["manual"], manual=True))
    total = sum(task.score or 0.0 for task in tasks)
    return SubmissionResult(student_id=student, assignment=ASSIGNMENT, score=total,
                            max_score=sum(task.max_score for task in tasks), tasks=tasks, **issues)


def grades(course: Course, student: str) -> dict:
    with Gradebook(course.db_url) as gradebook:
        notebook = gradebook.find_submission_notebook(NOTEBOOK_ID, ASSIGNMENT, student)
        return {grade.name: (grade.auto_score, grade.manual_score, grade.needs_manual_grade)
                for grade in notebook.grades}


def test_record_stores_each_tasks_score_and_report(course):
    """Does a partial score reach the gradebook, with the task's report in its test cell's output?"""
    autograded = NbgraderCourse.detect([course.root]).record(
        result("partial", {"masked_softmax": 1.25}), hand_in(course, "partial"))
    recorded = grades(course, "partial")
    assert recorded["masked_softmax_tests"] == (1.25, None, False)
    assert recorded["dot_product_attention_tests"] == (AUTOGRADED["dot_product_attention"], None, False)
    cells = {nbgrader(cell).get("grade_id"): cell for cell in read(autograded).cells}
    report = "".join(output.text for output in cells["masked_softmax_tests"].outputs
                     if output.output_type == "stream")
    head = "masked_softmax: 1.25 / 3\nFAIL matches the reference (1.25 / 3)\n    masked_softmax: values differ\n"
    assert report.startswith(head)
    assert "    got: [0.73, 0.27]" in report


def test_recording_again_replaces_scores_and_keeps_the_tas_grade(course):
    """Is recording idempotent: new scores replace old ones, the TA's manual score stays?"""
    nbgrader_course = NbgraderCourse.detect([course.root])
    path = hand_in(course, "again", answered=True)
    nbgrader_course.record(result("again", {"bilinear_attention": 0.5}), path)
    with Gradebook(course.db_url) as gradebook:
        gradebook.find_grade(MANUAL_TASK, NOTEBOOK_ID, ASSIGNMENT, "again").manual_score = 2.0
        gradebook.db.commit()
    nbgrader_course.record(result("again", {"bilinear_attention": 1.75}), path)
    recorded = grades(course, "again")
    assert recorded["bilinear_attention_tests"][0] == 1.75
    assert recorded[MANUAL_TASK][:2] == (None, 2.0)  # answered: no automatic score, the TA's stays


def test_untouched_answer_scores_zero_and_answered_one_waits(course):
    """Does the written answer get nbgrader's treatment: 0 untouched, None (TA's turn) answered?"""
    nbgrader_course = NbgraderCourse.detect([course.root])
    nbgrader_course.record(result("blank", {}), hand_in(course, "blank"))
    nbgrader_course.record(result("wrote", {}), hand_in(course, "wrote", answered=True))
    assert grades(course, "blank")[MANUAL_TASK] == (0, None, False)
    assert grades(course, "wrote")[MANUAL_TASK] == (None, None, True)


def test_submission_time_comes_from_timestamp_txt(course):
    """Is the submission recorded at the time its timestamp.txt gives?"""
    NbgraderCourse.detect([course.root]).record(result("late", {}), hand_in(course, "late"))
    with Gradebook(course.db_url) as gradebook:
        assert gradebook.find_submission(ASSIGNMENT, "late").timestamp == datetime(2024, 3, 1, 10, 0)


def test_a_huge_timestamp_txt_is_not_read(course):
    """Red team 3: nbgrader read a student's timestamp.txt whole in the grader's process (800 MB
    took it to 4.4 GB). Is a 64 MB one (sparse) left unread, the submission recorded
    without a time?"""
    path = hand_in(course, "huck")
    with (path.parent / "timestamp.txt").open("r+b") as handle:
        handle.truncate(64 << 20)
    NbgraderCourse.detect([course.root]).record(result("huck", {}), path)
    with Gradebook(course.db_url) as gradebook:
        assert gradebook.find_submission(ASSIGNMENT, "huck").timestamp is None
    (path.parent / "timestamp.txt").unlink()
    shutil.rmtree(course.root / "autograded" / "huck")  # nbgrader's copy of it (sparse too)


@pytest.mark.parametrize("written", ["not a time at all", "\xff\xfe", "2024-13-45 99:99:99 Mars/Olympus"])
def test_a_timestamp_txt_that_is_no_time_still_records_the_student(course, written):
    """Red team 3: text that is not a time made nbgrader fail with its own AttributeError, and
    the student had no gradebook row. Recorded, without a time?"""
    path = hand_in(course, "odd")
    (path.parent / "timestamp.txt").write_bytes(written.encode("utf-8", "surrogateescape")
                                                if written.isprintable() else written.encode("latin-1"))
    NbgraderCourse.detect([course.root]).record(result("odd", {}), path)
    with Gradebook(course.db_url) as gradebook:
        assert gradebook.find_submission(ASSIGNMENT, "odd").timestamp is None


def test_notes_on_the_whole_notebook_go_to_its_first_code_cell(course):
    """Do errors without a task show at the top, and a task's own warning in its test cell?"""
    path = hand_in(course, "noted")
    noted = result("noted", {}, errors=[Issue(code="cell_error", message="cell 4 raised NameError: x")],
                   warnings=[Issue(code="in_place", task="masked_softmax", message="writes into X")])
    cells = read(NbgraderCourse.detect([course.root]).record(noted, path)).cells
    first_code = next(cell for cell in cells if cell.cell_type == "code")
    notes = "The autograder's notes on the whole notebook:\nerror: cell 4 raised NameError: x\n"
    assert first_code.outputs[0].text == notes
    test_cell = next(cell for cell in cells if nbgrader(cell).get("grade_id") == "masked_softmax_tests")
    assert "warning: writes into X" in test_cell.outputs[0].text


def test_hidden_test_source_is_replaced_by_one_comment(course):
    """Is every test cell's source (the hidden tests) gone from the autograded notebook?"""
    cells = read(NbgraderCourse.detect([course.root]).record(result("hidden", {}), hand_in(course, "hidden"))).cells
    sources = {cell.source for cell in cells if nbgrader(cell).get("grade_id", "").endswith("_tests")}
    assert len(sources) == 1 and sources.pop().startswith("# The hidden checks of this task ran")


def test_check_names_generate_assignment_for_an_unknown_assignment(course):
    """Does a course that never ran generate_assignment for the assignment say what to run?"""
    with pytest.raises(CourseError, match="run `nbgrader generate_assignment bahdanau`"):
        NbgraderCourse.detect([course.root]).check("bahdanau", "bahdanau.ipynb", {})


def test_check_refuses_points_that_differ_from_the_notebook(course):
    """Does a grader.yml whose points differ from the course's test cell stop before grading?"""
    points = {**AUTOGRADED, "masked_softmax": 2.0}
    with pytest.raises(CourseError, match="'masked_softmax_tests' has 3 points, grader.yml 2"):
        NbgraderCourse.detect([course.root]).check(ASSIGNMENT, NOTEBOOK, points)


def test_check_refuses_a_test_cell_grader_yml_does_not_grade(course):
    """Does a test cell with no task in grader.yml stop before grading (nbgrader would give it full marks)?"""
    points = {task: p for task, p in AUTOGRADED.items() if task != "bilinear_attention"}
    with pytest.raises(CourseError, match="'bilinear_attention_tests' is only in the course's notebook"):
        NbgraderCourse.detect([course.root]).check(ASSIGNMENT, NOTEBOOK, points)


def test_record_refuses_a_notebook_outside_submitted(course, tmp_path):
    """Is a notebook outside submitted/<student>/<assignment>/ refused with the layout it needs?"""
    stray = tmp_path / NOTEBOOK
    stray.write_text("{}")
    with pytest.raises(RecordError, match="not a notebook of .*submitted/<student>/<assignment>/"):
        NbgraderCourse.detect([course.root]).record(result("stray", {}), stray)


def test_record_refuses_a_result_of_another_assignment(course):
    """Is a result graded as another assignment refused?"""
    other = result("mixed", {}).model_copy(update={"assignment": "bahdanau"})
    with pytest.raises(RecordError, match="lies under assignment 'attention_scoring' but was graded as 'bahdanau'"):
        NbgraderCourse.detect([course.root]).record(other, hand_in(course, "mixed"))


def test_record_reads_nothing_through_a_symbolic_link(course, tmp_path):
    """Is a submission holding a symbolic link refused before nbgrader copies anything?"""
    path = hand_in(course, "linker")
    secret = tmp_path / "secret.txt"
    secret.write_text("the TA's notes")
    (path.parent / "notes.txt").symlink_to(secret)
    with pytest.raises(RecordError, match="notes.txt: a symbolic link"):
        NbgraderCourse.detect([course.root]).record(result("linker", {}), path)
    assert not (course.root / "autograded" / "linker").exists()


def test_an_unreadable_notebook_is_one_readable_error(course):
    """Does a notebook nbgrader cannot read give one line naming the submission and the reason?"""
    path = hand_in(course, "garbled")
    path.write_text("{ not json")
    with pytest.raises(RecordError, match=r"submitted/garbled/attention_scoring: nbgrader could not record it \(.+\)"):
        NbgraderCourse.detect([course.root]).record(result("garbled", {}), path)


def test_swap_execute_needs_exactly_one_execute_step():
    """Is a course whose autograde steps have no Execute (nothing to stand in for) refused?"""
    writer = WriteAutograderOutputs()
    assert swap_execute(["nbgrader.preprocessors.Execute", "nbgrader.preprocessors.LimitOutput"], writer)[0] is writer
    with pytest.raises(CourseError, match="must hold nbgrader's Execute step once"):
        swap_execute(["nbgrader.preprocessors.LimitOutput"], writer)


def test_the_autograded_notebook_is_a_valid_notebook(course):
    """Does the notebook written into autograded/ validate against nbformat's schema?"""
    path = NbgraderCourse.detect([course.root]).record(result("valid", {"masked_softmax": 0}), hand_in(course, "valid"))
    nbformat.validate(read(path))


def tamper(path: Path) -> None:
    """A forged 100-point test cell, a copy of a test cell, one test cell made ungraded, one deleted."""
    notebook = read(path)
    cells = {nbgrader(cell).get("grade_id"): cell for cell in notebook.cells}
    forged = nbformat.v4.new_code_cell("100.0", metadata={"nbgrader": {
        "grade": True, "grade_id": "bonus_tests", "points": 100, "solution": False, "locked": True,
        "schema_version": 3, "task": False}})
    copy = nbformat.from_dict({**cells["masked_softmax_tests"], "id": "copied-test-cell"})
    cells["additive_attention_tests"].metadata["nbgrader"]["grade"] = False
    notebook.cells = [cell for cell in notebook.cells if cell is not cells["distance_attention_tests"]]
    notebook.cells += [forged, copy]
    nbformat.write(notebook, path)


def test_tampered_cells_change_nothing_in_the_gradebook(course):
    """Do forged, copied, ungraded and deleted test cells still give exactly the autograder's scores?

    (Plain nbgrader fails on the forged cell and records nothing for the student.)"""
    path = hand_in(course, "tamperer")
    tamper(path)
    autograded = NbgraderCourse.detect([course.root]).record(result("tamperer", {"distance_attention": 0.5}), path)
    recorded = grades(course, "tamperer")
    assert set(recorded) == {f"{task}_tests" for task in AUTOGRADED} | {MANUAL_TASK}
    assert {name: auto for name, (auto, _, _) in recorded.items() if name != MANUAL_TASK} == {
        f"{task}_tests": (0.5 if task == "distance_attention" else points) for task, points in AUTOGRADED.items()}
    nbformat.validate(read(autograded))


def test_a_renamed_notebook_is_refused_with_the_name_nbgrader_knows(course):
    """Does a notebook handed in under another name say which name nbgrader expects?"""
    path = hand_in(course, "renamer")
    renamed = path.with_name("attention_scoring (1).ipynb")
    path.rename(renamed)
    with pytest.raises(RecordError, match=r"knows the notebook of 'attention_scoring' as attention_scoring.ipynb; "
                                          "rename the file"):
        NbgraderCourse.detect([course.root]).record(result("renamer", {}), renamed)


@pytest.mark.parametrize("name", ["s100[12]", "s100?", "*", "Ivanov [group 2]"])
def test_a_folder_name_with_glob_characters_reaches_only_its_own_rows(course, name):
    """nbgrader globs the student id: does `s100[12]` (or `*`) write into s1001's and s1002's rows?
    No: each id is escaped, and the two honest students keep their full marks."""
    honest = {student: hand_in(course, student) for student in ("s1001", "s1002", "Ivanov 2")}
    recorder = NbgraderCourse.detect([course.root])
    for student, path in honest.items():
        recorder.record(result(student, {}), path)
    recorder.record(result(name, {task: 0.0 for task in AUTOGRADED}), hand_in(course, name))
    for student in honest:
        assert all(auto == AUTOGRADED[cell.removesuffix("_tests")] for cell, (auto, _, _) in grades(course, student).items()
                   if cell.removesuffix("_tests") in AUTOGRADED), student
    assert all(auto == 0.0 for cell, (auto, _, _) in grades(course, name).items()
               if cell.removesuffix("_tests") in AUTOGRADED)
    assert recorder.recorded(course.submitted(name))

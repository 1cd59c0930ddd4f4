"""The plain nbgrader path, for real: generate, submit, autograde, read the gradebook, feedback.

One temporary nbgrader course (its own gradebook) holds both assignments and two
students: ``solved`` hands in the released notebook with the source's solution regions
pasted in, ``untouched`` hands in the released notebook as it is. Only the notebook is
handed in, as the student README says: nbgrader copies the helper package from the
source folder (``assignments/<a>/d2l_attention/``) beside each submission itself.
"""
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .cells import (ASSIGNMENTS, REPO, grader_tasks, nbgrader, read, solved_copy, source_path,
                    task_points)
from .conftest import venv_env

pytestmark = pytest.mark.slow
STUDENTS = ("solved", "untouched")
COURSE_CONFIG = """\
c = get_config()
load_subconfig("nbgrader_config.py", path={repo!r})  # the course's own settings (timeouts, ...)
c.CourseDirectory.root = {root!r}
c.CourseDirectory.source_directory = "source"
c.CourseDirectory.release_directory = "release"
c.CourseDirectory.db_url = "sqlite:///{root}/gradebook.db"
"""


def nbgrader_cli(course: Path, *args: str) -> None:
    done = subprocess.run([sys.executable, "-m", "nbgrader", *args], cwd=course,
                          env=venv_env(), capture_output=True, text=True)
    assert done.returncode == 0, f"nbgrader {' '.join(args)} failed:\n{done.stdout}{done.stderr}"


@pytest.fixture(scope="module")
def course(tmp_path_factory) -> Path:
    """A course after generate_assignment, autograde and generate_feedback of both students."""
    root = tmp_path_factory.mktemp("course")
    assert (REPO / "nbgrader_config.py").exists()  # load_subconfig skips a missing file silently
    (root / "nbgrader_config.py").write_text(COURSE_CONFIG.format(repo=str(REPO), root=str(root)))
    shutil.copytree(REPO / "assignments", root / "source", ignore=shutil.ignore_patterns("__pycache__"))
    for assignment in ASSIGNMENTS:
        nbgrader_cli(root, "generate_assignment", assignment, "--force")
        released = root / "release" / assignment / f"{assignment}.ipynb"
        for student in STUDENTS:
            folder = root / "submitted" / student / assignment
            if student == "solved":
                solved_copy(released, source_path(assignment), folder / released.name)
            else:
                folder.mkdir(parents=True)
                shutil.copy(released, folder / released.name)
        nbgrader_cli(root, "autograde", assignment, "--force")
        nbgrader_cli(root, "generate_feedback", assignment, "--force")
    return root


def auto_scores(course: Path, assignment: str, student: str) -> dict[str, float | None]:
    """grade_id -> nbgrader's automatic score, as stored in the course's gradebook."""
    from nbgrader.api import Gradebook
    with Gradebook(f"sqlite:///{course}/gradebook.db") as gradebook:
        notebook = gradebook.find_submission_notebook(assignment, assignment, student)
        return {grade.name: grade.auto_score for grade in notebook.grades}


def autograded_test_cells(course: Path, assignment: str, student: str) -> dict:
    path = course / "autograded" / student / assignment / f"{assignment}.ipynb"
    return {nbgrader(cell)["grade_id"]: cell for cell in read(path).cells
            if nbgrader(cell).get("grade") and cell.cell_type == "code"}


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_reference_solutions_get_full_marks(course, assignment):
    """Does the released notebook with the TA's solutions score every autograded point?"""
    scores = auto_scores(course, assignment, "solved")
    for task, checks in grader_tasks(assignment).items():
        if "manual" in checks:
            assert scores[task] is None  # left for the TA
        else:
            assert scores[f"{task}_tests"] == task_points(checks), task


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_untouched_template_gets_zero(course, assignment):
    """Does the untouched student template score nothing on any autograded task?"""
    scores = auto_scores(course, assignment, "untouched")
    autograded = [task for task, checks in grader_tasks(assignment).items() if "manual" not in checks]
    assert {task: scores[f"{task}_tests"] for task in autograded} == dict.fromkeys(autograded, 0)


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
@pytest.mark.parametrize("student", STUDENTS)
def test_hidden_tests_write_nothing_to_stderr(course, assignment, student):
    """Do the hidden test cells run without raising or writing to stderr (which nbgrader zeroes)?"""
    for gid, cell in autograded_test_cells(course, assignment, student).items():
        kinds = [(output.output_type, output.get("name")) for output in cell.outputs]
        assert ("stream", "stderr") not in kinds and ("error", None) not in kinds, gid
        [result] = [output for output in cell.outputs if output.output_type == "execute_result"]
        score = float(result.data["text/plain"])
        assert 0 <= score <= nbgrader(cell)["points"], gid


def test_training_demos_are_skipped_under_autograde(course):
    """Does nbgrader's NBGRADER_EXECUTION keep the bahdanau demos from training?"""
    path = course / "autograded" / "solved" / "bahdanau" / "bahdanau.ipynb"
    demos = [cell for cell in read(path).cells if "train_seq2seq(" in cell.source]
    assert demos and all(cell.outputs == [] for cell in demos)


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
@pytest.mark.parametrize("student", STUDENTS)
def test_feedback_is_generated(course, assignment, student):
    """Does nbgrader generate_feedback write each student's page with the autograded total?

    Manual tasks count 0 until the TA grades them. The page also shows the hidden test
    cells' source (nbgrader issue 917): here that is only the call to the grader.
    """
    tasks = grader_tasks(assignment)
    total = sum(task_points(checks) for checks in tasks.values())
    auto = sum(task_points(checks) for checks in tasks.values() if "manual" not in checks)
    page = course / "feedback" / student / assignment / f"{assignment}.html"
    earned = auto if student == "solved" else 0
    assert f"Score: {earned:.1f} / {total:.1f}" in page.read_text()


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
@pytest.mark.parametrize("student", STUDENTS)
def test_only_the_notebook_is_handed_in(course, assignment, student):
    """Is the notebook all the student hands in, with nbgrader putting the helpers beside it?"""
    submitted = course / "submitted" / student / assignment
    assert [path.name for path in submitted.iterdir()] == [f"{assignment}.ipynb"]
    autograded = course / "autograded" / student / assignment
    assert (autograded / "d2l_attention" / "__init__.py").is_file()

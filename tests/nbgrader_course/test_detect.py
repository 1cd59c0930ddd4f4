"""Which PATHs of `autograder grade` are an nbgrader course (files only: no nbgrader runs)."""
from pathlib import Path

import pytest

from autograder.gradebook import CourseError, NbgraderCourse


def make_course(folder: Path, marker: str = "nbgrader_config.py") -> Path:
    """A course root: ``marker`` (its config or its gradebook) and one submission."""
    (folder / "submitted" / "s1" / "attention_scoring").mkdir(parents=True)
    (folder / "submitted" / "s1" / "attention_scoring" / "attention_scoring.ipynb").write_text("{}")
    (folder / marker).write_text("")
    return folder


@pytest.mark.parametrize("inside", [".", "submitted", "submitted/s1",
                                    "submitted/s1/attention_scoring/attention_scoring.ipynb"])
def test_any_path_in_a_course_finds_its_root(tmp_path, inside):
    """Is the course found from its root, its submitted/ folder, a student's folder or a notebook?"""
    root = make_course(tmp_path)
    assert NbgraderCourse.detect([root / inside]).root == root


def test_a_gradebook_alone_marks_a_course(tmp_path):
    """Is a root with gradebook.db (and no nbgrader_config.py) a course too?"""
    root = make_course(tmp_path, marker="gradebook.db")
    assert NbgraderCourse.detect([root]).root == root


def test_notebooks_outside_any_course_are_not_a_course(tmp_path):
    """Is a plain folder of notebooks, or a config without submitted/, left to the plain outputs?"""
    (tmp_path / "s1.ipynb").write_text("{}")
    (tmp_path / "nbgrader_config.py").write_text("")  # like the repository root: no submitted/
    assert NbgraderCourse.detect([tmp_path, tmp_path / "s1.ipynb"]) is None


def test_a_path_outside_the_course_is_a_usage_error(tmp_path):
    """Does mixing a course with a notebook outside it say which path and what to do?"""
    root = make_course(tmp_path / "course")
    (tmp_path / "loose.ipynb").write_text("{}")
    with pytest.raises(CourseError, match=r"loose.ipynb: not in the nbgrader course .*; grade it in a separate run"):
        NbgraderCourse.detect([root, tmp_path / "loose.ipynb"])


def test_two_courses_in_one_run_are_a_usage_error(tmp_path):
    """Are two courses in one run refused (one run records into one gradebook)?"""
    first, second = make_course(tmp_path / "a"), make_course(tmp_path / "b")
    with pytest.raises(CourseError, match="not in the nbgrader course"):
        NbgraderCourse.detect([first, second])

"""Which notebooks a run grades, under which ids, and what it says about the rest (SPEC §3:
"A run never loses or hides what a TA has"; ids map to file names one-to-one)."""
import shutil
from pathlib import Path

import pytest

from autograder.config import ConfigError
from autograder.ids import file_stem, student_id
from autograder.submissions import find_submissions

REPO = Path(__file__).resolve().parents[2]
UNTOUCHED = REPO / "examples" / "attention_scoring" / "untouched.ipynb"
A, NB = "attention_scoring", "attention_scoring.ipynb"


def found(*paths: Path):
    return find_submissions(list(paths), A, NB)


def put(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(UNTOUCHED, path)
    return path


def test_every_notebook_at_any_depth_is_a_submission(tmp_path):
    """Are sidorov.ipynb, group1/ivanov.ipynb and group2/deep/petrova.ipynb all graded?"""
    for where in ("sidorov.ipynb", "group1/ivanov.ipynb", "group2/deep/petrova.ipynb"):
        put(tmp_path / where)
    submissions = found(tmp_path).submissions
    assert {s.student_id: s.shown for s in submissions} == {
        "sidorov": "sidorov.ipynb", "ivanov": "group1/ivanov.ipynb", "petrova": "group2/deep/petrova.ipynb"}


def test_the_same_stem_in_two_subfolders_is_a_duplicate_naming_both(tmp_path):
    put(tmp_path / "a" / "ivanov.ipynb")
    put(tmp_path / "b" / "ivanov.ipynb")
    with pytest.raises(ConfigError, match=r"student 'ivanov' has 2 submissions: a/ivanov.ipynb, b/ivanov.ipynb"):
        found(tmp_path)


def test_checkpoints_and_hidden_entries_are_named_not_graded(tmp_path):
    put(tmp_path / "ivanov.ipynb")
    put(tmp_path / ".ipynb_checkpoints" / "ivanov-checkpoint.ipynb")
    result = found(tmp_path)
    assert [s.student_id for s in result.submissions] == ["ivanov"]
    assert [shown for shown, _ in result.not_graded] == [".ipynb_checkpoints"]


def test_a_students_folder_grades_the_assignments_notebook_and_names_the_others(tmp_path):
    folder = tmp_path / "submitted" / "kim" / A
    put(folder / NB)
    put(folder / "Untitled.ipynb")
    result = found(tmp_path)
    [kim] = result.submissions
    assert kim.path.name == NB and kim.problem is None and kim.notice is None
    assert [shown for shown, _ in result.not_graded] == [f"submitted/kim/{A}/Untitled.ipynb"]


def test_the_only_other_notebook_is_graded_with_a_warning_naming_it(tmp_path):
    put(tmp_path / "submitted" / "kim" / A / "attention_scoring-Copy1.ipynb")
    [kim] = found(tmp_path).submissions
    assert kim.path.name == "attention_scoring-Copy1.ipynb" and kim.problem is None
    assert kim.notice.id == "issue.other_notebook" and kim.notice.params["name"] == "attention_scoring-Copy1.ipynb"


def test_several_candidates_are_an_error_naming_them_and_nothing_is_guessed(tmp_path):
    """Copy1 (the work) and Untitled (blank), no attention_scoring.ipynb: which is graded? Neither."""
    folder = tmp_path / "submitted" / "kim" / A
    put(folder / "attention_scoring-Copy1.ipynb")
    put(folder / "Untitled.ipynb")
    [kim] = found(tmp_path).submissions
    assert kim.problem.code == "several_notebooks"
    assert kim.problem.text.params["names"] == "Untitled.ipynb, attention_scoring-Copy1.ipynb"


def test_an_nbgrader_course_does_not_read_other_assignments_folders(tmp_path):
    put(tmp_path / "submitted" / "ivanov" / A / NB)
    put(tmp_path / "submitted" / "petrov" / "bahdanau" / "bahdanau.ipynb")  # not this assignment
    assert [s.student_id for s in found(tmp_path).submissions] == ["ivanov"]


@pytest.mark.parametrize("names", [
    ("s100[12]", "s1001", "s1002"),                     # glob characters stay themselves
    ("Иванова-Петрова_" * 8 + "Ива", None, None),       # a long id and a folder named by its file stem
    (b"\xc8\xe2".decode("utf-8", "surrogateescape"), "\\xc8\\xe2", None),   # cp1251 and its escape spelled out
    ("a%2Fb", "a/b", None),
    (".hidden", "%2Ehidden", None),
])
def test_ids_map_to_file_names_one_to_one(names):
    ids = [student_id(name) for name in names if name is not None]
    if len(ids) == 1:  # the long id: the folder is named exactly its file stem
        ids.append(student_id(file_stem(ids[0])))
    assert len(set(ids)) == len(ids)
    stems = [file_stem(sid) for sid in ids]
    assert len(set(stems)) == len(stems), stems
    assert all(len(f".{stem}.json.abcdefgh.tmp".encode()) <= 255 and "/" not in stem for stem in stems)


def test_cp1251_and_its_spelled_out_escape_are_two_students(tmp_path):
    """Does a cp1251 folder name beside a folder literally named by its \\xNN spelling refuse the
    batch (two students with one id)? No: two ids, two files."""
    cp1251 = b"\xc8\xe2\xe0\xed\xee\xe2".decode("utf-8", "surrogateescape")
    put(tmp_path / f"{cp1251}.ipynb")
    put(tmp_path / "\\xc8\\xe2\\xe0\\xed\\xee\\xe2.ipynb")
    ids = sorted(s.student_id for s in found(tmp_path).submissions)
    assert ids == ["\\\\xc8\\\\xe2\\\\xe0\\\\xed\\\\xee\\\\xe2", "\\xc8\\xe2\\xe0\\xed\\xee\\xe2"]
    assert len({file_stem(sid) for sid in ids}) == 2


def test_a_folder_per_student_holding_the_assignments_notebook_is_named_by_the_folder(tmp_path):
    """An LMS export: kim/attention_scoring.ipynb, lee/attention_scoring.ipynb (and lee's Untitled):
    two students, not one id twice."""
    put(tmp_path / "kim" / NB)
    put(tmp_path / "lee" / NB)
    put(tmp_path / "lee" / "Untitled.ipynb")
    result = found(tmp_path)
    assert {s.student_id: s.shown for s in result.submissions} == {"kim": f"kim/{NB}", "lee": f"lee/{NB}"}
    assert [shown for shown, _ in result.not_graded] == ["lee/Untitled.ipynb"]

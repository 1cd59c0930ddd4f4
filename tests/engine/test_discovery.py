"""Which notebooks a run grades, under which ids, and what it says about the rest (SPEC §3:
"A run never loses or hides what a TA has"; ids map to file names one-to-one)."""
import os
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from autograder.config import ConfigError
from autograder.submissions.ids import file_stem, student_id
from autograder.submissions.find import find_submissions

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
    """Are sidorov.ipynb and the notebooks of folders of several (group1/, group2/deep/) all graded
    by their stems, and a folder of one notebook (kim/homework.ipynb) by the folder's name?"""
    for where in ("sidorov.ipynb", "group1/ivanov.ipynb", "group1/orlov.ipynb", "group2/deep/petrova.ipynb",
                  "group2/deep/lee.ipynb", "kim/homework.ipynb"):
        put(tmp_path / where)
    submissions = found(tmp_path).submissions
    assert {s.student_id: s.shown for s in submissions} == {
        "sidorov": "sidorov.ipynb", "ivanov": "group1/ivanov.ipynb", "orlov": "group1/orlov.ipynb",
        "petrova": "group2/deep/petrova.ipynb", "lee": "group2/deep/lee.ipynb", "kim": "kim/homework.ipynb"}
    [kim] = [s for s in submissions if s.student_id == "kim"]
    assert kim.notice.id == "issue.id_from_folder" and kim.notice.params["file"] == "homework.ipynb"


def test_the_same_stem_in_two_folders_is_graded_twice_under_its_paths(tmp_path):
    """Red team 11: two students' folders with the same file name (kim/homework.ipynb,
    petrov/homework.ipynb), or two groups with an ivanov.ipynb each, stopped the batch as a
    duplicate. Each is graded, by its folder or under its path, with a warning saying why?"""
    put(tmp_path / "kim" / "homework.ipynb")
    put(tmp_path / "petrov" / "homework.ipynb")
    for group in ("a", "b"):
        put(tmp_path / group / "ivanov.ipynb")
        put(tmp_path / group / f"other_{group}.ipynb")
    submissions = {s.student_id: s for s in found(tmp_path).submissions}
    assert sorted(submissions) == ["a/ivanov.ipynb", "b/ivanov.ipynb", "kim", "other_a", "other_b", "petrov"]
    notice = submissions["a/ivanov.ipynb"].notice
    assert notice.id == "issue.id_claimed_twice" and notice.params == {"id": "ivanov", "path": "a/ivanov.ipynb"}


def test_the_same_notebook_given_twice_is_a_usage_error(tmp_path):
    put(tmp_path / "ivanov.ipynb")
    with pytest.raises(ConfigError, match=r"student 'ivanov' has 2 submissions"):
        find_submissions([tmp_path / "ivanov.ipynb", tmp_path / "ivanov.ipynb"], A, NB)


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


def test_an_lms_folder_per_student_holding_a_copy_of_the_notebook_is_that_students(tmp_path):
    """A TA's trial: in a download with one folder per student, boris/attention_scoring-Copy1.ipynb
    was graded as student 'attention_scoring-Copy1' (two such students stopped the batch as
    duplicates). Are the folders' names the ids, each copy graded with a warning naming it?"""
    put(tmp_path / "boris" / "attention_scoring-Copy1.ipynb")
    put(tmp_path / "olga" / "attention_scoring (1).ipynb")
    put(tmp_path / "kim" / "Attention_Scoring_final.IPYNB")
    submissions = {s.student_id: s for s in found(tmp_path).submissions}
    assert sorted(submissions) == ["boris", "kim", "olga"]
    assert all(s.problem is None and s.notice.id == "issue.other_notebook" for s in submissions.values())
    assert submissions["olga"].notice.params["name"] == "attention_scoring (1).ipynb"


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


# Every layout of the README, with the notebooks an LMS zip or a student's own folders put
# elsewhere (red team: carol and dave were in no JSON, no row, no summary line).
REDTEAM = {  # student -> where the notebook lies in submitted/<student>/
    "alice": f"{A}/{NB}",                       # nbgrader's place
    "bob": f"{A}/{A}/{NB}",                     # the assignment's folder twice
    "carol": f"carol_hw/{A}/{NB}",              # an extra folder level, as an LMS zip gives
    "dave": NB,                                 # no assignment folder
    "erin": f"{A}/sub/{NB}",                    # a subfolder of the assignment's folder
    "frank": f"{A}/attention_scoring.IPYNB",    # an upper-case suffix
}


def redteam_course(root: Path) -> Path:
    for student, where in REDTEAM.items():
        put(root / "submitted" / student / where)
    return root


def test_submitted_grades_every_students_only_notebook_wherever_it_lies(tmp_path):
    """In submitted/, is each student's one notebook of this assignment graded under their id,
    the result naming it, with a warning naming the file wherever it is not nbgrader's place?"""
    result = found(redteam_course(tmp_path) / "submitted")
    by_id = {s.student_id: s for s in result.submissions}
    assert {sid: s.shown for sid, s in by_id.items()} == {sid: f"{sid}/{where}" for sid, where in REDTEAM.items()}
    assert all(s.problem is None for s in by_id.values())
    assert by_id["alice"].notice is None
    names = {sid: s.notice.params["name"] for sid, s in by_id.items() if s.notice is not None}
    assert names == {"bob": f"{A}/{NB}", "carol": f"carol_hw/{A}/{NB}", "dave": NB, "erin": f"sub/{NB}",
                     "frank": "attention_scoring.IPYNB"}
    assert by_id["carol"].notice.params["expected"] == f"{A}/{NB}" and by_id["erin"].notice.params["expected"] == NB
    assert result.not_graded == []


def test_a_course_root_and_one_students_folder_find_them_too(tmp_path):
    """Do the course root, submitted/carol, submitted/dave and carol's notebook itself all give the
    student's id (the notebook's stem is no id where it lies in a student's folder)?"""
    course = redteam_course(tmp_path)
    assert sorted(s.student_id for s in found(course).submissions) == sorted(REDTEAM)
    for student in ("carol", "dave"):
        [one] = found(course / "submitted" / student).submissions
        assert (one.student_id, one.shown) == (student, REDTEAM[student])
    [carol] = found(course / "submitted" / "carol" / REDTEAM["carol"]).submissions
    assert carol.student_id == "carol"


def test_several_candidates_at_any_depth_are_an_error_naming_them_all_and_each_is_listed(tmp_path):
    folder = tmp_path / "submitted" / "kim"
    put(folder / A / "attention_scoring-Copy1.ipynb")
    put(folder / "old" / NB)
    result = found(tmp_path)
    [kim] = result.submissions
    assert kim.problem.code == "several_notebooks"
    assert kim.problem.text.params["names"] == f"{A}/attention_scoring-Copy1.ipynb, old/{NB}"
    assert [shown for shown, _ in result.not_graded] == [f"submitted/kim/{A}/attention_scoring-Copy1.ipynb",
                                                         f"submitted/kim/old/{NB}"]


def test_notebooks_of_no_candidate_are_listed_and_other_assignments_grouped_for_the_class(tmp_path):
    """ivanov's bahdanau/ and petrov's bahdanau/ are one line; lee's loose Untitled.ipynb (no
    attention_scoring.ipynb, no folder of the assignment) is listed, not graded, not guessed."""
    put(tmp_path / "submitted" / "ivanov" / A / NB)
    put(tmp_path / "submitted" / "ivanov" / "bahdanau" / "bahdanau.ipynb")
    put(tmp_path / "submitted" / "petrov" / "bahdanau" / "bahdanau.ipynb")
    put(tmp_path / "submitted" / "lee" / "Untitled.ipynb")
    put(tmp_path / "submitted" / "lee" / "hw2" / "hw2.ipynb")
    result = found(tmp_path)
    assert [s.student_id for s in result.submissions] == ["ivanov"]
    assert [shown for shown, _ in result.not_graded] == ["submitted/lee/Untitled.ipynb", "submitted/*/bahdanau",
                                                         "submitted/lee/hw2"]
    assert "in 2 students' folders: 2 notebooks" in result.not_graded[1][1]


def test_a_course_root_names_notebooks_outside_submitted_but_not_nbgraders_own_folders(tmp_path):
    put(tmp_path / "submitted" / "ivanov" / A / NB)
    for where in (f"source/{A}/{NB}", f"release/{A}/{NB}", f"autograded/ivanov/{A}/{NB}",
                  "lectures/week1.ipynb", "lectures/deep/week2.ipynb", "petrov.ipynb"):
        put(tmp_path / where)
    result = found(tmp_path)
    assert [s.student_id for s in result.submissions] == ["ivanov"]
    assert result.not_graded == [("lectures", "2 notebooks in the course root, outside submitted/"),
                                 ("petrov.ipynb", "in the course root, outside submitted/")]


def test_a_folder_of_notebooks_grades_the_upper_case_suffix_and_names_a_students_other_notebooks(tmp_path):
    """An LMS export: ivanov.IPYNB is a submission; kim's Attention_Scoring.ipynb is her only
    candidate (graded, warned); lee's notebook in a subfolder of his folder is listed."""
    put(tmp_path / "ivanov.IPYNB")
    put(tmp_path / "kim" / "Attention_Scoring.ipynb")
    put(tmp_path / "lee" / NB)
    put(tmp_path / "lee" / "drafts" / "try.ipynb")
    result = found(tmp_path)
    by_id = {s.student_id: s for s in result.submissions}
    assert {sid: s.shown for sid, s in by_id.items()} == {
        "ivanov": "ivanov.IPYNB", "kim": "kim/Attention_Scoring.ipynb", "lee": f"lee/{NB}"}
    assert by_id["kim"].notice.params["name"] == "Attention_Scoring.ipynb" and by_id["lee"].notice is None
    assert [shown for shown, _ in result.not_graded] == ["lee/drafts/try.ipynb"]


def test_links_in_a_students_folder_are_refused_or_named_and_never_followed(tmp_path):
    """eve's notebook is a link (refused, nothing read); her old/ is a link to a folder holding
    a notebook (named, not followed); zoe's assignment folder is a link (refused)."""
    elsewhere = put(tmp_path / "elsewhere" / NB).parent
    eve = tmp_path / "course" / "submitted" / "eve"
    (eve / A).mkdir(parents=True)
    (eve / A / NB).symlink_to(elsewhere / NB)
    (eve / "old").symlink_to(elsewhere)
    (tmp_path / "course" / "submitted" / "zoe").mkdir()
    (tmp_path / "course" / "submitted" / "zoe" / A).symlink_to(elsewhere)
    result = found(tmp_path / "course")
    assert {s.student_id: s.problem.code for s in result.submissions} == {"eve": "not_regular_file",
                                                                         "zoe": "not_regular_file"}
    assert result.not_graded == [("submitted/eve/old", "a symbolic link to a folder (not followed)")]


FOLDERS = [A, "Attention_Scoring", "carol_hw", "bahdanau", "sub", ".ipynb_checkpoints"]
FILES = [NB, "attention_scoring.IPYNB", "Untitled.ipynb", "attention_scoring-Copy1.ipynb", "notes.txt",
         ".hidden.ipynb"]


@st.composite
def submitted_trees(draw) -> tuple[dict[str, list[str]], list[str]]:
    """Students' folders of files at random places (nbgrader's, an LMS zip's, a student's own),
    and notebooks loose in submitted/."""
    where = st.builds(lambda folders, name: "/".join([*folders, name]),
                      st.lists(st.sampled_from(FOLDERS), max_size=3), st.sampled_from(FILES))
    students = draw(st.dictionaries(st.sampled_from(["s0", "s1", "s2", "s3"]), st.lists(where, max_size=4),
                                    min_size=1))
    loose = draw(st.lists(st.sampled_from(["loose0.ipynb", "loose1.IPYNB", ".loose.ipynb"]), unique=True))
    return students, loose


def covers(shown: str, notebook: str) -> bool:
    """Does a not-graded line's path (a folder stands for what is under it, * for the students
    its line counts) name ``notebook`` (a path relative to the PATH)?"""
    parts, names = shown.split("/"), notebook.split("/")
    return len(parts) <= len(names) and all(p in ("*", n) for p, n in zip(parts, names))


@settings(max_examples=100)
@given(tree=submitted_trees(), layout=st.sampled_from(["course", "submitted", "student", "assignment"]))
@example(tree=({"s0": [f"sub/{NB}", "sub/Untitled.ipynb"]}, []), layout="course")    # a folder holding both kinds
@example(tree=({"s0": ["bahdanau/Untitled.ipynb"], "s1": ["bahdanau/Untitled.ipynb"], "s2": [f"bahdanau/{NB}"]},
               []), layout="submitted")                                                 # a class-wide line beside one graded
def test_every_notebook_found_is_graded_or_listed_never_both_never_neither(tree, layout):
    """Whatever students hand in where: is each .ipynb under the PATH (any case) either the file
    of exactly one submission or named by exactly one not-graded line (a line for several
    students counting exactly the notebooks it stands for), and does every student with a
    notebook of this assignment (named like it, or in a folder named like it) get a submission?"""
    students, loose = tree
    first = sorted(students)[0]
    with tempfile.TemporaryDirectory() as temp:
        course = Path(temp)
        for student, files in students.items():
            (course / "submitted" / student).mkdir(parents=True)
            for where in [*files, *(loose if student == first else [])]:
                put(course / "submitted" / (where if where in loose else f"{student}/{where}"))
        path = {"course": course, "submitted": course / "submitted", "student": course / "submitted" / first,
                "assignment": course / "submitted" / first / A}[layout]
        if not path.is_dir():
            return
        result = found(path)
        each_notebook_graded_or_listed(path, result)
    ids = [s.student_id for s in result.submissions]
    for student in (students if layout in ("course", "submitted") else [first]):
        if any(candidate(where, whole=layout == "assignment") for where in students[student]):
            assert ids.count(student) == 1, (student, ids)


def each_notebook_graded_or_listed(path: Path, result) -> None:
    graded = [s.path for s in result.submissions]
    counted = {shown: 0 for shown, _ in result.not_graded if "*" in shown}
    for notebook in (p for p in path.rglob("*") if p.suffix.lower() == ".ipynb" and p.is_file()):
        where = str(notebook.relative_to(path))
        named = [shown for shown, _ in result.not_graded if covers(shown, where)]
        if notebook in graded:  # a line for several students may share its path, never count it
            assert graded.count(notebook) == 1 and all("*" in shown for shown in named), (where, named)
            continue
        assert len(named) == 1, (where, graded, result.not_graded)
        if named[0] in counted and not any(part.startswith(".") for part in where.split("/")):
            counted[named[0]] += 1
    for shown, why in result.not_graded:
        assert "*" not in shown or f" {counted[shown]} notebook" in why, (shown, why, counted)


def candidate(where: str, whole: bool) -> bool:
    """Is ``where`` (in a student's folder) a notebook of this assignment, not hidden? (``whole``:
    the PATH is the assignment's folder, where every notebook is one.)"""
    *folders, name = where.split("/")
    if any(part.startswith(".") for part in where.split("/")) or not name.lower().endswith(".ipynb"):
        return False
    if whole:
        return where.startswith(f"{A}/")
    return name.casefold() == NB or A in (folder.casefold() for folder in folders)


def test_a_folder_that_cannot_be_read_is_named_and_the_batch_goes_on(tmp_path, monkeypatch):
    """A student's folder, and a folder beside submitted/, that the grader may not list (root
    reads anything, so the refusal is simulated): is each named, and ivanov still graded?"""
    put(tmp_path / "submitted" / "ivanov" / A / NB)
    put(tmp_path / "submitted" / "kim" / NB)   # found only by listing kim's folder
    put(tmp_path / "archive" / "old.ipynb")
    refused = {tmp_path / "submitted" / "kim", tmp_path / "archive"}
    scandir = os.scandir

    def refusing(path):
        if Path(path) in refused:
            raise PermissionError(13, "Permission denied")
        return scandir(path)

    monkeypatch.setattr(os, "scandir", refusing)
    result = found(tmp_path)
    assert [s.student_id for s in result.submissions] == ["ivanov"]
    assert result.not_graded == [("submitted/kim", "could not be read (Permission denied)"),
                                 ("archive", "could not be read (Permission denied)")]


def test_archives_are_named_not_graded_and_an_archive_given_is_a_usage_error(tmp_path):
    """A TA's trial: a student who handed in a .zip was absent from the summary, and a zip given
    as the PATH was graded 0 with "re-download the template". Named in the summary, and refused?"""
    put(tmp_path / "class" / "ivanov.ipynb")
    (tmp_path / "class" / "petrova.ZIP").write_bytes(b"PK\x03\x04")
    (tmp_path / "class" / "kim" / A).mkdir(parents=True)
    (tmp_path / "class" / "kim" / A / "work.tar.gz").write_bytes(b"\x1f\x8b")
    result = found(tmp_path / "class")
    assert [s.student_id for s in result.submissions] == ["ivanov", "kim"]
    reasons = dict(result.not_graded)
    assert reasons["petrova.ZIP"].startswith("an archive") and reasons[f"kim/{A}/work.tar.gz"].startswith("an archive")
    with pytest.raises(ConfigError, match="an archive, not a notebook; unpack it"):
        found(tmp_path / "class" / "petrova.ZIP")


def test_a_file_named_after_another_student_never_takes_their_row_or_stops_the_batch(tmp_path):
    """Red teams 3, 4 and 11: in a download with one folder per student, kim handed in
    kim/ivanov.ipynb (or kim/x/ivanov/attention_scoring.ipynb) while ivanov's own notebook is
    ivanov/homework.ipynb: kim's work became ivanov's row and ivanov's 'homework'. Is each
    graded by its folder, whatever the files are named, with or without ivanov's?"""
    put(tmp_path / "ivanov" / "homework.ipynb")
    put(tmp_path / "kim" / "ivanov.ipynb")
    put(tmp_path / "lee" / "lee.ipynb")
    put(tmp_path / "olga" / "x" / "ivanov" / NB)
    submissions = {s.student_id: s for s in found(tmp_path).submissions}
    assert sorted(submissions) == ["ivanov", "kim", "lee", "olga"]
    assert submissions["kim"].path == tmp_path / "kim" / "ivanov.ipynb"
    assert submissions["olga"].path == tmp_path / "olga" / "x" / "ivanov" / NB
    assert submissions["kim"].notice.id == "issue.id_from_folder" and submissions["lee"].notice is None
    shutil.rmtree(tmp_path / "ivanov")
    assert sorted(s.student_id for s in found(tmp_path).submissions) == ["kim", "lee", "olga"]


def test_a_name_claimed_twice_stays_with_its_folder(tmp_path):
    """Red team 10 and 11: kim's folder of two notebooks named after classmates (read as a folder
    of notebooks by stem), or a kim.ipynb beside kim's folder, claim ids that folders own. Does
    the folder keep its id, and the file go under its path, with no usage error?"""
    put(tmp_path / "ivanov" / NB)
    put(tmp_path / "kim" / "ivanov.ipynb")
    put(tmp_path / "kim" / "petrov.ipynb")
    put(tmp_path / "lee" / "work.ipynb")
    put(tmp_path / "lee.ipynb")
    submissions = {s.student_id: s for s in found(tmp_path).submissions}
    assert sorted(submissions) == ["ivanov", "kim/ivanov.ipynb", "lee", "lee.ipynb", "petrov"]
    assert submissions["ivanov"].path == tmp_path / "ivanov" / NB and submissions["ivanov"].notice is None
    assert submissions["lee"].path == tmp_path / "lee" / "work.ipynb"
    assert submissions["lee.ipynb"].notice.id == "issue.id_claimed_twice"


def test_the_released_helper_package_is_the_courses_own_not_a_students_archive(tmp_path):
    """The issue: an nbgrader course listed every student's released d2l_attention.zip as "an
    archive, not read: unpack it where it lies and grade again" (wrong advice, once per student,
    burying the real lines). Is the archive as released not listed, while a changed copy and a
    student's own archive still are?"""
    from autograder.course import COURSE
    released = COURSE.helper_archive(A)
    submitted = tmp_path / "submitted"
    for student in ("ivanov", "petrova", "kim"):
        put(submitted / student / A / NB)
        shutil.copy(released, submitted / student / A / released.name)
    (submitted / "kim" / A / released.name).write_bytes(b"PK changed")
    (submitted / "petrova" / A / "my_work.zip").write_bytes(b"PK mine")
    os.symlink(released, submitted / "ivanov" / A / "d2l_attention (link).zip")
    listed = dict(find_submissions([submitted], A, NB, released).not_graded)
    assert sorted(listed) == ["ivanov/attention_scoring/d2l_attention (link).zip",
                              "kim/attention_scoring/d2l_attention.zip", "petrova/attention_scoring/my_work.zip"]
    assert len(dict(found(submitted).not_graded)) == 5          # without the course's archive: every copy named

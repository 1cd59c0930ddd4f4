"""Results folders and LMS files for the export tests, written as the LMSs' documents describe.

Canvas's gradebook export (Canvas guides, "How do I export grades in the Gradebook?"; the
import reads the same layout back): ``Student``, ``ID``, ``SIS User ID``, ``SIS Login ID``,
``Integration ID``, ``Root Account``, ``Section``, then one ``Title (id)`` column per
assignment and the read-only score columns; a row naming the assignments whose grades are
posted by hand, then the ``    Points Possible`` row; names as ``Last, First`` (so quoted);
CRLF line ends and a byte-order mark. Moodle's grade export as plain text (its import takes
the same format back, "Grade import" in Moodle Docs): ``First name``, ``Last name``, ``ID
number``, ``Institution``, ``Department``, ``Email address``, the grade items, ``Last
downloaded from this course``.
"""
from pathlib import Path

from autograder.results import CheckResult, Issue, SubmissionResult, TaskResult, text
from autograder.outputs.store import OutputFolder

ASSIGNMENT = "attention_scoring"
FORMULA_ID = "=HYPERLINK(\"http://evil\",\"x\")"
COMMA_ID = 'smith, "jr"\nII'
NON_UTF8_ID = "petrov\udcc1"          # a cp1251 byte in a file name, as os.fsdecode gives it

CANVAS_HEADER = ("Student,ID,SIS User ID,SIS Login ID,Integration ID,Root Account,Section,"
                 "attention_scoring (4021),Quiz 1 (4019),Current Score,Unposted Current Score,"
                 "Final Score,Unposted Final Score")
CANVAS_ROWS = [
    ",,,,,,,Manual Posting,,,,,",
    "    Points Possible,,,,,,,7.00,10.00,(read only),(read only),(read only),(read only)",
    '"Ivanov, Ivan",101,2024001,ivanov,,msu.instructure.com,Group 1,,8.00,80.00,80.00,53.33,53.33',
    '"Petrova, Anna",102,2024002,petrova,,msu.instructure.com,Group 1,3.00,-1.50,50.00,50.00,40.00,40.00',
    '"=HYPERLINK(""http://x"",""y"")",103,2024003,nobody,,msu.instructure.com,Group 2,,,,,,',
    '"Student, Test",104,,,,msu.instructure.com,Group 1,,,,,,',
    f'"Hacker, Eve",105,2024005,"{FORMULA_ID.replace(chr(34), chr(34) * 2)}",,msu.instructure.com,Group 2,,,,,,',
    '"Smith, ""Jr""",106,2024006,"smith, ""jr""\nII",,msu.instructure.com,Group 2,,,,,,',
]


def canvas_roster(path: Path) -> Path:
    path.write_bytes(("\ufeff" + "\r\n".join([CANVAS_HEADER, *CANVAS_ROWS]) + "\r\n").encode("utf-8"))
    return path


MOODLE_EXPORT = """\
First name,Last name,ID number,Institution,Department,Email address,Assignment: attention_scoring (Real),Last downloaded from this course
Ivan,Ivanov,s001,MSU,CS,ivanov@example.edu,-,1767225600
Anna,Petrova,s002,MSU,CS,petrova@example.edu,4.00,1767225600
Olga,Sidorova,s003,MSU,CS,sidorova@example.edu,-,1767225600
"""


def moodle_roster(path: Path) -> Path:
    path.write_text(MOODLE_EXPORT, encoding="utf-8")
    return path


def result(student: str, scores: tuple[float, float], errors: list[Issue] | None = None) -> SubmissionResult:
    """attention_scoring's shape: two autograded tasks (3 and 2 points) and the written answer (2)."""
    tasks = [TaskResult(id=task, score=score, max_score=maximum, checks=[CheckResult(
                 name="matches the reference", passed=score == maximum, score=score, max_score=maximum)])
             for task, score, maximum in (("masked_softmax", scores[0], 3.0), ("dot_product_attention", scores[1], 2.0))]
    tasks.append(TaskResult(id="cost_analysis", score=None, max_score=2.0, manual=True))
    return SubmissionResult(student_id=student, assignment=ASSIGNMENT, score=sum(scores), max_score=7.0,
                            tasks=tasks, errors=errors or [])


def results_folder(folder: Path, results: list[SubmissionResult]) -> Path:
    """A folder as autograder grade leaves it, written by the store itself."""
    store = OutputFolder(folder, ASSIGNMENT, "en")
    store.check_usable()
    for one in results:
        store.save(one)
    return folder


def class_results() -> list[SubmissionResult]:
    failed = Issue(code="grader_failed", text=text("issue.grader_failed", detail="MemoryError"))
    return [result("ivanov", (3.0, 2.0)), result("petrova", (1.5, 2.0)), result(FORMULA_ID, (0.0, 1.0)),
            result(COMMA_ID, (3.0, 0.5)), result(NON_UTF8_ID, (2.0, 2.0)), result("kim", (0.0, 0.0), [failed]),
            result("s001", (3.0, 1.0)), result("s002", (2.0, 2.0))]

"""Every place a TA or a student reads a total, read back from a results folder: grades.csv, the
class report, `autograder show`, the feedback pages and the three exports (issue 46: "no number
misleads"). The written answers' tests compare them, for a plain class and an nbgrader course.
"""
import csv
import re
import subprocess
from collections.abc import Callable
from pathlib import Path

from autograder.files import from_spreadsheet
from autograder.submissions.ids import file_stem

ASSIGNMENT, TASK = "attention_scoring", "cost_analysis"
MAXIMUM, AUTOGRADED_MAXIMUM = 15, 13
TOTAL = re.compile(rf"(\d+(?:\.\d+)?) / {MAXIMUM}(?: so far)?$")
CANVAS_COLUMN = f"{ASSIGNMENT} (77)"
Run = Callable[..., subprocess.CompletedProcess]   # the autograder command, with its arguments


def table(path: Path) -> list[dict]:
    with path.open(newline="", encoding="utf-8-sig") as handle:
        return list(csv.DictReader(handle))


def totals_everywhere(out: Path, students: list[str], scratch: Path, autograder: Run) -> dict[str, dict]:
    """Place -> student -> the total read there."""
    places = {"grades.csv": {from_spreadsheet(row["student_id"]): float(row["score"])
                             for row in table(out / "grades.csv")},
              "report": report_totals(out),
              "show": {student: show_total(out, student, autograder) for student in students},
              "feedback": {student: feedback_total(out, student) for student in students}}
    return places | exported(out, students, scratch, autograder)


def report_totals(out: Path) -> dict[str, float]:
    """Each student's total from report.md's grades table (the same line is in report.html)."""
    report, page = (out / "report.md").read_text(encoding="utf-8"), (out / "report.html").read_text(encoding="utf-8")
    found = {}
    for student, line in re.findall(r"^\| `([^`]+)` \| (autograded [^|]+?) \|$", report, re.M):
        found[student] = float(TOTAL.search(line).group(1))
        assert line in page.replace("&#x27;", "'"), line
    return found


def show_total(out: Path, student: str, autograder: Run) -> float:
    shown = autograder("show", "--output", out, "--", student)
    assert shown.returncode == 0, shown.stderr
    first = shown.stdout.splitlines()[0].strip()
    return float(TOTAL.search(first).group(1))


def feedback_total(out: Path, student: str) -> float:
    """The total the student's feedback says ("total S / M" once written points are entered,
    else the autograded score, the written answer still to come), in its Markdown and its page."""
    markdown = (out / "feedback" / f"{file_stem(student)}.md").read_text(encoding="utf-8")
    page = (out / "feedback" / f"{file_stem(student)}.html").read_text(encoding="utf-8")
    score = re.search(r"\*\*(.+?)\*\*", markdown).group(1)
    assert score.split(";")[0] in page
    total = re.search(rf"total (\S+) / {MAXIMUM}", score) or re.search(rf"autograded (\S+) / {AUTOGRADED_MAXIMUM}",
                                                                       score)
    return float(total.group(1))


def exported(out: Path, students: list[str], scratch: Path, autograder: Run) -> dict[str, dict[str, float]]:
    """The csv, Moodle and Canvas exports (a Canvas roster of the class, out of 15 points)."""
    canvas = scratch / "canvas.csv"
    rows = "".join(f'"Student {i}",{i},,"{sid}",A,,\n' for i, sid in enumerate(students))
    canvas.write_text(f"Student,ID,SIS User ID,SIS Login ID,Section,{CANVAS_COLUMN},Current Score\n"
                      f"    Points Possible,,,,,{MAXIMUM}.00,(read only)\n{rows}", encoding="utf-8")
    found = {}
    for fmt, extra, key, column in (("csv", [], "student_id", "score"), ("moodle", [], "username", ASSIGNMENT),
                                    ("canvas", ["--roster", canvas], "SIS Login ID", CANVAS_COLUMN)):
        done = autograder("export", out, "--format", fmt, *extra, "--output", scratch / f"{fmt}.out.csv")
        assert done.returncode == 0, done.stdout + done.stderr
        found[fmt] = {from_spreadsheet(row[key]): float(row[column]) for row in table(scratch / f"{fmt}.out.csv")
                      if row[key].strip() and row[column].strip()}
        found[f"{fmt} notes"] = done.stdout
    return found

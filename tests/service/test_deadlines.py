"""Deadlines and extensions (SPEC §5, ``service.deadline`` and ``service.extensions``), the other
new ``service`` keys of grader.yml, and how the students' README says the course hands in."""
from datetime import datetime
from pathlib import Path

import pytest

from autograder.config import ConfigError, ServiceConfig
from autograder.course import COURSE, Course
from autograder.release import student_readme
from autograder.service.deadlines import Deadlines, shown
from autograder.service.handing_in import MARKERS
from autograder.service.page import students_page

from .test_service_config import config_with

RATE = "submissions_per_hour: 20"
DEADLINE = "2026-03-01T23:59:00+03:00"


def with_service(tmp_path, *lines: str):
    return config_with(tmp_path, RATE, "\n  ".join([*lines, RATE]))


def test_a_deadline_with_its_zone_is_read_as_that_moment(tmp_path):
    service = with_service(tmp_path, f"deadline: {DEADLINE}").service
    assert service.deadline == datetime.fromisoformat(DEADLINE)
    assert with_service(tmp_path, "deadline: '2026-03-01T20:59:00Z'").service.deadline == service.deadline


@pytest.mark.parametrize(("given", "said"), [
    ("2026-03-01", "a date without a time"),
    ("'2026-03-01 23:59'", "a time without its time zone"),
    ("1772398740", "not a date and time"),
    ("'next friday'", "not a date and time in ISO 8601"),
])
def test_a_deadline_that_names_no_moment_is_refused_with_the_form_to_write(tmp_path, given, said):
    """Is a date alone, a time without a zone, a number or free text refused, naming the key and
    showing how to write it?"""
    with pytest.raises(ConfigError) as raised:
        with_service(tmp_path, f"deadline: {given}")
    assert str(raised.value).startswith(f"grader.yml: service.deadline: {said}")
    assert "2026-03-01T23:59:00+03:00" in str(raised.value)


def test_extensions_need_a_deadline_and_misspelt_keys_are_named(tmp_path):
    with pytest.raises(ConfigError, match="service.extensions gives students later deadlines"):
        with_service(tmp_path, "extensions: extensions.csv")
    with pytest.raises(ConfigError, match=r"service.dedline: unknown key \(did you mean 'deadline'\?\)"):
        with_service(tmp_path, f"dedline: {DEADLINE}")
    with pytest.raises(ConfigError, match="service.exchange_shared_uid: input should be a valid boolean"):
        with_service(tmp_path, "exchange_shared_uid: perhaps")


def test_every_service_key_is_documented():
    assert all(field.description for field in ServiceConfig.model_fields.values())


def deadlines(tmp_path, rows: str) -> Deadlines:
    (tmp_path / "extensions.csv").write_text(rows)
    config = with_service(tmp_path, f"deadline: {DEADLINE}", "extensions: extensions.csv")
    return Deadlines.of_config(config.service, tmp_path / "grader.yml")


def test_an_extension_moves_only_its_students_deadline(tmp_path):
    found = deadlines(tmp_path, "student_id,deadline\ns1,2026-03-08T23:59:00+03:00\n\n")
    due = datetime.fromisoformat(DEADLINE).timestamp()
    assert found.passed("s2", due) is None and found.passed("s2", due + 1) is not None
    assert found.passed("s1", due + 1) is None
    assert found.passed("s1", due + 7 * 86400 + 1) == datetime.fromisoformat("2026-03-08T23:59:00+03:00")


@pytest.mark.parametrize(("rows", "said"), [
    ("id,when\ns1,2026-03-08T23:59:00+03:00\n", "the first row must be student_id,deadline"),
    ("student_id,deadline\ns1,2026-03-08\n", "line 2: '2026-03-08' is not a date and time with its time zone"),
    ("student_id,deadline\ns1,2026-03-08T23:59:00Z\ns1,2026-03-09T23:59:00Z\n", "line 3: student 's1' has a second"),
    ("student_id,deadline\n,2026-03-08T23:59:00Z\n", "line 2: expected student_id,deadline"),
])
def test_a_broken_extensions_file_is_a_usage_error_naming_its_line(tmp_path, rows, said):
    with pytest.raises(ConfigError) as raised:
        deadlines(tmp_path, rows)
    assert str(raised.value).startswith(f"service.extensions: {tmp_path / 'extensions.csv'}: {said}")


def test_a_missing_extensions_file_says_where_it_was_looked_for(tmp_path):
    config = with_service(tmp_path, f"deadline: {DEADLINE}", "extensions: nowhere.csv")
    with pytest.raises(ConfigError, match="nowhere.csv: cannot read .*relative to grader.yml"):
        Deadlines.of_config(config.service, tmp_path / "grader.yml")


def test_the_page_shows_the_deadline_in_its_zone():
    page = students_page("attention_scoring", "attention_scoring.ipynb", 20, "en", datetime.fromisoformat(DEADLINE))
    assert "Deadline: <code>2026-03-01 23:59 UTC+03:00</code>" in page
    assert 'id="deadline"' not in students_page("attention_scoring", "attention_scoring.ipynb", 20, "en")
    assert shown(datetime.fromisoformat("2026-03-01T20:59:00+00:00")) == "2026-03-01 20:59 UTC"


def test_the_students_readme_names_the_assignments_tab_or_the_services_page(tmp_path):
    """Does the released README say how this course hands in: the Assignments tab where
    grader.yml names no page, else each assignment's page at ``service.url``?"""
    readme = student_readme(COURSE)
    assert "Assignments" in readme and "Fetch Feedback" in readme and not any(m in readme for m in MARKERS.values())
    assert readme == (Path(__file__).parents[2] / "student_template" / "README.md").read_text()
    with_service(tmp_path, "url: https://course.example.org/{assignment}/")

    class WithPage(Course):
        config_path = tmp_path / "grader.yml"
    readme = student_readme(WithPage())
    assert "<https://course.example.org/attention_scoring/>" in readme
    assert "<https://course.example.org/bahdanau/>" in readme and "Fetch Feedback" not in readme

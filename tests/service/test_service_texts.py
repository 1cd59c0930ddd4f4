"""Every reason the service gives and every label of the students' page is in the catalogue,
in English and Russian (a student reads them)."""
import re
from pathlib import Path

from autograder.service.page import STATUSES, students_page
from autograder.texts import CATALOGUE

SERVICE = Path(__file__).resolve().parents[2] / "autograder" / "service"
REASON = re.compile(r"""(?:Refusal|refuse)\(\s*\d{3},\s*["'](\w+)["']""")


def test_every_refusal_names_a_text_in_both_languages():
    reasons = {r for path in SERVICE.glob("*.py") for r in REASON.findall(path.read_text())}
    assert len(reasons) >= 12
    assert sorted(r for r in reasons if f"service.error.{r}" not in CATALOGUE) == []


def test_the_page_and_its_script_texts_exist():
    assert all(f"service.status.{status}" in CATALOGUE for status in STATUSES)
    script = (SERVICE / "page.js").read_text()
    assert set(re.findall(r"say\.(\w+)", script)) <= set(STATUSES) | {"submission"}
    assert "say[submission.status]" in script and {"queued", "grading", "done", "replaced"} <= set(STATUSES)

def test_the_russian_page_is_russian():
    """Is the Russian page free of the English labels (code and the assignment's name aside)?"""
    page = students_page("attention_scoring", "attention_scoring.ipynb", 20, "ru")
    for english in ("Hand in", "Your token", "Your notebook", "Upload your notebook", "Waiting in line"):
        assert english not in page
    assert 'lang="ru"' in page and "Сдать работу" in page

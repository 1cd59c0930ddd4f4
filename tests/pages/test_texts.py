"""The pages' texts: every id the pages use is in the catalogue, in both languages, and the
Russian follows the course's glossary (autograder/texts/terms.py)."""
import re
import subprocess
import sys
from pathlib import Path

import pytest

from autograder.texts import CATALOGUE, LANGUAGES, answers, fields, pages, terms

PAGES = Path(__file__).resolve().parents[2] / "autograder" / "pages"
# the pages, the feedback view and the class report (its own room since #42)
WRITERS = [*PAGES.glob("*.py"), *(PAGES.parent / "feedback").glob("*.py"), *(PAGES.parent / "report").glob("*.py")]
CYRILLIC = re.compile(r"[А-Яа-яЁё]")

# Said awkwardly before (issue 13), and what the glossary says instead.
AVOID = {
    "Отзыв": "разбор работы",
    "скрытые ключи": "замаскированные ключи",
    "преподавател": "ассистент",
    "выбросил": "вызвал исключение",
    "уведомл": "(nobody is notified: the TA reads the class report)",
    "seed hypothesis": "(the seed means nothing to a student)",
    # The Russian read-through: a typo, a phrase read another way, advice that loses the work, and
    # words that are not the book's.
    "не корректн": "некорректный (one word)",
    "конечная строка": "строка без NaN и inf («конечная строка» reads as 'the last row')",
    "скачайте шаблон": "сохраните блокнот заново из Jupyter и сдайте его ещё раз (a new template loses the work)",
    "ноутбук": "блокнот (a «ноутбук» is a laptop)",
    "дропаут": "dropout (term.dropout)",
    "декодер": "декодировщик (term.decoder, the book's word)",
}
# Kept in Latin script in Russian on purpose (as the Russian edition of the book does).
SAME_IN_BOTH = {"term.dropout"}


def ids_used_by_pages() -> set[str]:
    """Every catalogue id written as a literal in autograder/pages, feedback and report
    (prefixes ``title.`` and ``mistake.`` are built from data and fall back to the raw name)."""
    used = set()
    for module in WRITERS:
        used |= set(re.findall(r"""["']((?:page|feedback|term|issue|answers)\.[\w.]+)["']""", module.read_text()))
    return used


def test_every_id_the_pages_use_exists():
    """Is every text the pages show in the catalogue (no KeyError on some rare branch)?"""
    used = ids_used_by_pages()
    assert len(used) > 40
    assert sorted(used - CATALOGUE.keys()) == []


@pytest.mark.parametrize("text_id", sorted({**pages.TEXTS, **terms.TEXTS, **answers.TEXTS}))
def test_both_languages(text_id):
    """Does each page label and glossary term exist in English and in Russian, with the same
    fields to fill in?"""
    english, russian = CATALOGUE[text_id]
    assert english.strip() and russian.strip()
    assert fields(english) == fields(russian)
    if text_id not in SAME_IN_BOTH and text_id != "page.decimal_mark":
        assert CYRILLIC.search(russian), f"{text_id}: the Russian form is not Russian"


def test_glossary_terms_are_distinct():
    """Does each Russian term name one concept (no two glossary entries say the same)?"""
    russian = [ru for _, ru in terms.TEXTS.values()]
    assert len(russian) == len(set(russian))


@pytest.mark.parametrize("awkward", sorted(AVOID))
def test_catalogue_avoids_awkward_russian(awkward):
    """Is the Russian the issue found awkward gone from every text a person reads?"""
    said = [text_id for text_id, (_, russian) in CATALOGUE.items() if awkward.lower() in russian.lower()]
    assert said == [], f"{said}: say {AVOID[awkward]!r} instead of {awkward!r}"


@pytest.mark.parametrize("text_id", ["issue.not_utf8", "issue.invalid_notebook", "issue.invalid_cells"])
def test_an_unreadable_notebook_is_told_to_save_it_again(text_id):
    """Issue 47: a notebook that is not valid JSON was told to "re-download the template", which would
    make the student start again. Is it told, in both languages, to save the notebook again from
    Jupyter (File → Download) and hand it in again, and never to download the template?"""
    english, russian = CATALOGUE[text_id]
    assert "(File → Download)" in english and "hand it in again" in english
    assert "(File → Download)" in russian and "сдайте его ещё раз" in russian
    assert not re.search(r"download the template|re-?download|template", english, re.IGNORECASE)
    assert "шаблон" not in russian


def test_pages_choose_no_language_inline():
    """Is the language chosen only in the catalogue (no `language == "ru"` in the pages or the view)?"""
    for module in WRITERS:
        assert not re.search(r"""language\s*[!=]=|["'](en|ru)["']""", module.read_text()), module.name
    assert LANGUAGES == ("en", "ru")


def test_pages_import_no_torch():
    """Does importing the pages (and everything they import) leave torch unloaded?"""
    probe = "import sys, autograder.pages; print(sorted(m for m in sys.modules if m.split('.')[0] in " \
            "('torch', 'reference') or m.startswith(('autograder.checks', 'autograder.sandbox'))))"
    loaded = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True,
                            cwd=PAGES.parents[1]).stdout.strip()
    assert loaded == "[]"

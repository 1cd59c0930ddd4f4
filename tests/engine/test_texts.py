"""The text catalogue: every text a student or TA reads exists in English and Russian, and
the language is chosen in one place."""
import re
import string
from pathlib import Path

import pytest

from autograder.checks import TASKS
from autograder.checks.attention import MODULES
from autograder.checks.softmax import MISTAKES as SOFTMAX_MISTAKES
from autograder.pages.markup import say
from autograder.texts import CATALOGUE, LANGUAGES, fields, render
from autograder.results import message_text, text

PACKAGE = Path(__file__).resolve().parents[2] / "autograder"
CYRILLIC = re.compile(r"[\u0400-\u04FF]")
FIELD_OR_NAME = re.compile(r"\{[^}]*\}|\w*[_.]\w*")  # format fields and code names (attention_weights)
LATIN_WORD = re.compile(r"[A-Za-z]{2,}")
KEPT_IN_ENGLISH = {"term.dropout"}  # the Russian edition of the book keeps the English word
LITERAL_ID = re.compile(r"""\btext\(\s*["']([\w. -]+)["']\s*[,)]""")


@pytest.mark.parametrize("text_id", sorted(CATALOGUE))
def test_every_text_has_both_languages_with_the_same_fields(text_id):
    """Does each text have an English and a Russian form, filling in the same parameters?"""
    forms = CATALOGUE[text_id]
    assert len(forms) == len(LANGUAGES) and all(form.strip() for form in forms)
    english, russian = forms
    assert fields(english) == fields(russian)
    untranslatable = not LATIN_WORD.search(FIELD_OR_NAME.sub("", russian)) or text_id in KEPT_IN_ENGLISH
    assert CYRILLIC.search(russian) or untranslatable, russian


@pytest.mark.parametrize("text_id", sorted(CATALOGUE))
def test_code_quotes_pair_up_between_fields(text_id):
    """Do a template's backticks (code, set as such on the pages) pair up within each run of
    its own words, never around a field?"""
    for form in CATALOGUE[text_id]:
        assert all(words.count("`") % 2 == 0 for words, *_ in string.Formatter().parse(form)), form


def test_a_page_sets_data_as_code_and_the_template_as_words():
    """On a page, is the student's message code, a number plain, and the template's quoted
    code code, in both languages?"""
    raised = text("check.raised", type="RuntimeError", message=message_text("size <4> mismatch"), where="")
    assert say(raised, "ru").startswith("ваш код вызвал исключение <code>RuntimeError</code>: <code>size &lt;4&gt; mismatch</code>")
    assert say(text("feedback.score", score=3, max=6), "en") == render(text("feedback.score", score=3, max=6), "en")
    shape = say(text("what.attention.output shape"), "ru")
    assert shape == "выход имеет форму <code>(B, Q, v)</code>"


def test_every_text_the_code_names_exists():
    """Is every literal text id in the grader's code in the catalogue?"""
    used = {match for path in PACKAGE.rglob("*.py") if "texts" not in path.parts
            for match in LITERAL_ID.findall(path.read_text(encoding="utf-8"))}
    assert used and not sorted(used - set(CATALOGUE))


def test_every_check_has_a_title_and_a_description():
    """Does every check of every task have its Russian title and its 'what it checks'?"""
    for task in TASKS.values():
        for check in task.checks:
            assert f"title.{check.name}" in CATALOGUE, check.name
            assert check.what.id in CATALOGUE, check.what.id


def test_every_diagnosable_mistake_has_a_text():
    """Can every mistake the checks know how to recognise be named to the student?"""
    ids = set(SOFTMAX_MISTAKES) | {m for module in MODULES.values() for m in module.mistaken_scores}
    assert not sorted(m for m in ids if f"mistake.{m}" not in CATALOGUE)


def test_the_language_is_chosen_only_in_the_catalogue():
    """Does no module outside autograder/texts pick a language by comparing with 'ru'?"""
    choosing = re.compile(r"""==\s*["']ru["']|\[\s*language\s*==""")
    offenders = [str(path) for path in PACKAGE.rglob("*.py")
                 if "texts" not in path.parts and choosing.search(path.read_text(encoding="utf-8"))]
    assert offenders == []


def test_nested_texts_render_in_the_same_language():
    message = text("compare.values_differ", what=text("tensor.attention_weights"))
    assert render(message, "ru") == "веса внимания: значения отличаются"
    assert render(message, "en") == "attention weights: values differ"

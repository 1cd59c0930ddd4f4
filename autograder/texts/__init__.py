"""Every text a student or a TA reads, in English and Russian, keyed by id.

Each module of this package holds the texts of one area as ``TEXTS = {id: (English,
Russian)}``; templates use ``str.format`` fields. Code builds a ``results.Text`` (an id
with parameters) and the language is chosen once, when it is rendered: ``Say(language)``
(``say.py``) turns a text into ``Prose`` for the writers, ``render`` into a plain string.
This is the only place that knows which language is which (a test greps for it).
Torch-free: the reports import it.

A rendered text is a list of runs, each one kind of thing: the template's own words
(``WORDS``), what the template quotes in backticks (``QUOTED``: code), a parameter's text
(``DATA``: a message, a name, a shape, as the code gave it) and a number (``NUMBER``: an
``int`` or ``float`` parameter, formatted by the field's spec with the language's decimal
mark). Writers set each kind their own way; the language's choices are all made here.
"""
import string

from ..results import Text
from . import answers, checks, exchange, feedback, gradebook, grades, issues, mistakes, pages, service, terms

LANGUAGES = ("en", "ru")
WORDS, QUOTED, DATA, NUMBER = "words", "quoted", "data", "number"
Run = tuple[str, str]  # (kind, text)


def _merge(*modules) -> dict[str, tuple[str, str]]:
    merged: dict[str, tuple[str, str]] = {}
    for module in modules:
        clash = merged.keys() & module.TEXTS.keys()
        if clash:
            raise RuntimeError(f"text ids defined twice: {sorted(clash)}")
        merged.update(module.TEXTS)
    return merged


CATALOGUE = _merge(answers, checks, exchange, feedback, gradebook, grades, issues, mistakes, pages, service, terms)


def template(text_id: str, language: str) -> str | None:
    """The catalogue's form of ``text_id`` in ``language``, or None for an id it does not hold
    (a result written by an older grader)."""
    forms = CATALOGUE.get(text_id)
    return None if forms is None else forms[LANGUAGES.index(language)]


def decimal(shown: str, language: str) -> str:
    """A number written with a point, as ``language`` writes it (1.5 -> 1,5 in Russian)."""
    return shown.replace(".", template("page.decimal_mark", language))


def runs(value: "Text | str | None", language: str) -> list[Run]:
    """``value`` in ``language`` as runs. A plain string is data; a text whose id the
    catalogue does not hold is its id, as data (never a KeyError)."""
    if value is None:
        return []
    if isinstance(value, str):
        return [(DATA, value)] if value else []
    form = template(value.id, language)
    if form is None:
        return [(DATA, value.id)]
    formatter, parts = string.Formatter(), []
    for words, name, spec, conversion in formatter.parse(form):
        parts += _words(words)
        if name is not None:
            field = formatter.convert_field(value.params[name], conversion)
            parts += _field(field, spec or "", language)
    return parts


def _words(words: str) -> list[Run]:
    """A template's own words; the `quoted` spans are code."""
    return [(QUOTED if i % 2 else WORDS, part) for i, part in enumerate(words.split("`")) if part]


def _field(field, spec: str, language: str) -> list[Run]:
    """One parameter: a nested text rendered, each item of a list, a number, a value."""
    if isinstance(field, Text):
        return runs(field, language)
    if isinstance(field, list):
        parts: list[Run] = []
        for i, item in enumerate(field):
            parts += ([(WORDS, ", ")] if i else []) + _field(item, "", language)
        return parts
    if isinstance(field, (int, float)) and not isinstance(field, bool):
        return [(NUMBER, decimal(format(field, spec), language))]
    shown = str(field)  # a spec is for numbers: a value given as text ("nan") is shown as it is
    return [(DATA, shown)] if shown else []


def plain(parts: list[Run]) -> str:
    """Runs as plain text: the template's quoted code keeps its backticks."""
    return "".join(f"`{part}`" if kind == QUOTED else part for kind, part in parts)


def render(value: "Text | str | None", language: str) -> str:
    """``value`` in ``language`` (en or ru) as plain text."""
    return plain(runs(value, language))


def fields(template_text: str) -> set[str]:
    """The names a template fills in (for the catalogue's own test)."""
    return {name for _, name, _, _ in string.Formatter().parse(template_text) if name}


def number(value: float | None, language: str) -> str:
    """A score or a total as the feedback writes it (``say.Say.number``: the language's decimal
    mark, no trailing zeros, a dash for None)."""
    from .say import Say
    return Say(language).number(value)

"""Every text a student or a TA reads, in English and Russian, keyed by id.

Each module of this package holds the texts of one area as ``TEXTS = {id: (English,
Russian)}``; templates use ``str.format`` fields. Code builds a ``results.Text`` (an id
with parameters) and the language is chosen once, when ``render`` turns it into a string.
This is the only place that knows which language is which (a test greps for it).
Torch-free: the reports import it.
"""
import string
from collections.abc import Callable

from ..results import Text
from . import checks, feedback, gradebook, grades, issues, mistakes, pages, service, terms

LANGUAGES = ("en", "ru")


def _merge(*modules) -> dict[str, tuple[str, str]]:
    merged: dict[str, tuple[str, str]] = {}
    for module in modules:
        clash = merged.keys() & module.TEXTS.keys()
        if clash:
            raise RuntimeError(f"text ids defined twice: {sorted(clash)}")
        merged.update(module.TEXTS)
    return merged


CATALOGUE = _merge(checks, feedback, gradebook, grades, issues, mistakes, pages, service, terms)


def _as_is(words: str) -> str:
    return words


def render(value: "Text | str | None", language: str, literal: Callable[[str], str] = _as_is,
           data: Callable[[str], str] = _as_is) -> str:
    """``value`` in ``language`` (en or ru); plain strings are code or data and pass as they are.

    A page passes ``literal`` (applied to the template's own words) and ``data`` (applied to
    each parameter that is not itself a text, once formatted: messages, names, shapes,
    numbers) to mark them up differently; nested texts get the same treatment."""
    if value is None:
        return ""
    if isinstance(value, str):
        return data(value)
    template = CATALOGUE[value.id][LANGUAGES.index(language)]
    formatter, parts = string.Formatter(), []
    for words, name, spec, conversion in formatter.parse(template):
        parts.append(literal(words))
        if name is not None:
            field = formatter.convert_field(value.params[name], conversion)
            parts.append(_marked(field, spec or "", language, literal, data))
    return "".join(parts)


def _marked(field, spec: str, language: str, literal, data) -> str:
    """One parameter, marked up: a nested text rendered, each item of a list, a value formatted."""
    if isinstance(field, Text):
        return render(field, language, literal, data)
    if isinstance(field, list):
        return ", ".join(_marked(item, "", language, literal, data) for item in field)
    return data(format(field, spec))


def fields(template: str) -> set[str]:
    """The names a template fills in (for the catalogue's own test)."""
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}


def number(value: float | None, language: str) -> str:
    """A score or a time as people write it: no trailing zeros, the language's decimal mark
    (``1.5`` in English, ``1,5`` in Russian); None is a dash."""
    if value is None:
        return "—"
    shown = f"{round(value, 2):g}"
    return shown.replace(".", render(Text(id="page.decimal_mark"), language))

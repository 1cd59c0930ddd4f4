"""Every text a student or a TA reads, in English and Russian, keyed by id.

Each module of this package holds the texts of one area as ``TEXTS = {id: (English,
Russian)}``; templates use ``str.format`` fields. Code builds a ``results.Text`` (an id
with parameters) and the language is chosen once, when ``render`` turns it into a string.
This is the only place that knows which language is which (a test greps for it).
Torch-free: the reports import it.
"""
import string

from ..results import Text
from . import checks, feedback, gradebook, issues, mistakes, pages, terms

LANGUAGES = ("en", "ru")


def _merge(*modules) -> dict[str, tuple[str, str]]:
    merged: dict[str, tuple[str, str]] = {}
    for module in modules:
        clash = merged.keys() & module.TEXTS.keys()
        if clash:
            raise RuntimeError(f"text ids defined twice: {sorted(clash)}")
        merged.update(module.TEXTS)
    return merged


CATALOGUE = _merge(checks, feedback, gradebook, issues, mistakes, pages, terms)


def render(value: "Text | str | None", language: str) -> str:
    """``value`` in ``language`` (en or ru); plain strings are code or data and pass as they are."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    template = CATALOGUE[value.id][LANGUAGES.index(language)]
    params = {name: _param(v, language) for name, v in value.params.items()}
    return template.format(**params)


def _param(value, language: str):
    if isinstance(value, Text):
        return render(value, language)
    if isinstance(value, list):
        return ", ".join(str(_param(v, language)) for v in value)
    return value


def fields(template: str) -> set[str]:
    """The names a template fills in (for the catalogue's own test)."""
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}

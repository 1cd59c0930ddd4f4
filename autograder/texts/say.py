"""``Say``: the language chosen once, and everything that depends on it.

``Say("ru")`` renders catalogue texts as ``Prose`` (words and code, for any writer), writes
numbers and points as the language does, and names a check or a mistake with one fallback
for a name the catalogue does not hold (a result written by an older grader): the name
itself, as code. The feedback view (``autograder.feedback``) holds one and nothing else
passes a language around.
"""
import math
import re
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal

from ..results import Text
from . import CATALOGUE, DATA, LANGUAGES, NUMBER, QUOTED, WORDS, Run, decimal, plain, runs

LATIN = re.compile("[A-Za-z]")
SCORE_PLACES = 3  # points are multiples of 1/8 in grader.yml: shown exactly, so they add up


@dataclass(frozen=True)
class Prose:
    """Text in the chosen language, as runs of words and of code. What the template quotes
    in backticks is code; so is every parameter with a Latin letter in it (a message, a
    name, a shape: code or data, never words to translate, which come as texts)."""
    runs: tuple[Run, ...] = ()

    def __str__(self) -> str:
        return plain(list(self.runs))

    def __bool__(self) -> bool:
        return bool(self.runs)

    def pieces(self) -> list[tuple[bool, str]]:
        """(is_code, text) for each run: what a writer sets as code, and what as words."""
        return [(kind == QUOTED or (kind == DATA and bool(LATIN.search(part))), part) for kind, part in self.runs]

    def __add__(self, other: "Prose") -> "Prose":
        return Prose(self.runs + other.runs)


@dataclass(frozen=True)
class Say:
    """One language's way of saying things."""
    language: str

    def __post_init__(self):
        if self.language not in LANGUAGES:
            raise ValueError(f"language {self.language!r}: expected one of {', '.join(LANGUAGES)}")

    def __call__(self, value: Text | str | None) -> Prose:
        """A catalogue text (or a plain string, which is data) in this language."""
        return Prose(tuple(runs(value, self.language)))

    def text(self, text_id: str, **params) -> Prose:
        return self(Text(id=text_id, params=params))

    @staticmethod
    def words(value: str) -> Prose:
        """Words that came without a catalogue text (an older result's message), as prose."""
        return Prose(((WORDS, value),)) if value else Prose()

    def number(self, value: float | None, places: int = SCORE_PLACES) -> str:
        """``value`` rounded half up to ``places`` decimals, without trailing zeros, with the
        language's decimal mark; a dash for None (nothing to show)."""
        if value is None:
            return "—"
        if not math.isfinite(value) or abs(value) >= 1e15:  # not a score: no fixed places
            return decimal(f"{value:g}", self.language)
        rounded = Decimal(repr(float(value))).quantize(Decimal(1).scaleb(-places), ROUND_HALF_UP)
        shown = format(rounded.normalize(), "f")
        return decimal("0" if shown in ("-0", "0") else shown, self.language)

    def points(self, score: float | None, maximum: float) -> Prose:
        """``score / maximum`` as a number pair (a dash for a score not given yet)."""
        return Prose(((NUMBER, f"{self.number(score)} / {self.number(maximum)}"),))

    def title(self, check_name: str) -> Prose:
        """A check's heading: the catalogue's ``title.<name>``, else the name as code."""
        return self(named(f"title.{check_name}", check_name))

    def mistake(self, mistake_id: str) -> Prose:
        """A catalogued mistake's explanation, else its id as code."""
        return self(named(f"mistake.{mistake_id}", mistake_id))


def named(text_id: str, fallback: str) -> Text | str:
    """The catalogue's text ``text_id``, or ``fallback`` (data: a name, shown as code) where the
    catalogue does not hold it; for a name inside another text, as in the titles."""
    return Text(id=text_id) if text_id in CATALOGUE else fallback

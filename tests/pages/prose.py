"""The prose of a page as a reader sees it, code left out, and the English sentences in it."""
import re
from html.parser import HTMLParser

# Three Latin-script words in a row: an English sentence, not a term or an identifier.
LATIN_SENTENCE = re.compile(r"[A-Za-z]+(?:[ ,;:]+[A-Za-z]+){2,}")


class _Prose(HTMLParser):
    """Text outside <code>, <pre>, <style> and <script>."""
    CODE = {"code", "pre", "style", "script"}

    def __init__(self):
        super().__init__()
        self.inside_code, self.parts = 0, []

    def handle_starttag(self, tag, attrs):
        self.inside_code += tag in self.CODE

    def handle_endtag(self, tag):
        self.inside_code -= tag in self.CODE

    def handle_data(self, data):
        if not self.inside_code:
            self.parts.append(data)


def prose(page: str) -> str:
    reader = _Prose()
    reader.feed(page)
    return " ".join(reader.parts)


def latin_sentences(page: str) -> list[str]:
    return LATIN_SENTENCE.findall(prose(page))


class _Shown(HTMLParser):
    """Every text a reader sees, code included, in order (not the head's title and style); a
    block element starts a new word, an inline one (code, a span) does not."""
    HIDDEN = {"style", "script", "title"}
    INLINE = {"code", "span", "a", "strong", "em", "wbr"}

    def __init__(self):
        super().__init__()
        self.hidden, self.parts = 0, []

    def handle_starttag(self, tag, attrs):
        self.hidden += tag in self.HIDDEN
        if tag not in self.INLINE:
            self.parts.append(" ")

    def handle_endtag(self, tag):
        self.hidden -= tag in self.HIDDEN
        if tag not in self.INLINE:
            self.parts.append(" ")

    def handle_data(self, data):
        if not self.hidden:
            self.parts.append(data)


def shown_text(page: str) -> str:
    """What a reader of ``page`` (HTML) sees, on one line: whitespace runs become one space."""
    reader = _Shown()
    reader.feed(page)
    return " ".join("".join(reader.parts).split())

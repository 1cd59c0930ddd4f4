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

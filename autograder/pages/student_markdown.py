"""Markdown a student wrote (a written answer), as HTML that runs nothing and loads nothing.

The TA reads a written answer as the student saw it in Jupyter: headings, lists, emphasis,
tables and code are formatted (markdown-it-py, CommonMark with GFM tables and strikethrough),
but nothing in it can act on the page:

- raw HTML is text (``html: False``): ``<script>``, ``<img onerror=...>`` and ``<style>`` show
  as the characters they are;
- a link is its text followed by its address as code, never an ``<a href>`` (``javascript:``,
  ``data:`` and the web are one click from nothing); an image is its description and its
  address, never an ``<img>`` (a ``data:`` image is named by its length), so the page loads
  no resource a student chose;
- LaTeX (``$...$``, ``$$...$$``, as Jupyter reads it) is shown as its source in a code span,
  not typeset: typesetting needs MathJax, a script the pages' policy forbids; an opening ``$``
  that never closes is a plain ``$``;
- control and invisible format characters are written out as escapes, as everywhere on the
  pages (``markup.esc``), so a direction override cannot reverse the words after it.

Cost: markdown-it-py is linear in its input on adversarial text (measured: nested brackets,
emphasis runs, many lines), and the TeX rule below finds each closing ``$`` once (a search
that found none is remembered), so the work grows with the answer's length, never faster.
Every answer is cut before it comes here (``reading.MAX_ANSWER_CHARS``).
"""
import functools
import html

from markdown_it import MarkdownIt
from markdown_it.rules_inline import StateInline

from ..files import written_out

SHOWN_URL = 120  # characters of a link's or an image's address shown; a longer one is cut with its length


def answer_html(source: str) -> str:
    """``source`` (Markdown with TeX) as an HTML fragment that holds no script, no link and no
    reference to any resource."""
    text = written_out(source.replace("\r\n", "\n").replace("\r", "\n"), keep="\n\t")
    return _parser().render(text, {"links": []})


@functools.cache
def _parser() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
    md.enable(["table", "strikethrough"])
    md.inline.ruler.before("escape", "tex", _tex)
    md.add_render_rule("tex", _render_tex)
    md.add_render_rule("link_open", _link_open)
    md.add_render_rule("link_close", _link_close)
    md.add_render_rule("image", _image)
    return md


def _tex(state: StateInline, silent: bool) -> bool:
    """``$$...$$`` or ``$...$`` at ``state.pos``: one token holding the TeX as written. A search
    for a closing delimiter that found none is remembered for the rest of this text, so a
    thousand unclosed ``$`` cost one search, not a thousand."""
    start = state.pos
    if state.src[start] != "$":
        return False
    delimiter = "$$" if state.src.startswith("$$", start) else "$"
    never = state.env.setdefault("tex_unclosed", {})
    key = (id(state.src), state.posMax, delimiter)
    if start >= never.get(key, state.posMax + 1):
        return False
    end = state.src.find(delimiter, start + len(delimiter), state.posMax)
    if end < 0:
        never[key] = min(start, never.get(key, start))
        return False
    if end == start + len(delimiter):   # "$$" read as "$" then "$": nothing between
        return False
    if not silent:
        token = state.push("tex", "code", 0)
        token.content, token.markup = state.src[start + len(delimiter):end], delimiter
    state.pos = end + len(delimiter)
    return True


def _render_tex(self, tokens, idx, options, env) -> str:
    token = tokens[idx]
    return f'<code class="tex">{html.escape(token.markup + token.content + token.markup)}</code>'


def _link_open(self, tokens, idx, options, env) -> str:
    token = tokens[idx]  # an autolink (<http://x>) shows its address as its text already
    env["links"].append(None if token.markup == "autolink" else str(token.attrGet("href") or ""))
    return '<span class="link">'


def _link_close(self, tokens, idx, options, env) -> str:
    address = env["links"].pop()
    return "</span>" if address is None else f'</span> <code class="url">{_address(address)}</code>'


def _image(self, tokens, idx, options, env) -> str:
    token = tokens[idx]
    alt = self.renderInlineAsText(token.children or [], options, env)
    return (f'<span class="image">[{html.escape(alt) or "image"}] '
            f'<code class="url">{_address(token.attrGet("src") or "")}</code></span>')


def _address(url: str) -> str:
    """A link's or an image's address, escaped, cut where it is long (a ``data:`` image)."""
    url = str(url)
    if len(url) <= SHOWN_URL:
        return html.escape(url)
    return f"{html.escape(url[:SHOWN_URL])}… ({len(url)})"

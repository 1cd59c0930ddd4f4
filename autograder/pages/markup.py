"""What every page shares: escaping, the page shell with its CSS, and atomic writing.

Every value that reaches a page goes through ``esc`` (student ids, messages, code: a student
can put ``<script>`` anywhere), and an id through ``ident``, which shows each of its
characters. The shell's Content-Security-Policy allows no script and no fetch at all, so even
a missed escape cannot run or load anything; the CSS keeps every page inside a phone's width
(code wraps, images and tables scale).
"""
import base64
import html
from collections.abc import Iterable

from ..files import visible, written_out
from ..files import write_atomically  # noqa: F401 - the pages write through it
from ..results import Text
from ..texts.say import Prose, Say

POLICY = "default-src 'none'; img-src data:; style-src 'unsafe-inline'"

CSS = """
*{box-sizing:border-box}
body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;
 color:#1d1d1f;background:#f6f6f4}
main{max-width:52rem;margin:0 auto;padding:1rem .9rem 3rem;background:#fff;min-height:100vh}
h1{font-size:1.45rem;line-height:1.25;margin:.2rem 0 .4rem;overflow-wrap:anywhere}
h2{font-size:1.2rem;margin:2rem 0 .6rem;padding-bottom:.2rem;border-bottom:2px solid #e4e4e0;
 overflow-wrap:anywhere}
h3{font-size:1.02rem;margin:0 0 .4rem;overflow-wrap:anywhere}
p,li,dd,dt,td,th,figcaption{overflow-wrap:break-word}
code,pre{font:.88rem/1.45 "DejaVu Sans Mono",Menlo,Consolas,monospace;overflow-wrap:anywhere}
pre{white-space:pre-wrap;overflow-wrap:anywhere;background:#f3f3f0;border:1px solid #e2e2dd;
 border-radius:6px;padding:.5rem .65rem;margin:.25rem 0 .6rem}
img{max-width:100%;height:auto;display:block}
figure{margin:.8rem 0 .4rem}
.pair{display:flex;flex-wrap:wrap;gap:.4rem}
.pair img,.pair>div{flex:1 1 18rem;min-width:0}
mark{background:#fde68a;color:inherit;border-radius:2px}
h4{font-size:.98rem;margin:0 0 .3rem;overflow-wrap:anywhere}
figcaption{font-size:.92rem;color:#444;margin-top:.3rem}
h1 code,h2 code,h3 code{font-size:.95em}
.meta{color:#555;margin:0}
.score{font-size:1.15rem;font-weight:600;margin:.6rem 0;padding:.55rem .75rem;background:#eef4fb;
 border-left:4px solid #2f6db5;border-radius:4px}
.pts{font-weight:400;color:#555;white-space:nowrap}
.check{border:1px solid #e6c9c4;border-left:4px solid #c0392b;border-radius:6px;padding:.6rem .75rem;
 margin:.7rem 0;background:#fffaf9}
.problem{color:#8b1e12;margin:.1rem 0 .5rem}
.flag{border:1px solid #e2e2dd;border-left:4px solid #b08900;border-radius:6px;padding:.6rem .75rem;
 margin:.7rem 0}
dd>code{background:#f3f3f0;border-radius:4px;padding:.05rem .3rem}
dl{margin:0}
dt{font-weight:600;color:#444;font-size:.92rem;margin-top:.35rem}
dd{margin:0 0 .2rem}
.mistake{background:#fff3cd;border-radius:4px;padding:.1rem .35rem}
ul.passed{list-style:none;padding:0;margin:.4rem 0}
ul.passed li{padding:.1rem 0;color:#2d5f2e}
.ok{color:#2d7d32;font-weight:700}
.bad{color:#c0392b;font-weight:700}
.none{color:#777;font-weight:700}
.note{color:#555;font-size:.92rem}
.issues li{margin:.3rem 0}
.explain{color:#444;font-size:.95rem}
.table{overflow-x:auto;margin:.4rem 0 1rem}
table{width:100%;border-collapse:collapse;table-layout:fixed;font-size:.92rem}
th,td{border-bottom:1px solid #e4e4e0;padding:.3rem .35rem;text-align:left;vertical-align:top}
th{background:#f3f3f0;font-weight:600}
td.num,th.num{text-align:right}
.bar{display:block;height:.45rem;background:#e4e4e0;border-radius:3px;margin-top:.15rem}
.bar span{display:block;height:100%;background:#2f6db5;border-radius:3px}
details{margin:.3rem 0 .8rem}
summary{cursor:pointer;color:#2f6db5}
"""


def esc(value: object) -> str:
    """``value`` as HTML text: every ``<``, ``&`` and quote escaped, and every control or
    invisible format character but a line break and a tab written out as its escape, as in the
    Markdown files (a NUL or ESC stays out of the file, a direction override cannot reverse
    the grader's words after a student's message)."""
    return html.escape(written_out(str(value), keep="\n\t"), quote=True)


def prose(said: Prose) -> str:
    """Prose as HTML: its words escaped, its code (what the template quotes, and data such as
    a message, a name or a shape) set as code, so the student sees what came from their code."""
    return "".join(f"<code>{esc(part)}</code>" if is_code else esc(part) for is_code, part in said.pieces())


def say(value: Text | str | None, language: str) -> str:
    """A catalogue text in ``language``, as HTML (for the class report, which has no view)."""
    return prose(Say(language)(value))


def number(value: float | None, language: str) -> str:
    """A mean or a time as the class report writes it: two decimals at most."""
    return Say(language).number(value, places=2)


def ident(name: str) -> str:
    """An identifier (task id, student id) as code that may wrap after each ``_`` (a narrow
    table column breaks ``dot_product_attention`` there, not inside a word), every character
    shown (``files.visible``: a browser shows ``a b`` and ``a\\nb`` alike, and drops a leading
    space or tab)."""
    return "<code>" + "_<wbr>".join(esc(part) for part in visible(str(name)).split("_")) + "</code>"


def code_block(source: str) -> str:
    return f"<pre><code>{esc(source)}</code></pre>"


def image(png: bytes, alt: str) -> str:
    """An inline PNG (a data: URI: the page stays one file)."""
    data = base64.b64encode(png).decode("ascii")
    return f'<img src="data:image/png;base64,{data}" alt="{esc(alt)}">'


def table(headers: Iterable[str], rows: Iterable[Iterable[str]], widths: tuple[int, ...],
          numeric: set[int] = frozenset()) -> str:
    """A table of already-escaped cells. ``widths`` (percent per column) fix the layout, so
    a long student id wraps inside its column instead of squeezing the others on a phone;
    columns in ``numeric`` are right-aligned."""
    def cells(tag: str, values: Iterable[str]) -> str:
        return "".join(f'<{tag} class="num">{v}</{tag}>' if i in numeric else f"<{tag}>{v}</{tag}>"
                       for i, v in enumerate(values))
    columns = "".join(f'<col style="width:{width}%">' for width in widths)
    body = "".join(f"<tr>{cells('td', row)}</tr>" for row in rows)
    # The wrapper scrolls a table too wide for a phone by itself, never the whole page.
    return (f'<div class="table"><table><colgroup>{columns}</colgroup><thead><tr>{cells("th", headers)}'
            f"</tr></thead><tbody>{body}</tbody></table></div>")


def bar(share: float) -> str:
    """A small horizontal bar for a share in [0, 1] (pure CSS, no image)."""
    return f'<span class="bar"><span style="width:{max(0.0, min(1.0, share)) * 100:.1f}%"></span></span>'


def document(title: str, body: str, language: str, policy: str = POLICY, style: str = "") -> str:
    """A whole page: no script (unless ``policy`` allows one), no external resource, readable
    from 320 px up; ``style`` is CSS of its own, after the pages' shared CSS."""
    return ("<!DOCTYPE html>\n"
            f'<html lang="{esc(language)}"><head><meta charset="utf-8">'
            f'<meta http-equiv="Content-Security-Policy" content="{policy}">'
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>{esc(title)}</title><style>{CSS}{style}</style></head>"
            f"<body><main>{body}</main></body></html>\n")

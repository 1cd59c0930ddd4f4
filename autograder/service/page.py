"""The students' page at ``/``: give the token, upload the notebook, watch it graded, read
the feedback.

Drawn by the server in grader.yml's language from the text catalogue, with the feedback
pages' shell and CSS (``pages.markup``). Its one script, ``page.js``, is served by the
service itself, so the page loads nothing from elsewhere; the policy below allows that
script and requests to the service, nothing else. The script sets every text with
``textContent`` (never as HTML) and shows the feedback page the API returns in a frame
sandboxed without scripts or the service's origin.
"""
import json
from datetime import datetime
from pathlib import Path

from .. import texts
from ..pages.markup import document, esc, say
from ..results import text
from .deadlines import shown

POLICY = ("default-src 'none'; script-src 'self'; connect-src 'self'; img-src data:; "
          "style-src 'unsafe-inline'; frame-src 'self'; base-uri 'none'; form-action 'none'")
HEADER_POLICY = POLICY + "; frame-ancestors 'none'"  # a browser takes frame-ancestors from a header only
SCRIPT = (Path(__file__).with_name("page.js")).read_text(encoding="utf-8")
TA = text("term.ta")
STATUSES = ("sending", "queued", "grading", "done", "replaced", "unreachable", "choose")
STYLE = """
form{display:grid;gap:.35rem;margin:1rem 0}
label{font-weight:600;margin-top:.4rem}
input,button{font:inherit;width:100%;padding:.5rem .6rem;border:1px solid #c9c9c4;border-radius:6px;background:#fff}
button{background:#2f6db5;color:#fff;border-color:#2f6db5;font-weight:600;margin-top:.6rem;cursor:pointer}
#status{min-height:1.5rem;padding:.45rem .7rem;border-radius:4px;background:#f3f3f0}
#status.ok{background:#e8f3e8;color:#2d5f2e}
#status.bad{background:#fbeceb;color:#8b1e12}
iframe{width:100%;height:75vh;border:1px solid #e4e4e0;border-radius:6px}
"""


def students_page(assignment: str, notebook: str, per_hour: int, language: str,
                  deadline: datetime | None = None) -> str:
    def said(text_id: str, **params) -> str:
        return say(text(text_id, **params), language)

    intro = said("service.page.intro", feedback=text("term.feedback"), limit=per_hour, ta=TA)
    due = f'<p id="deadline">{said("service.page.deadline", deadline=shown(deadline), ta=TA)}</p>' if deadline else ""
    body = (f"<h1>{said('service.page.title', assignment=assignment)}</h1>"
            f'<p class="explain">{intro}</p>{due}'
            '<form id="hand-in" novalidate>'
            f'<label for="token">{said("service.page.token", ta=TA)}</label>'
            '<input id="token" type="password" autocomplete="off" spellcheck="false" required>'
            f'<label for="notebook">{said("service.page.notebook", notebook=notebook)}</label>'
            '<input id="notebook" type="file" accept=".ipynb" required>'
            f'<button type="submit">{said("service.page.send")}</button></form>'
            '<p id="status" role="status" aria-live="polite"></p>'
            f'<section id="result" hidden><h2>{said("service.page.feedback")}</h2>'
            f'<iframe id="feedback" sandbox="" title="{esc(_plain("service.page.feedback", language))}">'
            "</iframe></section>"
            f'<script type="application/json" id="texts">{_script_texts(language)}</script>'
            '<script src="page.js"></script>')
    return document(_plain("service.page.title", language, assignment=assignment), body, language, POLICY, STYLE)


def _plain(text_id: str, language: str, **params) -> str:
    return texts.render(text(text_id, **params), language)


def _script_texts(language: str) -> str:
    """The texts the script shows, as JSON that cannot end the script element early."""
    said = {status: _plain(f"service.status.{status}", language) for status in STATUSES}
    said["submission"] = _plain("service.page.submission", language, id="{id}")
    return json.dumps(said, ensure_ascii=False).replace("<", "\\u003c")

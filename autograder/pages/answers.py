"""The TA's page of written answers: ``DIR/answers.html`` (SPEC §6, "Written answers outside
nbgrader"). Draws what ``autograder.outputs.answers`` puts together; decides nothing.

One question at a time, across the class, as a TA grades: the question and the rubric from
the TA's source notebook, then every student's answer (already rendered by
``student_markdown``: no script, no link, nothing loaded) with the points entered for it so
far, and a note where there is no answer to read (left as released, no answer cell, a
notebook that could not be read, an answer cut for its length). The page is one file under
the pages' Content-Security-Policy, readable from 320 px up.
"""
from dataclasses import dataclass

from ..files import spreadsheet_safe
from ..results import Text, text
from ..texts.say import Say
from .markup import document, esc, ident, say

ANSWERED, AS_RELEASED, NO_CELL, NOT_READ, NOT_KEPT = "answered", "as released", "no cell", "not read", "not kept"

STYLE = """
.answers-how{color:#444;font-size:.95rem}
nav ul{padding-left:1.2rem;margin:.3rem 0}
.question{background:#f7f7f4;border:1px solid #e2e2dd;border-radius:6px;padding:.1rem .75rem;margin:.4rem 0}
.answer{border:1px solid #dcdcd6;border-left:4px solid #2f6db5;border-radius:6px;padding:.5rem .75rem;
 margin:.8rem 0}
.answer.empty{border-left-color:#9e9e9e;background:#fafaf8}
.answer h3{display:flex;flex-wrap:wrap;gap:.2rem .6rem;align-items:baseline}
.answer h3 small{font-weight:400;color:#555}
.badge{font-size:.85rem;font-weight:600;border-radius:4px;padding:.05rem .4rem}
.badge.entered{background:#e3f1e4;color:#1e5b22}
.badge.pending{background:#f0f0ec;color:#555}
.md{overflow-wrap:anywhere}
.md>:first-child{margin-top:.2rem}
.md blockquote{margin:.4rem 0;padding-left:.7rem;border-left:3px solid #ddd;color:#444}
.md h1,.md h2,.md h3,.md h4,.md h5,.md h6{font-size:1rem;margin:.6rem 0 .3rem;border:0;padding:0}
.md code{background:#f3f3f0;border-radius:4px;padding:.05rem .25rem}
.md code.tex{background:#eef0fb;color:#2a2f6b}
.md code.url{color:#555;font-size:.8rem}
.md pre code{background:none;padding:0}
.md table{table-layout:auto}
.md .link{text-decoration:underline dotted}
.md .image{color:#555}
"""


@dataclass(frozen=True)
class Entry:
    """One student's answer to one question."""
    student_id: str
    state: str                  # ANSWERED, AS_RELEASED, NO_CELL, NOT_READ, NOT_KEPT
    html: str                   # the answer, rendered (student_markdown); empty without one
    length: int                 # characters of the whole answer
    shown: int                  # characters of it kept and shown (fewer where it was cut)
    points: float | None        # entered so far
    notebook: str               # the file graded, as found
    reason: Text | str = ""     # why the notebook could not be read (NOT_READ)


@dataclass(frozen=True)
class Question:
    """A written task as the TA's source notebook has it."""
    task: str
    max_score: float
    prompt_html: str            # the question, rendered
    rubric_html: str            # the TA's rubric (the answer cell's solution region), rendered
    released: str               # the answer cell as the students got it


@dataclass(frozen=True)
class QuestionAnswers:
    question: Question
    entries: list[Entry]

    @property
    def entered(self) -> int:
        return sum(entry.points is not None for entry in self.entries)


def answers_page(questions: list[QuestionAnswers], assignment: str, language: str) -> str:
    """The whole page."""
    talk = Say(language)
    title = str(talk.text("answers.title", assignment=assignment))
    parts = [f"<header><h1>{esc(title)}</h1>",
             f'<p class="answers-how">{say(text("answers.how"), language)}</p></header>']
    if not any(q.entries for q in questions):
        parts.append(f"<p>{say(text('answers.no_students'), language)}</p>")
        return document(title, "".join(parts), language, style=STYLE)
    items = "".join(f'<li><a href="#q-{esc(q.question.task)}">{ident(q.question.task)}</a>: {_task_line(q, talk)}</li>'
                    for q in questions)
    parts.append(f"<nav><h2>{say(text('answers.contents'), language)}</h2><ul>{items}</ul></nav>")
    parts += [_question(q, number, talk) for number, q in enumerate(questions)]
    return document(title, "".join(parts), language, style=STYLE)


def _task_line(answers: QuestionAnswers, talk: Say) -> str:
    return say(text("answers.task_line", max=talk.number(answers.question.max_score), entered=answers.entered,
                    count=len(answers.entries)), talk.language)


def _question(answers: QuestionAnswers, number: int, talk: Say) -> str:
    question, language = answers.question, talk.language
    head = (f'<section id="q-{esc(question.task)}"><h2>{ident(question.task)}</h2>'
            f'<p class="meta">{_task_line(answers, talk)}</p>')
    if question.prompt_html:
        head += (f'<details open><summary>{say(text("answers.question"), language)}</summary>'
                 f'<div class="question md">{question.prompt_html}</div></details>')
    if question.rubric_html:
        head += (f'<details><summary>{say(text("answers.rubric"), language)}</summary>'
                 f'<div class="question md">{question.rubric_html}</div></details>')
    entries = "".join(_entry(entry, question, f"a{number}-{index}", talk)
                      for index, entry in enumerate(answers.entries))
    return f"{head}{entries}</section>"


def _entry(entry: Entry, question: Question, anchor: str, talk: Say) -> str:
    language = talk.language
    maximum = talk.number(question.max_score)
    if entry.points is None:
        badge = f'<span class="badge pending">{say(text("answers.no_points", max=maximum), language)}</span>'
    else:
        points = text("answers.points", points=talk.number(entry.points), max=maximum)
        badge = f'<span class="badge entered">{say(points, language)}</span>'
    cell = spreadsheet_safe(entry.student_id)
    as_written = (f' <small>{say(text("answers.csv_id", cell=cell), language)}</small>'
                  if cell != entry.student_id else "")
    head = f"<h3>{ident(entry.student_id)}{as_written} {badge}</h3>"
    body = "".join(f'<p class="note">{note}</p>' for note in _notes(entry, question, language))
    if entry.state in (ANSWERED, AS_RELEASED) and entry.html and entry.length > entry.shown:  # folded: pages long
        shown = say(text("answers.show_cut", shown=entry.shown), language)
        body += f'<details><summary>{shown}</summary><div class="md">{entry.html}</div></details>'
    elif entry.state in (ANSWERED, AS_RELEASED) and entry.html:
        body += f'<div class="md">{entry.html}</div>'
    empty = "" if entry.state == ANSWERED else " empty"
    return f'<article class="answer{empty}" id="{anchor}">{head}{body}</article>'


def _notes(entry: Entry, question: Question, language: str) -> list[str]:
    """What the TA should know before reading (or instead of reading) the answer."""
    notes = []
    if entry.state == AS_RELEASED:
        notes.append(say(text("answers.as_released"), language))
    elif entry.state == NO_CELL:
        notes.append(say(text("answers.no_cell", notebook=entry.notebook, task=question.task), language))
    elif entry.state == NOT_READ:
        notes.append(say(text("answers.not_read", notebook=entry.notebook, reason=entry.reason), language))
    elif entry.state == NOT_KEPT:
        notes.append(say(text("answers.not_kept"), language))
    if entry.length > entry.shown:
        notes.append(say(text("answers.cut", length=entry.length, shown=entry.shown, notebook=entry.notebook),
                         language))
    return notes

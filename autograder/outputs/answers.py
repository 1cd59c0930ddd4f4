"""The written answers, for the TA who grades them outside nbgrader (SPEC §6): each student's
kept beside the result, ``DIR/answers/<student_id>.json``, and all of them on one page,
``DIR/answers.html``, one question across the class at a time.

The answer is what the notebook reader kept of the answer cell (``reading.MAX_ANSWER_CHARS``
characters at most, with the whole text's length), rendered once, when the result is written
(``pages.student_markdown``: Markdown formatted, LaTeX as its source, nothing that runs or
loads), so a run that reuses every result draws the page from files. The page shows each
answer with the points entered for it (``totals.entered_in``: manual_points.csv, or an
nbgrader gradebook) and says what else the TA needs: the question and the rubric from the
TA's source notebook, an answer left as released, a notebook with no answer cell or one that
could not be read. ``pages.answers`` draws it.
"""
import json
import re
from dataclasses import dataclass
from pathlib import Path

from ..files import clean, clean_text, write_atomically
from ..pages.answers import (ANSWERED, AS_RELEASED, NO_CELL, NOT_KEPT, NOT_READ, Entry, Question, QuestionAnswers,
                             answers_page)
from ..pages.markup import code_block
from ..pages.student_markdown import answer_html
from ..results import SubmissionResult, WrittenAnswer
from ..submissions.ids import file_stem
from .totals import Entered

FOLDER, PAGE = "answers", "answers.html"
# nbgrader's solution region in the TA's source cell: the rubric, which its release replaces by the stub
REGION = re.compile(r"^[ \t]*### BEGIN SOLUTION[^\n]*\n(.*?)^[ \t]*### END SOLUTION[^\n]*$", re.S | re.M)
STUB = "YOUR ANSWER HERE"


@dataclass(frozen=True)
class KeptAnswer:
    text: str
    length: int       # of the whole answer, where ``text`` was cut
    html: str         # ``text`` rendered (pages.student_markdown)


def path(folder: Path, student_id: str) -> Path:
    return folder / FOLDER / f"{file_stem(student_id)}.json"


def save(folder: Path, student_id: str, answers: dict[str, WrittenAnswer]) -> None:
    """``student_id``'s answers (task id -> answer), each with its HTML, beside the result."""
    kept = {}
    for task, answer in answers.items():
        text = clean_text(answer.text)
        kept[task] = {"text": text, "length": answer.length, "html": _rendered(text)}
    write_atomically(path(folder, student_id),
                     json.dumps(clean({"student_id": student_id, "answers": kept}), ensure_ascii=False))


def _rendered(text: str) -> str:
    """The answer as HTML; should the renderer fail on it, its text as it is (escaped)."""
    try:
        return answer_html(text)
    except Exception:  # noqa: BLE001 - one student's answer never stops the batch
        return code_block(text)


def load(folder: Path, student_id: str) -> dict[str, KeptAnswer] | None:
    """The answers kept for ``student_id``, or None when none were (a result graded before
    answers were kept, or a file that is not ours)."""
    try:
        data = json.loads(path(folder, student_id).read_text(encoding="utf-8"))
        return {str(task): KeptAnswer(str(a["text"]), int(a["length"]), str(a["html"]))
                for task, a in data["answers"].items()}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def questions_of(source, tasks: dict[str, float]) -> list[Question]:
    """``tasks`` (written task -> its points) as the source notebook (nbformat) asks them."""
    cells = list(source.cells)
    found = []
    for task, points in tasks.items():
        at = next((i for i, c in enumerate(cells) if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == task),
                  None)
        if at is None:
            found.append(Question(task, points, "", "", STUB))
            continue
        prompt = next((c.source for c in reversed(cells[:at]) if c.cell_type == "markdown"), "")
        region = REGION.search(cells[at].source)
        rubric = region.group(1) if region else cells[at].source
        released = REGION.sub(STUB, cells[at].source) if region else STUB
        found.append(Question(task, points, answer_html(prompt), answer_html(rubric), released))
    return found


def answers_view(folder: Path, results: list[SubmissionResult], entered: Entered,
                 questions: list[Question]) -> list[QuestionAnswers]:
    """Every student's answer to every question, in student id order, with the points entered."""
    kept = {result.student_id: load(folder, result.student_id) for result in results}
    ordered = sorted(results, key=lambda r: r.student_id)
    return [QuestionAnswers(question, [_entry(result, kept[result.student_id], entered, question)
                                       for result in ordered]) for question in questions]


def _entry(result: SubmissionResult, kept: dict[str, KeptAnswer] | None, entered: Entered,
           question: Question) -> Entry:
    points = entered.get(clean_text(result.student_id), {}).get(question.task)
    answer, notebook = (kept or {}).get(question.task), result.notebook or ""
    if answer is not None:
        same = " ".join(answer.text.split()) in ("", " ".join(question.released.split()))
        return Entry(result.student_id, AS_RELEASED if same else ANSWERED, answer.html, answer.length,
                     len(answer.text), points, notebook)
    if not any(task.checks for task in result.tasks) and result.errors:  # the notebook was not read
        why = result.errors[0]   # as a text, said in the page's language
        return Entry(result.student_id, NOT_READ, "", 0, 0, points, notebook, why.text or why.message)
    return Entry(result.student_id, NO_CELL if kept is not None else NOT_KEPT, "", 0, 0, points, notebook)


def write_page(folder: Path, results: list[SubmissionResult], entered: Entered, questions: list[Question],
               language: str) -> Path:
    """``DIR/answers.html``: every student's written answers, with their points entered so far."""
    page = folder / PAGE
    assignment = results[0].assignment if results else ""
    write_atomically(page, answers_page(answers_view(folder, results, entered, questions), assignment, language))
    return page

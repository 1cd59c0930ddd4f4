"""The result of grading, as one set of types (SPEC §3's JSON), torch-free.

Grading builds these objects, the pool returns them, the store writes and reads them back
with validation, and the reports render them by attribute. Everything a person reads is
kept as a ``Text`` (a catalogue id with parameters, ``autograder.texts``) until it is
rendered, so the language is chosen once, at rendering; the JSON also carries each text
rendered in the configured language (the ``message`` fields of SPEC §3).
"""
from __future__ import annotations

import math
from typing import Union

from pydantic import BaseModel, ConfigDict, Field

Param = Union[str, int, float, None, "Text", list["Text"]]


class Text(BaseModel):
    """A catalogue text: ``id`` names it in ``autograder.texts``, ``params`` fill it in.
    A parameter may itself be a ``Text`` (rendered in the same language)."""
    model_config = ConfigDict(frozen=True)
    id: str
    params: dict[str, Param] = Field(default_factory=dict)


def text(text_id: str, **params: Param) -> Text:
    return Text(id=text_id, params=params)


def message_text(message: str, form: str = "check.message") -> Text | str:
    """An error's message inside a sentence: ``form`` around it (": {message}", or
    " ({message})" with "check.aside"), or nothing at all for an empty message (``raise
    NotImplementedError()``), so that no sentence shows a stray colon or "()"."""
    return text(form, message=message) if message.strip() else ""


class Heatmap(BaseModel):
    """Attention weights on a failing example, the student's beside the reference's:
    one (queries, keys) matrix each, from the example's first batch row."""
    got: list[list[float]]
    expected: list[list[float]]

    def scale(self) -> tuple[float, float] | None:
        """The one colour scale of both maps, from 0 (or below) to the largest finite weight;
        None when there is nothing honest to draw: either is not a non-empty rectangular
        matrix, or the finite weights span more than 1e307, near the largest float (1.8e308),
        where a colour bar's tick arithmetic overflows (measured with matplotlib 3.11: it
        raises at 1.8e308, warns of an overflow at 4.5e307, draws 2e307 cleanly)."""
        if not all(rows and rows[0] and all(len(row) == len(rows[0]) for row in rows)
                   for rows in (self.got, self.expected)):
            return None
        finite = [v for rows in (self.got, self.expected) for row in rows for v in row if math.isfinite(v)]
        low = min(0.0, min(finite, default=0.0))
        high = max(max(finite, default=1.0), low + 1e-9)
        return (low, high) if high - low <= 1e307 else None


class Finding(BaseModel):
    """Why a check failed, in course terms. Every field but ``problem`` is optional."""
    problem: Text
    checked: Text | None = None             # what the check checks (its ``what``)
    case_code: str | None = None           # the smallest failing input, as runnable code
    expected: Text | str | None = None      # a value (str) or a description (Text)
    got: Text | str | None = None
    difference: Text | None = None          # where the largest difference is, and by how much
    mistake: str | None = None              # id in the mistakes catalogue (checks/mistakes.py)
    heatmap: Heatmap | None = None


class Issue(BaseModel):
    """A warning or an error of one submission (SPEC §3: code, task, message)."""
    code: str                               # what happened, as a stable identifier
    task: str | None = None                 # the task it concerns, or None for the whole submission
    message: str = ""                       # ``text`` rendered in the configured language
    text: Text | None = None
    detail: str | None = None               # for the TA: a crashed cell's source and traceback


class CheckResult(BaseModel):
    name: str                               # the check's key in grader.yml
    passed: bool
    score: float
    max_score: float
    message: str = ""                       # the finding (or note) rendered
    finding: Finding | None = None
    note: Text | None = None                # passed with a remark
    # Not judged: this earlier check of the task (its name) failed first, and what this one
    # checks cannot be told apart from that failure (gradients of wrong forward values). The
    # feedback says so instead of a verdict; ``passed`` and ``score`` still say what it scored.
    blocked_by: str | None = None
    seconds: float = 0.0
    # Failed on the GPU and was judged again on the CPU, whose verdict this is (SPEC §3: the
    # same score on either). Kept beside the result with ``seconds``: a count for the GPU check.
    again_on_cpu: bool = False


NOT_ATTEMPTED = "task.not_attempted"   # the ids of the one line said of a task left as released


class TaskResult(BaseModel):
    id: str                                 # the task id (the solution cell's nbgrader grade_id)
    score: float | None                     # None: a manual task, left for the TA
    max_score: float
    checks: list[CheckResult] = Field(default_factory=list)
    manual: bool = False                    # a written answer, graded by hand
    seconds: float = 0.0

    @property
    def not_attempted(self) -> Text | None:
        """What to say, in one line, of a task whose cell is still the released template's: set
        by grading on the trusted side (``grading/task.py``) as every check's problem; else None."""
        problems = [check.finding.problem if check.finding is not None else None for check in self.checks]
        if problems and all(p is not None and p.id.startswith(NOT_ATTEMPTED) for p in problems):
            return problems[0]
        return None


class WrittenAnswer(BaseModel):
    """A written answer as handed in, for the TA to read (``answers.html``): its text, cut at
    ``reading.MAX_ANSWER_CHARS``, and the length of the whole text."""
    text: str
    length: int

    @property
    def cut(self) -> bool:
        return self.length > len(self.text)


class SubmissionResult(BaseModel):
    student_id: str                         # from the file or folder name (docs: Student text and ids)
    assignment: str
    score: float                            # the autograded points (written answers: grades.csv)
    max_score: float                        # every task's points, the written answers' too
    notebook: str | None = None             # the file graded, as found under the PATH given
    tasks: list[TaskResult] = Field(default_factory=list)
    warnings: list[Issue] = Field(default_factory=list)
    errors: list[Issue] = Field(default_factory=list)
    seed: int | None = None                 # the hypothesis seed the checks ran with
    fingerprint: str = ""                   # digest of what the result depends on; unchanged: reused
    language: str = "en"                    # the language of every message
    output: str | None = None               # what the student's code printed (capped)
    timing: dict[str, float] = Field(default_factory=dict)  # phase -> seconds
    # task id -> its solution cell as handed in: kept beside the result (solutions/<id>.json)
    # for the class report's similar solutions, never in the result's JSON
    solutions: dict[str, str] = Field(default_factory=dict)
    # task id -> the written answer as handed in: kept beside the result (answers/<id>.json) for
    # the TA's answers.html, never in the result's JSON
    answers: dict[str, WrittenAnswer] = Field(default_factory=dict)

    @property
    def autograded_score(self) -> float:
        return sum(t.score or 0.0 for t in self.tasks if not t.manual)

    @property
    def autograded_max(self) -> float:
        return sum(t.max_score for t in self.tasks if not t.manual)

    @property
    def manual_max(self) -> float:
        return sum(t.max_score for t in self.tasks if t.manual)

    def task(self, task_id: str) -> TaskResult | None:
        return next((t for t in self.tasks if t.id == task_id), None)


Text.model_rebuild()

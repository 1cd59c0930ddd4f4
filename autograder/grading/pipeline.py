"""Grading a batch: each submission in a sandboxed worker, results back to one writer.

The flow of a submission: ``submissions`` finds it; ``grade_submission`` reads it (size
capped, no links followed), ``assemble`` plans its cells against the TA's source, a
``Session`` runs them in the sandbox and ``grading`` runs each task's checks; the pool
returns the ``SubmissionResult`` to this process, where ``store`` writes it atomically.
A result is reused while the submission, the source notebook, the grader.yml that was
used, the seed and the grader's version are all unchanged, so a batch killed half-way
and started again grades only what is missing.
"""
import array
import hashlib
import os
import re
import resource
import stat
import time
import tokenize
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from .. import __version__
from .assemble import CellPlan, assemble, grade_id, read_notebook
from ..checks.core import lost_reason
from ..config import GraderConfig
from ..course import COURSE, Course
from .task import RunSettings
from ..submissions.reading import ANSWER_LENGTH, NotJSON, TooLarge, read_kept
from ..results import Issue, SubmissionResult, TaskResult, WrittenAnswer, text
from ..sandbox.client import WorkerLost
from .session import Session
from ..submissions.find import Submission


def grader_version(course: Course = COURSE) -> str:
    """The package version and a digest of the grading code, so a changed check re-grades."""
    digest = hashlib.sha256()
    for path in sorted([*(course.root / "autograder").rglob("*.py"), *course.reference_dir.glob("*.py")]):
        digest.update(path.read_bytes())
    return f"{__version__}+{digest.hexdigest()[:12]}"


@dataclass
class Batch:
    """Everything one run needs that does not change between submissions."""
    settings: RunSettings
    config: GraderConfig
    config_bytes: bytes                       # the grader.yml that was used, as read
    course: Course = COURSE
    force: bool = False
    results: Path | None = None                # the results folder; its grading processes share recorded runs there
    source: object = field(init=False, repr=False)
    others: dict[str, set[str]] = field(init=False, repr=False)   # other assignments' task cells' grade ids
    fingerprint_base: str = field(init=False)
    version: str = field(init=False)

    def __post_init__(self):
        name, spec = self.settings.assignment, self.settings.spec
        source_path = self.course.source_notebook(name, spec.notebook)
        self.source = nbformat.read(source_path, as_version=4)
        self.others = {other: _task_cells(s) for other, s in self.config.assignments.items() if other != name}
        self.version = grader_version(self.course)
        fixed = [source_path.read_bytes(), self.config_bytes, str(self.settings.seed).encode(),
                 self.version.encode(), self.settings.device.encode()]
        self.fingerprint_base = hashlib.sha256(b"\0".join(fixed)).hexdigest()

    @property
    def language(self) -> str:
        return self.config.language

    @property
    def helpers(self) -> Path:
        return self.course.helper_package(self.settings.assignment)

    def fingerprint(self, data: bytes | None) -> str:
        return hashlib.sha256(self.fingerprint_base.encode() + (data or b"<unreadable>")).hexdigest()


def read_submission(submission: Submission, batch: Batch) -> tuple[bytes | None, Issue | None]:
    """What grading uses of the notebook (``reading.read_kept``: code cells' sources, the written
    answers' text and the cells' nbgrader metadata, as JSON), read without following a link
    (at most ``max_notebook_mb`` of grader.yml kept), or why not."""
    if submission.problem is not None:
        return None, submission.problem
    name = submission.path.name
    try:
        fd = os.open(submission.path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        return None, Issue(code="missing", text=text("issue.missing", path=name))
    except OSError:
        return None, Issue(code="not_regular_file", text=text("issue.not_regular", path=name))
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            return None, Issue(code="not_regular_file", text=text("issue.not_regular", path=name))
        try:
            return read_kept(handle, batch.config.max_notebook_mb << 20, batch.settings.written), None
        except (TooLarge, NotJSON) as why:
            return None, _unread(name, why)


def _unread(name: str, why: Exception) -> Issue:
    """Why a notebook was not read, for the student."""
    if isinstance(why, TooLarge):
        limit = f"{why.limit / 2**20:g}"
        if why.what == "read":
            return Issue(code="too_large", text=text("issue.too_large", name=name, limit=limit))
        if why.what == "values":
            return Issue(code="too_large", text=text("issue.too_many_values", name=name, limit=str(why.limit)))
        return Issue(code="too_large", text=text("issue.too_much_code", name=name, limit=limit))
    if not why.utf8:
        return Issue(code="unreadable", text=text("issue.not_utf8", name=name, position=why.reason))
    return Issue(code="invalid_notebook", text=text("issue.invalid_notebook", name=name, reason=why.reason))


def empty_result(batch: Batch, submission: Submission, fingerprint: str = "") -> SubmissionResult:
    spec = batch.settings.spec
    tasks = [TaskResult(id=t, score=None if spec.is_manual(t) else 0.0, max_score=spec.points(t),
                        manual=spec.is_manual(t)) for t in spec.tasks]
    return SubmissionResult(student_id=submission.student_id, assignment=batch.settings.assignment,
                            score=0.0, max_score=sum(t.max_score for t in tasks), tasks=tasks,
                            seed=batch.settings.seed, fingerprint=fingerprint, language=batch.language,
                            notebook=submission.shown or submission.path.name)


def grade_submission(sandbox, batch: Batch, submission: Submission,
                     progress: Callable[[str], None] | None = None) -> SubmissionResult:
    """Grade one submission; whatever the student's notebook holds, a result comes back.
    ``progress(phase)`` hears each phase as it starts: "read", "cells", then each task id."""
    progress = progress or _quiet
    progress("read")
    started = time.monotonic()
    data, problem = read_submission(submission, batch)
    result = empty_result(batch, submission, batch.fingerprint(data))
    if submission.notice is not None:
        result.warnings.append(Issue(code=submission.notice.id.removeprefix("issue."), text=submission.notice))
    if problem is not None:
        result.errors.append(problem)
        return result
    plan = CellPlan()
    notebook = read_notebook(submission.path, data, plan)
    if notebook is not None and (other := _other_assignment(batch, notebook)) is not None:
        plan.error("wrong_assignment", text("issue.wrong_assignment", other=other,
                                            assignment=batch.settings.assignment))
        notebook = None
    if notebook is not None:
        assemble(notebook, batch.source, batch.settings.autograded, plan)
        result.solutions = solution_cells(plan, batch.settings.autograded)
        result.answers = written_answers(notebook, batch.settings.written)
    result.warnings += plan.warnings
    result.errors += plan.errors
    result.timing["read"] = round(time.monotonic() - started, 4)
    if notebook is not None and plan.cells:
        _run(sandbox, batch, plan, result, started, progress)
    result.score = round(sum(t.score or 0.0 for t in result.tasks), 6)
    _cap_issues(result)
    result.timing["total"] = round(time.monotonic() - started, 4)
    result.timing["grader_peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    return result


def _task_cells(spec) -> set[str]:
    """The grade ids that only this assignment's notebook has: its tasks' solution and test
    cells (set-up cells such as ``imports`` are alike in every notebook of the course)."""
    return {*spec.tasks, *(f"{task}_tests" for task in spec.tasks)}


MAX_SOLUTION_CHARS = 64 * 1024  # per task: a cell up to this size is kept as it is
MAX_SOLUTION_TOKENS = 64 * 1024  # a longer one: this many tokens of its code (what the similarity compares)
MAX_KEPT_CHARS = 256 * 1024      # and at most this many characters of them
LONG_TOKEN = 64                  # a longer literal, name or number is kept shortened
NOT_CODE = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER}


def solution_cells(plan: CellPlan, tasks: list[str]) -> dict[str, str]:
    """Each task's solution cell as the student wrote it (magics removed), for the class
    report's similarity; a notebook without nbgrader metadata has none by grade id."""
    return {label: _kept_code(source) for label, source in plan.cells if label in tasks}


def _kept_code(source: str) -> str:
    """A cell over ``MAX_SOLUTION_CHARS`` loses what the similarity does not compare before it is
    cut, so the cut counts code (red teams 4 and 13: a copy hid behind 64 KiB of comments, then
    behind a 70 KB string literal): blank and comment lines go, a long literal keeps its quotes
    around an ellipsis, and the cut comes after ``MAX_SOLUTION_TOKENS`` tokens of code or
    ``MAX_KEPT_CHARS`` characters. Reading stops there: the work is bounded by what is kept."""
    if len(source) <= MAX_SOLUTION_CHARS:
        return source
    lines = _CodeLines(source)
    kept = _code_tokens(lines)
    if kept is None:   # not Python from some line on (an unclosed bracket, an indentation error)
        lines, kept, size = _CodeLines(source), [], 0
        while size < MAX_KEPT_CHARS and (line := lines.readline()):
            kept.append(line)
            size += len(line)
    return "".join(kept)[:MAX_KEPT_CHARS].rstrip("\n")


class _CodeLines:
    """``readline`` for the tokeniser: the lines of ``source`` that are neither blank nor only a
    comment, each remembered by where it lies in ``source`` (two numbers a line, not a copy)."""

    def __init__(self, source: str):
        self.source, self.at = source, 0
        self.starts, self.ends = array.array("q"), array.array("q")
        self.first = 1   # the row of ``starts[0]``

    def readline(self) -> str:
        while self.at < len(self.source):
            start = self.at
            end = self.source.find("\n", start)
            self.at = end = len(self.source) if end < 0 else end + 1
            line = self.source[start:end]
            stripped = line.strip()
            if stripped and not stripped.startswith("#"):
                self.starts.append(start)
                self.ends.append(end)
                return line if line.endswith("\n") else line + "\n"
        return ""

    def where(self, row: int, col: int) -> int:
        return self.starts[row - self.first] + col

    def taken(self, last: int, edits: list[tuple[int, int, str]]) -> str:
        """The lines up to row ``last``, each edit (start, end, replacement) made; forgotten then."""
        pieces, edit, count = [], 0, last - self.first + 1
        for start, end in zip(self.starts[:count], self.ends[:count]):
            at = start
            while edit < len(edits) and edits[edit][0] < end:
                begin, finish, replacement = edits[edit]
                if begin >= at:
                    pieces += [self.source[at:begin], replacement]
                at = max(at, finish)
                if finish > end:
                    break   # it runs on into the next line
                edit += 1
            if at < end:
                pieces.append(self.source[at:end])
        del self.starts[:count], self.ends[:count]
        self.first = last + 1
        return "".join(pieces)


def _code_tokens(lines: _CodeLines) -> list[str] | None:
    """The lines up to the cut, each logical line once tokenised, with its comment dropped and
    its long tokens shortened (None: it could not be tokenised)."""
    kept, edits, size, count = [], [], 0, 0
    try:
        for kind, text, (row, col), (end_row, end_col), _ in tokenize.generate_tokens(lines.readline):
            count += kind not in NOT_CODE
            if kind == tokenize.COMMENT or len(text) > LONG_TOKEN:
                edits.append((lines.where(row, col), lines.where(end_row, end_col), _shortened(kind, text)))
            if kind in (tokenize.NEWLINE, tokenize.NL) and end_row >= lines.first:
                kept.append(lines.taken(end_row, edits))
                size, edits = size + len(kept[-1]), []
                if count >= MAX_SOLUTION_TOKENS or size >= MAX_KEPT_CHARS:
                    break
    except (tokenize.TokenError, SyntaxError):
        return None
    if len(lines.starts):
        kept.append(lines.taken(lines.first + len(lines.starts) - 1, edits))
    return kept


def _shortened(kind: int, text: str) -> str:
    """A comment goes; a long string keeps its prefix and quotes; a long name or number its head."""
    if kind == tokenize.COMMENT:
        return ""
    if kind == tokenize.STRING:
        quoted = re.match(r"([A-Za-z]*)(\'\'\'|\"\"\"|\'|\")", text)
        return f"{quoted[1]}{quoted[2]}...{quoted[2]}" if quoted else "..."
    if tokenize.tok_name.get(kind) == "FSTRING_MIDDLE":   # Python 3.12: an f-string's text
        return "..."
    return text[:LONG_TOKEN]


def written_answers(notebook, tasks: frozenset[str]) -> dict[str, WrittenAnswer]:
    """Each written task's answer cell as the student wrote it (the first cell of its grade id,
    as ``reading.read_kept`` kept it: cut, with the whole text's length), for the TA's
    answers.html; a task whose cell is missing has none."""
    answers: dict[str, WrittenAnswer] = {}
    for cell in notebook.cells:
        gid = grade_id(cell)
        if gid in tasks and gid not in answers:
            source = cell.get("source", "")
            source = "".join(p for p in source if isinstance(p, str)) if isinstance(source, list) else str(source)
            length = cell.get(ANSWER_LENGTH)
            answers[gid] = WrittenAnswer(text=source, length=length if isinstance(length, int) else len(source))
    return answers


def _other_assignment(batch: Batch, notebook) -> str | None:
    """The other assignment whose task cells this notebook carries, when it has none of ours."""
    found = {gid for c in notebook.cells if (gid := grade_id(c))}
    if found & _task_cells(batch.settings.spec):
        return None
    return next((other for other, gids in batch.others.items() if found & gids), None)


def _quiet(phase: str) -> None:
    """No one listens to the phases."""


def _run(sandbox, batch: Batch, plan: CellPlan, result: SubmissionResult, started: float,
         progress: Callable[[str], None]) -> None:
    limits = batch.config.sandbox
    session = Session(sandbox, batch.settings, plan.cells, deadline=started + limits.submission_timeout_s)
    try:
        progress("cells")
        session.start()
        result.timing["cells"] = round(time.monotonic() - started, 4)
        graded = session.grade(batch.settings.autograded, progress)
        result.tasks = [graded.get(task.id, task) for task in result.tasks]
    except WorkerLost as lost:  # even the cells could not run to the end
        result.errors.append(Issue(code="worker_lost", text=text("issue.worker_lost", reason=lost_reason(lost))))
    finally:
        session.close()
        requests, waited_s = session.requests()
        result.timing["worker_requests"], result.timing["worker_s"] = requests, round(waited_s, 4)
        result.warnings += session.warnings
        result.errors += session.errors
        if session.student is not None and session.student.printed:
            result.output = session.student.output()


MAX_ISSUES = 50  # of each kind per submission: a flood of warnings says no more than fifty


def _cap_issues(result: SubmissionResult) -> None:
    for key in ("warnings", "errors"):
        issues: list[Issue] = getattr(result, key)
        if len(issues) > MAX_ISSUES:
            dropped = len(issues) - MAX_ISSUES
            setattr(result, key, issues[:MAX_ISSUES] + [Issue(code="more_issues", text=text(
                "issue.more_issues", count=dropped))])

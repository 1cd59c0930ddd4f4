"""What one submission's feedback says, decided once (STYLE §16).

``FeedbackView.of(result, say)`` decides everything a student is told: the score line
and each task's points (one number format), which failed checks are said together, each
finding's rows, which check could not be judged, which heatmap is drawn and where it was
drawn already. The writers (``pages/student.py``: the HTML page; ``markdown.py``; ``plain.py``:
a test cell's output) only format it, and a test renders one view through all three and
compares what they say, in which order.

Torch-free and matplotlib-free: the in-kernel path builds a ``TaskView`` in the student's kernel.
"""
import dataclasses
from dataclasses import dataclass

from ..results import CheckResult, Finding, Heatmap, Issue, SubmissionResult, TaskResult, text
from ..texts.say import Prose, Say, named

SHORT_VALUE = 40  # characters: a value this short reads best inline, beside its label
PASSED, FAILED, NOT_JUDGED = "passed", "failed", "not judged"
WEIGHTS = text("term.attention_weights")


@dataclass(frozen=True)
class Code:
    """A value or an input as code; ``block`` when it spans lines or is long."""
    text: str
    block: bool

    @classmethod
    def of(cls, value: str) -> "Code":
        return cls(value, "\n" in value or len(value) > SHORT_VALUE)


@dataclass(frozen=True)
class Row:
    """One labelled line of a finding: what was checked, the input, expected, got, where."""
    label: Prose
    value: Prose | Code


@dataclass(frozen=True)
class CheckLine:
    """A check as one line: its title, its points and its status, with the status's word."""
    name: str
    title: Prose
    points: Prose
    status: str      # PASSED, FAILED or NOT_JUDGED
    verdict: Prose   # the status as the test cell says it (PASS, FAIL, NOT JUDGED)
    note: Prose      # a passed check's remark, or why it was not judged; empty when none


@dataclass(frozen=True)
class Figure:
    """The student's attention weights beside the reference's. ``heatmap`` is None where they
    are not drawn here (drawn above already, or not drawable), and ``caption`` says which."""
    heatmap: Heatmap | None
    titles: tuple[str, str]
    axes: tuple[str, str]   # (x, y)
    colour: str
    caption: Prose
    no_mistake: Prose       # under drawn pictures when no known mistake explains them (none named)


@dataclass(frozen=True)
class Failure:
    """One or more failed checks that failed the same way, said once."""
    checks: tuple[CheckLine, ...]
    heading: Prose          # for several checks: "The same problem in each of these checks:"
    problem: Prose
    rows: tuple[Row, ...]
    mistake: Row | None
    figure: Figure | None


@dataclass(frozen=True)
class IssueLine:
    kind: Prose             # "warning" or "error" (a test cell's label)
    code: str
    task: str | None
    message: Prose


@dataclass(frozen=True)
class Issues:
    heading: Prose
    lines: tuple[IssueLine, ...]


@dataclass(frozen=True)
class TaskView:
    """One task: its points, then its failures (each said once, a likely mistake named once),
    then the other checks; or, for a task not attempted yet, one line and nothing else."""
    id: str
    score: Prose            # "1,5 / 3", or "by hand" for a written answer
    manual: Prose           # a written answer: who grades it, for how many points
    not_graded: Prose       # no check ran on it (the notebook could not be graded)
    failures: tuple[Failure, ...]
    others: tuple[CheckLine, ...]   # passed and not judged, in the checks' order
    not_attempted: Prose = Prose()  # the cell is still the template's (grading decided it): said instead

    @classmethod
    def of(cls, task: TaskResult, say: Say, drawn: set[str] | None = None, entered: float | None = None) -> "TaskView":
        """``drawn``: the heatmaps drawn so far on the page (each pair is drawn once); ``entered``:
        a written answer's points, once the TA has entered them."""
        if task.manual and entered is not None:
            manual = say.text("page.manual_entered", ta=text("term.ta"), points=say.number(entered),
                              max=say.number(task.max_score))
            return cls(task.id, say.points(entered, task.max_score), manual, Prose(), (), ())
        if task.manual:
            manual = say.text("page.manual", ta=text("term.ta"), max=say.number(task.max_score))
            return cls(task.id, say.text("page.manual_short"), manual, Prose(), (), ())
        if task.not_attempted is not None:
            return cls(task.id, say.points(task.score, task.max_score), Prose(), Prose(), (), (),
                       say(task.not_attempted))
        drawn, said = (set() if drawn is None else drawn), set()
        judged = [check for check in task.checks if check.blocked_by is None]
        failures = tuple(failure(group, say, drawn, said)
                         for group in _same_failures([c for c in judged if not c.passed]))
        others = _others([c for c in task.checks if c.passed or c.blocked_by is not None], say)
        not_graded = Prose() if task.checks else say.text("feedback.not_graded")
        return cls(task.id, say.points(task.score, task.max_score), Prose(), not_graded, failures, others)

    @property
    def summary(self) -> Prose:
        """The one line said of the task in place of its checks, or nothing."""
        return self.not_graded or self.not_attempted


@dataclass(frozen=True)
class FeedbackView:
    language: str
    title: Prose
    score: Prose
    note: Prose
    columns: tuple[Prose, Prose]    # the overview's headings: task, points
    tasks: tuple[TaskView, ...]
    not_graded: Prose               # said once when no check ran at all
    warnings: Issues
    errors: Issues

    @classmethod
    def of(cls, result: SubmissionResult, say: Say, written: dict[str, float] | None = None,
           total: float | None = None) -> "FeedbackView":
        """``written``: the written answers' points the TA has entered (task id -> points), and
        ``total`` what the student has with them (both as ``outputs.totals.total_of`` makes them)."""
        drawn: set[str] = set()
        written = written or {}
        autograded = [task for task in result.tasks if not task.manual]
        return cls(
            say.language, say.text("feedback.title", student=result.student_id, assignment=result.assignment),
            _score(result, say, written, total), say.text("feedback.public_note"),
            (say.text("term.task"), say.text("page.points")),
            tuple(TaskView.of(task, say, drawn, written.get(task.id) if task.manual else None)
                  for task in result.tasks),
            Prose() if any(task.checks for task in autograded) else say.text("feedback.not_graded"),
            _issues("gradebook.warning", "feedback.warnings", result.warnings, say),
            _issues("gradebook.error", "feedback.errors", result.errors, say))

    @property
    def sections(self) -> tuple[TaskView, ...]:
        """The tasks said in full: every one, unless no check ran at all (then the overview and
        ``not_graded`` say it, and only the written answers get a section)."""
        return tuple(task for task in self.tasks if task.manual) if self.not_graded else self.tasks

    def task(self, task_id: str) -> TaskView:
        return next(task for task in self.tasks if task.id == task_id)


def _score(result: SubmissionResult, say: Say, written: dict[str, float], total: float | None) -> Prose:
    """"autograded x / y", then the written answers: their points and the total once the TA has
    entered any, else the points they are worth."""
    if not result.tasks:  # an unreadable submission: nothing was split into tasks
        return say.text("feedback.score", score=say.number(result.score), max=say.number(result.max_score))
    line = say.text("feedback.score", score=say.number(result.autograded_score),
                    max=say.number(result.autograded_max))
    if not result.manual_max:
        return line
    entered = [written[task.id] for task in result.tasks if task.manual and task.id in written]
    if not entered or total is None:
        return line + say.words("; ") + say.text("feedback.manual_pending", points=say.number(result.manual_max))
    return (line + say.words("; ") + say.text("feedback.manual_entered", points=say.number(sum(entered)),
                                              max=say.number(result.manual_max))
            + say.words("; ") + say.text("feedback.total", score=say.number(total), max=say.number(result.max_score)))


def check_line(check: CheckResult, say: Say) -> CheckLine:
    if check.blocked_by is not None:
        status, verdict = NOT_JUDGED, "feedback.not_judged"
        note = say.text("feedback.blocked_by", check=named(f"title.{check.blocked_by}", check.blocked_by))
    else:
        status, verdict = (PASSED, "feedback.pass") if check.passed else (FAILED, "feedback.fail")
        note = say(check.note) if check.passed else Prose()
    return CheckLine(check.name, say.title(check.name), say.points(check.score, check.max_score), status,
                     say.text(verdict), note)


def _others(checks: list[CheckResult], say: Say) -> tuple[CheckLine, ...]:
    """The passed and not judged checks; a note said already for one of them points up."""
    lines, said = [], set()
    for check in checks:
        line = check_line(check, say)
        if line.note and str(line.note) in said:
            line = dataclasses.replace(line, note=say.text("feedback.note_above"))
        said.add(str(line.note))
        lines.append(line)
    return tuple(lines)


def _same_failures(failed: list[CheckResult]) -> list[list[CheckResult]]:
    """Failed checks in order, those that failed the same way merged into the first one's place."""
    groups: dict[str, list[CheckResult]] = {}
    for check in failed:
        groups.setdefault(_how_it_failed(check), []).append(check)
    return list(groups.values())


def _how_it_failed(check: CheckResult) -> str:
    """What makes two failures the same to a student: the same problem and the same likely
    mistake. What each checks (their titles say it), the input and the values it gave are the
    first check's: one example of the problem is enough to fix it."""
    finding = check.finding
    if finding is None:
        return check.message
    return finding.model_dump_json(include={"problem", "mistake"})


def failure(group: list[CheckResult], say: Say, drawn: set[str], said: set[str] | None = None) -> Failure:
    """A group of checks that failed the same way (one check: its finding in full). ``said``:
    what the task's earlier failures said (a likely mistake, a sentence of a row), not said again."""
    lines = tuple(check_line(check, say) for check in group)
    heading = say.text("page.same_problem") if len(group) > 1 else Prose()
    finding = group[0].finding
    if finding is None:  # a result without a finding (an older grader's): its message
        return Failure(lines, heading, say.words(group[0].message), (), None, None)
    said = set() if said is None else said
    mistake = Row(say.text("feedback.mistake"), say.mistake(finding.mistake)) \
        if finding.mistake and f"mistake {finding.mistake}" not in said else None
    said.add(f"mistake {finding.mistake}")
    rows = []
    for row in finding_rows(finding, say, len(group) == 1):
        if isinstance(row.value, Prose) and f"{row.label} {row.value}" in said:
            continue  # the same sentence under an earlier failure (a difference found twice)
        said.add(f"{row.label} {row.value}")
        rows.append(row)
    figure = _figure(finding, say, drawn) if finding.heatmap is not None else None
    return Failure(lines, heading, say(finding.problem), tuple(rows), mistake, figure)


def finding_rows(finding: Finding, say: Say, checked: bool) -> tuple[Row, ...]:
    """What was checked (for one check: a group's titles say it), the input, expected, got, where."""
    rows = [Row(say.text("feedback.checked"), say(finding.checked))] if checked and finding.checked else []
    if finding.case_code:
        rows.append(Row(say.text("feedback.input"), Code(finding.case_code, block=True)))
    for label, value in (("feedback.expected", finding.expected), ("feedback.got", finding.got)):
        if value is not None:  # a value (str) is code; a description (a Text) is prose
            rows.append(Row(say.text(label), Code.of(value) if isinstance(value, str) else say(value)))
    if finding.difference is not None:
        rows.append(Row(say.text("feedback.where"), say(finding.difference)))
    return tuple(rows)


def _figure(finding: Finding, say: Say, drawn: set[str]) -> Figure:
    heatmap, key = finding.heatmap, finding.heatmap.model_dump_json()
    if heatmap.scale() is None:
        caption, shown = "page.heatmap.undrawable", None
    elif key in drawn:
        caption, shown = "page.heatmap.same_above", None
    else:
        drawn.add(key)
        caption, shown = "page.heatmap.caption", heatmap
    titles = (str(say.text("page.heatmap.yours", weights=WEIGHTS)),
              str(say.text("page.heatmap.reference", weights=WEIGHTS)))
    axes = (str(say.text("term.keys")), str(say.text("term.queries")))
    no_mistake = say.text("page.heatmap.no_mistake") if finding.mistake is None else Prose()
    return Figure(shown, titles, axes, str(say(WEIGHTS)), say.text(caption), no_mistake)


def issue_message(issue: Issue, say: Say) -> Prose:
    """An issue's message: its catalogue text, or the words an older result kept."""
    return say(issue.text) if issue.text is not None else say.words(issue.message)


def _issues(kind: str, heading: str, issues: list[Issue], say: Say) -> Issues:
    return Issues(say.text(heading), tuple(IssueLine(say.text(kind), issue.code, issue.task, issue_message(issue, say))
                                           for issue in issues))

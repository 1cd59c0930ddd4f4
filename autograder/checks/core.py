"""What a check is, how it runs, and what it reports.

A check takes the student's code through the sandbox's client, a ``Student`` (never the student's
objects themselves), compares against ``reference`` in this process, and either
returns (passed) or raises ``CheckFailed`` with a ``Finding``: what the student needs to
fix it. Property checks search with hypothesis and report its shrunk example.
"""
import dataclasses
import re
import tempfile
import time
import weakref
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from hypothesis import HealthCheck, Phase, Verbosity, given, settings
from hypothesis import seed as hypothesis_seed
from hypothesis.configuration import set_hypothesis_home_dir
from hypothesis.errors import FlakyFailure
from hypothesis.internal.escalation import InterestingOrigin

from ..results import CheckResult, Finding, Text, message_text, text
from ..texts.say import named
from ..sandbox.client import Student, StudentError, WorkerLost
from . import kept_runs
from .inputs import Case, kinds_of, plain_form
from .older_book import mistake_of

# Hypothesis keeps caches in ./.hypothesis even without a database; not in a TA's or
# a student's folder.
set_hypothesis_home_dir(Path(tempfile.gettempdir()) / "autograder-hypothesis")


class CheckFailed(Exception):
    """A check's verdict: the property does not hold, for the reason in ``finding``."""

    def __init__(self, finding: Finding):
        super().__init__(finding.problem.id)
        self.finding = finding
        self._later: list[Callable[[Finding], None]] = []

    def later(self, step: Callable[[Finding], None]) -> None:
        """Work on the finding that only the failure shown to the student needs (naming the known
        mistake, the heatmap): done once, for the failure the check ends with (``settle``), not for
        every failing example a search meets while it shrinks. Steps run in the order given."""
        self._later.append(step)

    def settle(self) -> None:
        steps, self._later = self._later, []
        for step in steps:
            step(self.finding)


class CheckBlocked(Exception):
    """No verdict: what the check judges was never there to judge, because the property of
    the earlier check ``by`` is missing (gradients of an output that attends to nothing, dropout of
    no attention weights, a device for no tensor). It scores nothing and is shown as not
    judged, naming ``by``: never a pass for a property the code was not seen to have."""

    def __init__(self, by: str):
        super().__init__(by)
        self.by = by


class PassedWithNote(Exception):
    """The property held, with a remark the student should read beside the pass (a narrower
    check that judged the student's output against their own in the main form, not the
    reference's): ``CheckResult.note``."""

    def __init__(self, note: Text):
        super().__init__(note.id)
        self.note = note


def noted_as_own(excused: bool, main_check: str) -> None:
    """After a narrower check held: where some example held only as the student's own output
    (the main check's mistake, charged there), say so instead of a plain pass."""
    if excused:
        raise PassedWithNote(text("check.passed_as_own", main=named(f"title.{main_check}", main_check)))


def fail(problem: Text, **fields) -> CheckFailed:
    """The exception to raise for a failed property: ``raise fail(text(...), got=...)``."""
    return CheckFailed(Finding(problem=problem, **fields))


@dataclass(frozen=True)
class Context:
    """Where and how one check runs. ``seed`` is the task's base seed."""
    assignment: str
    task: str
    seed: int
    device: str = "cpu"
    max_examples: int = 20
    check: str = ""  # the check this context belongs to (its seed depends on it)
    warnings: list = field(default_factory=list)  # (code, Text) pairs for the student
    plain: list = field(default_factory=list)  # (kind, the check that charges it): examples the
    #                                            running check judged in their plain form (search)

    def for_check(self, name: str) -> "Context":
        return dataclasses.replace(self, check=name)

    def check_seed(self) -> int:
        """A stable per-check seed: the same for every student (SPEC §3)."""
        return zlib.crc32(f"{self.seed}:{self.task}:{self.check}".encode())


@dataclass(frozen=True)
class Check:
    """One graded property of a task. ``run`` raises ``CheckFailed`` when it does not hold."""
    name: str      # its key in grader.yml
    what: Text     # what it checks, in course terms
    run: Callable[[Student, Context], None]


@dataclass
class Outcome:
    """A check's result, and what the grader must do about it."""
    result: CheckResult
    worker_lost: str | None = None
    grader_error: str | None = None   # the check itself failed: for the TA, not the student


def run_check(check: Check, student: Student, ctx: Context, points: float = 1.0) -> Outcome:
    """Run one check; every student failure becomes a failed result (never an exception)."""
    started = time.perf_counter()
    ctx = ctx.for_check(check.name)
    outcome = _outcome(check, student, ctx)
    if ctx.device != "cpu" and not outcome.result.passed and not outcome.worker_lost:
        # SPEC §3: the same score on CPU and CUDA. What fails on the GPU is judged again on
        # the CPU and that verdict stands, so code that works on the CPU only is charged by
        # "runs on any device" alone (it emulates the other device on every runner).
        outcome = _outcome(check, student, dataclasses.replace(ctx, device="cpu"))
        outcome.result.again_on_cpu = True
    result = outcome.result
    result.name, result.max_score = check.name, points
    result.score = points if result.passed else 0.0
    result.seconds = round(time.perf_counter() - started, 4)
    if result.finding is not None:
        result.finding = result.finding.model_copy(update={"checked": check.what})
    return outcome


def _outcome(check: Check, student: Student, ctx: Context) -> Outcome:
    def verdict(passed: bool, **fields) -> CheckResult:
        return CheckResult(name=check.name, passed=passed, score=0.0, max_score=0.0, **fields)
    ctx.plain.clear()
    try:
        _settled(check.run, student, ctx)
    except CheckFailed as failed:
        return Outcome(verdict(False, finding=failed.finding))
    except CheckBlocked as blocked:
        return Outcome(verdict(False, blocked_by=blocked.by))
    except PassedWithNote as passed:
        return Outcome(verdict(True, note=passed.note))
    except StudentError as error:
        return Outcome(verdict(False, finding=raised(error)))
    except WorkerLost as lost:
        finding = Finding(problem=text("check.did_not_finish", reason=lost_reason(lost)))
        return Outcome(verdict(False, finding=finding), worker_lost=lost.reason)
    except Exception as error:  # a bug in the check: the batch goes on, the TA is told
        return Outcome(verdict(False, finding=Finding(problem=text("check.grader_error"))),
                       grader_error=f"{check.name}: {type(error).__name__}: {error}")
    return Outcome(verdict(True, note=_judged_plain_note(ctx)))


def _settled(run: Callable, student: Student, ctx: Context) -> None:
    """``run``, and the deferred work on the finding of the failure it ends with (``CheckFailed.later``);
    what that work raises (the worker lost while probing) is the check's outcome."""
    try:
        run(student, ctx)
    except CheckFailed as failed:
        failed.settle()
        raise


def _judged_plain_note(ctx: Context) -> Text | None:
    """For a check that passed: where it judged examples in their plain form (``judged_plain``),
    which kind of input it left, and to which check."""
    if not ctx.plain:
        return None
    kind, owner = ctx.plain[0]
    return text(f"check.judged_plain.{kind}", check=named(f"title.{owner}", owner))


def lost_reason(lost: WorkerLost) -> Text:
    """Why the student's process was lost, as a catalogue text."""
    return text(f"lost.{lost.why}", **lost.params)


WHERE = re.compile(r"^(?P<cell>.+), line (?P<line>\d+): (?P<code>.*)$", re.DOTALL)


def where_text(where: str | None) -> Text | str:
    """`` (cell #3, line 5: code)`` in the student's language; the worker's own words
    (``<cell>, line <n>: <code>``, runner.student_error) when they do not parse."""
    if not where:
        return ""
    found = WHERE.match(where)
    if found is None:
        return text("check.where", where=where)
    return text("check.where_line", cell=found["cell"], line=found["line"], code=found["code"])


PARAMETER_SHAPES = re.compile(r"^(?P<name>[\w.]+) (?P<yours>\([\d, ]*\)) reference (?P<reference>\([\d, ]*\))$")


def raised(error: StudentError, case_code: str | None = None) -> Finding:
    """The student's error as a finding; it names the older book's form the code came from
    when the error shows one (older_book.py), and a parameter whose shape is not the
    reference's (the weights are copied in by name: SPEC §2)."""
    shapes = PARAMETER_SHAPES.match(error.message) if error.type_name == "ParameterShapeMismatch" else None
    if shapes is not None:
        return Finding(problem=text("check.parameter_shape", name=shapes["name"]), case_code=case_code,
                       expected=shapes["reference"], got=shapes["yours"])
    where = where_text(error.where)
    return Finding(problem=text("check.raised", type=error.type_name, message=message_text(error.message),
                                where=where),
                   case_code=case_code, mistake=mistake_of(error))


def search(strategy, test: Callable, ctx: Context, max_examples: int | None = None,
           left_to: dict[str, str] | None = None) -> None:
    """Run ``test(case)`` on hypothesis examples; raise the shrunk example's ``CheckFailed``.

    Derandomized, no database, no deadline, seeded per check: every student sees the
    same examples, and what hypothesis tries next depends only on how the examples so far
    turned out. So its runs are recorded once per process (``_Step``) and replayed to each
    student whose outcomes follow a recorded run: the same examples in the same order, and
    the same failure raised, as a full run's, without hypothesis's own search and shrinking.
    A student whose outcomes leave the recorded runs gets a full hypothesis run, recorded
    in turn. A student error on an example is a failure of that example, unless it is one of
    ``left_to`` (``judged_plain``).
    """
    def attempt(case):
        try:
            test(case)
        except StudentError as error:
            if not judged_plain(case, test, ctx, left_to):
                raise CheckFailed(raised(error, case.code())) from None

    key = (repr(strategy), ctx.check_seed(), max_examples or ctx.max_examples)
    _read_kept(key)
    if _replay(key, attempt):
        return
    try:
        _recorded(strategy, attempt, key)
    except FlakyFailure as flaky:  # fails, then passes on replay: report the first failure
        failures = [e for e in flaky.exceptions if isinstance(e, CheckFailed)]
        if failures:
            raise failures[0] from None
        raise


def in_context(case, test: Callable, ctx: Context | None = None, left_to: dict[str, str] | None = None,
               code: Callable | None = None) -> None:
    """Run ``test(case)`` on one fixed example beside the drawn ones (the sizes and calls of
    the book's own code, which no small drawn example reaches); a student error on it is a
    failure of that example (shown as ``code(case)``, by default its code), as in ``search``."""
    try:
        test(case)
    except StudentError as error:
        if ctx is None or not judged_plain(case, test, ctx, left_to):
            raise CheckFailed(raised(error, (code or Case.code)(case))) from None


def left_to(charged_by: dict[str, str], ctx: Context) -> dict[str, str]:
    """Of ``charged_by`` (a kind of input -> the task's check that charges a crash on it), the
    kinds the check running in ``ctx`` leaves to another check (``judged_plain``)."""
    return {kind: check for kind, check in charged_by.items() if check != ctx.check}


def judged_plain(case, test: Callable, ctx: Context, left_to: dict[str, str] | None) -> bool:
    """After the student's code raised on ``case``: whether the case holds a kind of input
    that another check charges (``left_to``: kind -> that check's name; ``inputs.kinds_of``)
    and the code runs on the case without it (``inputs.plain_form``). The crash is then that
    check's to charge (SPEC §3: code that raises loses the points of what it broke and nothing
    else), and this check judges the plain form instead: True when it holds there (noted for
    the student), its failure raised when it does not; False when the code raises there too."""
    kinds = [kind for kind in kinds_of(case) if kind in (left_to or {})] if isinstance(case, Case) else []
    if not kinds:
        return False
    try:
        test(plain_form(case, kinds))
    except StudentError:
        return False
    ctx.plain.append((kinds[0], left_to[kinds[0]]))
    return True


PASSED, RAISED = "passed", "raised"  # how a recorded run ended after a call
MAX_STEPS = 20_000  # recorded calls kept per process (each holds a small example)
# The verdict is known at the first failing example; shrinking only makes the example shown
# smaller. After this many calls past the first failure, shrinking stops and the smallest
# failing example found so far is shown (called once more: the failure raised is its own).
# Measured over the mutation suite (benchmarks/shown_examples.py): the shown examples' median
# size as without a budget, the 90th percentile at most 1.25x; a quarter fewer calls (16: the
# median grows).
SHRINK_BUDGET = 20


class _BudgetSpent(BaseException):
    """Ends hypothesis's run from inside a call (hypothesis lets a BaseException through)."""


@dataclass
class _Step:
    """A call hypothesis made in a recorded run: its example, and what hypothesis did next
    after each outcome seen (the next ``_Step``, or ``PASSED``/``RAISED``: the run ended,
    passing or raising this call's failure)."""
    case: object
    after: dict = field(default_factory=dict)


_RUNS: dict[tuple, _Step] = {}  # search key -> the first call of its recorded runs
_steps = 0


def _origin(error: BaseException | None) -> str | None:
    """What hypothesis tells apart in a call's result: passed (None), or where it failed
    (written out, so that another process reads it the same)."""
    return None if error is None else repr(InterestingOrigin.from_exception(error))


def _read_kept(key: tuple) -> None:
    """The runs other processes recorded for ``key`` since this one last looked (kept_runs)."""
    if (files := kept_runs.files()) is not None:
        for calls, end in files.new_runs(key):
            _remember(key, [(case, outcome, None) for case, outcome in calls], end)


def _replay(key: tuple, attempt: Callable) -> bool:
    """Follow the recorded runs for ``key`` with this student's outcomes: True when such a run
    passed; raises when it raised; False when the outcomes leave the recorded runs."""
    step = _RUNS.get(key)
    while isinstance(step, _Step):
        error = None
        try:
            attempt(step.case.copy())  # a test may write into its case
        except Exception as failed:
            error = failed
        step = step.after.get(_origin(error))
        if step == RAISED:
            raise error
    return step == PASSED


def _recorded(strategy, attempt: Callable, key: tuple) -> None:
    """A full hypothesis run, recorded for ``_replay`` when it ends with a call's own result;
    its shrinking cut after ``SHRINK_BUDGET`` calls past the first failure."""
    calls: list[tuple] = []  # (example, outcome, error) in the order hypothesis made them

    def recording(case):
        example = case.copy()
        try:
            attempt(case)
        except Exception as error:
            calls.append((example, _origin(error), error))
            raise
        calls.append((example, None, None))

    def budgeted(case):
        if _shrinking_spent(calls):
            raise _BudgetSpent
        recording(case)
    try:
        if _spent_budget(strategy, budgeted, key):
            shown = _smallest_failing(calls)
            recording(shown.copy())  # deterministic code raises here, as the run's last call
            raise next(call[2] for call in calls if call[0] is shown)  # it passed: flaky
    except Exception as raised_:
        if calls and calls[-1][2] is raised_:
            _kept(key, calls, RAISED)
        raise
    _kept(key, calls, PASSED)


def _smallest_failing(calls: list[tuple]):
    """The failing example to show: the fewest tensor elements, and of those the latest (each
    example hypothesis keeps while shrinking is smaller, by its own order, than the one before)."""
    failing = [(i, call[0]) for i, call in enumerate(calls) if call[2] is not None]
    return min(failing, key=lambda found: (_elements(found[1]), -found[0]))[1]


def _spent_budget(strategy, test: Callable, key: tuple) -> bool:
    """Hypothesis's run of ``test``: True when it was ended by ``_BudgetSpent``. (The failure
    shown then is raised after this returns, outside an ``except`` clause: an exception raised in
    one has another origin for hypothesis, its context, than the same failure in a replay.)"""
    try:
        _run_hypothesis(strategy, test, key[1], key[2])
    except _BudgetSpent:
        return True
    return False


def _shrinking_spent(calls: list[tuple]) -> bool:
    """Whether shrinking has had its ``SHRINK_BUDGET`` calls after the first failure."""
    first = next((i for i, call in enumerate(calls) if call[2] is not None), None)
    return first is not None and len(calls) - first > SHRINK_BUDGET


def _elements(case) -> int:
    return sum(t.numel() for t in case.tensors.values() if t is not None) if isinstance(case, Case) else 0


def _kept(key: tuple, calls: list[tuple], end: str) -> None:
    """A full run, remembered here and written for the other processes (kept_runs)."""
    _remember(key, calls, end)
    if calls and (files := kept_runs.files()) is not None:
        files.append(key, [(case, outcome) for case, outcome, _ in calls], end)


def _remember(key: tuple, calls: list[tuple], end: str) -> None:
    global _steps
    if not calls or _steps + len(calls) > MAX_STEPS:
        return
    step = _RUNS.setdefault(key, _Step(calls[0][0]))
    for i, (_, outcome, _) in enumerate(calls):
        if not isinstance(step, _Step):  # hypothesis went on where a recorded run ended
            return
        if outcome not in step.after:
            _steps += 1
            step.after[outcome] = _Step(calls[i + 1][0]) if i + 1 < len(calls) else end
        step = step.after[outcome]


class PerStudent:
    """Values made once per student (a submission's ``Student``) by key, forgotten with it: what
    one check's calls returned, read by another check that judges the same calls. ``make``
    raising stores nothing."""
    kept: "weakref.WeakSet[PerStudent]" = weakref.WeakSet()

    def __init__(self):
        self.values: weakref.WeakKeyDictionary[object, dict] = weakref.WeakKeyDictionary()
        PerStudent.kept.add(self)

    @classmethod
    def forget(cls, student) -> None:
        """Drop every value made for ``student``: its code changed (a class defined again)."""
        for per_student in cls.kept:
            per_student.values.pop(student, None)

    def get(self, student, key, make: Callable):
        seen = self.values.setdefault(student, {})
        if key not in seen:
            seen[key] = make()
        return seen[key]


@dataclass
class MainCheck:
    """What a task's main value check saw, for the narrower checks after it (2-D lengths, no
    lengths, other sizes): whether it failed, and the known mistakes it named. A narrower
    check does not charge again what these explain (SPEC §3: one mistake costs points once)."""
    failed: bool = False
    named: set = field(default_factory=set)

    def saw(self, mistake: str | None) -> None:
        self.failed = True
        if mistake:
            self.named.add(mistake)


class Kept:
    """Values made once per process by key (the reference modules per size), the oldest
    dropped beyond ``size``."""

    def __init__(self, size: int = 512):
        self.size, self.values = size, {}

    def get(self, key, make: Callable):
        if key not in self.values:
            if len(self.values) >= self.size:
                del self.values[next(iter(self.values))]
            self.values[key] = make()
        return self.values[key]


def _run_hypothesis(strategy, test: Callable, seed: int, count: int) -> None:
    property_ = settings(
        database=None, deadline=None, derandomize=True, print_blob=False,
        max_examples=count, verbosity=Verbosity.quiet,
        phases=(Phase.explicit, Phase.generate, Phase.shrink), report_multiple_bugs=False,
        suppress_health_check=list(HealthCheck))(given(strategy)(test))
    hypothesis_seed(seed)(property_)()

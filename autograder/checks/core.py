"""What a check is, how it runs, and what it reports.

A check takes the student's code through a ``Student`` proxy (never the student's
objects themselves), compares against ``reference`` in this process, and either
returns (passed) or raises ``Finding`` with what the student needs to fix it.
Property checks search with hypothesis and report its shrunk example.
"""
import tempfile
import zlib
from collections.abc import Callable
from pathlib import Path
from dataclasses import dataclass, field

from hypothesis import HealthCheck, Phase, Verbosity, given, settings
from hypothesis import seed as hypothesis_seed
from hypothesis.configuration import set_hypothesis_home_dir
from hypothesis.errors import FlakyFailure

from ..sandbox.proxy import Student, StudentError, WorkerLost

Text = tuple[str, str]  # (English, Russian)

# Hypothesis keeps caches in ./.hypothesis even without a database; not in a TA's or
# a student's folder.
set_hypothesis_home_dir(Path(tempfile.gettempdir()) / "autograder-hypothesis")


@dataclass(frozen=True)
class Mistake:
    """A known mistake: its id, and how to name it to the student."""
    id: str
    text: Text


@dataclass
class Finding(Exception):
    """Why a check failed, in course terms. Every field is optional but ``problem``."""
    problem: Text
    case_code: str | None = None
    expected: str | None = None
    got: str | None = None
    difference: Text | None = None
    mistake: Mistake | None = None
    error: StudentError | None = None

    def __str__(self) -> str:
        return self.problem[0]


@dataclass
class Context:
    """Where and how a task's checks run. ``seed`` is the task's base seed."""
    assignment: str
    task: str
    seed: int
    device: str = "cpu"
    max_examples: int = 20
    warnings: list = field(default_factory=list)
    check: str = ""  # the check now running

    def check_seed(self) -> int:
        """A stable per-check seed: the same for every student (SPEC §3)."""
        return zlib.crc32(f"{self.seed}:{self.task}:{self.check}".encode())


@dataclass(frozen=True)
class Check:
    """One graded property of a task. ``run`` raises ``Finding`` when it does not hold."""
    name: str
    what: Text
    run: Callable[[Student, Context], None]


@dataclass
class Outcome:
    name: str
    passed: bool
    what: Text
    finding: Finding | None = None
    note: Text | None = None          # e.g. "undecided on meta; not charged"
    worker_lost: str | None = None
    grader_error: str | None = None   # the check itself failed: for the TA, not the student


class Undecided(Exception):
    """The check could not decide (e.g. ``.item()`` has no value on ``meta``): not charged."""

    def __init__(self, note: Text):
        super().__init__(note[0])
        self.note = note


def run_check(check: Check, student: Student, ctx: Context) -> Outcome:
    """Run one check; every student failure becomes a failed ``Outcome`` (never an exception)."""
    ctx.check = check.name
    try:
        check.run(student, ctx)
    except Finding as finding:
        return Outcome(check.name, False, check.what, finding)
    except Undecided as undecided:
        return Outcome(check.name, True, check.what, note=undecided.note)
    except StudentError as error:
        return Outcome(check.name, False, check.what, raised(error))
    except WorkerLost as lost:
        problem = (f"your code did not finish: {lost.reason}",
                   f"ваш код не завершился: {lost.reason}")
        return Outcome(check.name, False, check.what, Finding(problem), worker_lost=lost.reason)
    except Exception as error:  # a bug in the check: the batch goes on, the TA is told
        problem = ("the grader could not finish this check; your TA has been told",
                   "проверку не удалось завершить из-за ошибки проверяющей программы; преподаватель уведомлён")
        return Outcome(check.name, False, check.what, Finding(problem),
                       grader_error=f"{check.name}: {type(error).__name__}: {error}")
    return Outcome(check.name, True, check.what)


def raised(error: StudentError, case_code: str | None = None) -> Finding:
    where = f" ({error.where})" if error.where else ""
    return Finding((f"your code raised {error.type_name}: {error.message}{where}",
                    f"ваш код выбросил {error.type_name}: {error.message}{where}"),
                   case_code=case_code, error=error)


def search(strategy, test: Callable, ctx: Context, max_examples: int | None = None) -> None:
    """Run ``test(case)`` on hypothesis examples; raise the shrunk example's ``Finding``.

    Derandomized, no database, no deadline, seeded per check: every student sees the
    same examples. A student error on an example is a failure of that example.
    """
    def attempt(case):
        try:
            test(case)
        except StudentError as error:
            raise raised(error, case.code()) from None

    property_ = settings(
        database=None, deadline=None, derandomize=True, print_blob=False,
        max_examples=max_examples or ctx.max_examples, verbosity=Verbosity.quiet,
        phases=(Phase.explicit, Phase.generate, Phase.shrink), report_multiple_bugs=False,
        suppress_health_check=list(HealthCheck))(given(strategy)(attempt))
    try:
        hypothesis_seed(ctx.check_seed())(property_)()
    except FlakyFailure as flaky:  # fails, then passes on replay: report the first failure
        findings = [e for e in flaky.exceptions if isinstance(e, Finding)]
        if findings:
            raise findings[0] from None
        raise

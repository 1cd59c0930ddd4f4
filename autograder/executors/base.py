"""The one contract every executor keeps (STYLE §17): how many notebooks are graded at once,
on which device, and where; the batch's ``grade_all``; and warm ``Slots`` for the service.

The local pool (``local``) and a Ray cluster (``ray``) implement it side by side, neither
importing the other; ``choice`` names them. What they share lives here: the attempts a
submission gets when its grading process dies, the result that says the grader failed on it,
and how SIGINT and SIGTERM stop a batch.

    executor = executor_named("local")                        # choice.executor_named
    settings, jobs = executor.plan(config, options, course)   # ConfigError: a usage error
    executor.grade_all(batch, submissions, jobs, on_result, on_progress)   # Stopped on a signal
    slots = executor.slots(batch, jobs); slots.start(); slots.submit(s) -> Future; slots.close()
"""
import signal
from collections.abc import Callable
from concurrent.futures import Future
from typing import TYPE_CHECKING, Protocol

from ..results import Issue, SubmissionResult, text

if TYPE_CHECKING:
    from ..config import GraderConfig
    from ..course import Course
    from ..grading.pipeline import Batch
    from ..grading.task import RunSettings
    from ..submissions.find import Submission

ATTEMPTS = 3   # a submission whose grading process (or node) dies is graded at most this often

OnResult = Callable[["Submission", SubmissionResult], None]
Progress = Callable[[int, str, str], None]  # (slot, student id, phase): what each slot is doing now


class Slots(Protocol):
    """Warm grading slots that take one submission each, over time (``autograder serve``):
    ``submit`` returns a future of the ``SubmissionResult``; a future whose slot died raises
    (the caller decides whether to grade it again)."""
    size: int

    def start(self) -> None: ...

    def submit(self, submission: "Submission") -> Future: ...

    def close(self) -> None: ...


class Executor(Protocol):
    name: str

    def plan(self, config: "GraderConfig", options, course: "Course") -> tuple["RunSettings", int]:
        """The run's settings (its device resolved where the slots will run) and how many slots;
        ``ConfigError`` when this executor cannot run here (no sandbox, no cluster)."""

    def grade_all(self, batch: "Batch", submissions: list["Submission"], jobs: int, on_result: OnResult,
                  on_progress: Progress | None = None, meanwhile: Callable[[], None] = lambda: None) -> None:
        """Grade every submission; ``on_result`` (and ``on_progress``) run in this process, and
        ``meanwhile`` once, as soon as grading is under way. Raises ``Stopped`` on SIGINT or
        SIGTERM, after ending the slots."""

    def slots(self, batch: "Batch", size: int) -> Slots: ...

    def close(self) -> None:
        """Release what was prepared for a batch and not used."""


class Stopped(Exception):
    """SIGINT or SIGTERM arrived: stop the batch now, keep what finished."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


def failed_result(batch: "Batch", submission: "Submission", detail: str) -> SubmissionResult:
    """A submission the grader failed on: an error for that student, regraded next run."""
    from ..grading.pipeline import empty_result
    result = empty_result(batch, submission)
    result.errors.append(Issue(code="grader_failed", text=text("issue.grader_failed", detail=detail[:500])))
    return result


class StopSignals:
    """While grading runs, SIGINT and SIGTERM are noted in ``signum``; the loop that waits
    for results then raises ``Stopped``. The handler only notes: an exception raised from it
    lands on whatever line the main thread is at, such as between
    ``concurrent.futures.wait()`` taking the futures' locks one by one, and a future left
    locked hangs the interpreter's exit; or halfway through writing a result."""

    def __enter__(self) -> "StopSignals":
        self.signum: int | None = None

        def note(signum, frame):
            self.signum = self.signum or signum
        self.saved = {sig: signal.signal(sig, note) for sig in (signal.SIGINT, signal.SIGTERM)}
        return self

    def __exit__(self, *exc):
        for sig, handler in self.saved.items():
            signal.signal(sig, handler)

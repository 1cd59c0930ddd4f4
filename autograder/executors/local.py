"""Grading processes, one sandbox slot each; results come back to the caller, who writes them.

Processes, not threads: the checks keep global state (hypothesis, torch's RNG), and each
process has its own. On the CPU they are forked from this process, which has imported
everything and runs torch with one thread; with CUDA they are spawned, since a CUDA context
does not survive a fork.

Nothing a submission does may stop the batch: an exception while grading it becomes a
``grader_failed`` error in that student's result (not reused by the next run), and a
grading process that dies (the pool "breaks") is replaced and its submissions are graded
again, at most ``ATTEMPTS`` times. Every grading process dies with this one
(``PR_SET_PDEATHSIG``), and its sandbox slot with it (bubblewrap's ``--die-with-parent``).
"""
import ctypes
import gc
import multiprocessing
import os
import signal
from collections import Counter
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import TYPE_CHECKING

from ..checks.kept_runs import keep_runs_in
from ..config import ConfigError
from ..grading.pipeline import Batch, grade_submission
from ..grading.task import RunSettings
from ..results import SubmissionResult
from ..sandbox import set_up_torch
from ..submissions.find import Submission
from .base import ATTEMPTS, OnResult, Progress, StopSignals, Stopped, failed_result
from .early import slot_cpus

if TYPE_CHECKING:
    from .early import EarlySlots

POLL_S = 0.2  # how often the grader looks for a stop signal while it waits for results
PR_SET_PDEATHSIG = 1


class LocalExecutor:
    """This machine's grading processes (``base.Executor``); ``early``: slots launched before
    the grader's imports, adopted by the first pool's processes where the run's settings fit."""
    name = "local"

    def __init__(self, early: "EarlySlots | None" = None):
        self.early = early

    def plan(self, config, options, course) -> tuple[RunSettings, int]:
        settings = RunSettings.resolve(config, options.assignment, options.seed, options.device, course)
        jobs = resolve_jobs(options.jobs, settings.device)
        check_sandbox()
        return settings, jobs

    def grade_all(self, batch: Batch, submissions: list[Submission], jobs: int, on_result: OnResult,
                  on_progress: Progress | None = None, meanwhile: Callable[[], None] = lambda: None) -> None:
        early, self.early = self.early, None
        if early is not None and not early.fits(batch.config.sandbox.limits(), batch.helpers, batch.settings.device):
            early = _closed(early)
        grade_all(batch, submissions, jobs, on_result, on_progress, early, meanwhile)

    def slots(self, batch: Batch, size: int) -> "Slots":
        return Slots(batch, size)

    def close(self) -> None:
        self.early = _closed(self.early)


def resolve_jobs(jobs: int | None, device: str) -> int:
    if jobs is not None and jobs < 1:
        raise ConfigError(f"--jobs {jobs}: give at least 1 (or leave it out: one per core)")
    from ..sandbox.preflight import gpu_slots
    cap = gpu_slots(device)  # on CUDA, one slot per GPU: each slot's GPU memory is its own
    wanted = jobs or cap or os.cpu_count() or 1
    return min(wanted, cap) if cap else wanted


def check_sandbox() -> None:
    """This machine can run the sandbox (bubblewrap, Linux, ...), checked before forking."""
    from ..sandbox.preflight import check_available
    problem = check_available()
    if problem:
        raise ConfigError(problem)


def grade_all(batch: Batch, submissions: list[Submission], jobs: int,
              on_result: OnResult, on_progress: Progress | None = None,
              early: "EarlySlots | None" = None, meanwhile: Callable[[], None] = lambda: None) -> None:
    """Grade every submission with ``jobs`` processes; ``on_result`` (and ``on_progress``, as
    each slot moves from phase to phase) runs here, in this process, and ``meanwhile`` once,
    as soon as the first pool's processes are grading (work this process would otherwise do
    after them). The first pool's processes adopt the ``early`` slots (launched before this
    process's imports); what is left of them is closed when that pool ends. Raises
    ``Stopped`` on SIGINT/SIGTERM, after ending them."""
    attempts: Counter = Counter()
    pending = list(submissions)
    with StopSignals() as stop:
        try:
            while pending:
                if stop.signum is not None:  # noted while the last pool's results were written
                    raise Stopped(stop.signum)
                pending = _one_pool(batch, pending, jobs, attempts, on_result, stop, on_progress, early, meanwhile)
                early, meanwhile = _closed(early), lambda: None  # a pool started after a break starts slots of its own
        finally:
            _closed(early)


def _closed(early: "EarlySlots | None") -> None:
    if early is not None:
        early.close()
    return None


def _one_pool(batch, pending, jobs, attempts, on_result, stop: "StopSignals", on_progress: Progress | None,
              early: "EarlySlots | None", meanwhile: Callable[[], None]) -> list[Submission]:
    """Run ``pending`` in one pool until it is done or breaks; returns what must run again."""
    retry: list[Submission] = []
    context = _context(batch)
    events = context.SimpleQueue() if on_progress is not None else None
    pool = _new_pool(batch, max(1, min(jobs, len(pending))), context, events, early)
    try:
        futures = {pool.submit(_grade_in_slot, s): s for s in pending}  # forks every process
        meanwhile()
        while futures:
            done, _ = wait(futures, timeout=POLL_S, return_when=FIRST_COMPLETED)
            while events is not None and not events.empty():
                on_progress(*events.get())
            for future in done:
                _deliver(batch, futures.pop(future), future, attempts, on_result, stop, retry)
            if stop.signum is not None:
                raise Stopped(stop.signum)
    except BaseException:
        _end(pool)
        raise
    pool.shutdown(wait=True)
    return retry


def _deliver(batch, submission: Submission, future, attempts: Counter, on_result, stop: "StopSignals",
             retry: list[Submission]) -> None:
    """A finished future's result to ``on_result``; a submission whose grading process died is
    graded again (into ``retry``), at most ``ATTEMPTS`` times."""
    try:
        on_result(submission, future.result())
    except BrokenProcessPool:
        if stop.signum is not None:  # killed by the same signal (a process group's)
            return
        attempts[submission.student_id] += 1
        if attempts[submission.student_id] < ATTEMPTS:
            retry.append(submission)
        else:
            on_result(submission, failed_result(batch, submission, "its grading process died"))


def _context(batch: Batch):
    return multiprocessing.get_context("fork" if batch.settings.device == "cpu" else "spawn")


def _new_pool(batch: Batch, workers: int, context=None, events=None, early=None) -> ProcessPoolExecutor:
    """``workers`` grading processes, each starting its sandbox slot (or adopting the ``early``
    one of its number); ``events`` (a queue of the same context) hears their progress."""
    context = context or _context(batch)
    launched = early.sandboxes if early is not None else []  # inherited by the fork, never pickled
    return ProcessPoolExecutor(max_workers=workers, mp_context=context, initializer=_start_slot,
                               initargs=(batch, context.Value("i", 0), os.getpid(), events, launched))


class Slots:
    """``size`` grading processes that stay warm between submissions, for a caller that hands
    out one submission at a time, over time (``autograder serve``): the same processes,
    sandboxes and grading as ``grade_all``. ``submit`` returns a future of the
    ``SubmissionResult``; a future whose grading process died raises (the caller decides
    whether to grade it again), and the next ``submit`` starts fresh processes."""

    def __init__(self, batch: Batch, size: int):
        self.batch, self.size = batch, size
        self._pool: ProcessPoolExecutor | None = None

    def start(self) -> None:
        """Fork every grading process now (before the caller starts threads) and wait for one;
        processes that die while starting (a sandbox that would not start) are started again,
        ``ATTEMPTS`` times in all."""
        for _ in range(ATTEMPTS):
            self._pool = _new_pool(self.batch, self.size)
            try:
                self._pool.submit(os.getpid).result()
                return
            except BrokenProcessPool:
                _end(self._pool)
        raise RuntimeError(f"the grading processes died while starting, {ATTEMPTS} times (their errors are above)")

    def submit(self, submission: Submission) -> Future:
        try:
            return self._pool.submit(_grade_in_slot, submission)
        except BrokenProcessPool:  # a grading process died: its futures said so; start afresh
            _end(self._pool)
            self._pool = _new_pool(self.batch, self.size)
            return self._pool.submit(_grade_in_slot, submission)

    def close(self) -> None:
        if self._pool is not None:
            _end(self._pool)


def _end(pool: ProcessPoolExecutor) -> None:
    """Stop at once: cancel what has not started and kill the grading processes (their
    sandboxes die with them)."""
    pool.shutdown(wait=False, cancel_futures=True)
    for child in multiprocessing.active_children():
        child.kill()
    for child in multiprocessing.active_children():
        child.join(timeout=5)


_SLOT: dict = {}  # in each grading process: its batch and its sandbox


def _start_slot(batch: Batch, counter, parent: int, events, launched: list) -> None:
    """Runs once in each grading process: dies with the grader, ignores the terminal's
    Ctrl-C (the grader stops it), one torch thread, one sandbox slot of its own number, on
    one CPU (``_pin``).
    SIGTERM kills it again: a forked process inherits the grader's handler, which would
    only note the signal."""
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:  # the grader died before the line above
        os._exit(1)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    set_up_torch()
    from ..sandbox.sandbox import Sandbox  # noqa: PLC0415 - only grading processes need it
    with counter.get_lock():
        slot, counter.value = counter.value, counter.value + 1
    _pin(slot)
    # Everything inherited from the grader (torch, hypothesis, the checks, the pages: a quarter
    # of a million objects) stays for good: kept out of this process's garbage collections,
    # which hypothesis's many small objects set off and which would walk them all each time
    # (a cold notebook's checks 5.5 -> 3.8 s, a replayed one's 1.0 -> 0.86 s).
    gc.freeze()
    _SLOT["batch"], _SLOT["slot"], _SLOT["events"] = batch, slot, events
    keep_runs_in(batch.results, batch.version)
    if slot < len(launched):  # launched by the grader before its imports: only the wait is left
        _SLOT["sandbox"] = launched[slot]
        _SLOT["sandbox"].adopt()
        return
    if batch.settings.device == "cuda":  # before the sandbox: CUDA's lazily made /dev nodes exist then
        import torch
        torch.cuda.init()
    _SLOT["sandbox"] = Sandbox(slot, batch.helpers, batch.config.sandbox.limits(), batch.settings.device)
    _SLOT["sandbox"].start()


def _pin(slot: int) -> None:
    """Keep the grading process, and the sandbox it starts (zygote and workers inherit it), on
    one CPU of those allowed, slot by slot. The grading process and its worker take turns,
    never run at once: on one CPU each request reaches a worker that runs at once, where
    otherwise the worker may wake on a CPU busy with another slot's pair and wait for its
    turn (about 10% of the grading time on two cores, benchmarks/grading_throughput.py)."""
    os.sched_setaffinity(0, slot_cpus(slot))


def _grade_in_slot(submission: Submission) -> SubmissionResult:
    batch, events = _SLOT["batch"], _SLOT["events"]

    def progress(phase: str) -> None:
        events.put((_SLOT["slot"], submission.student_id, phase))
    try:
        return grade_submission(_SLOT["sandbox"], batch, submission, progress if events is not None else None)
    except Exception as error:  # our own failure: that student's error, the batch goes on
        return failed_result(batch, submission, f"{type(error).__name__}: {error}")

"""Grading on a Ray cluster (``base.Executor``): a batch's slots on many hosts, or warm slots
for the service; the nodes' side is ``ray_nodes``.

This process, the driver, keeps the queue: it reads each notebook itself and sends its bytes,
and writes every result it gets back. A node that dies loses the submissions in flight on
it: they are graded again on another slot, at most ``ATTEMPTS`` times.
"""
import queue
import sys
import time
from collections import Counter, deque
from collections.abc import Callable
from concurrent.futures import Future

from ..grading.pipeline import Batch, grade_submission, read_submission
from ..submissions.find import Submission
from .base import ATTEMPTS, OnResult, Progress, StopSignals, Stopped, failed_result
from .ray_nodes import SLOT_START_TIMEOUT_S, code_digest, connect, gist, plan, slot_class

POLL_S = 1.0   # ray.wait in short steps, so that SIGINT/SIGTERM stop the batch


class RayExecutor:
    """A Ray cluster at ``address`` (None: this machine's running cluster)."""
    name = "ray"

    def __init__(self, address: str | None = None):
        self.address = address

    def plan(self, config, options, course):
        return plan(config, options, course)

    def grade_all(self, batch: Batch, submissions: list[Submission], jobs: int, on_result: OnResult,
                  on_progress: Progress | None = None, meanwhile: Callable[[], None] = lambda: None) -> None:
        meanwhile()
        grade_all(batch, submissions, jobs, on_result, on_progress)

    def slots(self, batch: Batch, size: int) -> "Slots":
        return Slots(batch, size)

    def close(self) -> None:
        pass


def grade_all(batch: Batch, submissions: list[Submission], jobs: int,
              on_result: OnResult, on_progress: Progress | None = None) -> None:
    """Grade every submission on ``jobs`` slots of the cluster; ``on_result`` runs here,
    as each finishes, and ``on_progress`` as each is sent to a slot (a node's phases are not
    reported back). Raises ``Stopped`` on SIGINT/SIGTERM, after ending the slots."""
    connect(None)
    with StopSignals() as stop:
        cluster = _Cluster(batch, jobs, stop, on_progress)
        try:
            cluster.run(deque(submissions), on_result)
        finally:
            cluster.close()


class _Cluster:
    """The driver's side: slots starting, idle and busy; the queue; attempts per submission."""

    def __init__(self, batch: Batch, jobs: int, stop: StopSignals, on_progress=None):
        import ray
        self.ray, self.batch, self.stop, self.on_progress = ray, batch, stop, on_progress
        self.numbers: dict = {}    # actor -> its slot's number, for the progress display
        self.actor = slot_class(batch)
        self.digest = code_digest(batch.course, batch.settings.assignment)
        self.starting: dict = {}   # ready() ref -> actor
        self.busy: dict = {}       # grade() ref -> (actor, submission)
        self.idle: list = []
        self.attempts: Counter = Counter()
        self.starts_left, self.ever_started, self.start_error = jobs * (ATTEMPTS + 1), False, ""
        for _ in range(jobs):
            self._start_slot()

    def run(self, queue: deque, on_result) -> None:
        self.waiting_since = time.monotonic()
        while queue or self.busy:
            while self.idle and queue:
                self._dispatch(queue.popleft(), on_result)
            done = self._wait()
            if done is None:
                self._give_up(queue, on_result)
                return
            for ref in done:
                if ref in self.starting:
                    self._started(ref)
                else:
                    self._finished(ref, queue, on_result)

    def _wait(self) -> list | None:
        """What finished within ``POLL_S``; None once no slot could start for
        ``SLOT_START_TIMEOUT_S`` while none was grading."""
        refs = [*self.busy, *self.starting]
        if not refs:  # no slot alive nor starting, and no more starts allowed
            raise RuntimeError(f"no grading slot could start on the Ray cluster: {self.start_error}")
        done, _ = self.ray.wait(refs, num_returns=1, timeout=POLL_S)
        if self.stop.signum is not None:
            raise Stopped(self.stop.signum)
        if done or self.busy:
            self.waiting_since = time.monotonic()
        elif time.monotonic() - self.waiting_since > SLOT_START_TIMEOUT_S:
            return None
        return done

    def _dispatch(self, submission: Submission, on_result) -> None:
        data, problem = read_submission(submission, self.batch)
        if problem is not None:  # unreadable here: no node needed to say so
            on_result(submission, grade_submission(None, self.batch, submission))
            return
        actor = self.idle.pop()
        ref = actor.grade.remote(submission, data)
        self.busy[ref] = (actor, submission)
        if self.on_progress is not None:
            self.on_progress(self.numbers.setdefault(actor, len(self.numbers)), submission.student_id, "cluster")

    def _started(self, ref) -> None:
        actor = self.starting.pop(ref)
        try:
            self.ray.get(ref)
        except self.ray.exceptions.RayError as error:
            self.start_error = gist(error)
            self._start_slot()
            return
        self.ever_started = True
        self.idle.append(actor)

    def _finished(self, ref, queue: deque, on_result) -> None:
        actor, submission = self.busy.pop(ref)
        try:
            result = self.ray.get(ref)
        except self.ray.exceptions.RayError as error:  # the slot (or its node) is gone
            self._lost(actor, submission, error, queue, on_result)
            return
        self.idle.append(actor)
        on_result(submission, result)

    def _lost(self, actor, submission: Submission, error, queue: deque, on_result) -> None:
        self.ray.kill(actor, no_restart=True)
        self.attempts[submission.student_id] += 1
        again = self.attempts[submission.student_id] < ATTEMPTS
        print(f"ray: a grading slot was lost while grading {submission.student_id} "
              f"({gist(error)[:200]}); {'grading it again' if again else 'giving up on it'}",
              file=sys.stderr, flush=True)
        if again:
            queue.appendleft(submission)
        else:
            on_result(submission, failed_result(self.batch, submission,
                                                f"its Ray grading slot was lost {ATTEMPTS} times"))
        self._start_slot()

    def _give_up(self, queue: deque, on_result) -> None:
        """No slot has been able to start for a long time: what is left fails (graded next run)."""
        if not self.ever_started:
            raise RuntimeError(f"no grading slot started on the Ray cluster in {SLOT_START_TIMEOUT_S:.0f} s"
                               f"{': ' + self.start_error if self.start_error else ''}")
        while queue:
            submission = queue.popleft()
            on_result(submission, failed_result(self.batch, submission, "no Ray node had room for a grading slot"))

    def _start_slot(self) -> None:
        if self.starts_left <= 0:
            return
        self.starts_left -= 1
        actor = self.actor.remote(self.batch, self.digest)
        self.starting[actor.ready.remote()] = actor

    def close(self) -> None:
        """End every slot: killing an actor ends its sandbox (bubblewrap dies with it)."""
        for actor in [*self.idle, *self.starting.values(), *(a for a, _ in self.busy.values())]:
            self.ray.kill(actor, no_restart=True)
        self.idle, self.starting, self.busy = [], {}, {}


class Slots:
    """Warm slots on the cluster for ``autograder serve`` (``base.Slots``). This process reads
    each notebook and sends its bytes (a node need not see the service's files). A slot whose
    node dies fails the future of the submission it was grading (the service queues it again)
    and is replaced; ``submit`` waits for a slot to be free, which the service's loop only asks
    for when one should be."""

    def __init__(self, batch: Batch, size: int):
        self.batch, self.size = batch, size
        self._idle: queue.Queue = queue.Queue()
        self._actors: set = set()

    def start(self) -> None:
        """Start every slot's actor; returns once one is up."""
        self._ray = connect(None)
        self._class = slot_class(self.batch)
        self._digest = code_digest(self.batch.course, self.batch.settings.assignment)
        for _ in range(self.size):
            self._start_one()
        self._idle.put(self._free())

    def submit(self, submission: Submission) -> Future:
        data, problem = read_submission(submission, self.batch)
        if problem is not None:  # unreadable here: no node needed to say so
            done: Future = Future()
            done.set_result(grade_submission(None, self.batch, submission))
            return done
        actor = self._free()
        future = actor.grade.remote(submission, data).future()
        future.add_done_callback(lambda finished: self._back(actor, finished))
        return future

    def close(self) -> None:
        """End every slot: killing an actor ends its sandbox (bubblewrap dies with it)."""
        for actor in list(self._actors):
            self._ray.kill(actor, no_restart=True)
        self._actors.clear()

    def _free(self):
        try:
            return self._idle.get(timeout=SLOT_START_TIMEOUT_S)
        except queue.Empty:
            raise RuntimeError(f"no grading slot free on the Ray cluster for {SLOT_START_TIMEOUT_S:.0f} s") from None

    def _back(self, actor, finished: Future) -> None:
        if finished.exception() is None:
            self._idle.put(actor)
            return
        print(f"ray: a grading slot was lost ({gist(finished.exception())[:200]}); starting another",
              file=sys.stderr, flush=True)
        self._actors.discard(actor)
        self._ray.kill(actor, no_restart=True)
        self._start_one()

    def _start_one(self) -> None:
        actor = self._class.remote(self.batch, self._digest)
        self._actors.add(actor)

        def started(ready: Future) -> None:
            if ready.exception() is None:
                self._idle.put(actor)
            else:
                print(f"ray: a grading slot could not start ({gist(ready.exception())[:200]})",
                      file=sys.stderr, flush=True)
        actor.ready.remote().future().add_done_callback(started)

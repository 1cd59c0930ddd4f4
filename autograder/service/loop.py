"""The grading loop: one thread that hands the queue's next submission to a free slot and
writes each result as it comes back.

Any executor's warm slots will do (``executors.base.Slots``): the same grading processes and
sandboxes as ``autograder grade``. A submission whose slot died
is queued again, at most ``ATTEMPTS`` times, then gets the batch's ``grader_failed``
result. Stopping takes nothing more from the queue, waits a while for what is being graded,
and puts the rest back in the queue for the next start.
"""
import threading
import time
from concurrent.futures import FIRST_COMPLETED, Future, wait
from ..executors.base import ATTEMPTS, Slots, failed_result
from ..grading.pipeline import Batch
from ..results import SubmissionResult
from ..submissions.find import Submission
from .intake import Uploads
from .log import log, printable
from .outputs import Outputs
from .queue import Queue, Row

POLL_S = 1.0    # the loop also looks at the queue this often (it is woken at each change)


class GradingLoop:
    def __init__(self, batch: Batch, queue: Queue, slots: Slots, uploads: Uploads, outputs: Outputs):
        self.batch, self.queue, self.slots, self.uploads, self.outputs = batch, queue, slots, uploads, outputs
        self.in_flight: dict[Future, tuple[Row, float]] = {}
        self._wake, self._stopping = threading.Event(), threading.Event()
        self._thread = threading.Thread(target=self._run, name="grading-loop", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def poke(self) -> None:
        """Something was queued: look now."""
        self._wake.set()

    def stop(self, within_s: float) -> int:
        """Take nothing more; wait up to ``within_s`` for the submissions being graded (their
        results written), then queue the others again. Returns how many went back."""
        self._stopping.set()
        self._wake.set()
        self._thread.join()
        deadline = time.monotonic() + within_s
        while self.in_flight and (left := deadline - time.monotonic()) > 0:
            wait(list(self.in_flight), timeout=left, return_when=FIRST_COMPLETED)
            self._settle(self._done())
        for row, _ in self.in_flight.values():
            self.queue.put_back(row.id, row.attempts)
        back, self.in_flight = len(self.in_flight), {}
        return back

    def _run(self) -> None:
        while not self._stopping.is_set():
            self._wake.wait(POLL_S)
            self._wake.clear()
            try:
                self._turn()
            except Exception:  # noqa: BLE001 - said in the log; the loop goes on (the queue is on disk)
                log.exception("the grading loop failed; it goes on")
                time.sleep(POLL_S)

    def _turn(self) -> None:
        done = self._done()
        self._dispatch()   # freed slots first, then the writing
        self._settle(done)
        if done:
            self._dispatch()
        if done and not self.in_flight:
            self._report()

    def _dispatch(self) -> None:
        while not self._stopping.is_set() and len(self.in_flight) < self.slots.size:
            row = self.queue.take(time.time())
            if row is None:
                return
            try:
                future = self.slots.submit(Submission(row.student_id, self.uploads.path(row.id)))
            except Exception as error:  # noqa: BLE001 - counted as a lost slot: queued again, then failed
                log.exception("handing %s to a grading slot failed", row.id)
                self._lost(row, error)
                continue
            future.add_done_callback(lambda _: self._wake.set())
            self.in_flight[future] = (row, time.monotonic())

    def _done(self) -> list[tuple[Future, Row, float]]:
        finished = [future for future in self.in_flight if future.done()]
        return [(future, *self.in_flight.pop(future)) for future in finished]

    def _settle(self, done: list[tuple[Future, Row, float]]) -> None:
        for future, row, started in done:
            try:
                result = future.result()
            except Exception as error:  # noqa: BLE001 - its slot died; grading itself always returns a result
                self._lost(row, error)
                continue
            self._deliver(row, result, time.monotonic() - started)

    def _lost(self, row: Row, error: BaseException) -> None:
        attempts = row.attempts + (0 if self._stopping.is_set() else 1)  # a stop is not the submission's doing
        if attempts < ATTEMPTS:
            log.warning("slot lost while grading %s (%s: %s); queued again", row.id, type(error).__name__, error)
            self.queue.put_back(row.id, attempts)
            return
        submission = Submission(row.student_id, self.uploads.path(row.id))
        self._deliver(row, failed_result(self.batch, submission, f"its grading process died {ATTEMPTS} times"), 0.0)

    def _deliver(self, row: Row, result: SubmissionResult, seconds: float) -> None:
        """Write the result; if writing it fails, the student gets the grader's failure instead."""
        try:
            written = self.outputs.write(row.id, result)
        except Exception as error:  # noqa: BLE001 - one submission's files fail that submission only
            log.exception("writing the result of %s failed", row.id)
            submission = Submission(row.student_id, self.uploads.path(row.id))
            written = self.outputs.write(row.id, failed_result(self.batch, submission,
                                                               f"writing its result failed: {error}"))
        for earlier in self.queue.finish(row.id, time.time()):
            self.uploads.remove(earlier)  # its result stays in history/; a student's uploads stay bounded
        log.info("graded %s of %s: autograded %g/%g in %.2f s", row.id, printable(row.student_id),
                 written.autograded_score, written.autograded_max, seconds)

    def _report(self) -> None:
        """The class report, drawn apart (``Outputs.report_soon``): never on this thread."""
        self.outputs.report_soon()

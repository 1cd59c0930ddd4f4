"""Warm grading slots on a Ray cluster, for ``autograder serve --executor ray``: the local
pool's ``Slots`` contract (``size``, ``start``, ``submit`` -> a future of the result,
``close``) with ``ray_pool``'s slot actors, the same sandbox and grading on any node.

This process reads each notebook and sends its bytes (a node need not see the service's
files). A slot whose node dies fails the future of the submission it was grading (the
service queues it again) and is replaced; ``submit`` waits for a slot to be free, which
the service's loop only asks for when one should be.
"""
import queue
import sys
from concurrent.futures import Future

from ..grading.pipeline import Batch, grade_submission, read_submission
from .ray import SLOT_START_TIMEOUT_S, _connect, _gist, _slot_class, code_digest
from ..submissions.find import Submission


class Slots:
    def __init__(self, batch: Batch, size: int):
        self.batch, self.size = batch, size
        self._idle: queue.Queue = queue.Queue()
        self._actors: set = set()

    def start(self) -> None:
        """Start every slot's actor; returns once one is up."""
        self._ray = _connect(None)
        self._class = _slot_class(self.batch)
        self._digest = code_digest(self.batch.course, self.batch.settings.assignment)
        for _ in range(self.size):
            self._start_one()
        self._idle.put(self._free())

    def submit(self, submission: Submission) -> Future:
        data, problem = read_submission(submission, self.batch.config.max_notebook_mb << 20)
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
        print(f"ray: a grading slot was lost ({_gist(finished.exception())[:200]}); starting another",
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
                print(f"ray: a grading slot could not start ({_gist(ready.exception())[:200]})",
                      file=sys.stderr, flush=True)
        actor.ready.remote().future().add_done_callback(started)

"""One submission's run in the sandbox: its cells, then its tasks' checks.

A cell that ends the worker (``os._exit``, a crash, a timeout, running out of memory) is
skipped and the cells are run again, without it, in a fresh worker: a loop with a bound
(``MAX_CRASHES`` per submission), after which the remaining cells are reported as not run.
One deadline bounds the whole submission, across every worker it needed.
"""
import time

from .checks.core import lost_reason
from .grading import RunSettings, grade_task
from .results import Issue, TaskResult, message_text, text
from .sandbox.proxy import Student, WorkerLost

MAX_CRASHES = 20


class Session:
    """A submission's worker, re-created (with its good cells re-run) after a crash."""

    def __init__(self, sandbox, settings: RunSettings, cells: list[tuple[str, str]],
                 deadline: float, output_limit: int):
        self.sandbox, self.settings = sandbox, settings
        self.cells, self.deadline, self.output_limit = cells, deadline, output_limit
        self.skipped: set[str] = set()
        self.warnings: list[Issue] = []
        self.errors: list[Issue] = []
        self.worker = None
        self.student: Student | None = None
        self._earlier = (0, 0.0)  # requests and seconds of the students of earlier workers

    def start(self) -> None:
        """A fresh worker with every cell run but the ones that crashed; raises ``WorkerLost``
        when the deadline passed or too many cells crashed."""
        while True:
            crashed = self._run_cells()
            if crashed is None:
                return
            self.skipped.add(crashed)
            if len(self.skipped) >= MAX_CRASHES:
                raise WorkerLost(f"{len(self.skipped)} cells ended the process", "too_many_crashes",
                                 {"count": len(self.skipped)})

    def _run_cells(self) -> str | None:
        """Run the cells in a fresh worker; the label of a cell that ended it, or None."""
        self.close()
        if time.monotonic() >= self.deadline:
            raise WorkerLost("the submission used up its time", "submission_time",
                             {"seconds": f"{self.sandbox.limits.submission_timeout_s:g}"})
        self.worker = self.sandbox.spawn(deadline=self.deadline)  # the book comes per task, without its answer
        if self.student is not None:
            self._earlier = self.requests()
        self.student = Student(self.worker.transport, self.settings.device, self.output_limit)
        for label, source in self.cells:
            if label in self.skipped:
                continue
            try:
                reply = self.worker.transport({"op": "exec", "args": {"label": label, "source": source}})
            except WorkerLost as lost:
                self.errors.append(Issue(code="cell_crashed", task=self._task(label), text=text(
                    "issue.cell_crashed", cell=label, reason=lost_reason(lost))))
                return label
            self.student.keep_output(reply)
            if "error" in reply and not label.endswith(("_visible", "_demo")):
                error = reply["error"]
                self.warnings.append(Issue(code="cell_error", task=self._task(label), text=text(
                    "issue.cell_error", cell=label, type=str(error.get("type")),
                    message=message_text(str(error.get("message"))))))
        return None

    def grade(self, task_ids: list[str]) -> dict[str, TaskResult]:
        """Each task's result; a task whose checks lost the worker goes on in a fresh one."""
        results = {}
        for task_id in task_ids:
            grade = grade_task(self.student, self.settings, task_id)
            results[task_id] = grade.result
            self.warnings += grade.warnings
            self.errors += grade.errors
            if grade.lost_worker:
                self.start()
        return results

    def requests(self) -> tuple[int, float]:
        """The checks' requests to the submission's workers, and the seconds spent waiting for
        their replies (the worker's work and the transport)."""
        count, seconds = self._earlier
        if self.student is not None:
            count, seconds = count + self.student.requests, seconds + self.student.waited_s
        return count, seconds

    def _task(self, label: str) -> str | None:
        return label if label in self.settings.spec.tasks else None

    def close(self) -> None:
        if self.worker is not None:
            self.worker.close()
            self.worker = None

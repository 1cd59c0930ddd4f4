"""One submission's run in the sandbox: its cells, then its tasks' checks.

A cell that ends the worker (``os._exit``, a crash, a timeout, running out of memory) is
skipped and the cells are run again, without it, in a fresh worker. The cells a student
added (labelled ``#n``) draw on a budget of their own: ``MAX_OWN_CRASHES`` crashes and
``own_cells_s`` seconds of wall-clock time over every run; once it is spent they are all
skipped, with one error, and the tasks are still graded. One deadline bounds the whole
submission, across every worker it needed.
"""
import time
from collections.abc import Callable

from ..checks import TASKS
from ..checks.core import lost_reason
from .task import RunSettings, grade_task
from ..results import Issue, TaskResult, message_text, text
from ..sandbox.client import Student, WorkerLost

MAX_OWN_CRASHES = 20


def is_own(label: str) -> bool:
    """A cell the student added (not the source's locked or solution cells)."""
    return label.startswith("#")



DETAIL_CHARS = 2000  # of a cell's source, in the TA's report


def cell_detail(source: str, error: dict | None = None) -> str:
    """For the TA's report: the cell's source (its first ``DETAIL_CHARS`` characters) and, where
    it raised, where and what, as the worker said it."""
    shown = source if len(source) <= DETAIL_CHARS else source[:DETAIL_CHARS] + "\n# ..."
    if error:
        said = f"{error.get('where') or ''} {error.get('type')}: {error.get('message')}".strip()
        shown += "\n# " + said[:300]
    return shown

class Session:
    """A submission's worker, re-created (with its good cells re-run) after a crash."""

    def __init__(self, sandbox, settings: RunSettings, cells: list[tuple[str, str]],
                 deadline: float):
        self.sandbox, self.settings = sandbox, settings
        self.cells, self.deadline = cells, deadline
        self.skipped: set[str] = set()
        self.told: set[str] = set()  # task names whose later redefinition the student was told of
        self.defines = {task: TASKS[task].defines for task in settings.autograded}  # solution cell -> its name
        self.own_crashes, self.own_left_s, self.own_cut = 0, sandbox.limits.own_cells_s, False
        self.warnings: list[Issue] = []
        self.errors: list[Issue] = []
        self.worker = None
        self.student: Student | None = None
        self._earlier = (0, 0.0)  # requests and seconds of the students of earlier workers

    def start(self) -> None:
        """A fresh worker with every cell run but the ones that crashed (and, once their budget
        is spent, the student's own); raises ``WorkerLost`` when the deadline passed."""
        while True:
            crashed = self._run_cells()
            if crashed is None:
                return
            self.skipped.add(crashed)
            if is_own(crashed) and not self.own_cut:
                self.own_crashes += 1
                if self.own_crashes >= MAX_OWN_CRASHES:
                    self._cut_own("too_many_crashes", text("lost.too_many_crashes", count=self.own_crashes))

    def _cut_own(self, code: str, reason) -> None:
        """The student's own cells are not run any more: one error says why and how many."""
        self.own_cut = True
        left = sum(1 for label, _ in self.cells if is_own(label) and label not in self.skipped)
        self.errors.append(Issue(code=code, text=text("issue.own_cells_cut", reason=reason, count=left)))

    def _run_cells(self) -> str | None:
        """Run the cells in a fresh worker; the label of a cell that ended it, or None."""
        self.close()
        if time.monotonic() >= self.deadline:
            raise WorkerLost("the submission used up its time", "submission_time",
                             {"seconds": f"{self.sandbox.limits.submission_timeout_s:g}"})
        self.worker = self.sandbox.spawn(deadline=self.deadline)  # the book comes per task, without its answer
        if self.student is not None:
            self._earlier = self.requests()
        self.student = Student(self.worker.transport, self.settings.device)
        for label, source in self.cells:
            if label in self.skipped or (self.own_cut and is_own(label)):
                continue
            if not self._run_cell(label, source):
                return label
        self._settle()
        return None

    def _settle(self) -> None:
        """Each task's name bound again to what its solution cell defined (as nbgrader's test
        cell right after it sees it): a later cell that defined it again (a scratch copy, an
        unfinished experiment) is not graded, and the student is told. A worker lost here is
        found lost by the checks' first request, as after any cell."""
        try:
            found = self.student.settle()
        except WorkerLost:
            return
        names = {name: task for task, name in self.defines.items()}
        labels = {label for label, _ in self.cells}
        for pair in found:  # the worker's claim: known names and cells only
            if (isinstance(pair, list) and len(pair) == 2 and all(isinstance(item, str) for item in pair)
                    and pair[0] in names and pair[1] in labels and pair[0] not in self.told):
                self.told.add(pair[0])
                self.warnings.append(Issue(code="redefined_later", task=names[pair[0]], text=text(
                    "issue.redefined_later", name=pair[0], cell=pair[1])))

    def _run_cell(self, label: str, source: str) -> bool:
        """One cell; False when it ended the worker (said in an error)."""
        own, started = is_own(label), time.monotonic()
        try:
            reply = self.student.run_cell(label, source, self.defines.get(label),
                                          until=started + self.own_left_s if own else None)
        except WorkerLost as lost:
            if lost.why != "own_cells_time":  # which ends the budget: _spent says so
                self.errors.append(Issue(code="cell_crashed", task=self._task(label), text=text(
                    "issue.cell_crashed", cell=label, reason=lost_reason(lost)), detail=cell_detail(source)))
            self._spent(own, started)
            return False
        self._spent(own, started)
        error = reply.get("error")
        if error is not None:
            self.warnings.append(Issue(code="cell_error", task=self._task(label), text=text(
                "issue.cell_error", cell=label, type=str(error.get("type")),
                message=message_text(str(error.get("message")))), detail=cell_detail(source, error)))
        return True

    def _spent(self, own: bool, started: float) -> None:
        if own:
            self.own_left_s -= time.monotonic() - started
            if self.own_left_s <= 0 and not self.own_cut:
                self._cut_own("own_cells_time", text("lost.own_cells_time",
                                                     seconds=f"{self.sandbox.limits.own_cells_s:g}"))

    def grade(self, task_ids: list[str], progress: Callable[[str], None]) -> dict[str, TaskResult]:
        """Each task's result (``progress`` hears each task as it starts); a task whose checks
        lost the worker goes on in a fresh one."""
        results = {}
        for task_id in task_ids:
            progress(task_id)
            grade = grade_task(self.student, self.settings, task_id, cell=dict(self.cells).get(task_id))
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

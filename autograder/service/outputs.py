"""What the service writes into ``DIR``: the batch's files, through the batch's store, and
the history.

Each graded submission becomes the student's ``DIR/<student_id>.json``, feedback and row of
``grades.csv``, as ``autograder grade`` writes them (``OutputFolder``), and is kept as
``DIR/history/<student_id>/<submission id>.json`` with its feedback beside it; the latest
submission is kept there too, so every submission's result has one address. ``grades.csv``
holds every student whose result is in ``DIR``, graded by the service or by a batch.

The class report is never drawn on the grading loop's thread (SPEC §3: no work on what students
control on the path that hands the next submission to a slot): ``report_soon`` asks the
``ReportDrawer``, a thread of its own that draws it at most every ``REPORT_EVERY_S`` in a child
process (kept warm, so that its fingerprints of the cells are reused) with a deadline
(``REPORT_WITHIN_S``; cut there, the last report stays). Neither the report's time, nor its
memory, nor the interpreter's lock is taken from grading. ``close`` gives a last report what is
left of the stop's time, or skips it with a note.
"""
import json
import os
import select
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path

from pydantic import ValidationError

from ..config import ConfigError
from ..gradebook import CourseError
from ..grading.task import RunSettings
from ..outputs.manual_points import Tasks
from ..outputs.totals import Entered, entered_in
from ..report.class_report import report_job
from ..results import SubmissionResult
from ..outputs.store import OutputFolder
from .log import log

REPORT_EVERY_S = 60.0   # the class report is drawn at most this often while results come in
LAST_REPORT_S = 2.0     # a last report at the stop is drawn only with this much of the stop's time left
REPORT_WITHIN_S = 120   # a drawing that takes longer is cut (a class of 300 takes a few seconds)
# The drawing process: one job after another from its standard input (a line with the job's
# length, then the job as JSON), a line answered for each. It dies with the service
# (PR_SET_PDEATHSIG: a service killed with -9 leaves nothing behind) and by its own alarm past a
# job's deadline; Ctrl-C at the terminal is the service's to handle.
DRAW = """
import ctypes, json, os, signal, sys
ctypes.CDLL(None).prctl(1, signal.SIGKILL, 0, 0, 0)
if os.getppid() != int(sys.argv[1]):
    sys.exit(1)
signal.signal(signal.SIGINT, signal.SIG_IGN)
from autograder.report.class_report import write_class_report_of
while header := sys.stdin.buffer.readline():
    job = json.loads(sys.stdin.buffer.read(int(header)))
    signal.alarm(int(job.pop("within_s")) + 1)
    try:
        write_class_report_of(job)
        said = "done"
    except Exception as error:
        said = f"failed {type(error).__name__}: {error}"
    signal.alarm(0)
    sys.stdout.write(" ".join(said.split())[:500] + "\\n")
    sys.stdout.flush()
"""


class Outputs:
    def __init__(self, folder: OutputFolder, settings: RunSettings):
        self.folder, self.settings = folder, settings
        self.latest = _stored(folder)
        self._lock = threading.Lock()
        self.drawer = ReportDrawer(self._job)
        for leftover in folder.path.glob("history/*/.*.tmp"):
            leftover.unlink()  # a copy cut short by a killed service

    def write(self, submission_id: str, result: SubmissionResult) -> SubmissionResult:
        """The student's latest result (its feedback with the written answers' points entered so
        far), its history copy and grades.csv; returns it as written."""
        with self._lock:
            entered = self._entered()
            written = self.folder.save(result, entered=entered)
            self.folder.keep(result.student_id, submission_id)
            self.latest[written.student_id] = written
            self.write_grades(entered)
        self.drawer.due()
        return written

    def write_grades(self, entered: Entered | None = None) -> None:
        """grades.csv of every latest result (at start too: a batch may have left fewer rows)."""
        if self.latest:
            self.folder.write_grades(list(self.latest.values()), list(self.settings.spec.tasks),
                                     self._entered() if entered is None else entered)

    def _entered(self) -> Entered:
        """The written answers' points known now, read at each writing (the TA may enter them in
        manual_points.csv or formgrader while the service runs), as the batch reads them."""
        tasks = Tasks.of(self.settings.assignment, self.settings.spec)
        try:
            return entered_in(self.folder.path, self.settings.assignment, tasks)
        except (ConfigError, CourseError) as error:
            log.warning("the written answers' points could not be read, so grades.csv and the report show "
                        "none: %s", str(error).splitlines()[0])
            return {}

    def kept(self, student_id: str, submission_id: str, suffix: str = ".json") -> Path:
        return self.folder.kept_path(student_id, submission_id, suffix)

    def report(self, within_s: float = REPORT_WITHIN_S) -> bool:
        """Draw the class report of every latest result now, apart, and wait for it (at most
        ``within_s``); False (said in the log) when it was cut or failed: the last report stays."""
        return self.drawer.now(within_s)

    def report_soon(self) -> None:
        """The class report of the results that came in, drawn apart once ``REPORT_EVERY_S`` has
        passed since the last one. Returns at once."""
        self.drawer.soon()

    def close(self, within_s: float) -> None:
        """A last report if one is due and fits in ``within_s``, then the drawing process ends."""
        self.drawer.close(within_s)

    def _job(self) -> dict | None:
        """What the drawing process needs, as JSON data (None: no result yet)."""
        with self._lock:
            if not self.latest:
                return None
            return report_job(list(self.latest.values()), self.folder.path, self.folder.language,
                              self.settings.task_checks, self._entered())


class ReportDrawer:
    """A thread that draws the class report in a child process of its own, one drawing at a time,
    each within its deadline (``job()`` makes the drawing's job, or None when there is nothing to
    draw). Only this thread talks to the child, which is kept warm between drawings."""

    def __init__(self, job: Callable[[], dict | None]):
        self.job = job
        self._changed = threading.Condition()
        self._due = self._soon = False
        self._asked: list[tuple[float, Future]] = []
        self._close_by: float | None = None
        self._drawn_at = -REPORT_EVERY_S
        self._thread: threading.Thread | None = None
        self._child: subprocess.Popen | None = None

    def due(self) -> None:
        with self._changed:
            self._due = True
            self._changed.notify()

    def soon(self) -> None:
        with self._changed:
            self._soon = True
            self._start()
            self._changed.notify()

    def now(self, within_s: float) -> bool:
        asked: Future = Future()
        with self._changed:
            if self._close_by is not None:
                return False
            self._asked.append((within_s, asked))
            self._start()
            self._changed.notify()
        return asked.result()

    def close(self, within_s: float) -> None:
        """A drawing under way may finish, and a last one is drawn if due, within ``within_s``
        (a last one only with ``LAST_REPORT_S`` left); what is still drawing then is cut."""
        ends = time.monotonic() + within_s
        with self._changed:
            self._close_by = ends
            started = self._thread is not None
            if self._due:
                self._start()
            self._changed.notify()
        if not started and not self._due:
            return
        self._thread.join(max(0.0, ends - time.monotonic()))
        child = self._child
        if self._thread.is_alive() and child is not None:
            child.kill()   # past the stop's time: cut
            self._thread.join(5)

    def _start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="class-report", daemon=True)
            self._thread.start()

    def _run(self) -> None:
        try:
            while (work := self._next()) is not None:
                within_s, asked = work
                drawn = self._draw(within_s)
                if asked is not None:
                    asked.set_result(drawn)
        finally:
            self._end_child()
            with self._changed:
                for _, asked in self._asked:
                    asked.set_result(False)
                self._asked.clear()

    def _next(self) -> tuple[float, Future | None] | None:
        """The next drawing (its deadline, and who waits for it), or None at the stop."""
        with self._changed:
            while True:
                if self._asked:
                    return self._asked.pop(0)
                if self._close_by is not None:
                    return self._last()
                wait_s = self._drawn_at + REPORT_EVERY_S - time.monotonic()
                if self._soon and self._due and wait_s <= 0:
                    self._soon = False
                    return REPORT_WITHIN_S, None
                self._changed.wait(wait_s if self._soon and self._due else None)

    def _last(self) -> tuple[float, None] | None:
        left = self._close_by - time.monotonic()
        if not self._due:
            return None
        self._close_by = float("-inf")   # one last drawing at most
        if left < LAST_REPORT_S:
            log.warning("the class report was not drawn again at the stop (%.0f s of the stop's time left); it "
                        "is drawn after the next result, or by `autograder grade` on this folder", max(left, 0.0))
            return None
        return left, None

    def _draw(self, within_s: float) -> bool:
        with self._changed:
            self._due, self._drawn_at = False, time.monotonic()
        job = self.job()
        if job is None:
            return False
        data = json.dumps({**job, "within_s": within_s}).encode()
        child = self._child = self._child if self._child is not None and self._child.poll() is None else \
            subprocess.Popen([sys.executable, "-c", DRAW, str(os.getpid())], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, start_new_session=True)
        try:
            child.stdin.write(b"%d\n" % len(data) + data)
            child.stdin.flush()
            answered = select.select([child.stdout], [], [], within_s)[0] and child.stdout.readline()
        except OSError:   # it was cut, or died, before it read the job
            answered = b""
        if answered and answered.startswith(b"done"):
            return True
        if answered:
            log.error("drawing the class report failed: %s", answered.decode("utf-8", "replace").strip())
        elif answered == []:
            log.warning("the class report took more than %.0f s and was cut; the last one stays", within_s)
        else:
            log.warning("the process drawing the class report ended (status %s); the last report stays",
                        child.poll())
        self._end_child()   # cut, failed or gone: the next drawing starts a fresh one
        return False

    def _end_child(self) -> None:
        child, self._child = self._child, None
        if child is not None:
            child.kill()
            child.wait()


def _stored(folder: OutputFolder) -> dict[str, SubmissionResult]:
    """The results already in the folder (a batch's, an earlier service's), by student."""
    found: dict[str, SubmissionResult] = {}
    for path in sorted(folder.path.glob("*.json")):
        try:
            student_id = SubmissionResult.model_validate_json(path.read_bytes()).student_id
        except (ValidationError, ValueError, OSError):
            continue  # not a result: the batch would note it when grading that student
        result = folder.load(student_id) if folder.result_path(student_id) == path else None
        if result is not None:
            found[student_id] = result
    return found

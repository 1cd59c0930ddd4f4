"""What the service writes into ``DIR``: the batch's files, through the batch's store, and
the history.

Each graded submission becomes the student's ``DIR/<student_id>.json``, feedback and row of
``grades.csv``, as ``autograder grade`` writes them (``OutputFolder``), and is kept as
``DIR/history/<student_id>/<submission id>.json`` with its feedback beside it; the latest
submission is kept there too, so every submission's result has one address. ``grades.csv``
holds every student whose result is in ``DIR``, graded by the service or by a batch.

The class report is never drawn on the grading loop's thread (SPEC §3: no work on what students
control on the path that hands the next submission to a slot): ``report_soon`` asks a thread of
its own, which draws it at most every ``REPORT_EVERY_S`` in a child process with a deadline
(``REPORT_WITHIN_S``; cut there, the last report stays), so that neither its time, nor its memory,
nor the interpreter's lock is taken from grading. ``close`` gives a last report what is left of
the stop's time, or skips it with a note.
"""
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
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
# The child: dies with the service (PR_SET_PDEATHSIG; a service killed with -9 leaves no drawing
# behind), and by its own alarm at the deadline; Ctrl-C to the terminal is the service's to handle.
DRAW = ("import ctypes, json, os, signal, sys\n"
        "ctypes.CDLL(None).prctl(1, signal.SIGKILL, 0, 0, 0)\n"
        "if os.getppid() != int(sys.argv[1]):\n"
        "    sys.exit(1)\n"
        "signal.signal(signal.SIGINT, signal.SIG_IGN)\n"
        "signal.alarm(int(sys.argv[2]) + 1)\n"
        "from autograder.report.class_report import write_class_report_of\n"
        "write_class_report_of(json.load(sys.stdin.buffer))\n")


class Outputs:
    def __init__(self, folder: OutputFolder, settings: RunSettings):
        self.folder, self.settings = folder, settings
        self.latest = _stored(folder)
        self._lock = threading.Lock()       # the latest results, grades.csv
        self._drawing = threading.Lock()    # one drawing of the class report at a time
        self._asked, self._closing = threading.Event(), threading.Event()
        self._due, self._drawn_at = False, -REPORT_EVERY_S
        self._drawer: threading.Thread | None = None
        self._child: subprocess.Popen | None = None
        for leftover in folder.path.glob("history/*/.*.tmp"):
            leftover.unlink()  # a copy cut short by a killed service

    def write(self, submission_id: str, result: SubmissionResult) -> SubmissionResult:
        """The student's latest result, its history copy and grades.csv; returns it as written."""
        with self._lock:
            written = self.folder.save(result)
            self.folder.keep(result.student_id, submission_id)
            self.latest[written.student_id] = written
            self.write_grades()
            self._due = True
        return written

    def write_grades(self) -> None:
        """grades.csv of every latest result (at start too: a batch may have left fewer rows)."""
        if self.latest:
            self.folder.write_grades(list(self.latest.values()), list(self.settings.spec.tasks), self._entered())

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
        """Draw the class report of every latest result now, in a child process, within
        ``within_s``; False (said in the log) when it was cut or failed: the last report stays."""
        with self._drawing:
            return self._draw(within_s, last=True)

    def report_soon(self) -> None:
        """The report thread draws the report of the results that came in, once ``REPORT_EVERY_S``
        has passed since its last one. Returns at once."""
        with self._lock:
            if self._drawer is None and not self._closing.is_set():
                self._drawer = threading.Thread(target=self._draw_when_due, name="class-report", daemon=True)
                self._drawer.start()
        self._asked.set()

    def close(self, within_s: float) -> None:
        """Stop drawing: a drawing under way is cut, and a last report of what came in since the
        last one is drawn if at least ``LAST_REPORT_S`` of ``within_s`` is left, else skipped with
        a note in the log."""
        ends = time.monotonic() + within_s
        with self._lock:
            self._closing.set()
            child = self._child
        self._asked.set()
        if child is not None:
            child.kill()
        if self._drawer is not None:
            self._drawer.join(max(0.0, ends - time.monotonic()))
        left = ends - time.monotonic()
        if not self._due:
            return
        if left < LAST_REPORT_S:
            log.warning("the class report was not drawn again at the stop (%.0f s of the stop's time left); it is "
                        "drawn after the next result, or by `autograder grade` on this folder", max(left, 0.0))
            return
        with self._drawing:
            self._draw(left, last=True)

    def _draw_when_due(self) -> None:
        while True:
            self._asked.wait()
            wait_s = self._drawn_at + REPORT_EVERY_S - time.monotonic()
            if self._closing.is_set() or wait_s > 0 and self._closing.wait(wait_s):
                return
            self._asked.clear()
            with self._drawing:
                self._draw(REPORT_WITHIN_S, last=False)

    def _draw(self, within_s: float, last: bool) -> bool:
        """One drawing in a child process, cut at ``within_s`` (and by a stop, unless ``last``);
        the caller holds ``_drawing``."""
        with self._lock:
            if not self.latest or self._closing.is_set() and not last:
                return False
            self._due, self._drawn_at = False, time.monotonic()
            job = report_job(list(self.latest.values()), self.folder.path, self.folder.language,
                             self.settings.task_checks, self._entered())
        with tempfile.TemporaryFile() as errors:
            child = subprocess.Popen([sys.executable, "-c", DRAW, str(os.getpid()), str(int(within_s) + 1)],
                                     stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=errors,
                                     start_new_session=True)
            with self._lock:
                self._child = child
                if self._closing.is_set() and not last:
                    child.kill()   # the stop came while it started
            try:
                return self._waited(child, json.dumps(job).encode(), within_s, errors)
            finally:
                with self._lock:
                    self._child = None

    def _waited(self, child: subprocess.Popen, data: bytes, within_s: float, errors) -> bool:
        try:
            child.communicate(data, timeout=within_s)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()
            log.warning("the class report took more than %.0f s and was cut; the last one stays", within_s)
            return False
        except OSError:   # it was killed before it read the job
            child.wait()
        if child.returncode == 0:
            return True
        if child.returncode == -signal.SIGKILL and self._closing.is_set():
            log.info("the class report being drawn was cut by the stop")
            return False
        errors.seek(0)
        said = errors.read()[-2000:].decode("utf-8", "replace").strip().splitlines()
        log.error("drawing the class report failed (status %s): %s", child.returncode, said[-1] if said else "")
        return False


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

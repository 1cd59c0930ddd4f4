"""Hand-ins from nbgrader's exchange (SPEC §5): ``autograder serve --exchange ROOT --course ID``.

One thread polls ``ROOT/COURSE/inbound/`` every ``POLL_S`` (exchanges sit on network file
systems, where inotify misses other clients' writes) and takes each complete hand-in of the
assignment once (``ledger``: a restart takes none again). Taking one reads it, bounded
(``handin``), into the service's ``uploads/`` and puts it in the same grading queue as an
upload: the same turns, limits, rate and outputs. Once graded (``exchange_outputs``), its
feedback page is written where ``nbgrader fetch_feedback`` looks: ``ROOT/COURSE/feedback/
<md5(secret + notebook id)>.html``. Nothing in ``inbound/`` is ever changed or deleted: the
TA's ``nbgrader collect`` reads it later.

A refused hand-in is logged with why, one line, and counted (``/api/health``'s
``refused_handins``); where its student can be told (the folder is theirs, its secret one
nbgrader wrote), its feedback page says why. All of this runs on this thread, never on the
grading loop's, so no hand-in delays the next submission's way to a free slot.
"""
import os
import secrets
import threading
import time
from collections import defaultdict
from typing import TYPE_CHECKING

from ...results import text
from . import handin
from ..deadlines import Deadlines, shown, shown_time
from .paths import ExchangePaths, FeedbackFolder, refusal_page
from .handin import HandIn, Name, Refused
from .ledger import Entry, Ledger
from ..log import log, printable
from ..queue import Refused as AboveRate

if TYPE_CHECKING:
    from ..app import Service

POLL_S = 1.0          # how often inbound/ is listed
CHECK_AGAIN_S = 60.0  # a folder still without its secret is looked at again at most this often, once a minute old
RETRY_S = 30.0        # a page that could not be written is tried again this often


class Exchange:
    """The hand-ins of ``service``'s assignment (its queue, uploads, outputs, limits, deadlines)."""

    def __init__(self, paths: ExchangePaths, ledger: Ledger, service: "Service"):
        self.paths, self.ledger, self.service = paths, ledger, service
        self.queue, self.uploads, self.outputs = service.queue, service.uploads, service.outputs
        self.assignments, self.deadlines = service.assignments, service.deadlines
        self.feedback = FeedbackFolder(paths)
        self._taken: set[str] = set()
        self._unfinished: dict[str, tuple[float, float]] = {}   # folder -> (first seen, next look)
        self._graded: dict[str, float] = {}                     # submission id -> not before (its page to write)
        self._lock = threading.Lock()
        self._wake, self._stopping = threading.Event(), threading.Event()
        self._thread = threading.Thread(target=self._run, name="exchange", daemon=True)

    def recover(self) -> None:
        """At start: what a stopped service left, made whole (before the grading loop starts)."""
        again = self.ledger.forget_waiting()
        for entry in self.ledger.by_status("queued"):
            row = self.queue.get(entry.submission_id, entry.student_id)
            if row is None or row.status == "replaced":
                self.ledger.set_status(entry.submission_id, "replaced")
            elif row.status == "done":
                self._graded[entry.submission_id] = 0.0   # graded, its page not yet written
        self._taken = self.ledger.folders()
        if again:
            log.info("%d hand-ins that were waiting for their turn are taken again from the exchange", again)

    def start(self) -> None:
        self._thread.start()
        log.info("taking hand-ins of %s from %s every %g s (%d taken so far, %d refused)", self.assignments.name,
                 self.paths.inbound, POLL_S, len(self._taken), self.refused())

    def stop(self) -> None:
        """Take nothing more; the pages of what was graded are written first."""
        self._stopping.set()
        self._wake.set()
        if self._thread.is_alive():
            self._thread.join()
        self._release_graded()
        self.feedback.close()
        self.ledger.close()

    def refused(self) -> int:
        return self.ledger.refused()

    def graded(self, submission_id: str) -> None:
        """A hand-in's result is written (the grading loop's thread): its page goes out now."""
        with self._lock:
            self._graded[submission_id] = 0.0
        self._wake.set()

    def _run(self) -> None:
        while not self._stopping.is_set():
            try:
                self._turn()
            except Exception:  # noqa: BLE001 - said in the log; the next turn tries again
                log.exception("the exchange's turn failed; it goes on")
            self._wake.wait(POLL_S)
            self._wake.clear()

    def _turn(self) -> None:
        self._release_graded()   # a student is waiting for these
        for name, _ in self._complete(self._new_folders()):
            if self._stopping.is_set():
                return
            if self._take(name):
                self._queue_waiting()   # at once: a student's older copy waiting goes now (disk bounded)
        self._queue_waiting()

    def _new_folders(self) -> list[Name]:
        """This assignment's hand-in folders in ``inbound/`` not taken yet (names only)."""
        marker = f"+{self.assignments.name}+"
        with os.scandir(self.paths.inbound) as entries:
            names = [entry.name for entry in entries if marker in entry.name and entry.name not in self._taken]
        return [name for name in map(lambda folder: Name.parse(folder, self.assignments.name), names) if name]

    def _complete(self, names: list[Name]) -> list[tuple[Name, float]]:
        """The hand-ins whose secret is there (nbgrader writes it last), oldest first. A folder
        without one is looked at on every turn for a minute, then once a minute."""
        now, found = time.monotonic(), []
        for name in names:
            first, due = self._unfinished.get(name.folder, (now, now))
            if due > now:
                continue
            try:
                found.append((name, os.lstat(self.paths.inbound / name.folder / handin.SECRET).st_ctime))
                self._unfinished.pop(name.folder, None)
            except OSError:
                self._unfinished[name.folder] = (first, now + (POLL_S if now - first < CHECK_AGAIN_S else
                                                               CHECK_AGAIN_S))
        return sorted(found, key=lambda pair: pair[1])

    def _take(self, name: Name) -> bool:
        """Read one hand-in into ``uploads/``; it waits for its turn (True), or is refused."""
        self._taken.add(name.folder)
        submission_id = secrets.token_hex(8)
        copy = self.uploads.new(submission_id)
        try:
            taken = self._read(name, copy)
        except Refused as refused:
            self.uploads.remove(submission_id)
            self._refuse(name, refused)
            return False
        except OSError as error:   # the service's side (its disk full, the exchange's mount gone): not the student's
            self.uploads.remove(submission_id)
            self._taken.discard(name.folder)
            self._unfinished[name.folder] = (time.monotonic() - CHECK_AGAIN_S, time.monotonic() + CHECK_AGAIN_S)
            log.warning("hand-in %s could not be read (%s); trying again in %g s", printable(name.folder),
                        error.strerror or error, CHECK_AGAIN_S)
            return False
        late = self.deadlines.passed(name.student, taken.handed_in) is not None
        entry = Entry(name.folder, name.student, "waiting", submission_id, taken.handed_in, late, taken.notebook,
                      taken.feedback)
        self.ledger.wait(entry, time.time())
        log.info("took hand-in %s of %s as %s%s", printable(name.folder), printable(name.student), submission_id,
                 " (after the deadline: feedback only)" if late else "")
        return True

    def _read(self, name: Name, copy) -> HandIn:
        inbound = os.open(self.paths.inbound, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            taken = handin.read(inbound, name, self.service.notebook, copy, self.service.limit_bytes,
                                not self.paths.shared_uid)
        finally:
            os.close(inbound)
        handin.check_copy(copy, self.service.limit_bytes, self.assignments, taken)
        if self.ledger.feedback_of_another(taken.feedback, name.student):
            raise Refused("its submission_secret.txt is another student's hand-in's (copied?)")
        return taken

    def _refuse(self, name: Name, refused: Refused) -> None:
        log.warning("hand-in %s refused: %s", printable(name.folder), printable(refused.why))
        page = None
        if refused.told is not None and refused.secret is not None:
            page = self._tell(name, refused)
        self.ledger.refuse(name.folder, name.student, refused.why, time.time(), page)

    def _tell(self, name: Name, refused: Refused) -> str | None:
        """The refusal's page under each of the hand-in's notebooks (what ``fetch_feedback`` looks
        for), unless a name is another student's; returns the first page's name."""
        when = shown_time(refused.handed_in, self.deadlines.of(name.student))
        page = refusal_page(self.assignments.name, refused.told, when, self.service.language)
        written = []
        for notebook in refused.notebooks:
            page_name = handin.feedback_name(refused.secret, os.path.splitext(notebook)[0])
            if self.ledger.feedback_of_another(page_name, name.student):
                continue
            try:
                self.feedback.write(page_name, page)
                written.append(page_name)
            except OSError as error:
                log.error("the page of refused hand-in %s could not be written: %s", printable(name.folder), error)
        return written[0] if written else None

    def _queue_waiting(self) -> None:
        """Each student's newest waiting hand-in into the grading queue, when its turn has come;
        an older waiting one of the same kind (on time, or late) is replaced by it."""
        by_student: dict[str, list[Entry]] = defaultdict(list)
        for entry in self.ledger.by_status("waiting"):
            by_student[entry.student_id].append(entry)
        for student, waiting in by_student.items():
            on_time = [entry for entry in waiting if not entry.late]
            late = [entry for entry in waiting if entry.late]
            for older in on_time[:-1] + late[:-1]:
                self._replaced(older.submission_id)
            chosen = on_time[-1] if on_time else late[-1]
            if chosen.late and self._on_time_waits(student):
                continue
            self._queue(chosen)

    def _on_time_waits(self, student: str) -> bool:
        """Whether the student's submission waiting in the queue is on time (an upload always is)."""
        queued = self.queue.waiting(student)
        entry = self.ledger.get(queued) if queued else None
        return queued is not None and (entry is None or not entry.late)

    def _queue(self, entry: Entry) -> None:
        added = self.queue.add(entry.submission_id, entry.student_id, self.service.per_hour, time.time())
        if isinstance(added, AboveRate):
            return   # it waits: looked at again on the next turn
        self.ledger.set_status(entry.submission_id, "queued")
        for replaced in added.replaced:
            self._replaced(replaced)
        self.service.loop.poke()
        log.info("queued %s of %s from the exchange%s", entry.submission_id, printable(entry.student_id),
                 f" (replacing {', '.join(added.replaced)})" if added.replaced else "")

    def _replaced(self, submission_id: str) -> None:
        self.uploads.remove(submission_id)
        self.ledger.set_status(submission_id, "replaced")

    def _release_graded(self) -> None:
        now = time.monotonic()
        with self._lock:
            due = [sid for sid, not_before in self._graded.items() if not_before <= now]
        for submission_id in due:
            try:
                self._release(submission_id)
            except OSError as error:
                log.error("the feedback of %s could not be written into the exchange (%s); trying again in %g s",
                          submission_id, error, RETRY_S)
                with self._lock:
                    self._graded[submission_id] = now + RETRY_S
                continue
            with self._lock:
                self._graded.pop(submission_id, None)

    def _release(self, submission_id: str) -> None:
        entry = self.ledger.get(submission_id)
        if entry is None or entry.feedback is None:
            return
        page = self.outputs.kept(entry.student_id, submission_id, ".html").read_bytes()
        self.feedback.write(entry.feedback, page)
        self.ledger.set_status(submission_id, "released")
        log.info("released the feedback of %s to %s through the exchange", submission_id,
                 printable(entry.student_id))


def late_notice(entry: Entry, deadlines: Deadlines):
    """The warning a late hand-in's result carries (its page says it is for the student only)."""
    deadline = deadlines.of(entry.student_id)
    return text("issue.late_handin", handed_in=shown_time(entry.handed_in, deadline), deadline=shown(deadline))

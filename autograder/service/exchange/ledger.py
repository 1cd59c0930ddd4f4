"""The exchange's ledger: every hand-in the service took from ``inbound/``, once, in SQLite
(``DIR/.service/exchange.sqlite3``), so that a restart takes none of them again.

A hand-in is keyed by its exchange (``ROOT/COURSE``, resolved) and its folder's name (as the file
system's bytes). Its status:

- ``refused``: never graded (``reason`` says why; the log said so when it was taken);
- ``waiting``: its notebook copied into ``uploads/<submission id>/``, not yet in the grading
  queue: the student is above ``submissions_per_hour``, or it is late and an on-time hand-in of
  theirs still waits (a late hand-in never takes an on-time one's place);
- ``queued``: in the grading queue under ``submission_id``;
- ``released``: graded, its feedback page written where ``fetch_feedback`` finds it;
- ``replaced``: never graded: a newer hand-in of the student took its place while it waited.

``feedback`` is the page's name, ``md5(secret + notebook id).html``: a name another student's
hand-in already has is refused (a secret copied from another student), so no hand-in's page
is ever written over another student's.
"""
import sqlite3
import threading
from dataclasses import dataclass
from pathlib import Path

SCHEMA = """
CREATE TABLE IF NOT EXISTS handins (
    exchange TEXT NOT NULL,
    folder BLOB NOT NULL,
    student_id TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('refused', 'waiting', 'queued', 'released', 'replaced')),
    submission_id TEXT UNIQUE,
    handed_in REAL,
    late INTEGER NOT NULL DEFAULT 0,
    notebook TEXT,
    feedback TEXT,
    reason TEXT,
    taken REAL NOT NULL,
    PRIMARY KEY (exchange, folder)
);
CREATE INDEX IF NOT EXISTS by_feedback ON handins (exchange, feedback);
CREATE INDEX IF NOT EXISTS by_status ON handins (exchange, status);
"""
COLUMNS = "folder, student_id, status, submission_id, handed_in, late, notebook, feedback"


@dataclass(frozen=True)
class Entry:
    folder: str
    student_id: str
    status: str
    submission_id: str | None
    handed_in: float | None
    late: bool
    notebook: str | None
    feedback: str | None

    @classmethod
    def of(cls, row: tuple) -> "Entry":
        folder, *rest = row
        return cls(_name(folder), *rest[:4], bool(rest[4]), *rest[5:])


def _bytes(folder: str) -> bytes:
    return folder.encode("utf-8", "surrogateescape")


def _text(value: str) -> str:
    """Text SQLite can hold: an undecodable byte of a name (a lone surrogate) as its ``\\u`` escape."""
    return value.encode("utf-8", "backslashreplace").decode("utf-8")


def _name(folder: bytes) -> str:
    return folder.decode("utf-8", "surrogateescape")


class Ledger:
    def __init__(self, path: Path, exchange: str):
        self.exchange = exchange
        self._db = sqlite3.connect(path, isolation_level=None, check_same_thread=False, timeout=30)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=FULL")
        self._db.executescript(SCHEMA)
        self._lock = threading.Lock()

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def _all(self, sql: str, params=()) -> list[Entry]:
        with self._lock:
            return [Entry.of(row) for row in self._db.execute(sql, params).fetchall()]

    def _run(self, sql: str, params=()) -> None:
        with self._lock:
            self._db.execute(sql, params)

    def folders(self) -> set[str]:
        """Every hand-in taken from this exchange, whatever became of it."""
        with self._lock:
            rows = self._db.execute("SELECT folder FROM handins WHERE exchange = ?", (self.exchange,)).fetchall()
        return {_name(folder) for (folder,) in rows}

    def refuse(self, folder: str, student_id: str, reason: str, now: float, feedback: str | None = None) -> None:
        """Never graded; ``feedback``: the name of the page that told the student why."""
        self._run("INSERT OR REPLACE INTO handins (exchange, folder, student_id, status, reason, feedback, taken) "
                  "VALUES (?, ?, ?, 'refused', ?, ?, ?)",
                  (self.exchange, _bytes(folder), student_id, _text(reason), feedback, now))

    def wait(self, entry: Entry, now: float) -> None:
        """Taken, its notebook copied: waiting for its turn in the grading queue."""
        self._run(f"INSERT OR REPLACE INTO handins (exchange, {COLUMNS}, taken) "
                  f"VALUES (?, ?, ?, 'waiting', ?, ?, ?, ?, ?, ?)",
                  (self.exchange, _bytes(entry.folder), entry.student_id, entry.submission_id, entry.handed_in,
                   int(entry.late), entry.notebook, entry.feedback, now))

    def set_status(self, submission_id: str, status: str) -> None:
        self._run("UPDATE handins SET status = ? WHERE exchange = ? AND submission_id = ?",
                  (status, self.exchange, submission_id))

    def by_status(self, status: str) -> list[Entry]:
        """This exchange's hand-ins of ``status``, oldest hand-in first."""
        return self._all(f"SELECT {COLUMNS} FROM handins WHERE exchange = ? AND status = ? ORDER BY handed_in",
                         (self.exchange, status))

    def get(self, submission_id: str) -> Entry | None:
        found = self._all(f"SELECT {COLUMNS} FROM handins WHERE exchange = ? AND submission_id = ?",
                          (self.exchange, submission_id))
        return found[0] if found else None

    def feedback_of_another(self, feedback: str, student_id: str) -> bool:
        """Whether another student's hand-in has (or would have) its page at ``feedback``."""
        with self._lock:
            return self._db.execute("SELECT 1 FROM handins WHERE exchange = ? AND feedback = ? AND student_id != ? "
                                    "LIMIT 1", (self.exchange, feedback, student_id)).fetchone() is not None

    def refused(self) -> int:
        with self._lock:
            return self._db.execute("SELECT COUNT(*) FROM handins WHERE exchange = ? AND status = 'refused'",
                                    (self.exchange,)).fetchone()[0]

    def forget_waiting(self) -> int:
        """At start: hand-ins left waiting by a stopped service are taken again from ``inbound/``
        (their copies in ``uploads/`` were pruned with everything no queued row names)."""
        with self._lock:
            return self._db.execute("DELETE FROM handins WHERE exchange = ? AND status = 'waiting'",
                                    (self.exchange,)).rowcount

"""The service's queue and its submissions' records, in SQLite (``DIR/.service/queue.sqlite3``).

A submission answered 202 is a committed row (and its notebook a file written before it),
so it is graded even if the service is killed the moment after: at start, rows left
``grading`` by a service that died go back to ``queued``. A student has at most one row
``queued``: a newer submission marks the waiting one ``replaced``. A student has at most
one row ``grading``, and the next submission to grade belongs to the student who was served
longest ago (never served first), then the oldest: students are served in turn, and one
student's stream never takes a second grader from another.

One connection, shared by the server's threads under a lock: every statement is short.
Times are Unix seconds (the rate's window survives a restart).
"""
import math
import sqlite3
import threading
from dataclasses import dataclass
from pathlib import Path

SCHEMA = """
CREATE TABLE IF NOT EXISTS submissions (
    id TEXT PRIMARY KEY,
    student_id TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('queued', 'grading', 'done', 'replaced')),
    received REAL NOT NULL,
    started REAL,
    finished REAL,
    attempts INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS by_student ON submissions (student_id, received);
CREATE INDEX IF NOT EXISTS by_status ON submissions (status);
"""
# The next to grade: queued, its student grading nothing, served longest ago (NULL sorts first).
NEXT = """
SELECT s.id, s.student_id, s.status, s.attempts FROM submissions s
WHERE s.status = 'queued'
  AND s.student_id NOT IN (SELECT student_id FROM submissions WHERE status = 'grading')
ORDER BY (SELECT MAX(t.started) FROM submissions t WHERE t.student_id = s.student_id), s.received
LIMIT 1
"""
WINDOW_S = 3600.0


@dataclass(frozen=True)
class Row:
    id: str
    student_id: str
    status: str
    attempts: int = 0


@dataclass(frozen=True)
class Accepted:
    replaced: list[str]     # the ids of the submission it replaced (at most one)


@dataclass(frozen=True)
class Refused:
    retry_after_s: int      # when the student's oldest submission of the window leaves it


class Queue:
    def __init__(self, path: Path):
        path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(path, isolation_level=None, check_same_thread=False, timeout=30)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=FULL")  # a 202 is on disk, power cut included
        self._db.executescript(SCHEMA)
        self._lock = threading.Lock()

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def _one(self, sql: str, params=()) -> Row | None:
        with self._lock:
            found = self._db.execute(sql, params).fetchone()
        return Row(*found) if found else None

    def retry_after(self, student_id: str, per_hour: int, now: float) -> int | None:
        """Seconds until ``student_id`` may hand in again; None when they may now."""
        with self._lock:
            return self._retry_after(student_id, per_hour, now)

    def _retry_after(self, student_id: str, per_hour: int, now: float) -> int | None:
        times = [t for (t,) in self._db.execute(
            "SELECT received FROM submissions WHERE student_id = ? AND received > ? ORDER BY received DESC LIMIT ?",
            (student_id, now - WINDOW_S, per_hour))]
        if len(times) < per_hour:
            return None
        return max(1, math.ceil(times[-1] + WINDOW_S - now))

    def add(self, submission_id: str, student_id: str, per_hour: int, now: float) -> Accepted | Refused:
        """Queue a submission whose notebook is already on disk, replacing the student's
        waiting one; refused (nothing written) above the student's rate."""
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                added = self._add(submission_id, student_id, per_hour, now)
            except BaseException:
                self._db.execute("ROLLBACK")  # nothing half done: no student left without their waiting one
                raise
            self._db.execute("COMMIT")
        return added

    def _add(self, submission_id: str, student_id: str, per_hour: int, now: float) -> Accepted | Refused:
        retry = self._retry_after(student_id, per_hour, now)
        if retry is not None:
            return Refused(retry)
        replaced = [i for (i,) in self._db.execute(
            "SELECT id FROM submissions WHERE student_id = ? AND status = 'queued'", (student_id,))]
        self._db.execute("UPDATE submissions SET status = 'replaced', finished = ? "
                         "WHERE student_id = ? AND status = 'queued'", (now, student_id))
        self._db.execute("INSERT INTO submissions (id, student_id, status, received) "
                         "VALUES (?, ?, 'queued', ?)", (submission_id, student_id, now))
        return Accepted(replaced)

    def get(self, submission_id: str, student_id: str) -> Row | None:
        """The submission, only if it is ``student_id``'s (another's reads as unknown)."""
        return self._one("SELECT id, student_id, status, attempts FROM submissions WHERE id = ? AND student_id = ?",
                         (submission_id, student_id))

    def waiting(self, student_id: str) -> str | None:
        """The id of the student's submission waiting in the queue, if any."""
        row = self._one("SELECT id, student_id, status, attempts FROM submissions WHERE student_id = ? "
                        "AND status = 'queued'", (student_id,))
        return row.id if row else None

    def take(self, now: float) -> Row | None:
        """The next submission to grade, now marked ``grading``; None when none may start."""
        with self._lock:
            found = self._db.execute(NEXT).fetchone()
            if found is None:
                return None
            self._db.execute("UPDATE submissions SET status = 'grading', started = ? WHERE id = ?", (now, found[0]))
        return Row(found[0], found[1], "grading", found[3])

    def finish(self, submission_id: str, now: float) -> list[str]:
        """Done; returns the ids of the same student's submissions graded before it (their
        uploads are no longer the notebook behind the student's result)."""
        with self._lock:
            self._db.execute("UPDATE submissions SET status = 'done', finished = ? WHERE id = ?", (now, submission_id))
            return [i for (i,) in self._db.execute(
                "SELECT id FROM submissions WHERE status = 'done' AND id != ? AND student_id = "
                "(SELECT student_id FROM submissions WHERE id = ?)", (submission_id, submission_id))]

    def put_back(self, submission_id: str, attempts: int) -> None:
        """Queued again, with its attempts so far (a grading slot died, or the service stopped)."""
        self._set("UPDATE submissions SET status = 'queued', attempts = ? WHERE id = ? AND status = 'grading'",
                  (attempts, submission_id))

    def recover(self) -> int:
        """At start: what a stopped or killed service was grading is queued again."""
        with self._lock:
            return self._db.execute("UPDATE submissions SET status = 'queued' WHERE status = 'grading'").rowcount

    def queued(self) -> int:
        with self._lock:
            return self._db.execute("SELECT COUNT(*) FROM submissions WHERE status = 'queued'").fetchone()[0]

    def known_ids(self) -> set[str]:
        with self._lock:
            return {i for (i,) in self._db.execute("SELECT id FROM submissions")}

    def _set(self, sql: str, params) -> None:
        with self._lock:
            self._db.execute(sql, params)

"""Deadlines (SPEC §5): the assignment's, ``service.deadline`` in grader.yml, and the students'
own, ``service.extensions``, a CSV of ``student_id,deadline`` rows beside grader.yml.

A time is on time up to and including its student's deadline. The HTTP API refuses a later
upload (403 ``deadline_passed``); a later exchange hand-in is graded for feedback only
(``exchange.py``). ``autograder grade`` knows no deadline.
"""
import csv
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from ..config import ConfigError, ServiceConfig

HEADER = ["student_id", "deadline"]
MAX_BYTES = 4 << 20   # a roster's worth of rows many times over; a larger file is not a list of extensions


@dataclass(frozen=True)
class Deadlines:
    """Whose deadline is when; no deadline at all when ``default`` is None."""
    default: datetime | None = None
    extensions: dict[str, datetime] = field(default_factory=dict)

    def of(self, student_id: str) -> datetime | None:
        return self.extensions.get(student_id, self.default)

    def passed(self, student_id: str, when: float) -> datetime | None:
        """The student's deadline if ``when`` (Unix seconds) is after it, else None."""
        deadline = self.of(student_id)
        return deadline if deadline is not None and when > deadline.timestamp() else None

    @classmethod
    def of_config(cls, service: ServiceConfig, config_path: Path) -> "Deadlines":
        """grader.yml's deadline and the extensions file it names (relative to grader.yml);
        ``ConfigError`` names the file, the line and what to write instead."""
        if service.extensions is None:
            return cls(service.deadline)
        path = service.extensions if service.extensions.is_absolute() else config_path.parent / service.extensions
        return cls(service.deadline, read_extensions(path))


def read_extensions(path: Path) -> dict[str, datetime]:
    where = f"service.extensions: {path}"
    try:
        with path.open("rb") as handle:
            data = handle.read(MAX_BYTES + 1)
    except OSError as error:
        raise ConfigError(f"{where}: cannot read ({error.strerror}); the path is relative to grader.yml") from None
    if len(data) > MAX_BYTES:
        raise ConfigError(f"{where}: larger than {MAX_BYTES >> 20} MB; it should hold one row per student")
    try:
        rows = list(csv.reader(data.decode("utf-8-sig").splitlines()))
    except (UnicodeDecodeError, csv.Error) as error:
        raise ConfigError(f"{where}: not a CSV file in UTF-8 ({error})") from None
    if not rows or [name.strip() for name in rows[0]] != HEADER:
        raise ConfigError(f"{where}: the first row must be {','.join(HEADER)}")
    found: dict[str, datetime] = {}
    for line, row in enumerate(rows[1:], start=2):
        if not any(cell.strip() for cell in row):
            continue
        student, deadline = _row(row, f"{where}: line {line}")
        if student in found:
            raise ConfigError(f"{where}: line {line}: student {student!r} has a second row; give each one deadline")
        found[student] = deadline
    return found


def _row(row: list[str], where: str) -> tuple[str, datetime]:
    if len(row) != 2 or not row[0].strip():
        raise ConfigError(f"{where}: expected student_id,deadline")
    try:
        deadline = datetime.fromisoformat(row[1].strip())
    except ValueError:
        deadline = None
    if deadline is None or deadline.tzinfo is None or deadline.utcoffset() is None:
        raise ConfigError(f"{where}: {row[1].strip()!r} is not a date and time with its time zone; "
                          f"write it as 2026-03-08T23:59:00+03:00 (or ...Z for UTC)")
    return row[0].strip(), deadline


def shown(deadline: datetime) -> str:
    """A deadline as the student reads it: in the zone grader.yml gave it in, to the minute."""
    offset = deadline.strftime("%z")
    zone = "UTC" if offset in ("+0000", "") else f"UTC{offset[:3]}:{offset[3:]}"
    return f"{deadline.strftime('%Y-%m-%d %H:%M')} {zone}"


def shown_time(when: float, like: datetime | None) -> str:
    """A moment (Unix seconds) in the zone of ``like`` (the student's deadline), else in UTC."""
    moment = datetime.fromtimestamp(when, like.tzinfo if like is not None else timezone.utc)
    return shown(moment).replace(moment.strftime("%H:%M "), moment.strftime("%H:%M:%S "), 1)

"""The exchange's folders as ``autograder serve --exchange ROOT --course COURSE_ID`` uses them,
checked before the service starts, and the feedback folder it writes into.

``ROOT/COURSE/inbound/`` is read (``nbgrader release_assignment`` made it, mode 2733: students
write there and cannot list it); ``ROOT/COURSE/feedback/`` receives one page per hand-in, as
``nbgrader release_feedback`` writes it: a folder of mode 0711 (students reach a page by its
name and cannot list the others), each page written to a temporary name and renamed into
place, readable by all. Run as root (the sandbox's default), the service gives the folder and
the pages to the course folder's owner, so that the TA's own ``release_feedback`` (which
insists on owning the folder) keeps working beside it.
"""
import os
import re
import secrets
import stat
from dataclasses import dataclass
from pathlib import Path

from ... import texts
from ...config import ConfigError
from ...pages.markup import document, say
from ...results import Text, text

FEEDBACK_MODE = 0o711
PAGE_MODE = 0o644
PAGE_NAME = re.compile(r"[0-9a-f]{32}\.html")
COURSE_ID = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,99}")


@dataclass(frozen=True)
class ExchangePaths:
    course: Path                  # ROOT/COURSE
    course_id: str
    shared_uid: bool              # grader.yml's service.exchange_shared_uid
    owner: tuple[int, int] | None  # who the pages are given to (run as root): the course folder's owner

    @property
    def inbound(self) -> Path:
        return self.course / "inbound"

    @property
    def feedback(self) -> Path:
        return self.course / "feedback"

    @classmethod
    def check(cls, root: Path, course_id: str, shared_uid: bool) -> "ExchangePaths":
        """The exchange's course folder, ready: ``ConfigError`` says what to fix."""
        if not COURSE_ID.fullmatch(course_id) or course_id in (".", ".."):
            raise ConfigError(f"--course {course_id!r}: not a course id nbgrader uses (letters, digits, '_', "
                              f"'-', '.'); give the course's CourseDirectory.course_id")
        course = root / course_id
        if not course.is_dir():
            raise ConfigError(f"--exchange {root} --course {course_id}: no folder {course}; check Exchange.root and "
                              f"the course id in nbgrader_config.py, or run `nbgrader release_assignment` first")
        inbound = course / "inbound"
        if not inbound.is_dir() or not os.access(inbound, os.R_OK | os.X_OK):
            raise ConfigError(f"--exchange: {inbound} is missing or this user cannot list it; run the service as "
                              f"root or as the course's instructor (who ran `nbgrader release_assignment`)")
        held = os.stat(course)
        paths = cls(course.resolve(), course_id, shared_uid, (held.st_uid, held.st_gid) if os.geteuid() == 0 else None)
        paths._feedback_folder()
        return paths

    def _feedback_folder(self) -> None:
        folder = self.feedback
        if not os.path.lexists(folder):
            os.mkdir(folder)
            os.chmod(folder, FEEDBACK_MODE)  # not through mkdir's mode: the umask would take from it
            if self.owner is not None:
                os.chown(folder, *self.owner)
        found = os.lstat(folder)
        if not stat.S_ISDIR(found.st_mode):
            raise ConfigError(f"--exchange: {folder} is not a folder (a link or a file); remove it, and the "
                              f"service makes it as nbgrader does (mode 0711)")
        if found.st_mode & stat.S_IROTH:
            raise ConfigError(f"--exchange: every user can list {folder} (mode {stat.S_IMODE(found.st_mode):04o}), "
                              f"so students could read each other's feedback; `chmod 0711 {folder}`")
        if not os.access(folder, os.W_OK | os.X_OK):
            raise ConfigError(f"--exchange: cannot write into {folder}; run the service as root or as its owner")


class FeedbackFolder:
    """``ROOT/COURSE/feedback/``, opened once: pages written into it by name, atomically."""

    def __init__(self, paths: ExchangePaths):
        self.owner = paths.owner
        self.fd = os.open(paths.feedback, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)

    def close(self) -> None:
        os.close(self.fd)

    def write(self, name: str, page: bytes) -> None:
        """The page at ``name`` (``md5(secret + notebook id).html``), whole or not at all: written
        under a temporary name, synced, then renamed over any earlier page of that name."""
        if not PAGE_NAME.fullmatch(name):
            raise ValueError(f"not a feedback page's name: {name!r}")
        temporary = f".{name}.{secrets.token_hex(4)}.tmp"
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, PAGE_MODE,
                     dir_fd=self.fd)
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(page)
                out.flush()
                os.fchmod(out.fileno(), PAGE_MODE)
                if self.owner is not None:
                    os.fchown(out.fileno(), *self.owner)
                os.fsync(out.fileno())
            os.replace(temporary, name, src_dir_fd=self.fd, dst_dir_fd=self.fd)
        except BaseException:
            os.unlink(temporary, dir_fd=self.fd)
            raise


def refusal_page(assignment: str, reason: Text, handed_in: str, language: str) -> bytes:
    """The page a student fetches for a hand-in of theirs that was not graded: why, and what to do."""
    title = text("exchange.refused.title", assignment=assignment)
    body = (f"<header><h1>{say(title, language)}</h1></header>"
            f"<p>{say(text('exchange.refused.body', handed_in=handed_in, reason=reason), language)}</p>")
    return document(texts.render(title, language), body, language).encode("utf-8")

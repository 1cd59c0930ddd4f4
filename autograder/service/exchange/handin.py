"""One hand-in in nbgrader's exchange, read without trusting anything in it.

``nbgrader submit`` (``nbgrader/exchange/default/submit.py``) copies the student's assignment
folder to ``ROOT/COURSE/inbound/<student>+<assignment>+<timestamp>+<random>/``, then writes
``timestamp.txt`` and, last, ``submission_secret.txt`` (``secrets.token_hex(64)``): a hand-in
is complete once the secret is there. nbgrader's ``fetch_feedback`` looks for the feedback of
each notebook at the top of that folder under ``md5(secret + notebook name without .ipynb)``.

Everything in the folder is the student's, so reading it is bounded whatever it holds: the
folder and every file are opened relative to the folder's own descriptor, never through a
link (``O_NOFOLLOW``) and never blocking (``O_NONBLOCK``: a FIFO is refused, not waited on);
only the top level is read, and only two files: the secret (at most ``MAX_SECRET_BYTES``) and
the notebook (at most ``max_notebook_mb``, as an upload, copied into the service's own
``uploads/``). Sub-folders, however many, are never entered; the top level is listed only
when the assignment's notebook is missing, at most ``MAX_ENTRIES`` entries. The folder, the
secret and the notebook must belong to the Unix user the folder names (unless the hub runs
every student as one user): ``nbgrader submit --student other`` hands in nothing.

The hand-in's time is when the file system last changed its secret or its notebook (their
ctime, which nobody can set back), never ``timestamp.txt`` or the folder's name.
"""
import contextlib
import errno
import hashlib
import os
import pwd
import re
import stat
from dataclasses import dataclass
from pathlib import Path

from ...submissions.ids import student_id
from ...results import Text, text
from ...texts import render
from ..assignments import Assignments
from ..intake import Refusal, check_notebook

SECRET = "submission_secret.txt"
SECRET_TEXT = re.compile(r"[0-9a-f]{32,256}")  # nbgrader writes 128 hex digits
MAX_SECRET_BYTES = 1024
MAX_ENTRIES = 1000           # of a hand-in's top level, looked through when the assignment's notebook is missing
MAX_PAGES = 20               # a refused hand-in's pages: one per notebook found, at most this many
CHUNK = 1 << 20
OPEN = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


@dataclass(frozen=True)
class Name:
    """A folder of ``inbound/`` that nbgrader's name says is a hand-in of this assignment."""
    folder: str      # as the file system names it (undecodable bytes as surrogate escapes)
    student: str     # the name's first part, as the student id ``ids.student_id`` makes of it
    user: str        # the same part as it stands in the name: the Unix user it claims

    @classmethod
    def parse(cls, folder: str, assignment: str) -> "Name | None":
        """``<student>+<assignment>+<timestamp>+<random>`` (or without ``+<random>``, nbgrader's
        ``add_random_string = False``), parsed as nbgrader's ``collect`` does (a student name may
        hold a ``+``); None for another assignment's folder or a name nbgrader never writes."""
        for parts, count in ((folder.rsplit("+", 3), 4), (folder.rsplit("+", 2), 3)):
            if len(parts) == count and parts[1] == assignment and all(parts):
                return cls(folder, student_id(parts[0]), parts[0])
        return None


@dataclass(frozen=True)
class HandIn:
    name: Name
    secret: str
    notebook: str          # the file graded: its name in the hand-in
    handed_in: float       # Unix seconds: the latest ctime of the secret and the notebook
    uid: int               # the folder's owner
    notice: Text | None = None   # for the result: another notebook than the assignment's was graded

    @property
    def feedback(self) -> str:
        """The feedback page's name in ``ROOT/COURSE/feedback/``: nbgrader's ``notebook_hash``."""
        return feedback_name(self.secret, Path(self.notebook).stem)


def feedback_name(secret: str, notebook_id: str) -> str:
    return hashlib.md5((secret + notebook_id).encode("utf-8")).hexdigest() + ".html"


class Refused(Exception):
    """Why a hand-in is not graded: ``why`` for the log (one line, naming the hand-in's part that
    is wrong); ``told`` for the student's feedback page, where they can be told (the folder is
    theirs and its secret is one nbgrader wrote: ``secret``), else None."""

    def __init__(self, why: str, told: Text | None = None, secret: str | None = None, handed_in: float = 0.0,
                 notebooks: tuple[str, ...] = ()):
        super().__init__(why)
        self.why, self.told, self.secret, self.handed_in = why, told, secret, handed_in
        self.notebooks = notebooks   # the pages' notebooks: what ``fetch_feedback`` looks for

    def telling(self, secret: str, handed_in: float, notebooks: tuple[str, ...]) -> "Refused":
        """The same refusal, for a hand-in whose student can be told (on the pages of ``notebooks``)."""
        return Refused(self.why, self.told, secret, handed_in, self.notebooks or notebooks)


def uid_of(user: str) -> int | None:
    """The uid of the Unix user ``user``, or None where there is none (a name with no user is
    nobody's: its hand-ins are not owned)."""
    try:
        return pwd.getpwnam(user).pw_uid
    except (KeyError, UnicodeError, ValueError):
        return None


def user_name(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return f"uid {uid}"


def read(inbound: int, name: Name, notebook: str, copy_to: Path, limit: int, check_owner: bool) -> HandIn:
    """Read the hand-in ``name`` of the ``inbound`` folder (an open descriptor) and copy its
    notebook to ``copy_to``; ``Refused`` says why not. Any other ``OSError`` is the service's
    side (its disk, the exchange's mount), not the hand-in's: its caller tries again later."""
    try:
        folder = os.open(name.folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=inbound)
    except OSError as error:
        if error.errno in (errno.ELOOP, errno.ENOTDIR):
            raise Refused("not a folder (a link or a file)") from None
        if error.errno == errno.EACCES:
            raise Refused("cannot be opened: its owner took the service's permission away") from None
        raise   # the service's side (the exchange's mount): looked at again later
    try:
        return _read(folder, name, notebook, copy_to, limit, check_owner)
    finally:
        os.close(folder)


def _read(folder: int, name: Name, notebook: str, copy_to: Path, limit: int, check_owner: bool) -> HandIn:
    owner = os.fstat(folder).st_uid
    if check_owner:
        claimed = uid_of(name.user)
        if claimed is None:
            raise Refused(f"names {name.user!r}, who is no Unix user here (folder owned by {user_name(owner)})")
        if owner != claimed:
            raise Refused(f"names {name.user!r} but its folder belongs to {user_name(owner)} "
                          f"(`nbgrader submit --student`?)")
    secret, secret_ctime = _secret(folder, owner)
    try:
        found, notice = _notebook(folder, notebook)
        with _opened(found, folder) as handle:
            status = os.fstat(handle)
            if status.st_uid != owner:
                raise Refused(f"its {found} belongs to {user_name(status.st_uid)}, not to the folder's owner")
            _copy(handle, copy_to, limit, found)
            ctime = os.fstat(handle).st_ctime
    except Refused as refused:
        raise refused.telling(secret, secret_ctime, ()) from None
    return HandIn(name, secret, found, max(secret_ctime, ctime), owner, notice)


def _secret(folder: int, owner: int) -> tuple[str, float]:
    """The secret as nbgrader reads it (the file's whole text, as it is) and its ctime."""
    try:
        fd = os.open(SECRET, OPEN, dir_fd=folder)
    except OSError as error:
        raise Refused(f"its {SECRET} cannot be opened ({_why(error)})") from None
    with os.fdopen(fd, "rb") as handle:
        status = os.fstat(fd)
        if not stat.S_ISREG(status.st_mode):
            raise Refused(f"its {SECRET} is not a plain file")
        if status.st_uid != owner:
            raise Refused(f"its {SECRET} belongs to {user_name(status.st_uid)}, not to the folder's owner")
        data = handle.read(MAX_SECRET_BYTES + 1)
    secret = data.decode("ascii", "replace")
    if len(data) > MAX_SECRET_BYTES or not SECRET_TEXT.fullmatch(secret):
        raise Refused(f"its {SECRET} is not a secret nbgrader writes ({min(len(data), MAX_SECRET_BYTES)}"
                      f"{'+' if len(data) > MAX_SECRET_BYTES else ''} bytes, not 32 to 256 hex digits)")
    return secret, status.st_ctime


def _notebook(folder: int, notebook: str) -> tuple[str, Text | None]:
    """The notebook to grade: the assignment's, else the only other notebook at the top (with a
    warning, as the batch grades it)."""
    with contextlib.suppress(FileNotFoundError):
        os.stat(notebook, dir_fd=folder, follow_symlinks=False)
        return notebook, None
    candidates, seen = [], 0
    with os.scandir(folder) as entries:
        for entry in entries:
            seen += 1
            if seen > MAX_ENTRIES:
                break
            if entry.name.endswith(".ipynb") and not entry.name.startswith(".") and _utf8(entry.name):
                candidates.append(entry.name)   # a name that is no UTF-8 is one nbgrader cannot hash either
    candidates.sort()
    if len(candidates) == 1 and seen <= MAX_ENTRIES:
        return candidates[0], text("issue.other_notebook", name=candidates[0], expected=notebook)
    told = tuple(candidates[:MAX_PAGES])
    if seen > MAX_ENTRIES:
        raise Refused(f"has no {notebook} and more than {MAX_ENTRIES} entries at its top",
                      text("exchange.reason.no_notebook", notebook=notebook), notebooks=told)
    if candidates:
        names = ", ".join(candidates[:5]) + (", ..." if len(candidates) > 5 else "")
        raise Refused(f"has no {notebook} but {len(candidates)} other notebooks",
                      text("exchange.reason.several", notebook=notebook, names=names), notebooks=told)
    raise Refused(f"has no {notebook}", text("exchange.reason.no_notebook", notebook=notebook))


@contextlib.contextmanager
def _opened(found: str, folder: int):
    told = text("exchange.reason.not_regular", name=found)
    try:
        fd = os.open(found, OPEN, dir_fd=folder)
    except OSError as error:
        raise Refused(f"its {found} cannot be opened ({_why(error)})", told, notebooks=(found,)) from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise Refused(f"its {found} is not a plain file", told, notebooks=(found,))
        yield fd
    finally:
        os.close(fd)


def _copy(handle: int, copy_to: Path, limit: int, found: str) -> None:
    """At most ``limit`` bytes into ``copy_to`` (fsynced); a file that is longer, or still growing
    past the limit while it is read, is refused."""
    size = 0
    with copy_to.open("wb") as out:
        while chunk := os.read(handle, min(CHUNK, limit + 1 - size)):
            size += len(chunk)
            if size > limit:
                raise Refused(f"its {found} is larger than {limit >> 20} MB",
                              text("exchange.reason.too_large", name=found, limit=limit >> 20), notebooks=(found,))
            out.write(chunk)
        out.flush()
        os.fsync(out.fileno())


def _utf8(name: str) -> bool:
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _why(error: OSError) -> str:
    return "a link" if error.errno == errno.ELOOP else error.strerror or type(error).__name__


def check_copy(path: Path, limit: int, assignments: Assignments, told: HandIn) -> None:
    """The copied notebook, read as the grader reads it (streamed, bounded: ``reading``): JSON in
    UTF-8 with cells and a format version, and no other assignment's; ``Refused`` as an upload is."""
    refused = _refusal(path, limit, assignments)
    if refused is not None:
        why, said = refused
        raise Refused(f"its {told.notebook} {why}", said, told.secret, told.handed_in, (told.notebook,))


def _refusal(path: Path, limit: int, assignments: Assignments) -> tuple[str, Text] | None:
    """Why the copy is no notebook of this assignment, as an upload is checked (``intake``):
    in English for the log, and as the student's text; None when it is one."""
    try:
        found = check_notebook(path, limit)
    except Refusal as refusal:
        said = text("exchange.reason.too_large", name=path.name, limit=limit >> 20) \
            if refusal.reason == "too_large" else text(f"service.error.{refusal.reason}", **refusal.params)
        return render(said, "en"), said
    other = assignments.other_of(found)
    if other is not None:
        return f"is the {other} notebook", text("service.error.wrong_assignment", other=other,
                                                 assignment=assignments.name)
    return None

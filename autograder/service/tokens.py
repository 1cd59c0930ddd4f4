"""Students' tokens (SPEC §5): ``autograder tokens`` makes them, ``autograder serve`` checks them.

``TOKENS.csv`` holds ``student_id,token`` rows; the TA hands each student their own token
and keeps the file private (it is created readable by its owner only, and never
overwritten: students may already hold its tokens). A token is 192 random bits
(``secrets``), written as 32 base64url characters.

The service keeps no token, only each token's SHA-256 digest, and compares a presented
token's digest with every student's digest with ``hmac.compare_digest``: how long the
check takes does not depend on which student, if any, the token belongs to.
"""
import csv
import hashlib
import hmac
import io
import os
import re
import secrets
from pathlib import Path

from ..config import ConfigError
from ..files import csv_lines

TOKEN_BYTES = 24        # 192 random bits; SPEC §5 asks for at least 128
MIN_TOKEN_CHARS = 22    # a token read from a file: at least 128 bits' worth of base64url
HEADER = ["student_id", "token"]
CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")   # C0, DEL, C1 and the line separators


def new_token() -> str:
    return secrets.token_urlsafe(TOKEN_BYTES)


def read_ids(path: Path) -> list[str]:
    """Student ids from ``path``: nbgrader's roster (a CSV whose header row has an ``id``
    column, as ``nbgrader db student import`` reads it) or one id a line; blank lines skipped.
    Lines end at ``\n`` or ``\r\n`` only, and a roster is read as CSV (a quoted cell may hold a
    line break): ``str.splitlines`` also ended a line at U+2028, U+0085 and form feeds inside a
    name, and made tokens for students who do not exist (red team 13)."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except OSError as error:
        raise ConfigError(f"--from {path}: cannot read ({error.strerror})") from None
    except UnicodeDecodeError as error:
        raise ConfigError(f"--from {path}: not UTF-8 text (byte {error.start})") from None
    rows = csv.reader(io.StringIO(text, newline=""))
    header = [name.strip() for name in next(rows, [])]
    if "id" not in header:
        return [line.strip() for line in text.split("\n") if line.strip()]
    column = header.index("id")
    try:
        return [row[column].strip() for row in rows if len(row) > column and row[column].strip()]
    except csv.Error as error:
        raise ConfigError(f"--from {path}: not a CSV roster ({error})") from None


def check_ids(ids: list[str]) -> None:
    """The ids ``tokens`` will write: at least one, each once, none with a control character."""
    if not ids:
        raise ConfigError("no student ids: give them as arguments or with --from FILE")
    seen: set[str] = set()
    twice = sorted({sid for sid in ids if sid in seen or seen.add(sid)})
    if twice:
        raise ConfigError(f"student ids given more than once: {', '.join(map(repr, twice))}")
    odd = [sid for sid in ids if CONTROL.search(sid)]
    if odd:
        raise ConfigError(f"student ids with a control character (a line break, a tab): {', '.join(map(repr, odd))}")


def write_tokens(ids: list[str], output: Path) -> None:
    """A new ``output`` with a fresh token per student, readable by its owner only."""
    check_ids(ids)
    try:
        fd = os.open(output, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        raise ConfigError(f"--output {output}: already exists, and tokens are never overwritten (students "
                          f"may hold them); name a new file") from None
    except OSError as error:
        raise ConfigError(f"--output {output}: cannot create ({error.strerror})") from None
    with os.fdopen(fd, "w", encoding="utf-8", newline="") as out:
        out.write(csv_lines([HEADER, *([sid, new_token()] for sid in ids)]))
        out.flush()
        os.fsync(out.fileno())


def _digest(token: str) -> bytes:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).digest()


class Tokens:
    """Who holds which token, as digests only."""

    def __init__(self, digests: dict[str, bytes]):
        self._digests = digests

    @property
    def students(self) -> list[str]:
        return list(self._digests)

    def student_of(self, token: str) -> str | None:
        """The student holding ``token``, or None. Every digest is compared, so the time taken
        does not tell whose token it is, or how close a guess came."""
        presented, found = _digest(token), None
        for student, digest in self._digests.items():
            if hmac.compare_digest(presented, digest):
                found = student
        return found

    @classmethod
    def load(cls, path: Path) -> "Tokens":
        """``TOKENS.csv`` as ``autograder tokens`` writes it; ``ConfigError`` says what is wrong."""
        try:
            with path.open(encoding="utf-8-sig", newline="") as handle:
                rows = list(csv.reader(handle))
        except OSError as error:
            raise ConfigError(f"--tokens {path}: cannot read ({error.strerror})") from None
        except (UnicodeDecodeError, csv.Error) as error:
            raise ConfigError(f"--tokens {path}: not a CSV file in UTF-8 ({error})") from None
        if not rows or [name.strip() for name in rows[0]] != HEADER:
            raise ConfigError(f"--tokens {path}: the first row must be {','.join(HEADER)} "
                              f"(make the file with `autograder tokens`)")
        return cls(_digests(path, rows[1:]))


def _digests(path: Path, rows: list[list[str]]) -> dict[str, bytes]:
    digests: dict[str, bytes] = {}
    tokens: set[bytes] = set()
    for line, row in enumerate(rows, start=2):
        if not any(cell.strip() for cell in row):
            continue
        if len(row) != 2 or not row[0] or len(row[1]) < MIN_TOKEN_CHARS:
            raise ConfigError(f"--tokens {path}: line {line}: expected student_id,token with a token of at least "
                              f"{MIN_TOKEN_CHARS} characters (make tokens with `autograder tokens`)")
        if CONTROL.search(row[0]):  # as `autograder tokens` refuses to write it
            raise ConfigError(f"--tokens {path}: line {line}: the student id {row[0]!r} holds a control character "
                              f"(a line break, a tab); no student's folder is named so")
        digest = _digest(row[1])
        if row[0] in digests or digest in tokens:
            what = f"student {row[0]!r}" if row[0] in digests else "a token"
            raise ConfigError(f"--tokens {path}: line {line}: {what} appears twice; each student has one token "
                              f"of their own")
        digests[row[0]] = digest
        tokens.add(digest)
    if not digests:
        raise ConfigError(f"--tokens {path}: no students in it")
    return digests

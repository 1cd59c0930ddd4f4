"""What the service logs, on its standard error: one line per request (client, method, path
without its query, status, the student when the token was valid, seconds), per queued and
graded submission, and at start and stop. Never a token: a path is logged by its known words and
submission ids only, any other part as its length (a student who pastes their token where the
submission id goes); control characters in an id are escaped, and so is every character of the
client's address that is not printable ASCII, so nothing a client sends can forge a line or act
on the TA's terminal."""
import logging
import re
import sys
import time

log = logging.getLogger("autograder.service")
CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")   # C0, DEL and C1: what a terminal acts on
NOT_ADDRESS = re.compile(r"[^!-~]")             # anything but printable ASCII, the space too
MAX_CLIENT = 100                                # characters of a client kept (an address has 45 at most)
PATH_WORDS = {"", "api", "health", "submissions", "feedback", "page.js"}   # the API's own words
SUBMISSION_ID = re.compile(r"[0-9a-f]{16}")     # secrets.token_hex(8), as the service names a submission


def printable(value: str) -> str:
    return CONTROL.sub(lambda match: f"\\x{ord(match.group()):02x}", value)


def path_of(path: str) -> str:
    """A request's path for the log: the API's own words and submission ids as they are, any
    other part of it written as its length (``/api/submissions/<32 chars>``): a token pasted
    where an id goes never reaches the log (red team 13)."""
    parts = path.split("/")[:12]
    return "/".join(part if part in PATH_WORDS or SUBMISSION_ID.fullmatch(part) else f"<{len(part)} chars>"
                    for part in parts) + ("/..." if path.count("/") >= 12 else "")


def client_of(scope: dict) -> str:
    """The request's client for the log line: its address as one word of printable ASCII
    (``-`` when there is none). Behind a proxy on this host, uvicorn takes the client from the
    ``X-Forwarded-For`` header, which any local user can write: every other character is
    escaped (``\\x1b``, ``\\x20``, ``\\xff``), so it neither acts on a terminal nor splits the
    line into fields of its own, and text that is no address shows as such."""
    host = (scope.get("client") or (None,))[0]
    if host is None:
        return "-"
    return NOT_ADDRESS.sub(lambda match: _escape(match.group()), str(host)[:MAX_CLIENT])


def _escape(char: str) -> str:
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def configure() -> None:
    """Lines with a UTC time stamp on stderr: ours from INFO, the server's (uvicorn) warnings."""
    handler = logging.StreamHandler(sys.stderr)
    formatter = logging.Formatter("%(asctime)sZ %(message)s", "%Y-%m-%dT%H:%M:%S")
    formatter.converter = time.gmtime
    handler.setFormatter(formatter)
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.WARNING)
    log.setLevel(logging.INFO)

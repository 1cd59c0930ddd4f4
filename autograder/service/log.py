"""What the service logs, on its standard error: one line per request (client, method, path
without its query, status, the student when the token was valid, seconds), per queued and
graded submission, and at start and stop. Never a token; control characters in a path or
an id are escaped, so nothing a client sends can forge a line."""
import logging
import re
import sys
import time

log = logging.getLogger("autograder.service")
CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def printable(value: str) -> str:
    return CONTROL.sub(lambda match: f"\\x{ord(match.group()):02x}", value)


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

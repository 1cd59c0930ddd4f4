"""A real ``autograder serve`` for the tests: its own process on the loopback, any free port,
under the test session's run marker; and a small HTTP client (the standard library's, so
that a test can also send what no well-behaved client would)."""
import http.client
import json
import os
import re
import signal
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from autograder.executors.runmarker import RUN_MARKER
from tests.processes import left_after, snapshot

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"
STARTED = re.compile(r"serving \S+ at http://127\.0\.0\.1:(\d+)/")
START_S = 300          # imports, two sandboxes, on a busy 2-core machine
DONE_S = 240           # a submission graded, on a busy machine
GONE_WITHIN_S = 5


def notebook(name: str, assignment: str = "attention_scoring", sleep_s: float = 0) -> bytes:
    """An example notebook's bytes; with ``sleep_s``, a cell of the student's own that sleeps
    first (so that a test can keep a grading slot busy)."""
    nb = json.loads((EXAMPLES / assignment / f"{name}.ipynb").read_text())
    if sleep_s:
        nb["cells"].insert(0, {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
                               "source": f"import time\ntime.sleep({sleep_s})"})
    return json.dumps(nb).encode()


def multipart(fields: dict[str, bytes], boundary: str = "testboundary1234") -> tuple[str, bytes]:
    body = b"".join(f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"; filename="{name}.ipynb"\r\n'
                    f"Content-Type: application/octet-stream\r\n\r\n".encode() + value + b"\r\n"
                    for name, value in fields.items())
    return f"multipart/form-data; boundary={boundary}", body + f"--{boundary}--\r\n".encode()


@dataclass
class Answer:
    status: int
    headers: dict[str, str]
    body: bytes

    def json(self):
        return json.loads(self.body)


@dataclass
class Server:
    output: Path
    tokens: dict[str, str]
    port: int
    process: subprocess.Popen
    marker: str
    log: Path
    seen: dict = field(default_factory=dict)

    def request(self, method: str, path: str, token: str | None = None, body: bytes | None = None,
                headers: dict | None = None) -> Answer:
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        sent = dict(headers or {})
        if token is not None:
            sent["Authorization"] = f"Bearer {token}"
        connection.request(method, path, body=body, headers=sent)
        response = connection.getresponse()
        answer = Answer(response.status, {k.lower(): v for k, v in response.getheaders()}, response.read())
        connection.close()
        return answer

    def submit(self, student: str, data: bytes) -> Answer:
        content_type, body = multipart({"notebook": data})
        return self.request("POST", "/api/submissions", self.tokens[student], body, {"Content-Type": content_type})

    def status(self, student: str, submission_id: str) -> dict:
        return self.request("GET", f"/api/submissions/{submission_id}", self.tokens[student]).json()

    def wait_done(self, student: str, submission_id: str, within_s: float = DONE_S) -> dict:
        deadline = time.monotonic() + within_s
        while time.monotonic() < deadline:
            answer = self.status(student, submission_id)
            if answer["status"] in ("done", "replaced"):
                return answer
            time.sleep(0.1)
        raise AssertionError(f"{submission_id} of {student} not graded within {within_s} s: {answer}")

    def stop(self, signum: int = signal.SIGTERM) -> int:
        self.seen = snapshot(self.marker)
        self.process.send_signal(signum)
        return self.process.wait(timeout=60)

    def left(self) -> dict:
        return left_after(self.marker, self.seen, GONE_WITHIN_S)


def make_tokens(folder: Path, students: list[str]) -> tuple[Path, dict[str, str]]:
    """TOKENS.csv made by the real ``autograder tokens``."""
    path = folder / "tokens.csv"
    done = subprocess.run([sys.executable, "-m", "autograder.cli", "tokens", *students, "--output", str(path)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    rows = [line.split(",", 1) for line in path.read_text().splitlines()[1:]]
    return path, {student: token for student, token in rows}


def config_file(folder: Path, language: str = "en", per_hour: int = 20) -> Path:
    text = (REPO / "grader.yml").read_text()
    text = text.replace("language: en ", f"language: {language} ").replace(
        "submissions_per_hour: 20 ", f"submissions_per_hour: {per_hour} ")
    path = folder / "grader.yml"
    path.write_text(text)
    return path


def start(folder: Path, tokens: Path | None, token_of: dict[str, str], config: Path, jobs: int = 2,
          output: Path | None = None, name: str = "serve", assignment: str = "attention_scoring",
          extra: tuple[str, ...] = ()) -> Server:
    """``autograder serve`` on a free port of the loopback; returns once it says it is serving.
    Without ``tokens``, the service takes no uploads (``extra`` names an exchange)."""
    output = output or folder / "out"
    marker = f"{os.environ.get(RUN_MARKER, 'tests')}-{name}-{uuid.uuid4().hex[:8]}"
    log = folder / f"{name}-{uuid.uuid4().hex[:4]}.log"
    command = [sys.executable, "-m", "autograder.cli", "serve", "--assignment", assignment,
               "--output", str(output), *(("--tokens", str(tokens)) if tokens else ()), "--port", "0",
               "--jobs", str(jobs), "--config", str(config), *extra]
    with log.open("w") as stderr:
        process = subprocess.Popen(command, env={**os.environ, RUN_MARKER: marker}, start_new_session=True,
                                   stdout=subprocess.DEVNULL, stderr=stderr)
    deadline = time.monotonic() + START_S
    while time.monotonic() < deadline:
        found = STARTED.search(log.read_text())
        if found:
            return Server(output, token_of, int(found.group(1)), process, marker, log)
        assert process.poll() is None, log.read_text()[-3000:]
        time.sleep(0.1)
    process.kill()
    raise AssertionError(f"the service did not start within {START_S} s: {log.read_text()[-3000:]}")

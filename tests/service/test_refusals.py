"""What the HTTP API refuses before queueing (SPEC §5), on the service's app in-process (real
tokens, intake and queue; no grading): an upload after the student's deadline (403
``deadline_passed``), another assignment's notebook (400 ``wrong_assignment``, replacing
nothing), and a service with no tokens, which answers ``/api/health`` only."""
import http.client
import socket
import threading
import time
from datetime import datetime, timedelta, timezone
from types import SimpleNamespace

import pytest
import uvicorn

from autograder.config import load_config
from autograder.grading.task import RunSettings
from autograder.grading.pipeline import Batch
from autograder.service.app import Service, make_app
from autograder.service.assignments import Assignments
from autograder.service.deadlines import Deadlines
from autograder.service.intake import Uploads
from autograder.service.queue import Queue
from autograder.service.tokens import Tokens

from .server import Answer, multipart, notebook

TOKENS = {"early": "e" * 32, "extended": "x" * 32}
NOW = datetime.now(timezone.utc)


@pytest.fixture(scope="module")
def assignments() -> Assignments:
    config = load_config()
    return Assignments.of(Batch(RunSettings.resolve(config, "attention_scoring", None, "cpu"), config, b""))


class Api:
    """The service's app served by uvicorn on a free port of the loopback, in this process."""

    def __init__(self, service: Service):
        listening = socket.create_server(("127.0.0.1", 0))
        self.port = listening.getsockname()[1]
        self.server = uvicorn.Server(uvicorn.Config(make_app(service), lifespan="off", log_config=None,
                                                    access_log=False))
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [listening]}, daemon=True)
        self.thread.start()
        while not self.server.started:
            assert self.thread.is_alive()
            time.sleep(0.01)

    def request(self, method: str, path: str, body: bytes | None = None, headers: dict | None = None) -> Answer:
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        connection.request(method, path, body=body, headers=headers or {})
        response = connection.getresponse()
        answer = Answer(response.status, dict(response.getheaders()), response.read())
        connection.close()
        return answer

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(10)


@pytest.fixture
def serving():
    started = []

    def serve(tmp_path, assignments, tokens: bool = True, deadlines: Deadlines | None = None) -> Api:
        (tmp_path / "tokens.csv").write_text("student_id,token\n" + "".join(f"{s},{t}\n" for s, t in TOKENS.items()))
        service = Service("attention_scoring", "attention_scoring.ipynb", "en", 1, 100, 20 << 20,
                          Tokens.load(tmp_path / "tokens.csv") if tokens else None, Queue(tmp_path / "queue.sqlite3"),
                          Uploads(tmp_path / "uploads", "attention_scoring.ipynb"), outputs=None,
                          loop=SimpleNamespace(poke=lambda: None), assignments=assignments,
                          deadlines=deadlines or Deadlines())
        started.append(Api(service))
        return started[-1]
    yield serve
    for api in started:
        api.stop()


def upload(api: Api, student: str, data: bytes) -> Answer:
    content_type, body = multipart({"notebook": data})
    return api.request("POST", "/api/submissions", body,
                       {"Authorization": f"Bearer {TOKENS[student]}", "Content-Type": content_type})


def test_an_upload_after_the_deadline_is_refused_with_the_deadline(tmp_path, assignments, serving):
    """After the deadline, is a student's upload refused, 403 ``deadline_passed`` with the
    deadline in the body and the reason, while a student with a later extension hands in?"""
    passed = (NOW - timedelta(minutes=1)).replace(microsecond=0)
    api = serving(tmp_path, assignments, deadlines=Deadlines(passed, {"extended": NOW + timedelta(days=2)}))
    refused = upload(api, "early", notebook("correct"))
    assert refused.status == 403
    assert refused.json()["error"] == "deadline_passed"
    assert datetime.fromisoformat(refused.json()["deadline"]) == passed
    assert passed.strftime("%Y-%m-%d %H:%M") in refused.json()["reason"]
    assert upload(api, "extended", notebook("correct")).status == 202
    assert len(list((tmp_path / "uploads").iterdir())) == 1   # the refused upload's body was never read


def test_another_assignments_notebook_is_refused_and_replaces_nothing(tmp_path, assignments, serving):
    """Tried as a new student would: is a bahdanau notebook uploaded to attention_scoring
    refused at once (400 ``wrong_assignment``, naming both), with the waiting submission kept?"""
    api = serving(tmp_path, assignments)
    kept = upload(api, "early", notebook("correct"))
    assert kept.status == 202
    wrong = upload(api, "early", notebook("correct", "bahdanau"))
    assert wrong.status == 400, wrong.body
    assert wrong.json()["error"] == "wrong_assignment"
    assert "bahdanau" in wrong.json()["reason"] and "attention_scoring" in wrong.json()["reason"]
    assert [p.name for p in (tmp_path / "uploads").iterdir()] == [kept.json()["id"]]
    assert api.request("GET", "/api/health").json()["queued"] == 1


def test_a_service_without_tokens_serves_its_health_only(tmp_path, assignments, serving):
    api = serving(tmp_path, assignments, tokens=False)
    assert api.request("GET", "/api/health").status == 200
    assert "refused_handins" not in api.request("GET", "/api/health").json()   # no exchange either
    for path in ("/", "/page.js", "/api/submissions/0123"):
        assert api.request("GET", path).status == 404
    assert upload(api, "early", notebook("correct")).status == 404

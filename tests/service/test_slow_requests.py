"""Clients that send a request slowly, or not at all, to hold the service's connections (red
team): each is closed once it falls behind, and the service keeps answering everyone else.

The refused bodies run against the real ``autograder serve`` with its real deadlines; the slow
and stalled uploads against the service's own app and protocol, with short deadlines, in a
uvicorn of this process (real sockets, on the loopback)."""
import json
import select
import socket
import threading
import time
from types import SimpleNamespace

import pytest
import uvicorn

from autograder.service.app import Service, make_app
from autograder.service.http import RequestsInTime
from autograder.service.intake import FORM_OVERHEAD, Uploads
from autograder.service.queue import Queue
from autograder.service.serve import MAX_CONNECTIONS
from autograder.service.tokens import Tokens

from .server import multipart, notebook

TOKEN = "t" * 32
BODY_HEAD = b"--XX\r\nContent-Disposition: form-data; name=\"notebook\"; filename=\"n.ipynb\"\r\n\r\n"


def test_the_deadlines_are_the_documented_ones():
    """Are the service's deadlines those the README states (10 s for the headers, 10 s of
    silence, a body 30 s ahead of 64 kB/s)?"""
    assert (RequestsInTime.headers_s, RequestsInTime.idle_s, RequestsInTime.floor_s, RequestsInTime.min_rate) == \
           (10, 10, 30, 64 << 10)


def test_refused_bodies_trickled_on_are_closed_and_cannot_hold_the_service(server):
    """260 connections each send a submission without a token, declaring a megabyte, then a
    byte every 0.2 s: each got its 401 at once and was then held while bytes came, and with
    256 held every student got a 503. Is each closed right after its 401, and does the health
    check answer 200 at once while they keep sending?"""
    head = (b"POST /api/submissions HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=XX\r\n"
            b"Content-Length: 1000000\r\n\r\n" + BODY_HEAD)
    socks = []
    for _ in range(MAX_CONNECTIONS + 4):
        sock = socket.create_connection(("127.0.0.1", server.port), timeout=10)
        sock.sendall(head)
        socks.append(sock)
        time.sleep(0.005)
    trickled = Trickle(socks, within_s=10)
    started = time.monotonic()
    assert server.request("GET", "/api/health").status == 200
    assert time.monotonic() - started < 3
    trickled.join()
    assert {got.split(b"\r\n", 1)[0] for got in trickled.got} == {b"HTTP/1.1 401 Unauthorized"}
    assert all(b"\r\nconnection: close\r\n" in got.lower() for got in trickled.got)
    assert trickled.open == 0, f"{trickled.open} of {len(socks)} still open 10 s after their 401"


class Trickle(threading.Thread):
    """A byte every 0.2 s on each of ``socks``, reading what comes back, until the service has
    closed them all or ``within_s`` passed; ``got``: each one's bytes, ``open``: how many it
    had not closed."""

    def __init__(self, socks: list[socket.socket], within_s: float):
        super().__init__(daemon=True)
        self.socks, self.within_s = socks, within_s
        self.got, self.open = [b""] * len(socks), len(socks)
        self.start()

    def run(self) -> None:
        deadline, closed = time.monotonic() + self.within_s, set()
        while len(closed) < len(self.socks) and time.monotonic() < deadline:
            for i, sock in enumerate(self.socks):
                if i not in closed and not self._read_and_send(i, sock):
                    closed.add(i)
            time.sleep(0.2)
        self.open = len(self.socks) - len(closed)
        for sock in self.socks:
            sock.close()

    def _read_and_send(self, i: int, sock: socket.socket) -> bool:
        """False once the service has closed ``sock``."""
        try:
            while select.select([sock], [], [], 0)[0]:
                data = sock.recv(65536)
                if not data:
                    return False
                self.got[i] += data
            sock.sendall(b"a")
        except OSError:  # reset: it was closed while a byte was on its way
            return False
        return True


class Quick(RequestsInTime):
    headers_s, idle_s, floor_s, min_rate = 2.0, 1.0, 3.0, 16 << 10


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    yield from _serving(tmp_path_factory, None)


@pytest.fixture(scope="module")
def limited(tmp_path_factory):
    """``quick`` with a limit of 60 connections (the service's is ``MAX_CONNECTIONS``)."""
    yield from _serving(tmp_path_factory, 60)


def _serving(tmp_path_factory, limit_concurrency: int | None):
    """The service's app (real tokens, intake and queue; no grading) behind ``Quick``, on a
    free port of the loopback; yields the port and the uploads' folder."""
    folder = tmp_path_factory.mktemp("quick")
    (folder / "tokens.csv").write_text(f"student_id,token\ns1,{TOKEN}\n")
    uploads = Uploads(folder / "uploads", "attention_scoring.ipynb")
    service = Service("attention_scoring", "attention_scoring.ipynb", "en", 1, 100, 20 << 20,
                      Tokens.load(folder / "tokens.csv"), Queue(folder / "queue.sqlite3"), uploads,
                      outputs=None, loop=SimpleNamespace(poke=lambda: None))
    listening = socket.create_server(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(make_app(service), http=Quick, lifespan="off", log_config=None,
                                           access_log=False, h11_max_incomplete_event_size=FORM_OVERHEAD,
                                           limit_concurrency=limit_concurrency))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [listening]}, daemon=True)
    thread.start()
    while not server.started:
        assert thread.is_alive()
        time.sleep(0.01)
    yield SimpleNamespace(port=listening.getsockname()[1], uploads=folder / "uploads")
    server.should_exit = True
    thread.join(10)
    service.queue.close()


def upload_head(port: int, length: int) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    sock.sendall(f"POST /api/submissions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {TOKEN}\r\n"
                 f"Content-Type: multipart/form-data; boundary=XX\r\nContent-Length: {length}\r\n\r\n".encode()
                 + BODY_HEAD)
    return sock


def closed_after(sock: socket.socket, within_s: float, trickle_s: float | None = None) -> tuple[float | None, bytes]:
    """Seconds until the service closed ``sock`` (None: not within ``within_s``) and what it
    answered; with ``trickle_s``, a byte is sent that often meanwhile."""
    started, got = time.monotonic(), b""
    sock.settimeout(trickle_s or within_s)
    try:
        while time.monotonic() - started < within_s:
            try:
                data = sock.recv(65536)
            except TimeoutError:
                sock.sendall(b"a")
                continue
            if not data:
                return time.monotonic() - started, got
            got += data
    except OSError:
        return time.monotonic() - started, got
    finally:
        sock.close()
    return None, got


def test_a_trickled_upload_is_closed_and_one_at_a_fair_pace_is_taken(quick):
    """A student's upload (valid token) of a megabyte sent a byte every 0.2 s answered nothing
    and held its connection for as long as bytes came. Is it closed, unanswered, once it is
    ``floor_s`` behind ``min_rate``, its bytes removed, while an upload that takes longer than
    ``floor_s`` at three times ``min_rate`` is accepted?"""
    took, got = closed_after(upload_head(quick.port, 1_000_000), within_s=Quick.floor_s + 10, trickle_s=0.2)
    assert took is not None, "a trickled upload was still open after floor_s + 10 s"
    assert Quick.floor_s - 0.5 < took < Quick.floor_s + 2 and got == b"", (took, got)
    time.sleep(0.5)
    assert not any(path.is_file() for path in quick.uploads.rglob("*"))

    nb = json.loads(notebook("correct"))
    nb["cells"].append({"cell_type": "markdown", "metadata": {}, "source": "x" * (150 << 10)})
    content_type, body = multipart({"notebook": json.dumps(nb).encode()})
    sock = socket.create_connection(("127.0.0.1", quick.port), timeout=10)
    sock.sendall(f"POST /api/submissions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {TOKEN}\r\n"
                 f"Content-Type: {content_type}\r\nContent-Length: {len(body)}\r\n\r\n".encode())
    started, step = time.monotonic(), 3 * Quick.min_rate // 10
    for at in range(0, len(body), step):
        sock.sendall(body[at:at + step])
        time.sleep(0.1)
    assert time.monotonic() - started > Quick.floor_s
    answer = sock.recv(65536)
    sock.close()
    assert answer.startswith(b"HTTP/1.1 202 "), answer[:300]


def test_an_upload_that_stops_mid_body_is_closed_after_the_idle_limit(quick):
    """An upload that declared a megabyte and stopped sending held its connection until the
    intake's 300 s. Is it closed, unanswered, ``idle_s`` after its last byte (before the
    pace would close it)?"""
    took, got = closed_after(upload_head(quick.port, 1_000_000), within_s=Quick.floor_s + 10)
    assert took is not None and Quick.idle_s - 0.2 < took < Quick.idle_s + 1, took
    assert got == b""


def test_connections_reopened_as_fast_as_they_close_cannot_lock_anyone_out(limited):
    """Red team 3: one client kept 300 connections open, reopening each as the header deadline
    closed it, and every student got a 503. With three times the limit held open (some with
    half a request line), is a whole request still answered, and were the oldest waiting
    connections closed to make room?"""
    held = []
    for i in range(180):
        sock = socket.create_connection(("127.0.0.1", limited.port), timeout=10)
        if i % 2:
            sock.sendall(b"GET /api/hea")  # headers that never end
        held.append(sock)
    time.sleep(0.2)
    honest = socket.create_connection(("127.0.0.1", limited.port), timeout=10)
    honest.sendall(b"GET /api/health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    answer = honest.recv(65536)
    assert answer.startswith(b"HTTP/1.1 200"), answer[:200]
    readable, _, _ = select.select(held[:60], [], [], 2)
    assert len(readable) == 60 and all(_closed(sock) for sock in readable)  # the oldest
    for sock in [*held, honest]:
        sock.close()


def _closed(sock: socket.socket) -> bool:
    """Closed by the service, unanswered (a reset where it left our bytes unread)."""
    try:
        return sock.recv(1) == b""
    except ConnectionResetError:
        return True

"""The HTTP API of ``autograder serve`` (SPEC §5), driven over the loopback against the real
service: tokens, every refusal, the queue's rules, the output folder, and what a student
who wants another's grade, or wants the service to stop, can send it."""
import csv
import json
import socket
import threading
import time
from pathlib import Path

from .conftest import PER_HOUR
from .server import multipart, notebook

CORRECT, BUGGY = notebook("correct"), notebook("buggy")


def test_health_needs_no_token(server):
    """Does the health check answer without a token, naming the assignment and the slots?"""
    answer = server.request("GET", "/api/health")
    assert answer.status == 200
    assert answer.json() | {"queued": 0} == {"status": "ok", "assignment": "attention_scoring", "slots": 2,
                                              "queued": 0}


def test_a_submission_needs_the_students_token_in_the_header(server):
    """Is a submission without a token, with an unknown one, with another scheme, or with the
    token where a log or a browser history keeps it (the query string, a cookie) refused
    with 401 and a JSON reason, and is nothing queued?"""
    content_type, body = multipart({"notebook": CORRECT})
    token = server.tokens["s1"]
    attempts = [("/api/submissions", {}), ("/api/submissions", {"Authorization": "Bearer " + token[:-1]}),
                ("/api/submissions", {"Authorization": "Basic " + token}), ("/api/submissions", {"Authorization": "Bearer "}),
                (f"/api/submissions?token={token}", {}), (f"/api/submissions?access_token={token}", {}),
                ("/api/submissions", {"Cookie": f"token={token}"})]
    for path, headers in attempts:
        answer = server.request("POST", path, body=body, headers={"Content-Type": content_type, **headers})
        assert answer.status == 401, (path, headers)
        assert answer.json()["error"] == "unauthorized" and answer.json()["reason"]
    assert token not in server.log.read_text() and "?token" not in server.log.read_text()
    assert server.request("GET", "/api/health").json()["queued"] == 0


def test_another_students_submission_answers_exactly_as_an_unknown_one(server):
    """With s3's token, do s2's submission, its feedback and a made-up id all answer 404 with
    the same bytes and headers, while s2 reads their own?"""
    accepted = server.submit("s2", CORRECT)
    assert accepted.status == 202
    mine = accepted.json()["id"]
    server.wait_done("s2", mine)
    for suffix in ("", "/feedback"):
        theirs = server.request("GET", f"/api/submissions/{mine}{suffix}", server.tokens["s3"])
        unknown = server.request("GET", f"/api/submissions/{'0' * len(mine)}{suffix}", server.tokens["s3"])
        assert theirs.status == unknown.status == 404
        assert theirs.body == unknown.body
        assert {k: v for k, v in theirs.headers.items() if k != "date"} == \
               {k: v for k, v in unknown.headers.items() if k != "date"}
        assert server.request("GET", f"/api/submissions/{mine}{suffix}", server.tokens["s2"]).status == 200


def test_ids_that_look_like_paths_reach_no_file(server):
    """Do submission ids that climb out of the folder (encoded or not) or name a student's file
    answer as unknown, reading nothing?"""
    server.wait_done("s2", server.submit("s2", CORRECT).json()["id"])
    for bad in ["..%2F..%2Fs2", "..%2Fgrades.csv", "%2E%2E", "s2", "..", "%00", "x" * 5000, "'%3BDROP%20TABLE%20submissions%3B--"]:
        for suffix in ("", "/feedback"):
            answer = server.request("GET", f"/api/submissions/{bad}{suffix}", server.tokens["s2"])
            assert answer.status in (404,), (bad, answer.status, answer.body[:200])
            assert answer.json()["error"] in ("not_found", "no_route")
    assert server.request("GET", "/api/health").status == 200


def test_a_student_id_that_looks_like_a_path_stays_in_the_output_folder(server):
    """Is the result of a student whose id is ``../escape`` written inside the output folder,
    under the store's file name for that id, with a spreadsheet-safe row for ``=HYPERLINK(1)``?"""
    for student in ("../escape", "=HYPERLINK(1)", "студент"):
        answer = server.wait_done(student, server.submit(student, CORRECT).json()["id"])
        assert answer["result"]["student_id"] == student
    assert not (server.output.parent / "escape.json").exists()
    written = {p.resolve() for p in server.output.rglob("*") if p.is_file()}
    assert all(server.output.resolve() in p.parents for p in written)
    rows = {row["student_id"] for row in csv.DictReader((server.output / "grades.csv").open())}
    assert {"../escape", "'=HYPERLINK(1)", "студент"} <= rows


def test_a_declared_huge_body_is_refused_before_it_is_sent(server):
    """Is an upload whose Content-Length is above max_notebook_mb answered 413 at once, without
    the service waiting for the body?"""
    sock = socket.create_connection(("127.0.0.1", server.port), timeout=30)
    sock.sendall(f"POST /api/submissions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {server.tokens['s4']}\r\n"
                 f"Content-Type: multipart/form-data; boundary=b\r\nContent-Length: {30 << 20}\r\n\r\n".encode())
    reply = read_reply(sock)
    sock.close()
    assert reply.startswith("HTTP/1.1 413"), reply[:300]
    assert '"error":"too_large"' in reply


def test_an_endless_body_is_cut_off_while_it_is_read(server):
    """Is a chunked upload that never ends refused with 413 once it passes max_notebook_mb, with
    nothing left on disk, and does the service keep answering?"""
    sock = socket.create_connection(("127.0.0.1", server.port), timeout=60)
    sock.sendall(f"POST /api/submissions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {server.tokens['s4']}\r\n"
                 "Content-Type: multipart/form-data; boundary=b\r\nTransfer-Encoding: chunked\r\n\r\n".encode())
    chunk = b"--b\r\nContent-Disposition: form-data; name=\"notebook\"\r\n\r\n" + b"x" * (1 << 20)
    sent, reply = [0], []

    def flood():
        try:
            while sent[0] < 200:   # 200 MB at most: far above the 20 MB cap, bounded all the same
                sock.sendall(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
                sent[0] += 1
        except OSError:
            pass  # the service closed the connection: what the test wants
    writer = threading.Thread(target=flood)
    writer.start()
    reply.append(read_reply(sock))
    sock.close()
    writer.join()
    assert reply[0].startswith("HTTP/1.1 413"), reply[0][:300]
    assert sent[0] < 100, f"the service read {sent[0]} MB before refusing"
    assert _no_orphan_uploads(server)
    assert server.request("GET", "/api/health").status == 200


def read_reply(sock: socket.socket) -> str:
    """One HTTP reply, headers and the body its Content-Length announces."""
    data = b""
    while b"\r\n\r\n" not in data or len(data.split(b"\r\n\r\n", 1)[1]) < _length(data):
        chunk = sock.recv(65536)
        if not chunk:
            break
        data += chunk
    return data.decode()


def _length(data: bytes) -> int:
    for line in data.split(b"\r\n\r\n", 1)[0].split(b"\r\n"):
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            return int(value)
    return 0


def _no_orphan_uploads(server) -> bool:
    """Every notebook left in uploads/ is one of a submission the queue knows (a refused
    upload leaves nothing)."""
    import sqlite3
    db = sqlite3.connect(server.output / ".service" / "queue.sqlite3")
    known = {i for (i,) in db.execute("SELECT id FROM submissions")}
    db.close()
    return {p.parent.name for p in (server.output / ".service" / "uploads").glob("*/*")} <= known


def test_malformed_uploads_get_400_with_a_reason(server):
    """Is each broken upload (not multipart, no boundary, truncated, no notebook field, two of
    them, a file that is not JSON, JSON that is no notebook, JSON nested a million deep) a 400
    with its own reason, and never counted against the student's rate?"""
    token = server.tokens["s5"]
    cases = {
        "not_multipart": ("application/json", CORRECT),
        "not_multipart ": ("multipart/form-data", CORRECT),
        "malformed": multipart({"notebook": CORRECT})[:1] + (multipart({"notebook": CORRECT})[1][:-10],),
        "no_notebook": multipart({"file": CORRECT}),
        "no_notebook ": ("multipart/form-data; boundary=q", b"--q\r\nContent-Disposition: form-data; name=\"notebook\"\r\n\r\nA\r\n"
                         b"--q\r\nContent-Disposition: form-data; name=\"notebook\"\r\n\r\nB\r\n--q--\r\n"),
        "not_json": multipart({"notebook": b"\x89PNG\r\n\x1a\n\x00\xff" * 100}),
        "not_json ": multipart({"notebook": b"[" * 1_000_000}),
        "not_notebook": multipart({"notebook": json.dumps({"cells": "no", "nbformat": 4}).encode()}),
        "not_notebook ": multipart({"notebook": b"[1, 2, 3]"}),
    }
    for reason, (content_type, body) in cases.items():
        answer = server.request("POST", "/api/submissions", token, body, {"Content-Type": content_type})
        assert (answer.status, answer.json()["error"]) == (400, reason.strip()), (reason, answer.body[:300])
        assert "Traceback" not in answer.body.decode()
    accepted = [server.submit("s5", CORRECT) for _ in range(PER_HOUR)]   # the refused ones above did not count
    assert [a.status for a in accepted] == [202] * PER_HOUR
    server.wait_done("s5", accepted[-1].json()["id"])


def test_the_rate_counts_the_last_hour_and_says_when_to_come_back(server):
    """After the hour's three submissions, is the fourth 429 with a Retry-After close to an hour,
    and is another student unaffected?"""
    ids = [server.submit("s6", BUGGY).json()["id"] for _ in range(PER_HOUR)]
    refused = server.submit("s6", BUGGY)
    assert refused.status == 429 and refused.json()["error"] == "rate"
    assert 3500 < int(refused.headers["retry-after"]) <= 3600
    other = server.submit("s7", BUGGY)
    assert other.status == 202
    for student, submission_id in [*(("s6", i) for i in ids), ("s7", other.json()["id"])]:
        server.wait_done(student, submission_id)


def test_a_newer_submission_replaces_the_waiting_one(server):
    """While s8's first submission is being graded, does a third replace the second (status
    replaced, its notebook removed), and is the third graded?"""
    first = server.submit("s8", notebook("correct", sleep_s=4)).json()["id"]
    second = server.submit("s8", BUGGY).json()["id"]
    third = server.submit("s8", CORRECT).json()["id"]
    assert server.status("s8", second)["status"] == "replaced"
    assert not (server.output / ".service" / "uploads" / second).exists()
    assert server.wait_done("s8", first)["status"] == "done"
    assert server.wait_done("s8", third)["status"] == "done"
    assert server.status("s8", second) == {"id": second, "status": "replaced", "result": None}
    # red team 12: its feedback said "ask again when its status is done", which it never will be
    answer = server.request("GET", f"/api/submissions/{second}/feedback", server.tokens["s8"])
    assert (answer.status, answer.json()["error"]) == (410, "replaced")


def test_students_are_served_in_turn(server):
    """With both slots busy (s9 and s10 sleep), s9's second submission queued, and then s11's
    first: when s9's first finishes, is s11 (never served) graded before s9's second?"""
    s9_first = server.submit("s9", notebook("correct", sleep_s=6)).json()["id"]
    s10 = server.submit("s10", notebook("correct", sleep_s=12)).json()["id"]
    wait_grading(server, "s9", s9_first)
    wait_grading(server, "s10", s10)
    s9_second = server.submit("s9", CORRECT).json()["id"]
    time.sleep(0.2)
    s11 = server.submit("s11", CORRECT).json()["id"]
    started: dict[str, float] = {}
    watched = {"s9": s9_second, "s11": s11}
    deadline = time.monotonic() + 240
    while len(started) < 2 and time.monotonic() < deadline:
        for student, submission_id in watched.items():
            if student not in started and server.status(student, submission_id)["status"] != "queued":
                started[student] = time.monotonic()
        time.sleep(0.05)
    assert started["s11"] < started["s9"], started
    for student, submission_id in [("s9", s9_first), ("s10", s10), *watched.items()]:
        server.wait_done(student, submission_id)


def wait_grading(server, student: str, submission_id: str) -> None:
    deadline = time.monotonic() + 120
    while server.status(student, submission_id)["status"] == "queued":
        assert time.monotonic() < deadline, f"{submission_id} of {student} never started"
        time.sleep(0.05)


def test_results_land_in_the_output_folder_with_every_submission_kept(server):
    """After two graded submissions of s12, is the latest one the student's JSON, feedback and
    grades.csv row (as the batch writes them), and are both kept under history/ with their
    feedback, and served by the API?"""
    first = server.submit("s12", BUGGY).json()["id"]
    server.wait_done("s12", first)
    second = server.submit("s12", CORRECT).json()["id"]
    done = server.wait_done("s12", second)
    latest = json.loads((server.output / "s12.json").read_text())
    assert latest == done["result"] and latest["student_id"] == "s12"
    assert latest["score"] > json.loads((server.output / "history" / "s12" / f"{first}.json").read_text())["score"]
    for submission_id in (first, second):
        assert {p.suffix for p in (server.output / "history" / "s12").glob(f"{submission_id}.*")} == {".json", ".md", ".html"}
    assert (server.output / "feedback" / "s12.html").read_text() == \
           (server.output / "history" / "s12" / f"{second}.html").read_text()
    row = next(r for r in csv.DictReader((server.output / "grades.csv").open()) if r["student_id"] == "s12")
    assert float(row["score"]) == latest["score"]
    page = server.request("GET", f"/api/submissions/{first}/feedback", server.tokens["s12"])
    assert page.status == 200 and page.headers["content-type"].startswith("text/html")
    assert "default-src 'none'" in page.headers["content-security-policy"]
    assert page.body.decode() == (server.output / "history" / "s12" / f"{first}.html").read_text()


def test_feedback_of_a_submission_not_yet_graded_is_409(server):
    """Does asking for the feedback of a queued submission say it is not graded yet?"""
    first = server.submit("s13", notebook("correct", sleep_s=3)).json()["id"]
    answer = server.request("GET", f"/api/submissions/{first}/feedback", server.tokens["s13"])
    assert (answer.status, answer.json()["error"]) == (409, "not_graded")
    server.wait_done("s13", first)


def test_every_error_is_json_with_a_reason(server):
    """Do an unknown address and a wrong method answer JSON with a reason, never a traceback
    or a plain-text page?"""
    for method, path, status in [("GET", "/nope", 404), ("POST", "/api/health", 405), ("DELETE", "/api/submissions", 405),
                                 ("GET", "/api/submissions", 405), ("GET", "/../../etc/passwd", 404)]:
        answer = server.request(method, path, server.tokens["s1"])
        assert answer.status == status, (method, path)
        assert answer.headers["content-type"] == "application/json" and answer.json()["reason"]
        assert answer.headers["x-content-type-options"] == "nosniff"


def test_a_student_uploads_one_notebook_at_a_time(server):
    """While s14's upload is still arriving (a slow client, or one holding the connection open to
    pile up uploads on disk), is a second one refused with 429, and does the next one go through
    once the first connection is gone?"""
    sock = socket.create_connection(("127.0.0.1", server.port), timeout=30)
    content_type, body = multipart({"notebook": CORRECT})
    sock.sendall(f"POST /api/submissions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {server.tokens['s14']}\r\n"
                 f"Content-Type: {content_type}\r\nContent-Length: {len(body)}\r\n\r\n".encode() + body[:100])
    time.sleep(0.5)
    second = server.submit("s14", CORRECT)
    assert (second.status, second.json()["error"]) == (429, "uploading") and second.headers["retry-after"] == "10"
    sock.close()
    deadline = time.monotonic() + 30
    while (third := server.submit("s14", CORRECT)).status == 429 and time.monotonic() < deadline:
        time.sleep(0.2)
    assert third.status == 202
    server.wait_done("s14", third.json()["id"])


def test_half_sent_requests_are_closed_and_cannot_hold_the_service(server):
    """A client that opens more connections than the service takes (256) and sends half a
    request's headers on each got every student a 503 for as long as it held them (red team).
    Each is closed HEADERS_S after it opened; the service answers again."""
    from autograder.service.http import HEADERS_S
    held = []
    for _ in range(260):
        sock = socket.create_connection(("127.0.0.1", server.port), timeout=HEADERS_S + 30)
        sock.sendall(b"GET /api/health HTTP/1.1\r\nHost: x\r\nX-a: b")
        held.append(sock)
    started = time.monotonic()
    trickled = Trickle(server.port, HEADERS_S + 30)  # a byte every 2 s: no byte moves the deadline
    assert held[0].recv(1024) == b""  # closed by the service, nothing answered
    assert time.monotonic() - started < HEADERS_S + 20
    time.sleep(1)
    assert server.request("GET", "/api/health").status == 200
    for sock in held:
        sock.close()
    trickled.join()
    assert trickled.closed_after is not None and trickled.closed_after < HEADERS_S + 5, trickled.closed_after


class Trickle(threading.Thread):
    """One connection sending a request's headers a byte every 2 s (its recv timeout), for at most ``limit_s``;
    ``closed_after``: seconds until the service closed it (None: it never did)."""

    def __init__(self, port: int, limit_s: float):
        super().__init__(daemon=True)
        self.port, self.limit_s, self.closed_after = port, limit_s, None
        self.start()

    def run(self) -> None:
        sock = socket.create_connection(("127.0.0.1", self.port), timeout=2)
        started = time.monotonic()
        request = b"GET /api/health HTTP/1.1\r\nHost: x\r\n" + b"X-a: b\r\n" * 1000
        try:
            for byte in request:
                if time.monotonic() - started > self.limit_s:
                    return
                sock.sendall(bytes([byte]))
                try:
                    if sock.recv(1024) == b"":
                        self.closed_after = time.monotonic() - started
                        return
                except TimeoutError:
                    pass  # still open, still waiting: the next byte
        except OSError:
            self.closed_after = time.monotonic() - started
        finally:
            sock.close()


def _peak_rss(pid: int) -> int:
    """The process's peak resident memory so far (VmHWM), in bytes."""
    status = Path(f"/proc/{pid}/status").read_text()
    return int(status.split("VmHWM:")[1].split()[0]) * 1024


def test_an_upload_of_many_tiny_containers_costs_the_service_no_memory(server):
    """Red team 13: 20 MB of JSON made of many tiny containers was parsed whole in the service
    before it was refused (RSS 2.0-2.6 GB, /api/health 4-16 s). Is it refused as no notebook
    while the service's memory stays where it was, at the top and further in?"""
    tiny = b"[" + b",".join([b"[{}]"] * 3_800_000) + b"]"   # 19 MB
    further_in = b'{"x": ' + b"[" + b",".join([b"[{}]"] * 1_000_000) + b"]" + b"}"
    before = _peak_rss(server.process.pid)
    for body in (tiny, further_in):
        started = time.monotonic()
        answer = server.submit("s39", body)
        assert (answer.status, answer.json()["error"]) == (400, "not_notebook"), answer.body[:300]
        assert time.monotonic() - started < 60
    grown = _peak_rss(server.process.pid) - before
    assert grown < 100 << 20, f"the service's peak memory grew by {grown >> 20} MB"
    assert server.request("GET", "/api/health").status == 200


def test_refused_uploads_count_toward_a_rate_of_their_own(server):
    """Red team 13: refusals did not count toward any rate, so an expensive refusal could be
    repeated without end. After REFUSED_PER_HOUR refused uploads, is the next one a 429 with a
    Retry-After of about an hour, before its body is read, and is another student unaffected?"""
    from autograder.service.intake import REFUSED_PER_HOUR
    for _ in range(REFUSED_PER_HOUR):
        assert server.submit("s38", b"not a notebook").status == 400
    refused = server.submit("s38", CORRECT)
    assert (refused.status, refused.json()["error"]) == (429, "refused_rate")
    assert 3500 < int(refused.headers["retry-after"]) <= 3600
    assert server.submit("s36", b"not a notebook either").status == 400

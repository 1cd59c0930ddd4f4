"""The service's log on the TA's terminal (red team): a client's ``X-Forwarded-For`` went into
it raw (a colour, a window title, any text as the address), and every upload cut off mid-body
wrote a 3 kB traceback (300 of them: a megabyte in 1.5 s)."""
import socket
import time

from autograder.service.log import MAX_CLIENT, client_of, path_of

from .server import Server

LOG_WITHIN_S = 30
ABORTED = 20


def test_a_client_is_one_word_of_printable_ascii():
    """Is an address kept as it is, and anything else written out in escapes, bounded?"""
    assert client_of({"client": ("127.0.0.1", 5000)}) == "127.0.0.1"
    assert client_of({"client": ("2001:db8::1", 5000)}) == "2001:db8::1"
    assert client_of({"client": None}) == client_of({}) == "-"
    assert client_of({"client": ("\x1b[31mRED\x1b]0;T\x07 1.2.3.4", 0)}) == "\\x1b[31mRED\\x1b]0;T\\x07\\x201.2.3.4"
    assert client_of({"client": ("6.6.6.6\xff\xfe\x9b\u2028", 0)}) == "6.6.6.6\\xff\\xfe\\x9b\\u2028"
    assert client_of({"client": ("x" * 5000, 0)}) == "x" * MAX_CLIENT


def _send(server: Server, raw: bytes, read: bool = True) -> bytes:
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
        sock.sendall(raw)
        return sock.recv(65536) if read else b""


def _logged(server: Server, since: int, wanted: str, count: int = 1) -> str:
    """The log written after byte ``since``, once it holds ``count`` lines with ``wanted``."""
    deadline = time.monotonic() + LOG_WITHIN_S
    while True:
        text = server.log.read_bytes()[since:].decode("utf-8", "replace")
        if sum(wanted in line for line in text.splitlines()) >= count or time.monotonic() > deadline:
            return text
        time.sleep(0.1)


def test_a_forwarded_client_is_logged_escaped(server):
    """Behind a proxy on this host, the client comes from ``X-Forwarded-For``, which any local
    user can write. Does the log show it escaped, with no escape sequence reaching the terminal?"""
    since = server.log.stat().st_size
    for forwarded in (b"\x1b[31mRED\x1b]0;T\x07 1.2.3.4", b"<script>, 6.6.6.6\xff\xfe"):
        answer = _send(server, b"GET /api/health HTTP/1.1\r\nHost: x\r\nX-Forwarded-For: " + forwarded
                       + b"\r\nConnection: close\r\n\r\n")
        assert answer.startswith(b"HTTP/1.1 200 "), answer[:200]
    text = _logged(server, since, "GET /api/health 200", count=2)
    assert "\\x1b[31mRED\\x1b]0;T\\x07\\x201.2.3.4 GET /api/health 200" in text, text[-2000:]
    assert "6.6.6.6\\xff\\xfe GET /api/health 200" in text, text[-2000:]
    assert not any(char in text for char in "\x1b\x07\xff\xfe"), repr(text[-2000:])


def test_an_upload_cut_off_mid_body_is_one_line_without_a_traceback(server):
    """Does each upload whose client goes away after the start of its body cost the log one line
    (status 499), and no traceback, and may the student upload again at once?"""
    since = server.log.stat().st_size
    head = (f"POST /api/submissions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {server.tokens['s37']}\r\n"
            "Content-Type: multipart/form-data; boundary=XX\r\nContent-Length: 100000\r\n\r\n"
            '--XX\r\nContent-Disposition: form-data; name="notebook"\r\n\r\n{').encode()
    for count in range(1, ABORTED + 1):  # one at a time: a second upload while one arrives is a 429
        _send(server, head, read=False)
        text = _logged(server, since, " s37 ", count)
    lines = [line for line in text.splitlines() if "s37" in line]
    assert len(lines) == ABORTED and all("POST /api/submissions 499 s37" in line for line in lines), text[-3000:]
    assert "Traceback" not in text and "ClientDisconnect" not in text and "Exception" not in text, text[-3000:]
    assert len(text.encode()) < 200 * ABORTED + 2000    # other tests' lines may come in meanwhile


def test_a_token_pasted_where_the_submission_id_goes_never_reaches_the_log(server):
    """Red team 13: `GET /api/submissions/<token>` wrote the token into the log in the request's
    path (the README promises "never a token"). Is every part of a path that is neither the
    API's own word nor a submission id written as its length?"""
    token = server.tokens["s35"]
    assert path_of(f"/api/submissions/{token}") == "/api/submissions/<32 chars>"
    assert path_of("/api/submissions/0123456789abcdef/feedback") == "/api/submissions/0123456789abcdef/feedback"
    since = server.log.stat().st_size
    for path in (f"/api/submissions/{token}", f"/api/submissions/{token}/feedback", f"/{token}",
                 f"/api/submissions/x{token}y"):
        assert server.request("GET", path, token).status == 404
    text = _logged(server, since, " 404 ", count=4)
    assert token not in text and token[:16] not in text, text[-2000:]
    assert "GET /api/submissions/<32 chars> 404 s35" in text, text[-2000:]

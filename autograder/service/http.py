"""uvicorn's HTTP/1.1 protocol with deadlines: a client holds a connection only while its
requests arrive at a reasonable pace, and nothing is read after the answer.

uvicorn waits for a request for ever, and after an early answer reads the rest of its body for
as long as bytes come. One client that held 256 connections (the service's limit) got every
student a 503 for as long as it liked: by sending half a request's headers on each, or headers
and then a body at a byte a second (each answered 401 at once, then held). Here, on every route:

- a request's line and headers must all arrive ``headers_s`` after the connection opened or
  after its last answer;
- its body must keep pace: ``t`` seconds after the headers, at least ``min_rate * (t - floor_s)``
  bytes have arrived (so a request of N bytes is in within ``floor_s + N / min_rate``), with
  never ``idle_s`` without a byte. While the service itself is not reading (the app behind:
  uvicorn pauses reading above 64 KiB unread), the clock stands still;
- an answer given before the body has all arrived (a 401, 413 or 429 from the headers) says
  ``Connection: close``, and the connection is closed after it: the rest is never read.

A connection that misses a deadline is closed, unanswered. An idle keep-alive connection is
closed by uvicorn itself (5 s); the intake answers 408 to an upload still arriving after 300 s.

And at the connection limit, a new connection takes the place of the one that has waited longest
for a request's headers (idle, or trickling them): one client reopening hundreds of connections as
the deadlines close them held every slot, and every student got a 503 (red team 3); now such
connections only push each other out, and a request that arrives whole is answered.
"""
import asyncio
from collections.abc import Callable

import h11
from uvicorn.protocols.http.flow_control import CLOSE_HEADER, FlowControl
from uvicorn.protocols.http.h11_impl import H11Protocol

HEADERS_S = 10.0     # request line and headers, from the connection's start or its last answer
IDLE_S = 10.0        # the longest silence in the middle of a request's body
FLOOR_S = 30.0       # a body's head start before it must keep up with MIN_RATE
MIN_RATE = 64 << 10  # bytes a second (0.5 Mbit/s): a 20 MB notebook is in within 30 + 320 s
RECHECK_S = 0.1      # a deadline is looked at again at most this often (its clock may stand still)
ROOM = 16            # connections kept free below the limit, for requests arriving meanwhile


class RequestsInTime(H11Protocol):
    """``headers_s``, ``idle_s``, ``floor_s`` and ``min_rate`` are class attributes, so that a
    subclass (a test's) can have shorter ones."""

    headers_s, idle_s, floor_s, min_rate = HEADERS_S, IDLE_S, FLOOR_S, MIN_RATE

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._app, self.app = self.app, self._closing_when_unread

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self.flow = PausedTime(transport, self.loop.time)  # before any request: every cycle gets this one
        self._due: asyncio.TimerHandle | None = None
        self._next_request()
        self._make_room()

    def on_response_complete(self) -> None:
        super().on_response_complete()  # may start a pipelined request
        self._next_request()

    def data_received(self, data: bytes) -> None:
        self._last_byte = self._clock()
        super().data_received(data)
        if self.conn.their_state is h11.SEND_BODY:
            self._received += len(data)  # with the headers' bytes of the first chunk: a little in the client's favour
            if self._body_since is None:
                self._body_since = self._last_byte
                self._arm()  # the body's deadlines may come before the headers' one

    def connection_lost(self, exc: Exception | None) -> None:
        self._due.cancel()
        super().connection_lost(exc)

    async def _closing_when_unread(self, scope, receive, send) -> None:
        """The app, answering ``Connection: close`` when the request's body has not all arrived
        (h11 then closes after the answer, and uvicorn with it)."""
        async def send_closing(message) -> None:
            if message["type"] == "http.response.start" and self.conn.their_state is h11.SEND_BODY:
                headers = list(message.get("headers", []))
                message = {**message, "headers": headers if CLOSE_HEADER in headers else [*headers, CLOSE_HEADER]}
            await send(message)
        await self._app(scope, receive, send_closing)

    def _clock(self) -> float:
        """Seconds that count against the client: not those in which the service was not reading."""
        return self.loop.time() - self.flow.paused_s()

    def _make_room(self) -> None:
        """Near the connection limit, close the connections that have waited longest for a
        request's line and headers (never one whose request is in, being answered)."""
        limit = self.limit_concurrency
        if limit is None or len(self.connections) < limit - ROOM:
            return
        waiting = sorted((c for c in self.connections if isinstance(c, RequestsInTime) and c is not self
                          and c.conn.their_state is h11.IDLE and not c.transport.is_closing()),
                         key=lambda c: c._waiting_since)
        for connection in waiting[:len(self.connections) - (limit - ROOM) + 1]:
            connection.transport.close()

    def _next_request(self) -> None:
        self._waiting_since = self.loop.time()
        self._since = self._last_byte = self._clock()
        self._body_since = self._since if self.conn.their_state is h11.SEND_BODY else None
        self._received = 0
        self._arm()

    def _arm(self) -> None:
        if self._due is not None:
            self._due.cancel()
        self._check()

    def _check(self) -> None:
        """Close the connection if its request is late; else look again when it next could be."""
        due = self._deadline()
        if due is None or self.transport.is_closing():
            return  # a whole request is in, the app answers it; the answer arms the next deadline
        left = due - self._clock()
        if left <= 0:
            self.transport.close()
        else:
            self._due = self.loop.call_later(max(left, RECHECK_S), self._check)

    def _deadline(self) -> float | None:
        """When the request under way is late, on ``_clock``; None while none is arriving."""
        state = self.conn.their_state
        if state is h11.IDLE:  # h11 waits there until the line and all headers are in
            return self._since + self.headers_s
        if state is h11.SEND_BODY and self._body_since is not None:
            return min(self._last_byte + self.idle_s, self._body_since + self.floor_s + self._received / self.min_rate)
        return None


class PausedTime(FlowControl):
    """uvicorn's flow control, adding up the seconds in which reading was paused."""

    def __init__(self, transport: asyncio.Transport, clock: Callable[[], float]):
        super().__init__(transport)
        self._clock, self._paused_at, self._paused_s = clock, 0.0, 0.0

    def pause_reading(self) -> None:
        if not self.read_paused:
            self._paused_at = self._clock()
        super().pause_reading()

    def resume_reading(self) -> None:
        if self.read_paused:
            self._paused_s += self._clock() - self._paused_at
        super().resume_reading()

    def paused_s(self) -> float:
        return self._paused_s + (self._clock() - self._paused_at if self.read_paused else 0.0)

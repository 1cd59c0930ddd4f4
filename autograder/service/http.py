"""uvicorn's HTTP/1.1 protocol with a deadline on each request's line and headers.

uvicorn waits for a request's headers for ever: one client that opened 256 connections (the
service's limit) and sent half a request on each got every student a 503 until it let go. Here
a connection whose request line and headers have not all arrived ``HEADERS_S`` after it opened,
or after its last response, is closed. A request's body has its own limit (the intake's
``slow_upload``), and an idle keep-alive connection uvicorn's own (5 s).
"""
import asyncio

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

HEADERS_S = 10.0


class HeadersInTime(H11Protocol):
    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._headers_due: asyncio.TimerHandle | None = None
        self._arm()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._arm()

    def _arm(self) -> None:
        """The next request's line and headers are due ``HEADERS_S`` from now."""
        if self._headers_due is not None:
            self._headers_due.cancel()
        self._headers_due = self.loop.call_later(HEADERS_S, self._headers_late)

    def connection_lost(self, exc: Exception | None) -> None:
        self._headers_due.cancel()
        super().connection_lost(exc)

    def _headers_late(self) -> None:
        """Still no whole request line and headers (h11 waits in IDLE until it has them all)."""
        if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
            self.transport.close()

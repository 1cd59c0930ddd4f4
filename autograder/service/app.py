"""The HTTP API of ``autograder serve`` (SPEC §5), a Starlette app.

Every answer but the two pages is JSON; every refusal is ``{"error": code, "reason": text}``
with the reason in grader.yml's language, never a traceback. A token is read from the
``Authorization: Bearer`` header only (one in the query string is ignored, and the log
never shows a query string). A submission that is not the token's student's answers
exactly as an unknown one. Each answer carries headers that keep it out of caches and
frames; the pages carry their own Content-Security-Policy.
"""
import json
import math
import secrets
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect, Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from .. import texts
from ..pages.markup import POLICY as FEEDBACK_POLICY
from ..results import text
from . import intake
from .assignments import Assignments
from .deadlines import Deadlines, shown
from .intake import Refusal, Refusals, Uploads
from .log import client_of, log, path_of, printable
from .loop import GradingLoop
from .outputs import Outputs
from .page import HEADER_POLICY as PAGE_POLICY
from .page import SCRIPT, students_page
from .queue import Queue, Refused
from .tokens import Tokens

if TYPE_CHECKING:
    from .exchange.poll import Exchange

UPLOADING_RETRY_S = 10  # a student's second upload while the first is still arriving
GONE = 499              # logged for an upload cut off mid-body (client gone or closed as late): nginx's code
HEADERS = {"X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer", "Cache-Control": "no-store",
           "X-Frame-Options": "DENY", "Content-Security-Policy": "default-src 'none'; frame-ancestors 'none'"}


@dataclass
class Service:
    """What the API works with: one assignment's queue, slots' loop and output folder."""
    assignment: str
    notebook: str
    language: str
    slots: int
    per_hour: int
    limit_bytes: int
    tokens: Tokens | None   # None: no uploads, the API serves /api/health only (an exchange's service)
    queue: Queue
    uploads: Uploads
    outputs: Outputs
    loop: GradingLoop
    assignments: Assignments = field(default_factory=Assignments)   # by default: every notebook is taken
    deadlines: Deadlines = field(default_factory=Deadlines)
    exchange: "Exchange | None" = None   # when the service also takes hand-ins from nbgrader's exchange


class Api:
    def __init__(self, service: Service):
        self.service = service
        self.page = students_page(service.assignment, service.notebook, service.per_hour, service.language,
                                  service.deadlines.default)
        self.receiving: set[str] = set()  # students whose upload is under way: one at a time each
        self.refusals = Refusals()        # uploads refused once read: a rate of their own

    def routes(self) -> list[Route]:
        if self.service.tokens is None:
            return [Route("/api/health", self.health)]
        return [Route("/", self.students_page), Route("/page.js", self.script),
                Route("/api/health", self.health),
                Route("/api/submissions", self.submit, methods=["POST"]),
                Route("/api/submissions/{id}", self.status),
                Route("/api/submissions/{id}/feedback", self.feedback)]

    def refuse(self, status: int, reason: str, headers: dict | None = None, body: dict | None = None,
               **params) -> JSONResponse:
        said = texts.render(text(f"service.error.{reason}", **params), self.service.language)
        return JSONResponse({"error": reason, "reason": said, **(body or {})}, status, headers=headers)

    def student(self, request: Request) -> str | None:
        """The student whose token the request bears (``Authorization: Bearer TOKEN``), or None."""
        scheme, _, token = request.headers.get("authorization", "").partition(" ")
        student = self.service.tokens.student_of(token.strip()) if scheme.lower() == "bearer" and token else None
        request.scope["student"] = student  # for the log line
        return student

    async def students_page(self, request: Request) -> Response:
        return HTMLResponse(self.page, headers={"Content-Security-Policy": PAGE_POLICY})

    async def script(self, request: Request) -> Response:
        return Response(SCRIPT, media_type="text/javascript")

    async def health(self, request: Request) -> Response:
        health = {"status": "ok", "assignment": self.service.assignment, "slots": self.service.slots,
                  "queued": self.service.queue.queued()}
        if self.service.exchange is not None:
            health["refused_handins"] = self.service.exchange.refused()
        return JSONResponse(health)

    async def submit(self, request: Request) -> Response:
        student = self.student(request)
        if student is None:
            return self.refuse(401, "unauthorized", ta=text("term.ta"))
        not_now = self._not_now(student)
        if not_now is not None:
            return not_now
        submission_id = secrets.token_hex(8)
        self.receiving.add(student)
        try:
            added = await self._receive(request, student, submission_id)
        except Refusal as refusal:
            self.refusals.add(student, time.time())
            return self.refuse(refusal.status, refusal.reason, **refusal.params)
        except ClientDisconnect:  # nobody is left to answer: the request's one log line says so, no traceback
            self.refusals.add(student, time.time())
            return Response(status_code=GONE)
        finally:
            self.receiving.discard(student)
        if isinstance(added, Refused):
            return self._too_many(added.retry_after_s)
        for replaced in added.replaced:
            self.service.uploads.remove(replaced)
        self.service.loop.poke()
        log.info("queued %s of %s%s", submission_id, printable(student),
                 f" (replacing {', '.join(added.replaced)})" if added.replaced else "")
        return JSONResponse({"id": submission_id, "status": "queued"}, 202)

    def _not_now(self, student: str) -> Response | None:
        """The refusal of an upload that may not be taken now (its body is not read), or None: 403
        after the student's deadline; 429 above a rate (accepted submissions, refused uploads) or
        while still uploading."""
        deadline = self.service.deadlines.passed(student, time.time())
        if deadline is not None:
            return self.refuse(403, "deadline_passed", body={"deadline": deadline.isoformat()},
                               deadline=shown(deadline))
        retry = self.service.queue.retry_after(student, self.service.per_hour, time.time())
        if retry is not None:
            return self._too_many(retry)
        if student in self.receiving:
            return self.refuse(429, "uploading", headers={"Retry-After": str(UPLOADING_RETRY_S)})
        retry = self.refusals.retry_after(student, time.time())
        if retry is not None:
            return self.refuse(429, "refused_rate", headers={"Retry-After": str(retry)},
                               limit=self.refusals.per_hour, minutes=math.ceil(retry / 60))
        return None

    async def _receive(self, request: Request, student: str, submission_id: str):
        """The upload on disk, checked and queued; nothing kept of it if it is refused."""
        uploads = self.service.uploads
        path = uploads.new(submission_id)
        try:
            await intake.receive(request, path, self.service.limit_bytes)
            found = await run_in_threadpool(intake.check_notebook, path, self.service.limit_bytes)
            other = self.service.assignments.other_of(found)
            if other is not None:
                raise Refusal(400, "wrong_assignment", other=other, assignment=self.service.assignment)
            added = await run_in_threadpool(self.service.queue.add, submission_id, student,
                                            self.service.per_hour, time.time())
        except BaseException:
            uploads.remove(submission_id)
            raise
        if isinstance(added, Refused):
            uploads.remove(submission_id)
        return added

    def _too_many(self, retry_after_s: int) -> JSONResponse:
        return self.refuse(429, "rate", headers={"Retry-After": str(retry_after_s)}, limit=self.service.per_hour,
                           minutes=math.ceil(retry_after_s / 60))

    async def status(self, request: Request) -> Response:
        row, refused = self._own(request)
        if refused is not None:
            return refused
        result = None
        if row.status == "done":
            kept = self.service.outputs.kept(row.student_id, row.id)
            result = json.loads(kept.read_text(encoding="utf-8")) if kept.is_file() else None
        return JSONResponse({"id": row.id, "status": row.status, "result": result})

    async def feedback(self, request: Request) -> Response:
        row, refused = self._own(request)
        if refused is not None:
            return refused
        if row.status == "replaced":  # never graded: a newer submission took its place
            return self.refuse(410, "replaced")
        if row.status != "done":
            return self.refuse(409, "not_graded")
        page = self.service.outputs.kept(row.student_id, row.id, ".html")
        if not page.is_file():
            return self.refuse(404, "not_found")
        return HTMLResponse(page.read_text(encoding="utf-8"), headers={"Content-Security-Policy": FEEDBACK_POLICY})

    def _own(self, request: Request):
        """The token's student's submission named in the path, or the refusal to answer."""
        student = self.student(request)
        if student is None:
            return None, self.refuse(401, "unauthorized", ta=text("term.ta"))
        row = self.service.queue.get(request.path_params["id"], student)
        return (row, None) if row is not None else (None, self.refuse(404, "not_found"))

    async def http_error(self, request: Request, error: HTTPException) -> Response:
        if error.status_code == 405:
            return self.refuse(405, "method", headers=error.headers, method=request.method[:20])
        return self.refuse(404, "no_route") if error.status_code == 404 else self.refuse(
            error.status_code, "internal", headers=error.headers)

    async def crashed(self, request: Request, error: Exception) -> Response:
        log.error("%s %s failed", request.method, path_of(request.url.path), exc_info=error)
        return self.refuse(500, "internal")


def make_app(service: Service, lifespan=None) -> Starlette:
    api = Api(service)
    app = Starlette(routes=api.routes(), lifespan=lifespan,
                    exception_handlers={HTTPException: api.http_error, Exception: api.crashed})
    return LogAndHeaders(app)


class LogAndHeaders:
    """ASGI middleware: the safety headers on every answer, and one log line per request
    (method, path without its query, status, student if the token was valid, seconds)."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        started, status = time.monotonic(), [0]

        async def send_with_headers(message):
            if message["type"] == "http.response.start":
                status[0] = message["status"]
                present = {name.lower() for name, _ in message.get("headers", [])}
                extra = [(name.lower().encode(), value.encode()) for name, value in HEADERS.items()
                         if name.lower().encode() not in present]
                message = {**message, "headers": [*message.get("headers", []), *extra]}
            await send(message)
        try:
            await self.app(scope, receive, send_with_headers)
        finally:
            log.info("%s %s %s %s %s %.3f s", client_of(scope), scope["method"], path_of(scope["path"]),
                     status[0], printable(scope.get("student") or "-"), time.monotonic() - started)


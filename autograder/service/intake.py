"""Receiving a notebook: the request's body, bounded while it is read, into a file.

The body streams through python-multipart's parser chunk by chunk; the field ``notebook``
goes straight to a file beside where it will stay, every other field is dropped. Reading
stops, and the request is refused, as soon as the bytes received pass ``max_notebook_mb``
(plus room for the form's own headers), or when the upload takes longer than
``UPLOAD_S``: a huge or endless body costs the service one chunk of memory and that many
bytes on disk, which are removed. The client's file name is never used.
"""
import asyncio
import collections
import contextlib
import math
import os
import threading
from dataclasses import dataclass
from pathlib import Path

from python_multipart.exceptions import FormParserError
from python_multipart.multipart import MultipartParser, parse_options_header

from ..submissions import reading

FORM_OVERHEAD = 64 << 10    # bytes of boundaries and part headers allowed beyond the notebook
UPLOAD_S = 300.0            # a 20 MB notebook over a slow link; then the upload is refused
FIELD = b"notebook"
PARSING = threading.BoundedSemaphore(2)  # notebooks checked at once
REFUSED_PER_HOUR = 20       # refused uploads per student and hour; then 429 until the oldest is an hour old


class Refusal(Exception):
    """Why an upload is refused: an HTTP status and the reason's text id (``service.error.*``)."""

    def __init__(self, status: int, reason: str, **params):
        super().__init__(reason)
        self.status, self.reason, self.params = status, reason, params


@dataclass
class _Part:
    name: bytes | None = None
    header_field: bytes = b""
    header_value: bytes = b""


class _Form:
    """python-multipart's callbacks: the ``notebook`` part into ``out``, its size counted."""

    def __init__(self, out, limit: int):
        self.out, self.limit = out, limit
        self.part, self.size, self.found, self.ended = _Part(), 0, 0, False

    def callbacks(self) -> dict:
        return {"on_part_begin": self._begin, "on_header_field": self._field, "on_header_value": self._value,
                "on_header_end": self._header_end, "on_headers_finished": self._headers_done,
                "on_part_data": self._data, "on_end": self._end}

    def _begin(self) -> None:
        self.part = _Part()

    def _field(self, data: bytes, start: int, end: int) -> None:
        self.part.header_field += data[start:end]

    def _value(self, data: bytes, start: int, end: int) -> None:
        self.part.header_value += data[start:end]

    def _header_end(self) -> None:
        if self.part.header_field.strip().lower() == b"content-disposition":
            self.part.name = parse_options_header(self.part.header_value)[1].get(b"name")
        self.part.header_field, self.part.header_value = b"", b""

    def _headers_done(self) -> None:
        if self.part.name == FIELD:
            self.found += 1

    def _data(self, data: bytes, start: int, end: int) -> None:
        if self.part.name != FIELD or self.found != 1:
            return
        self.size += end - start
        if self.size > self.limit:
            raise too_large(self.limit)
        self.out.write(data[start:end])

    def _end(self) -> None:
        self.ended = True


def boundary_of(content_type: str) -> bytes:
    kind, options = parse_options_header(content_type)
    boundary = options.get(b"boundary", b"")
    if kind != b"multipart/form-data" or not boundary or len(boundary) > 70:
        raise Refusal(400, "not_multipart")
    return boundary


async def receive(request, path: Path, limit: int) -> None:
    """Write the ``notebook`` field of ``request``'s multipart body to ``path`` (fsynced);
    ``Refusal`` when the body is too large, slow or malformed (the caller removes the file)."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit + FORM_OVERHEAD:
        raise too_large(limit)
    boundary = boundary_of(request.headers.get("content-type", ""))
    try:
        async with asyncio.timeout(UPLOAD_S):
            await _stream(request, path, boundary, limit)
    except TimeoutError:
        raise Refusal(408, "slow_upload", seconds=int(UPLOAD_S)) from None


def too_large(limit: int) -> Refusal:
    return Refusal(413, "too_large", limit=limit >> 20)


async def _stream(request, path: Path, boundary: bytes, limit: int) -> None:
    with path.open("wb") as out:
        form, received = _Form(out, limit), 0
        parser = MultipartParser(boundary, form.callbacks())
        async for chunk in request.stream():
            received += len(chunk)
            if received > limit + FORM_OVERHEAD:
                raise too_large(limit)
            try:
                parser.write(chunk)
            except FormParserError:
                raise Refusal(400, "malformed") from None
        if not form.ended:
            raise Refusal(400, "malformed")
        if form.found != 1:
            raise Refusal(400, "no_notebook")
        out.flush()
        os.fsync(out.fileno())


def check_notebook(path: Path, limit: int) -> set[str]:
    """A file that is not a notebook is refused here (400), before it is queued: JSON text in
    UTF-8 whose top level has a list of cells and an nbformat version. Read as the grader reads
    it (``reading.check_notebook``: streamed, what is kept bounded in characters and values, a top
    that is no map refused within a few kilobytes), never parsed whole in this process (red team
    13: 20 MB of tiny containers parsed whole took the service to 2.6 GB). Returns its cells'
    grade ids (``assignments``). The grader reads it again, fully, when it grades it."""
    try:
        with PARSING, path.open("rb") as handle:
            return reading.check_notebook(handle, limit)
    except reading.NotJSON:
        raise Refusal(400, "not_json") from None
    except reading.NotNotebook:
        raise Refusal(400, "not_notebook") from None
    except reading.TooLarge as why:
        if why.what == "values":
            raise Refusal(400, "too_many_values", limit=why.limit) from None
        raise too_large(limit) from None


class Refusals:
    """Each student's refused uploads over the last hour, a rate of their own (SPEC §3: an
    expensive refusal cannot be repeated without end; the accepted submissions' rate is the
    queue's). Kept in memory, at most ``per_hour`` times per student of the tokens file."""

    def __init__(self, per_hour: int = REFUSED_PER_HOUR, window_s: float = 3600.0):
        self.per_hour, self.window_s = per_hour, window_s
        self.times: dict[str, collections.deque] = {}

    def add(self, student: str, now: float) -> None:
        self.times.setdefault(student, collections.deque(maxlen=self.per_hour)).append(now)

    def retry_after(self, student: str, now: float) -> int | None:
        """Seconds until the student may upload again, or None when they may now."""
        times = self.times.get(student)
        if times is None or len(times) < self.per_hour or now - times[0] >= self.window_s:
            return None
        return max(1, math.ceil(times[0] + self.window_s - now))


class Uploads:
    """Where each submission's notebook lies: ``uploads/<submission id>/<the assignment's
    notebook name>`` (the student's own file name is never used). The student's latest graded
    one stays there for the TA; an earlier graded one, a replaced or a refused one is removed,
    so that a student holds at most three (graded, grading, queued) however often they hand in."""

    def __init__(self, root: Path, notebook: str):
        self.root, self.notebook = root, notebook
        root.mkdir(parents=True, exist_ok=True)

    def path(self, submission_id: str) -> Path:
        return self.root / submission_id / self.notebook

    def new(self, submission_id: str) -> Path:
        path = self.path(submission_id)
        path.parent.mkdir()
        return path

    def remove(self, submission_id: str) -> None:
        self.path(submission_id).unlink(missing_ok=True)
        with contextlib.suppress(OSError):
            (self.root / submission_id).rmdir()

    def prune(self, known: set[str]) -> None:
        """At start: uploads that no row names (the service died before answering 202)."""
        for folder in self.root.iterdir():
            if folder.name not in known:
                self.remove(folder.name)

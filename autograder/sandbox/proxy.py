"""The checks' side of the boundary: the student's functions and modules, called by name.

A ``Student`` turns calls into requests for a ``Runner`` and gives back plain values
(tensors, numbers, tuples, ``Handle``s). The transport is either in-process
(``local_student``, the nbgrader path) or a socket to a sandboxed worker; the checks
cannot tell the difference, and values are round-tripped through the same wire format
in both cases, so a tensor subclass never reaches a check.
"""
import time
from collections.abc import Callable

from . import protocol
from .protocol import Handle


# What a reply may bring into the grader, whatever the worker claims: its error's type
# name, message and location, and the printed output of a whole submission.
MAX_TYPE_NAME, MAX_MESSAGE, MAX_WHERE = 100, 500, 300


class StudentError(Exception):
    """The student's code raised; ``where`` is their cell and line, if known."""

    def __init__(self, type_name: str, message: str, where: str | None = None):
        super().__init__(type_name, message, where)  # args round-trip through pickle
        self.type_name, self.message, self.where = type_name, message, where

    def __str__(self) -> str:
        return f"{self.type_name}: {self.message}"


class WorkerLost(BaseException):
    """The student's process timed out or died. A BaseException so that hypothesis
    stops at once instead of shrinking against a dead worker. ``reason`` says why in
    English (logs, tests); ``why`` and ``params`` say it for the student's texts
    (``lost.<why>`` in autograder/texts)."""

    def __init__(self, reason: str, why: str = "lost", params: dict | None = None):
        super().__init__(reason, why, params)  # args round-trip through pickle
        self.reason, self.why, self.params = reason, why, dict(params or {})

    def __str__(self) -> str:
        return self.reason


Transport = Callable[[dict], dict]


class Student:
    """A submission as the checks see it. ``transport(request) -> reply`` carries the calls."""

    def __init__(self, transport: Transport, device: str = "cpu", output_limit: int = 65536):
        self.transport = transport
        self.device = device
        self.output_limit = output_limit
        self.printed: list[str] = []
        self.printed_size = 0
        self.requests, self.waited_s = 0, 0.0  # the checks' requests, and the time until their replies

    def request(self, op: str, **args):
        sent = time.perf_counter()
        reply = self.transport({"op": op, "args": args})
        self.requests, self.waited_s = self.requests + 1, self.waited_s + time.perf_counter() - sent
        self.keep_output(reply)
        if reply.get("error") is not None:
            raise error_of(reply["error"])
        return reply.get("value")

    def keep_output(self, reply: dict) -> None:
        """Keep what the student's code printed, up to ``output_limit`` characters in all."""
        printed = reply.get("stdout")
        if not isinstance(printed, str) or not printed:
            return
        room = self.output_limit - self.printed_size
        if room > 0:
            self.printed.append(printed[:room])
        self.printed_size += len(printed)

    def output(self) -> str:
        kept = "".join(self.printed)
        dropped = self.printed_size - len(kept)
        return kept + (f"\n[... {dropped} more characters not kept]" if dropped > 0 else "")

    def kind(self, name: str) -> str | None:
        """'class', 'function', 'other' or None when the notebook does not define ``name``."""
        return self.request("has", name=name)

    def bind_book_versions(self, names: list[str], source: str, context: tuple[str, ...] = ()) -> None:
        """Bind ``names`` to the book's versions, built in the worker from ``source`` (which
        builds on the notebook's ``context`` names: its course library's)."""
        self.request("bind", names=names, source=source, context=list(context))

    def rebase(self, name: str) -> bool:
        """Whether class ``name`` was defined again on the book's versions of its bases from
        other tasks (``Runner.op_rebase``); the worker's answer only decides whether to grade
        again, never a verdict."""
        return self.request("rebase", name=name) is True

    def unbind(self) -> None:
        self.request("unbind")

    def seed(self, seed: int) -> None:
        self.request("seed", seed=seed)

    def call(self, name: str, *args, **kwargs):
        return self.request("call", target=name, method=None, args=list(args), kwargs=kwargs)

    def call_watched(self, name: str, *args) -> dict:
        """``{"result": ..., "written_args": [indices of the tensor arguments it wrote into]}``."""
        reply = self.request("call_watched", target=name, args=list(args), kwargs={})
        if not isinstance(reply, dict) or not isinstance(reply.get("written_args"), list):
            raise StudentError("ProtocolError", "call_watched: malformed reply")
        return reply

    def new(self, name: str, *args, **kwargs) -> "RemoteModule":
        return RemoteModule(self, self.request("new", name=name, args=list(args), kwargs=kwargs))


class RemoteModule:
    """A student's ``nn.Module`` living on the other side of the boundary."""

    def __init__(self, student: Student, handle: Handle):
        self.student, self.handle = student, handle

    def __call__(self, *args, **kwargs):
        return self.method(None, *args, **kwargs)

    def method(self, name: str | None, *args, **kwargs):
        return self.student.request("call", target=self.handle, method=name,
                                    args=list(args), kwargs=kwargs)

    def seeded(self, seed: int, name: str | None, *args):
        """``method(name, *args)`` after ``Student.seed(seed)``, in one round trip."""
        return self.student.request("call", target=self.handle, method=name, args=list(args), kwargs={}, seed=seed)

    def attr(self, name: str):
        return self.student.request("getattr", target=self.handle, name=name)

    def load_parameters(self, values: dict) -> list[str]:
        return self.student.request("load_parameters", target=self.handle, values=values)

    def train(self, mode: bool = True) -> None:
        self.student.request("mode", target=self.handle, train=mode)

    def eval(self) -> None:
        self.train(False)

    def to(self, device: str | None = None, dtype: str | None = None) -> None:
        self.student.request("to", target=self.handle, device=device, dtype=dtype)


def error_of(error) -> StudentError:
    """A reply's error as a ``StudentError``, its texts capped whatever the worker claims."""
    if not isinstance(error, dict):
        return StudentError("Error", _capped(error, MAX_MESSAGE))
    return StudentError(_capped(error.get("type", "Error"), MAX_TYPE_NAME),
                        _capped(error.get("message", ""), MAX_MESSAGE),
                        _capped(error.get("where"), MAX_WHERE) if error.get("where") else None)


def outcome(step):
    """One step of a request that made several (``build``'s ``then``): its value, or the
    ``StudentError`` it raised, returned (not raised)."""
    if not isinstance(step, dict):
        return StudentError("ProtocolError", "malformed reply")
    return error_of(step["error"]) if step.get("error") is not None else step.get("value")


def _capped(value, limit: int) -> str:
    return str(value)[:limit]


def roundtrip(value, handle_of=None):
    """``value`` as it would arrive on the other side of a socket."""
    buffers: list[bytes] = []
    tree = protocol.encode(value, buffers, handle_of)
    return protocol.decode(tree, buffers)


def local_student(runner, device: str = "cpu") -> Student:
    """A ``Student`` answered in this process by ``runner`` (the plain nbgrader path)."""

    def transport(request: dict) -> dict:
        reply = runner.handle(roundtrip(request))
        try:
            return roundtrip(reply, runner.handle_of)
        except (TypeError, ValueError, RuntimeError) as error:
            return {"error": {"type": type(error).__name__, "message": str(error), "where": None}}

    return Student(transport, device)

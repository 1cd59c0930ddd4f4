"""The checks' side of the boundary: the student's functions and modules, called by name.

A ``Student`` turns calls into requests for a ``Runner`` and gives back plain values
(tensors, numbers, tuples, ``Handle``s). The transport is either in-process
(``local_student``, the nbgrader path) or a socket to a sandboxed worker; the checks
cannot tell the difference, and values are round-tripped through the same wire format
in both cases, so a tensor subclass never reaches a check.
"""
from collections.abc import Callable

from . import protocol
from .protocol import Handle


class StudentError(Exception):
    """The student's code raised; ``where`` is their cell and line, if known."""

    def __init__(self, type_name: str, message: str, where: str | None = None):
        super().__init__(f"{type_name}: {message}")
        self.type_name, self.message, self.where = type_name, message, where


class WorkerLost(BaseException):
    """The student's process timed out or died. A BaseException so that hypothesis
    stops at once instead of shrinking against a dead worker."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


Transport = Callable[[dict], dict]


class Student:
    """A submission as the checks see it. ``transport(request) -> reply`` carries the calls."""

    def __init__(self, transport: Transport, device: str = "cpu"):
        self.transport = transport
        self.device = device
        self.printed: list[str] = []

    def request(self, op: str, **args):
        reply = self.transport({"op": op, "args": args})
        if reply.get("stdout"):
            self.printed.append(reply["stdout"])
        if "error" in reply:
            error = reply["error"]
            raise StudentError(error.get("type", "Error"), error.get("message", ""), error.get("where"))
        return reply.get("value")

    def kind(self, name: str) -> str | None:
        """'class', 'function', 'other' or None when the notebook does not define ``name``."""
        return self.request("has", name=name)

    def bind_book_versions(self, names: list[str]) -> None:
        self.request("bind", names=names)

    def unbind(self) -> None:
        self.request("unbind")

    def seed(self, seed: int) -> None:
        self.request("seed", seed=seed)

    def call(self, name: str, *args, **kwargs):
        return self.request("call", target=name, method=None, args=list(args), kwargs=kwargs)

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

    def attr(self, name: str):
        return self.student.request("getattr", target=self.handle, name=name)

    def parameters(self) -> dict:
        """{name: [shape, dtype] or None for an uninitialised lazy parameter}."""
        return self.student.request("parameters", target=self.handle)

    def load_parameters(self, values: dict) -> list[str]:
        return self.student.request("load_parameters", target=self.handle, values=values)

    def train(self, mode: bool = True) -> None:
        self.student.request("mode", target=self.handle, train=mode)

    def eval(self) -> None:
        self.train(False)

    def to(self, device: str | None = None, dtype: str | None = None) -> None:
        self.student.request("to", target=self.handle, device=device, dtype=dtype)


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

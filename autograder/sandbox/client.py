"""The one client of the worker (STYLE §17): the student's functions and modules, called by name.

A ``Student`` turns calls into requests for a ``Runner`` and gives back plain values
(tensors, numbers, tuples, ``Handle``s). The transport is either in-process
(``local_student``, the nbgrader path) or a socket to a sandboxed worker; the checks
cannot tell the difference, and values are round-tripped through the same wire format
in both cases, so a tensor subclass never reaches a check.

Every request is built here and every reply is checked here, for its form, before a check
reads it: a reply of another form is the worker's failure (``malformed``), never the
grader's. The checks call methods; they never assemble a request.
"""
import time
from collections.abc import Callable
from typing import NamedTuple

from . import protocol
from .protocol import Handle


# What an error in a reply may bring into the grader, whatever the worker claims: its type
# name, message and location (the worker's transport caps the printed output, per submission).
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


def malformed(op: str) -> StudentError:
    """A reply to ``op`` that is not of the form the runner answers with."""
    return StudentError("ProtocolError", f"{op}: malformed reply" if op else "malformed reply")


class Built(NamedTuple):
    """``Student.build``'s answer."""
    module: "RemoteModule"
    missing: list[str]      # parameter names the module does not have
    then: dict              # the ``then`` calls' results and attributes read (``then_reply`` reads them)
    gradients: object       # the ``gradients`` reply, or the ``StudentError`` it raised; None when not asked


class Student:
    """A submission as the checks see it. ``transport(request) -> reply`` carries the calls."""

    def __init__(self, transport: Transport, device: str = "cpu"):
        self.transport = transport
        self.device = device
        self.printed: list[str] = []
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
        """Keep what the student's code printed (the transport took it from the submission's
        budget: ``worker.OutputBudget``)."""
        printed = reply.get("stdout")
        if isinstance(printed, str) and printed:
            self.printed.append(printed)

    def output(self) -> str:
        return "".join(self.printed)

    def kind(self, name: str) -> str | None:
        """'class', 'function', 'other' or None when the notebook does not define ``name``."""
        return self.request("has", name=name)

    def bind_book_versions(self, names: list[str], source: str, context: tuple[str, ...] = (),
                           own: str | None = None) -> None:
        """Bind ``names`` to the book's versions, built in the worker from ``source`` (which
        builds on the notebook's ``context`` names: its course library's); a name that the
        solution cell defining ``own`` bound itself keeps that cell's definition instead."""
        self.request("bind", names=names, source=source, context=list(context), own=own)

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
            raise malformed("call_watched")
        return reply

    def call_elsewhere(self, target, method: str | None, args: list, modules: list,
                       seed: int | None = None) -> tuple[object, list[str]]:
        """The call on the emulated device (after ``seed(seed)``, with ``seed``), with the
        ``modules`` moved there first: its result (on the CPU) and its tensors' devices."""
        reply = self.request("call_elsewhere", target=target, method=method, args=args, kwargs={},
                             modules=modules, seed=seed)
        if not isinstance(reply, dict) or not isinstance(reply.get("devices"), list):
            raise malformed("call_elsewhere")
        return reply.get("result"), [str(d) for d in reply["devices"]]

    def build(self, name: str, args: list, kwargs: dict, calls: list, parameters: dict, dtype: str | None,
              device: str | None, seed: int, then: list | None = None, read: list | None = None,
              train: bool = False, gradients: dict | None = None, twice: bool = False) -> Built:
        """The runner's ``build``: the student's module ``name(*args, **kwargs)`` from the random
        state ``seed``, eval mode (train mode with ``train``), lazily initialised by ``calls``,
        with ``parameters`` copied by name, in ``dtype`` on ``device``; with ``then``, those
        calls made on it (the last one again with the same arguments, with ``twice``) and the
        attributes ``read`` after them; with ``gradients`` (``gradients_request``), that
        request on it too, all in one round trip."""
        reply = self.request("build", name=name, args=args, kwargs=kwargs, calls=calls, parameters=parameters,
                             dtype=dtype, device=device, seed=seed, then=then, read=read, train=train,
                             gradients=gradients, twice=twice)
        if not isinstance(reply, dict) or not isinstance(reply.get("handle"), Handle) \
                or not isinstance(reply.get("missing"), list) or not isinstance(reply.get("then", {}), dict) \
                or (gradients is not None and not isinstance(reply.get("gradients"), dict)):
            raise malformed("build")
        grads = outcome(reply["gradients"]) if gradients is not None else None
        return Built(RemoteModule(self, reply["handle"]), [str(m) for m in reply["missing"]], reply.get("then", {}),
                     grads)

    def run_cell(self, label: str, source: str, defines: str | None, until: float | None = None) -> dict:
        """One notebook cell run in the worker (``defines``: the name a solution cell defines);
        the reply as the transport gives it, its printed output kept. Not counted among the
        checks' requests."""
        request = {"op": "exec", "args": {"label": label, "source": source, "defines": defines}}
        reply = self.transport(request) if until is None else self.transport(request, until=until)
        self.keep_output(reply)
        if reply.get("error") is not None:
            reply["error"] = error_fields(reply["error"])
        return reply

    def settle(self) -> list:
        """The runner's ``settle``: each task's name bound again to what its solution cell
        defined; the names a later cell had defined again, with that cell, as the worker claims
        them (the caller keeps only known names and cells)."""
        reply = self.transport({"op": "settle", "args": {}})
        found = reply.get("value") if isinstance(reply, dict) else None
        return found if isinstance(found, list) else []

    def calls_kept(self, target, calls: list, read: list[str] = (), grad: bool = True) -> dict:
        """The runner's ``calls_kept`` on a module's handle or a function's name: ``calls`` made
        one after another (each ``[train, args]``), the attributes ``read`` after each (under
        ``torch.no_grad()`` without ``grad``): ``{"at_call": [...], "after": [...]}``, one
        ``[result, {name: value}]`` per call each, and ``"written"``: per call, the positions of
        the argument tensors it wrote into."""
        reply = self.request("calls_kept", target=target, calls=calls, read=list(read), grad=grad)
        if not isinstance(reply, dict) or not all(
                isinstance(reply.get(key), list) and len(reply[key]) == len(calls)
                and all(isinstance(step, list) and len(step) == 2 and isinstance(step[1], dict) for step in reply[key])
                for key in ("at_call", "after")) or not (
                isinstance(reply.get("written"), list) and len(reply["written"]) == len(calls)
                and all(isinstance(w, list) and all(type(i) is int for i in w) for w in reply["written"])):
            raise malformed("calls_kept")
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

    def calls_kept(self, calls: list, read: list[str] = (), grad: bool = True) -> dict:
        """``Student.calls_kept`` on this module."""
        return self.student.calls_kept(self.handle, calls, read, grad)

    def perturbed(self, calls: list, first_item: bool, inputs: list, parameters: list) -> dict:
        """The runner's ``perturbed``: the output of ``calls`` with each input shift of ``inputs``
        and each parameter shift of ``parameters`` (``{name: delta}``) applied in turn."""
        reply = self.student.request("perturbed", target=self.handle, calls=calls, first_item=first_item,
                                     inputs=inputs, parameters=parameters)
        if not isinstance(reply, dict) or not isinstance(reply.get("inputs"), list) \
                or not isinstance(reply.get("parameters"), list):
            raise malformed("perturbed")
        return reply


def gradients_request(calls: list, cotangent, first_item: bool = True) -> dict:
    """``build``'s ``gradients`` argument: the gradients of the module's output after ``calls``
    (the last call's result, or its first item with ``first_item``: a decoder's logits; an
    attention module returns one tensor, and a tuple is no output) for ``cotangent``."""
    return {"calls": calls, "cotangent": cotangent, "first_item": first_item}


def gradients_reply(reply) -> dict:
    """The ``gradients`` reply (output, input gradients (flattened), parameter gradients);
    the student's error raised."""
    if isinstance(reply, StudentError):
        raise reply
    if not isinstance(reply, dict) or not isinstance(reply.get("parameters"), dict) \
            or not isinstance(reply.get("inputs"), list):
        raise malformed("gradients")
    return reply


def then_reply(then: dict, calls: int, names: list[str]) -> tuple[list | StudentError, dict]:
    """``build``'s results of its ``then`` calls (a list of ``calls`` values, or the
    ``StudentError`` one raised) and the attributes read after them (name -> value or
    ``StudentError``; none when a call raised)."""
    results, read = outcome(then.get("results")), then.get("read")
    if not isinstance(read, dict) or not isinstance(results, (list, StudentError)) or (
            isinstance(results, list) and len(results) != calls):
        raise malformed("build")
    if isinstance(results, StudentError):
        return results, {}
    return results, {name: outcome(read.get(name)) for name in names}


def error_of(error) -> StudentError:
    """A reply's error as a ``StudentError``, its texts capped whatever the worker claims."""
    fields = error_fields(error)
    return StudentError(fields["type"], fields["message"], fields["where"])


def error_fields(error) -> dict:
    """A reply's error as ``{"type", "message", "where"}``, each text capped (the one place)."""
    if not isinstance(error, dict):
        return {"type": "Error", "message": _capped(error, MAX_MESSAGE), "where": None}
    return {"type": _capped(error.get("type") or "Error", MAX_TYPE_NAME),
            "message": _capped(error.get("message") or "", MAX_MESSAGE),
            "where": _capped(error.get("where"), MAX_WHERE) if error.get("where") else None}


def outcome(step):
    """One step of a request that made several (``build``'s ``then``): its value, or the
    ``StudentError`` it raised, returned (not raised)."""
    if not isinstance(step, dict):
        return malformed("")
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

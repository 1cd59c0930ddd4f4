"""The worker side of the boundary: runs a notebook's cells, then answers calls with plain data.

``Runner.handle(request)`` is the whole interface. The same class serves the sandboxed
worker process (over a socket, ``serve``) and the plain nbgrader path (in the
student's kernel, through ``LocalStudent``), so both paths see the same behaviour.

Requests are dicts with an ``op``; replies are ``{"value": ...}`` or
``{"error": {"type", "message", "where"}}`` where ``where`` names the student's cell and
line. Student output is captured per request, capped, and returned as ``stdout``.
"""
import ast
import contextlib
import io
import itertools
import linecache
import sys
import traceback
import types

import torch
from torch import nn
from torch.utils._pytree import tree_flatten, tree_map

from . import protocol, set_up_torch, vector_jacobian
from .elsewhere import OtherDevice, back_to_cpu
from .protocol import Handle

CELL_PREFIX = "<cell "
class ParameterShapeMismatch(Exception):
    """A parameter of the student's module whose shape is not the reference's: the message is
    ``name (shape) reference (shape)``, for ``checks.core.raised`` to word."""


UNDEFINED = object()  # a name bound while another task is checked that the namespace did not hold


class CappedWriter(io.TextIOBase):
    """A stdout replacement that keeps the first ``limit`` characters and counts the rest."""

    def __init__(self, limit: int):
        self.limit, self.parts, self.size = limit, [], 0

    def writable(self) -> bool:
        return True

    def write(self, text) -> int:
        text = str(text)
        room = self.limit - self.size
        if room > 0:
            self.parts.append(text[:room])
        self.size += len(text)
        return len(text)

    def take(self) -> str:
        kept = "".join(self.parts)
        dropped = self.size - len(kept)
        self.parts, self.size = [], 0
        return kept + (f"\n[... {dropped} more characters not kept]" if dropped > 0 else "")


def student_error(error: BaseException) -> dict:
    """The error as the student should see it: type, message, and their own cell and line."""
    where = None
    for frame in traceback.extract_tb(error.__traceback__):
        if frame.filename.startswith(CELL_PREFIX):
            where = f"{frame.filename[len(CELL_PREFIX):-1]}, line {frame.lineno}: {(frame.line or '').strip()}"
    message = str(error).strip().splitlines()[0][:500] if str(error).strip() else ""
    return {"type": type(error).__name__, "message": message, "where": where}


class Runner:
    """Holds the student's namespace and the objects made in it; answers requests."""

    def __init__(self, output_limit: int = 65536):
        set_up_torch()
        self.namespace: dict = {"__name__": "__main__", "__builtins__": __builtins__}
        self.objects: dict[int, object] = {}
        self.saved_bindings: dict[str, object] = {}
        self.task_definitions: dict[str, object] = {}  # a task's name as its solution cell left it
        self.cell_bindings: dict[str, dict] = {}       # such a name -> every name its solution cell bound
        self.redefined: dict[str, str] = {}            # such a name -> the later cell that rebound it
        self.output = CappedWriter(output_limit)

    def use_namespace(self, namespace: dict) -> None:
        """Answer calls on the names of an existing namespace (a live kernel's globals)."""
        self.namespace = namespace

    def handle_of(self, obj) -> Handle | None:
        """Modules, and tuples of the student's own types (a namedtuple state), stay here."""
        if isinstance(obj, nn.Module) or (isinstance(obj, tuple) and type(obj) is not tuple):
            self.objects[id(obj)] = obj
            return Handle(id(obj))
        return None

    def handle(self, request: dict) -> dict:
        """Answer one request; never raises for anything the student's code does."""
        saved_stdout = sys.stdout
        sys.stdout = self.output
        try:
            reply = {"value": getattr(self, "op_" + request["op"])(**request.get("args", {}))}
        except Exception as error:  # the student's error, reported, never re-raised
            reply = {"error": student_error(error)}
        except BaseException as error:  # SystemExit/KeyboardInterrupt from student code
            reply = {"error": student_error(error)}
        finally:
            sys.stdout = saved_stdout
        reply["stdout"] = self.output.take()
        return reply

    # --- operations -------------------------------------------------------------------
    def op_exec(self, label: str, source: str, defines: str | None = None):
        """Run one notebook cell in the namespace (like a kernel: SystemExit does not stop us).
        ``defines``: the cell is that task's solution cell, and what the name is bound to when it
        ends (raising or not) is the task's definition, as nbgrader's test cell right after it
        sees it; a later cell that binds a task's name again is noted (``op_settle``)."""
        filename = f"{CELL_PREFIX}{label}>"
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
        before = dict(self.namespace) if defines is not None else {}
        try:
            exec(compile(source, filename, "exec"), self.namespace)  # noqa: S102 - student code, sandboxed
        finally:
            for name, value in self.task_definitions.items():
                if name != defines and name not in self.redefined and self.namespace.get(name, UNDEFINED) is not value:
                    self.redefined[name] = label
            if defines is not None:
                self.task_definitions[defines] = self.namespace.get(defines, UNDEFINED)
                self.cell_bindings[defines] = {name: value for name, value in self.namespace.items()
                                               if before.get(name, UNDEFINED) is not value}

    def op_settle(self) -> list[list[str]]:
        """After the last cell: each task's name bound again to its solution cell's definition
        (SPEC §1: that cell defines it); returns ``[name, label]`` for each name a later cell
        had bound to something else."""
        for name, value in self.task_definitions.items():
            if value is UNDEFINED:
                self.namespace.pop(name, None)
            else:
                self.namespace[name] = value
        return [[name, label] for name, label in self.redefined.items()]

    def op_has(self, name: str) -> str | None:
        """The kind of the name in the namespace: 'function', 'class', 'other' or None.
        Asks ``type()``, never ``isinstance``: an object can make ``__class__`` run code."""
        if name not in self.namespace:
            return None
        kind = type(self.namespace[name])
        return "class" if issubclass(kind, type) else "function" if callable(self.namespace[name]) else "other"

    def op_bind(self, names: list[str], source: str, context: list[str] = (), own: str | None = None):
        """While another task is checked, these names point at the book's published code,
        built afresh from ``source``: the book without the task being graded, so that its
        answer is nowhere in this process while the student's version is checked. A name the
        student's cell left undefined (a syntax error, a deleted cell) is bound too: that
        mistake costs its own task's points, not those of every task that calls the name.
        The book's decoder builds on the notebook's ``context`` names (its course library's);
        where the student's cells replaced them so that it cannot be built, what the book
        defined before it is bound, and it is not. A name that the solution cell of the task
        being checked (the one defining ``own``) bound itself is that task's own code (a copy of
        an earlier function pasted into the cell): it points at what that cell left, as
        nbgrader's test right after the cell sees it (``own_definitions``)."""
        self.op_unbind()
        book = types.ModuleType("book")
        book.__dict__.update({name: self.namespace[name] for name in context if name in self.namespace})
        with contextlib.suppress(Exception):  # on the student's library: bind what was built
            exec(compile(source, "<book>", "exec"), book.__dict__)  # noqa: S102 - the TA's code
        kept = {}
        with contextlib.suppress(Exception):  # the student's objects, looked at: at worst none is the cell's
            kept = self.own_definitions(own) if own is not None else {}
        for name in names:
            if name in kept or hasattr(book, name):
                self.saved_bindings[name] = self.namespace.get(name, UNDEFINED)
                self.namespace[name] = kept[name] if name in kept else getattr(book, name)

    def own_definitions(self, own: str) -> dict:
        """The names the solution cell that defines ``own`` bound, as that cell left them: recorded
        when the cell ran here (``op_exec``), or, in a kernel's namespace (the nbgrader path), the
        names whose code comes from the cell that ``own``'s does. The bases of ``own``'s class are
        left out: a copy of another task's class defined again beside the subclass is graded on
        the book's version too (``op_rebase``)."""
        found = self.cell_bindings.get(own)
        if found is None:
            cell = _cells_of(self.namespace.get(own))
            found = {name: value for name, value in self.namespace.items() if cell and _cells_of(value) & cell}
        task_class = found.get(own, self.namespace.get(own))
        bases = task_class.__mro__[1:] if issubclass(type(task_class), type) else ()
        return {name: value for name, value in found.items()
                if name != own and not any(value is base for base in bases)}

    def op_rebase(self, name: str) -> bool:
        """While another task's names point at the book (``op_bind``), define the class ``name``
        again from its own source, so that a base class it took from another task's cell
        (``class LSTMAttentionDecoder(Seq2SeqAttentionDecoder)``) is now the book's: one
        mistake, in the base, is then charged in the base's task only. A base counts as another
        task's when it bears a bound name and is not the book's: the one in that task's cell, or a
        copy of it defined again beside the subclass (which nbgrader's test of this task, right
        after this cell, would see under that name). False, and nothing run, when the class has
        no such base or its source is not found; ``op_unbind`` restores it."""
        cls = self.namespace.get(name)
        if not isinstance(cls, type) or not any(
                base.__name__ in self.saved_bindings and base is not self.namespace.get(base.__name__)
                for base in cls.__mro__[1:]):
            return False
        found = class_source(cls, name)
        if found is None:
            return False
        filename, source = found
        self.saved_bindings[name] = cls
        exec(compile(source, filename, "exec"), self.namespace)  # noqa: S102 - student code, sandboxed
        return True

    def op_unbind(self):
        for name, value in self.saved_bindings.items():
            if value is UNDEFINED:
                self.namespace.pop(name, None)
            else:
                self.namespace[name] = value
        self.saved_bindings = {}

    def op_seed(self, seed: int):
        """``torch.manual_seed`` for the devices a grading run uses: the CPU's generator and,
        on a GPU runner, CUDA's. (``torch.manual_seed`` itself also queues a CUDA seeding with
        its stack trace on a machine without CUDA: a millisecond per call in the worker.)"""
        torch.random.default_generator.manual_seed(seed)
        if torch.cuda.is_available():
            torch.cuda.manual_seed_all(seed)

    def op_new(self, name: str, args: list, kwargs: dict):
        """Instantiate the student's class ``name``; returns a handle to the module."""
        obj = self.namespace[name](*self._in(args), **self._in(kwargs))
        if not isinstance(obj, nn.Module):
            raise TypeError(f"{name}(...) made a {type(obj).__name__}, not an nn.Module")
        return self.handle_of(obj)

    def op_call(self, target, method: str | None, args: list, kwargs: dict, seed: int | None = None):
        """Call a function by name, or a module (its ``__call__`` or a named method); with
        ``seed``, after ``op_seed(seed)`` (a call in train mode, whose dropout draws)."""
        if seed is not None:
            self.op_seed(seed)
        obj = self._target(target)
        func = obj if method is None else getattr(obj, method)
        return func(*self._in(args), **self._in(kwargs))

    def op_call_watched(self, target, args: list, kwargs: dict) -> dict:
        """Like ``call``, and also reports which tensor arguments the call wrote into."""
        args, kwargs = self._in(args), self._in(kwargs)
        before = [a.clone() if isinstance(a, torch.Tensor) else None for a in args]
        result = self._target(target)(*args, **kwargs)
        written = [i for i, (a, b) in enumerate(zip(args, before))
                   if b is not None and not torch.equal(a, b)]
        return {"result": result, "written_args": written}

    def op_calls_kept(self, target, calls: list, read: list[str], grad: bool = True) -> dict:
        """Calls on one module (or one function: then ``train`` is ignored) in turn, as the book's
        own code makes them: each ``[train, args]`` sets the mode, then calls (an argument
        ``{"permute": dims, "of": tensor}`` is that tensor permuted: non-contiguous, as the
        decoders pass ``enc_outputs.permute(1, 0, 2)``).
        A call ``[train, args, method]`` calls that method instead (a decoder's ``init_state``),
        and ``{"result_of": i, "item": k}`` is item k (or all, for None) of the i-th call's result (the state a
        decoder returned, carried to its next call as the book's ``predict_step`` does);
        ``{"overwrite": [i, j], "with": tensor}`` is the i-th call's argument j with these values
        written into it in place (a training loop's reused input buffer).
        Returns each call's result and attributes ``read`` twice: copied as the call left them
        (``at_call``), and as they stand after the last call (``after``, not copied), so what a
        later call changed in an earlier result (a returned view of a buffer, a list cleared
        in place) comes back changed. The grader compares both with its own computation.
        ``written`` lists, per call, the positions (in ``tree_flatten`` order) of the tensors in
        its arguments whose values the call changed (a decoder's state given back to it included).
        Without ``grad`` the calls run under ``torch.no_grad()``, as ``predict_step`` runs them."""
        target = self._target(target)
        module = target if isinstance(target, nn.Module) else None
        at_call, after, results, given, written = [], [], [], [], []
        with torch.set_grad_enabled(bool(grad)):
            for train, args, *method in calls:
                if module is not None:
                    module.train(bool(train))
                func = getattr(target, method[0]) if method and method[0] else target
                given.append([self._argument(a, results, given) for a in args])
                leaves = tree_flatten(given[-1])[0]
                before = [t.detach().clone() if isinstance(t, torch.Tensor) else None for t in leaves]
                result = func(*given[-1])
                results.append(result)
                written.append([i for i, (t, b) in enumerate(zip(leaves, before)) if b is not None and _changed(t, b)])
                attributes = {name: getattr(target, name, None) for name in read}
                after.append([result, attributes])
                at_call.append(tree_map(lambda t: t.detach().clone() if isinstance(t, torch.Tensor) else t,
                                        [result, attributes]))
        return {"at_call": at_call, "after": after, "written": written}

    def _argument(self, value, results: list, given: list):
        if isinstance(value, dict) and set(value) == {"overwrite", "with"}:
            call, index = value["overwrite"]
            with torch.no_grad():
                return given[call][index].copy_(self._in(value["with"]))
        if isinstance(value, dict) and set(value) == {"permute", "of"}:
            return self._in(value["of"]).permute(*value["permute"])
        if isinstance(value, dict) and set(value) == {"result_of", "item"}:
            result = results[value["result_of"]]
            return result if value["item"] is None else result[value["item"]]
        return self._in(value)

    def op_call_elsewhere(self, target, method: str | None, args: list, kwargs: dict, modules: list,
                          seed: int | None = None) -> dict:
        """Like ``call`` (``seed`` too), with every tensor argument and the ``modules``' parameters
        on an emulated other device (``elsewhere.py``: CUDA's same-device rule, values readable).
        Returns the result on the CPU and the device type of each of its tensors, in order;
        the grader judges them."""
        if seed is not None:
            self.op_seed(seed)
        obj = self._target(target)
        func = obj if method is None else getattr(obj, method)
        with OtherDevice() as other:
            for module in modules:
                other.move_module(self._in(module))
            result = func(*other.move(self._in(args)), **other.move(self._in(kwargs)))
            value, devices = back_to_cpu(result)
        return {"result": value, "devices": devices}

    def op_gradients(self, target, calls: list, cotangent, first_item: bool = True) -> dict:
        """Gradients of ``(output * cotangent).sum()`` with respect to every floating-point
        tensor in the calls' arguments and to every parameter of the module ``target``.

        ``calls`` is ``[[method or None, args], ...]`` on the module, in order; an argument
        ``{"result_of": i}`` is the i-th call's result (a decoder's ``init_state`` then
        ``forward``). The output is the last call's result, or, with ``first_item``, its first
        item when it is a tuple or list (a decoder's logits). Returns the output and the
        gradients (None where none flows); the grader compares them with the reference's.
        """
        module, leaves = self._target(target), []

        def leaf(value):
            if isinstance(value, torch.Tensor) and value.is_floating_point():
                value = value.detach().requires_grad_()
                leaves.append(value)
            return value
        results = self._run_calls(module, calls, leaf)
        output = results[-1][0] if first_item and isinstance(results[-1], (tuple, list)) else results[-1]
        params = [(name, p) for name, p in module.named_parameters() if p.requires_grad]
        wrt = leaves + [p for _, p in params]
        if isinstance(output, torch.Tensor) and output.requires_grad:
            grads = vector_jacobian(output, wrt, cotangent)
        else:  # nothing flows back (a detached output)
            grads = [None] * len(wrt)
        return {"output": output.detach() if isinstance(output, torch.Tensor) else output,
                "inputs": list(grads[:len(leaves)]),
                "parameters": {name: g for (name, _), g in zip(params, grads[len(leaves):], strict=True)}}

    def op_perturbed(self, target, calls: list, inputs: list, parameters: list, first_item: bool = True) -> dict:
        """The output of ``calls`` (as in ``gradients``, the same output), then again with one
        thing shifted at a time: the i-th floating-point argument tensor plus each delta in
        ``inputs[i]`` (None: not shifted), and the module's parameters plus each ``{name:
        delta}`` in ``parameters`` (put back exactly after each run). Returns the outputs
        (``{"output", "inputs": [[...] or None], "parameters": [...]}``); the grader takes the
        finite differences of them and compares them with the student's gradients."""
        module = self._target(target)

        def output(shift_input: int | None = None, delta=None):
            counter = itertools.count()

            def leaf(value):
                if isinstance(value, torch.Tensor) and value.is_floating_point() and next(counter) == shift_input:
                    return value + self._in(delta)
                return value
            result = self._run_calls(module, calls, leaf)[-1]
            result = result[0] if first_item and isinstance(result, (tuple, list)) else result
            return result.detach().clone() if isinstance(result, torch.Tensor) else result

        def shifted(deltas: dict):
            params = dict(module.named_parameters())
            saved = {name: params[name].detach().clone() for name in deltas}
            try:
                with torch.no_grad():
                    for name, delta in deltas.items():
                        params[name].add_(self._in(delta))
                return output()
            finally:
                with torch.no_grad():
                    for name, value in saved.items():
                        params[name].copy_(value)
        return {"output": output(),
                "inputs": [None if deltas is None else [output(i, d) for d in deltas]
                           for i, deltas in enumerate(inputs)],
                "parameters": [shifted(deltas) for deltas in parameters]}

    def op_build(self, name: str, args: list, kwargs: dict, calls: list, parameters: dict,
                 dtype: str | None = None, device: str | None = None, seed: int | None = None,
                 then: list | None = None, read: list | None = None, train: bool = False,
                 gradients: dict | None = None, twice: bool = False) -> dict:
        """What the checks do before each example, in one round trip: ``new`` (after seeding the
        CPU generator, where modules initialise, with ``seed``), eval mode, the lazy-initialising
        ``calls`` (as in ``gradients``), the parameters copied by name, then ``to(device,
        dtype)``, and train mode with ``train``. Returns the module's handle and the parameter
        names not found; when ``then`` is given, what ``_then`` returns for those calls (the last
        one made ``twice``, with ``twice``) and the attributes ``read``; when ``gradients``
        (``op_gradients``'s arguments) is given, that request's reply (``{"value": ...}`` or
        ``{"error": ...}``), made after ``then``."""
        if seed is not None:
            torch.random.default_generator.manual_seed(seed)
        handle = self.op_new(name, args, kwargs)
        module = self.objects[handle.id]
        module.eval()
        self._run_calls(module, calls)
        missing = self.op_load_parameters(handle, parameters)
        if dtype is not None or device is not None:
            self.op_to(handle, device=device, dtype=dtype)
        if train:
            module.train()
        built = {"handle": handle, "missing": missing}
        if then:
            built["then"] = self._then(module, then, read or [], twice)
        if gradients is not None:
            built["gradients"] = _answered(lambda: self.op_gradients(handle, **gradients))
        return built

    def _then(self, module, calls: list, names: list[str], twice: bool = False) -> dict:
        """``calls`` on the built module (as in ``_run_calls``), then its attributes ``names``:
        ``{"results": ..., "read": {name: ...}}``, each ``{"value": ...}`` or ``{"error": ...}``
        (what it raised), as separate requests would have answered; when a call raises,
        nothing more runs. With ``twice`` the last call is made again with the very same
        argument objects, its first result copied first: SPEC §2, a module does not write into
        what it is given (a decoder's state too), so the grader finds the two results equal."""
        def run() -> list:
            given: list = []
            results = self._run_calls(module, calls, given=given)
            if twice:
                results[-1] = tree_map(lambda t: t.detach().clone() if isinstance(t, torch.Tensor) else t,
                                       results[-1])
                method = calls[-1][0]
                results.append((module if method is None else getattr(module, method))(*given[-1]))
            return results
        results = _answered(run)
        if "error" in results:
            return {"results": results, "read": {}}
        read = {name: _answered(lambda name=name: getattr(module, name)) for name in names}
        return {"results": results, "read": read}

    def _run_calls(self, module, calls: list, leaf=None, given: list | None = None) -> list:
        """``[[method or None, args], ...]`` on ``module``; ``{"result_of": i}`` is the i-th result.
        ``given`` (a list) receives each call's argument objects."""
        results = []
        for method, args in calls:
            args = [results[a["result_of"]] if isinstance(a, dict) and "result_of" in a
                    else tree_map(leaf, self._in(a)) if leaf else self._in(a) for a in args]
            if given is not None:  # the argument objects, for a call made again (_then)
                given.append(args)
            results.append((module if method is None else getattr(module, method))(*args))
        return results

    def op_getattr(self, target, name: str):
        return getattr(self._target(target), name)

    def op_load_parameters(self, target, values: dict) -> list[str]:
        """Copy tensors into the parameters of the same names; returns the names not found.
        A parameter of another shape than the reference's raises ``ParameterShapeMismatch``
        naming it and both shapes (the grader words it for the student)."""
        params = dict(self._target(target).named_parameters())
        missing = [name for name in values if name not in params]
        with torch.no_grad():
            for name, value in values.items():
                if name in params:
                    if tuple(params[name].shape) != tuple(value.shape):
                        raise ParameterShapeMismatch(
                            f"{name} {tuple(params[name].shape)} reference {tuple(value.shape)}")
                    params[name].copy_(value)
        return missing

    def op_mode(self, target, train: bool):
        self._target(target).train(train)

    def op_to(self, target, device: str | None = None, dtype: str | None = None):
        module = self._target(target)
        module.to(device=device, dtype=protocol.DTYPES[dtype] if dtype else None)

    def _target(self, target):
        if isinstance(target, Handle):
            return self.objects[target.id]
        return self.namespace[target]

    def _in(self, value):
        """Handles in the arguments become the worker's objects again."""
        if isinstance(value, Handle):
            return self.objects[value.id]
        if isinstance(value, (list, tuple)):
            return type(value)(self._in(item) for item in value)
        if isinstance(value, dict):
            return {key: self._in(item) for key, item in value.items()}
        return value


def _changed(now: torch.Tensor, before: torch.Tensor) -> bool:
    """Whether a tensor's values differ from its copy taken before a call (NaN equals NaN)."""
    now = now.detach()
    if now.shape != before.shape or now.dtype != before.dtype:
        return True
    same = (now == before) | (now.isnan() & before.isnan()) if now.is_floating_point() else now == before
    return not bool(same.all())


def _answered(step) -> dict:
    """One step of a request that makes several: ``{"value": step()}``, or ``{"error": ...}``
    for what it raised, as ``Runner.handle`` answers a request of its own."""
    try:
        return {"value": step()}
    except BaseException as error:  # the student's, reported, never re-raised
        return {"error": student_error(error)}


def serve(sock, runner: Runner) -> None:
    """Answer requests on ``sock`` until the peer closes it."""
    while True:
        try:
            request = protocol.recv(sock)
        except EOFError:
            return
        reply = runner.handle(request)
        try:
            protocol.send(sock, reply, runner.handle_of)
        except (TypeError, ValueError, RuntimeError) as error:  # a returned value that cannot be sent
            protocol.send(sock, {"error": student_error(error), "stdout": reply.get("stdout", "")})


def _cells_of(value) -> set[str]:
    """The cells (code file names) a function's or a class's methods were defined in."""
    if type(value) is types.FunctionType:
        return {value.__code__.co_filename}
    if issubclass(type(value), type):  # type(), never isinstance: an object can make __class__ run code
        return {f.__code__.co_filename for f in vars(value).values() if type(f) is types.FunctionType}
    return set()


def class_source(cls: type, name: str) -> tuple[str, str] | None:
    """The cell that defined ``cls`` (found through its methods' code) and, from it, the last
    top-level ``class name`` statement, at its own line numbers; None when not found."""
    filenames = {f.__code__.co_filename for f in vars(cls).values() if hasattr(f, "__code__")}
    for filename in sorted(filenames):
        lines = linecache.getlines(filename)
        try:
            tree = ast.parse("".join(lines))
        except (SyntaxError, ValueError):
            continue
        defined = [node for node in tree.body if isinstance(node, ast.ClassDef) and node.name == name]
        if defined:
            node = defined[-1]
            start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            return filename, "\n" * (start - 1) + "".join(lines[start - 1:node.end_lineno])
    return None

"""Device portability (SPEC §3): the same code must work when its inputs are not on the CPU.

A CPU-only runner cannot run CUDA, so each probe input is run twice: on the CPU, and on
an emulated other device (``sandbox/elsewhere.py``: CUDA's same-device rule, with values
still readable, so code that calls ``.tolist()`` or ``.item()`` is judged like any other).
The check fails when the code works on the CPU but, on the other device, raises a device
error (or any error), returns a tensor left on the CPU, or returns another structure,
shape or dtype than on the CPU. Values are not compared (SPEC §3: a wrong value is
charged by the other checks, not again here; blind corpus 7: a mask cached by shape was
stale on the CPU and fresh on the other device, and the device was blamed). A probe that
raises on the CPU already is not judged here (the other checks charge it); code that runs
on the CPU for none of the probes fails, as there is nothing that runs anywhere.

The emulated device decides every probe; ``meta`` is not run. It could only add a verdict
where the emulation passed and meta found a device error or a CPU result, and in the
mutation suite, the sandboxed sample and two blind corpora (516 variants) it added none,
while it cost a third of the decoders' device check (torch's meta kernels for RNNs run
in Python).
"""
import re
from collections.abc import Callable
from dataclasses import dataclass

from torch import Tensor
from torch.utils._pytree import tree_flatten

from ..results import message_text, text
from ..sandbox.client import StudentError
from .compare import kind_of
from .core import CheckBlocked, fail, where_text
from .inputs import Case

DEVICE_ERROR = re.compile(r"device", re.IGNORECASE)
GPU_NAME = re.compile(r"\blazy\b", re.IGNORECASE)  # the emulated device's name (elsewhere.py), a GPU to the student
WHAT = text("what.runs on any device")
OTHER = "\n# ...with every tensor above on another device (a GPU: .to('cuda'))"


@dataclass(frozen=True)
class Probe:
    """One input, and how to run the student's code on it: ``cpu(case)`` returns the result;
    ``elsewhere(case)`` returns (result, device type of each tensor in it) from the emulated
    device."""
    case: Case
    note: str                                   # which path it takes, shown under the code
    cpu: Callable[[Case], object]
    elsewhere: Callable[[Case], tuple[object, list[str]]]
    module: bool = True                         # one module, called on the CPU first (what it keeps stays there)


def judge(probes: list[Probe], shape_check: str, retry: list[Probe] = ()) -> None:
    """Run every probe; raise the first failure. When none runs on the CPU, the ``retry`` probes
    are judged instead (other sizes: code with a shape mistake may run where the sizes agree,
    and only a device error is this check's to charge); when none of those runs either, it
    fails. Not judged (blocked by ``shape_check``, the task's check of what a call returns) when
    what runs returns no tensor on the CPU: a list or an object has no device to be on."""
    first_error, ran, tensors = None, False, False
    for probe in probes:
        try:
            expected = probe.cpu(probe.case)
        except StudentError as error:
            first_error = first_error or error
            continue
        ran = True
        if not any(isinstance(leaf, Tensor) for leaf in tree_flatten(expected)[0]):
            continue
        tensors = True
        _judge_one(probe, expected)
    if not ran and retry:
        return judge(list(retry), shape_check)
    if not ran and first_error is not None:
        raise fail(text("devices.runs_nowhere", type=first_error.type_name,
                        message=message_text(first_error.message, "check.aside")),
                   case_code=probes[0].case.code())
    if ran and not tensors:
        raise CheckBlocked(shape_check)


def _judge_one(probe: Probe, expected) -> None:
    code = f"{probe.case.code()}{OTHER}\n# {probe.note}"
    try:
        got, devices = probe.elsewhere(probe.case)
    except StudentError as error:
        _raise_for(error, code, probe.module)
    if "cpu" in devices:
        raise fail(text("devices.result_on_cpu"), case_code=code, expected="cuda", got="cpu")
    if not _same(got, expected):
        raise fail(text("devices.differs"), case_code=code, expected=_summary(expected), got=_summary(got))


def _raise_for(error: StudentError, code: str, module: bool):
    where = where_text(error.where)
    message = GPU_NAME.sub(lambda found: "CUDA" if found[0][0] == "L" else "cuda", error.message)
    if DEVICE_ERROR.search(message):
        problem = text("devices.mixes_in_module" if module else "devices.mixes", where=where)
        raise fail(problem, case_code=code, got=f"{error.type_name}: {message}") from None
    raise fail(text("devices.raises_elsewhere", type=error.type_name, message=message_text(message),
                    where=where),
               case_code=code) from None


def _same(got, expected) -> bool:
    """Same structure, shapes and dtypes as on the CPU."""
    got_leaves, got_spec = tree_flatten(got)
    expected_leaves, expected_spec = tree_flatten(expected)
    if got_spec != expected_spec:
        return False
    for a, b in zip(got_leaves, expected_leaves, strict=True):
        if isinstance(a, Tensor) != isinstance(b, Tensor):
            return False
        if not isinstance(a, Tensor):
            continue
        if a.shape != b.shape or a.dtype != b.dtype:
            return False
    return True


def _summary(value):
    """The first few things the result holds: each tensor's shape and dtype, the rest in words."""
    leaves = [text("kind.typed_tensor", shape=str(tuple(t.shape)), dtype=str(t.dtype).removeprefix("torch."))
              if isinstance(t, Tensor) else kind_of(t) for t in tree_flatten(value)[0][:4]]
    return text("kind.several", items=leaves)

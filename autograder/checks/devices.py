"""Device portability: run the student's code on the ``meta`` device (SPEC §3).

Torch refuses to mix a meta tensor with a CPU one, so code that creates a tensor
without ``device=`` fails here as it would on a GPU, even on a CPU-only runner.
Only a device-mismatch error fails the check; any other error on meta (``.item()``
has no value there) leaves it undecided.
"""
import re
from collections.abc import Callable

from ..results import text
from ..sandbox.proxy import StudentError
from .core import Undecided, fail
from .inputs import Case

DEVICE_MISMATCH = re.compile(r"device", re.IGNORECASE)

WHAT = text("what.runs on any device")
MOVED = "\n# ...with every tensor above moved to device='meta' (.to('meta'))"
# On meta, "Cannot copy out of meta tensor" comes from reading values out (.tolist(),
# .cpu(): fine on a GPU) or from writing into a tensor made on the CPU (a buffer created
# without device=: wrong on a GPU). The student's failing line tells which.
COPY_OUT = "Cannot copy out of meta tensor"
READS_VALUES = re.compile(r"\.(tolist|cpu|numpy|item)\(|\b(int|float|bool|list)\(")


def _copies_into_cpu_tensor(error: StudentError) -> bool:
    return COPY_OUT in error.message and error.where is not None and not READS_VALUES.search(error.where)


UNDECIDED = text("devices.undecided")


def on_meta(call: Callable[[Case], object], case: Case, expected_shape: tuple) -> None:
    """Call with ``case`` moved to meta; fail on a device mismatch or a wrong output shape.

    The code must first work on the CPU: "undecided" is for code that runs, not code
    that raises everywhere."""
    call(case)  # a StudentError here fails the check as any error does
    meta_case = case.on("meta")
    try:
        got = call(meta_case)
    except StudentError as error:
        if not (DEVICE_MISMATCH.search(error.message) or _copies_into_cpu_tensor(error)):
            raise Undecided(UNDECIDED) from None
        where = text("check.where", where=error.where) if error.where else ""
        raise fail(text("devices.mixes", where=where), case_code=case.code() + MOVED) from None
    if getattr(got, "device", None) is not None and got.device.type != "meta":
        raise fail(text("devices.result_on_cpu"), case_code=case.code() + MOVED,
                   expected="meta", got=got.device.type)
    if getattr(got, "shape", None) is not None and tuple(got.shape) != tuple(expected_shape):
        raise fail(text("devices.wrong_shape"), expected=str(tuple(expected_shape)), got=str(tuple(got.shape)))

"""What crosses the boundary comes back as it went: every dtype, shape and layout of tensor,
as a plain tensor with the same values, on the device type it left from."""
from collections import namedtuple

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from autograder.sandbox import protocol
from autograder.sandbox.runner import Runner


class Marked(torch.Tensor):
    """A tensor subclass, as a student's code may return one."""


def round_trip(value):
    buffers: list[bytes] = []
    tree = protocol.encode(value, buffers)
    return protocol.decode(tree, buffers)


@settings(max_examples=60, deadline=None)
@given(dtype=st.sampled_from(list(protocol.DTYPES.values())),
       shape=st.lists(st.integers(0, 4), max_size=3),
       transpose=st.booleans(),
       kind=st.sampled_from(["plain", "subclass", "parameter", "with_grad"]))
def test_a_tensor_comes_back_with_its_dtype_shape_and_values(dtype, shape, transpose, kind):
    value = (torch.arange(torch.Size(shape).numel()) % 3).reshape(shape).to(dtype)
    if transpose and value.dim() >= 2:
        value = value.transpose(0, 1)  # not contiguous
    if kind == "subclass":
        value = value.as_subclass(Marked)
    elif kind in ("parameter", "with_grad") and dtype.is_floating_point:
        value = torch.nn.Parameter(value) if kind == "parameter" else torch.nn.Parameter(value) * 1
    back = round_trip(value)
    assert type(back) is torch.Tensor and not back.requires_grad
    assert back.dtype == dtype and back.shape == value.shape
    assert torch.equal(back, value.detach().as_subclass(torch.Tensor))


def test_a_meta_tensor_comes_back_as_an_opaque_value_naming_it():
    """No check sends or asks for a meta tensor: one in a reply is the student's (it has no
    values to compare; the checks once failed on it as if the grader had)."""
    back = round_trip({"x": (torch.empty(2, 3, device="meta"),)})
    assert back["x"][0] == protocol.Opaque("tensor on the meta device, of shape (2, 3)")


def test_a_tensor_of_a_dtype_that_does_not_cross_is_opaque():
    assert round_trip(torch.zeros(2, dtype=torch.complex64)) == protocol.Opaque("tensor of complex64, torch.strided")


def frame(body, buffers: list[bytes]) -> bytes:
    """A message as a peer could write it, whatever its tree says."""
    import json
    import struct
    header = json.dumps({"body": body, "sizes": [len(b) for b in buffers]}).encode()
    return b"".join([struct.pack(">Q", len(header)), header, *buffers])


def test_one_buffer_named_by_many_tensor_headers_is_refused_before_it_is_copied():
    """A reply that names one 1 MB buffer in a thousand headers would decode to a gigabyte:
    it is a malformed message, refused at the second name, not decoded."""
    import socket
    import threading

    import pytest
    data = bytes(1 << 20)
    header = {"__tensor__": 0, "dtype": "uint8", "shape": [1 << 20]}

    def received(message: bytes):
        ours, theirs = socket.socketpair()
        with ours, theirs:
            sender = threading.Thread(target=theirs.sendall, args=(message,))
            sender.start()
            try:
                return protocol.recv(ours)
            finally:
                sender.join()
    with pytest.raises(protocol.ProtocolError, match="named twice"):
        received(frame([header] * 1000, [data]))
    assert received(frame([header], [data]))[0].shape == (1 << 20,)  # named once: a tensor as usual


def test_a_buffer_index_beyond_the_buffers_is_refused():
    import pytest
    with pytest.raises(protocol.ProtocolError):
        protocol.decode({"__tensor__": 3, "dtype": "uint8", "shape": [0]}, [b""])


def test_a_students_namedtuple_comes_as_its_items_and_goes_back_as_itself():
    """A namedtuple state (h, c): the grader reads its items as a pair, and what it passes back
    is the worker's own object again (so the student's ``state.h`` still works)."""
    State = namedtuple("State", ["h", "c"])
    runner = Runner()
    state = State(torch.ones(1, 2), torch.zeros(1, 2))
    buffers: list[bytes] = []
    seen = protocol.decode(protocol.encode((state, 3), buffers, runner.handle_of), buffers)[0]
    assert isinstance(seen, tuple) and len(seen) == 2 and torch.equal(seen[0], state.h)
    back: list[bytes] = []
    assert runner._in(protocol.decode(protocol.encode([seen], back), back))[0] is state


def test_a_named_tuple_without_its_items_is_malformed():
    with pytest.raises(protocol.ProtocolError):
        protocol.decode({"__named__": 0, "items": "many"}, [])

"""The boundary's wire format: JSON for structure, raw bytes for tensors, never pickle.

A value crossing the boundary is None, a bool, int, float or str, a list, tuple or
str-keyed dict of such values, a tensor, or a ``Handle`` to an object that stays in the
worker (a student's own tuple type, a namedtuple, comes as ``Named``: its items and a
handle). Anything else is sent as ``Opaque(type name)``. Reading a message never runs
code: tensors are rebuilt with ``torch.frombuffer`` after their size is checked.

Frame: 8-byte big-endian header length, the JSON header ``{"body": ..., "sizes": [...]}``,
then one raw buffer per tensor.
"""
import json
import socket
import struct
from dataclasses import dataclass

import numpy
import torch

DTYPES = {name: getattr(torch, name) for name in (
    "float16", "bfloat16", "float32", "float64", "int8", "int16", "int32", "int64",
    "uint8", "bool")}
NAMES = {dtype: name for name, dtype in DTYPES.items()}
NUMPY = {dtype: numpy.dtype(name) for name, dtype in DTYPES.items() if name != "bfloat16"}
MAX_HEADER_BYTES = 16 << 20
MAX_MESSAGE_BYTES = 1 << 30


class ProtocolError(Exception):
    """The peer sent something that is not a valid message."""


@dataclass(frozen=True)
class Handle:
    """An object (a student's module) that lives in the worker, named by a number."""
    id: int


@dataclass(frozen=True)
class Opaque:
    """A value of a type that does not cross the boundary; only its type name does."""
    type_name: str


class Named(tuple):
    """A tuple of one of the student's own tuple types (a namedtuple ``(h, c)`` state), as the
    grader sees it: its items, and the handle to the worker's own object, which is what the
    worker gets back when the grader passes the value on (the student's ``state.h`` works)."""
    handle: Handle

    @staticmethod
    def of(items, handle: Handle) -> "Named":
        named = Named(items)
        named.handle = handle
        return named


def _plain_tensor(value: torch.Tensor) -> tuple[torch.Tensor, str]:
    """The tensor's data as a plain, detached, contiguous CPU (or meta) tensor, and the
    type of the device it was on. Subclass overrides are bypassed."""
    if type(value) is torch.Tensor:  # nothing to bypass: the common case, three times faster
        if value.is_cpu:  # the commonest: asks nothing of the device object
            plain = value.detach() if value.requires_grad else value
            return plain.contiguous(), "cpu"
        plain = value.detach()
        device_type = plain.device.type
        return (plain if device_type == "meta" else plain.cpu().contiguous()), device_type
    with torch._C.DisableTorchFunctionSubclass():
        plain = torch.Tensor.detach(value)
        device_type = plain.device.type
        if device_type != "meta":
            plain = plain.cpu().contiguous()
        return plain.as_subclass(torch.Tensor), device_type


_PLAIN = {type(None), bool, int, float, str}  # sent as they are


def encode(value, buffers: list[bytes], handle_of=None):
    """``value`` as a JSON-able tree; tensor bytes are appended to ``buffers``.

    ``handle_of(obj)`` (worker side) may turn an object into a ``Handle``; otherwise
    unknown objects become ``Opaque``.
    """
    kind = type(value)  # the exact types first: most of what crosses is these
    if kind in _PLAIN:
        return value
    if kind is torch.Tensor:
        return _encode_tensor(value, buffers)
    if kind is list or kind is tuple or kind is dict:
        return _encode_container(value, buffers, handle_of)
    return _encode_other(value, buffers, handle_of)


def _encode_container(value, buffers: list[bytes], handle_of):
    """A list, a tuple, or a dict with string keys (any other dict is opaque)."""
    if type(value) is dict:
        if not all(type(key) is str for key in value):
            return {"__opaque__": "dict"}
        return {"__dict__": [[key, encode(item, buffers, handle_of)] for key, item in value.items()]}
    items = [encode(item, buffers, handle_of) for item in value]
    return items if type(value) is list else {"__tuple__": items}


def _encode_other(value, buffers: list[bytes], handle_of):
    """Subclasses of the types above, handles, and what stays in the worker or is opaque."""
    if isinstance(value, str):
        return value
    if isinstance(value, torch.Tensor):
        return _encode_tensor(value, buffers)
    if isinstance(value, Handle) or type(value) is Named:  # Named: the grader passing a worker's tuple back
        return {"__handle__": (value if isinstance(value, Handle) else value.handle).id}
    handle = handle_of(value) if handle_of is not None else None
    if handle is None:
        return {"__opaque__": type(value).__name__[:100]}
    if issubclass(type(value), tuple):  # a namedtuple: its items too
        items = [encode(tuple.__getitem__(value, i), buffers, handle_of) for i in range(tuple.__len__(value))]
        return {"__named__": handle.id, "items": items}
    return {"__handle__": handle.id}


def _encode_tensor(value: torch.Tensor, buffers: list[bytes]) -> dict:
    plain, device_type = _plain_tensor(value)
    dtype = NAMES.get(plain.dtype)
    if dtype is None or plain.layout != torch.strided:
        return {"__opaque__": f"tensor of {str(plain.dtype).removeprefix('torch.')}, {plain.layout}"}
    if device_type == "meta":
        return {"__tensor__": None, "dtype": dtype, "shape": list(plain.shape), "device": device_type}
    buffers.append(data_bytes(plain))
    return {"__tensor__": len(buffers) - 1, "dtype": dtype, "shape": list(plain.shape), "device": device_type}


def data_bytes(plain: torch.Tensor) -> bytes:
    """The bytes of a contiguous CPU tensor, in order."""
    # numpy has no bfloat16: its bytes go as uint8, which every dtype could (3x slower)
    raw = plain.reshape(-1).view(torch.uint8) if plain.dtype == torch.bfloat16 else plain
    return raw.numpy().tobytes()


def decode(tree, buffers: list[bytes]):
    """Rebuild a value from ``encode``'s tree; tensors land on the device they were sent from.

    Each buffer is one tensor's and is named once: a tree that names one buffer in many
    tensor headers (a few megabytes received, gigabytes decoded) is malformed, so what a
    message decodes to is never larger than what was received."""
    return _Decoder(buffers).value(tree)


class _Decoder:
    def __init__(self, buffers: list[bytes]):
        self.buffers, self.used = buffers, set()

    def value(self, tree):
        kind = type(tree)  # a parsed JSON tree holds these exact types
        if kind is list:
            return [self.value(item) for item in tree]
        if kind is not dict:
            return tree
        if "__tensor__" in tree:
            return self._tensor(tree)
        if "__tuple__" in tree:
            return tuple(self.value(item) for item in tree["__tuple__"])
        if "__dict__" in tree:
            return {str(key): self.value(item) for key, item in tree["__dict__"]}
        if "__handle__" in tree or "__named__" in tree:
            return self._handle(tree)
        if "__opaque__" in tree:
            return Opaque(str(tree["__opaque__"]))
        raise ProtocolError(f"unknown value {sorted(tree)[:3]}")

    def _handle(self, tree: dict) -> Handle | Named:
        if "__handle__" in tree:
            return Handle(_index(tree["__handle__"], "handle"))
        if not isinstance(tree.get("items"), list):
            raise ProtocolError("a named tuple without its items")
        return Named.of([self.value(item) for item in tree["items"]], Handle(_index(tree["__named__"], "handle")))

    def _tensor(self, tree: dict) -> torch.Tensor:
        dtype = DTYPES.get(tree.get("dtype"))
        shape = tree.get("shape")
        if dtype is None or not isinstance(shape, list):
            raise ProtocolError(f"bad tensor header {tree!r:.200}")
        if not all(type(n) is int and n >= 0 for n in shape):
            shape = [_index(n, "dimension") for n in shape]  # raises, naming the bad one
        if tree["__tensor__"] is None:  # a meta tensor: no data, and nothing asks for one
            return Opaque(f"tensor on the meta device, of shape {tuple(shape)}"[:100])
        index = _index(tree["__tensor__"], "buffer index")
        if index in self.used or index >= len(self.buffers):
            raise ProtocolError(f"buffer {index} named twice or missing")
        self.used.add(index)
        data = self.buffers[index]
        numel = 1
        for n in shape:
            numel *= n
        if numel * dtype.itemsize != len(data):
            raise ProtocolError(f"tensor of shape {shape} and {tree['dtype']} does not match {len(data)} bytes")
        if dtype in NUMPY:  # a writable copy of the bytes, read in place: twice as fast as frombuffer's
            value = torch.from_numpy(numpy.frombuffer(bytearray(data), dtype=NUMPY[dtype]).reshape(shape))
        else:  # bfloat16, which numpy has not
            flat = torch.frombuffer(bytearray(data), dtype=dtype) if data else torch.empty(0, dtype=dtype)
            value = flat.reshape(shape)
        return value.to("cuda") if tree.get("device") == "cuda" else value


def _index(value, what: str) -> int:
    """A non-negative int, exactly (not a float, not a bool, not Infinity)."""
    if type(value) is not int or value < 0:
        raise ProtocolError(f"{what} {value!r:.50} is not a non-negative integer")
    return value


def send(sock: socket.socket, value, handle_of=None) -> None:
    """Send one message holding ``value``, in one ``sendall`` (one system call for a small one)."""
    sock.sendall(dumps(value, handle_of))


def dumps(value, handle_of=None) -> bytes:
    """One message holding ``value``, as ``send`` writes it (and ``loads`` reads it)."""
    buffers: list[bytes] = []
    body = encode(value, buffers, handle_of)
    header = json.dumps({"body": body, "sizes": [len(b) for b in buffers]}).encode()
    return b"".join([struct.pack(">Q", len(header)), header, *buffers])


def loads(data: bytes):
    """The value of one whole message (``dumps``); raises ``ProtocolError`` on anything else,
    bytes left over included."""
    reader = _Bytes(data)
    value = _read(reader)
    if reader.offset != len(data):
        raise ProtocolError(f"{len(data) - reader.offset} bytes after the message")
    return value


class _Bytes:
    """``_Reader``'s ``exactly`` over bytes already in hand."""

    def __init__(self, data: bytes):
        self.data, self.offset = data, 0

    def exactly(self, size: int) -> bytes:
        if self.offset + size > len(self.data):
            raise EOFError("the message ends early")
        taken = self.data[self.offset:self.offset + size]
        self.offset += size
        return taken


class _Reader:
    """One message's bytes: each ``recv`` takes what has arrived (a small message in one
    system call), up to what the message still needs; nothing beyond it is asked for."""
    CHUNK = 1 << 16

    def __init__(self, sock: socket.socket):
        self.sock, self.pending = sock, bytearray()

    def exactly(self, size: int) -> bytes:
        while len(self.pending) < size:
            chunk = self.sock.recv(min(max(size - len(self.pending), self.CHUNK), 1 << 20))
            if not chunk:
                raise EOFError("the peer closed the connection")
            self.pending += chunk
        taken = bytes(self.pending[:size])
        del self.pending[:size]
        return taken


def recv(sock: socket.socket):
    """Receive one message; raises ``EOFError`` when the peer is gone, ``ProtocolError`` if malformed."""
    return _read(_Reader(sock))


def _read(reader):
    (header_size,) = struct.unpack(">Q", reader.exactly(8))
    if header_size > MAX_HEADER_BYTES:
        raise ProtocolError(f"header of {header_size} bytes")
    try:
        header = json.loads(reader.exactly(header_size))
        sizes = [_index(n, "buffer size") for n in header["sizes"]]
    except (ValueError, KeyError, TypeError, RecursionError) as error:
        raise ProtocolError(f"unreadable header: {error}") from None
    if any(n < 0 for n in sizes) or sum(sizes) > MAX_MESSAGE_BYTES:
        raise ProtocolError("message too large")
    buffers = [reader.exactly(n) for n in sizes]
    try:
        return decode(header["body"], buffers)
    except ProtocolError:
        raise
    except Exception as error:  # whatever the peer sent, a malformed message is only that
        raise ProtocolError(f"undecodable message: {type(error).__name__}: {error}"[:300]) from None

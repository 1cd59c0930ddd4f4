"""Another device, emulated on the CPU: CUDA's same-device rule, with values still readable.

The device check (SPEC §3) must judge code that reads values (``.tolist()``, ``.item()``,
fine on a GPU), which the ``meta`` device cannot run. Here every tensor of a call is
wrapped in ``Elsewhere``, a tensor that says it lives on the ``lazy`` device (a device
type torch knows on every build and that no student code special-cases) while its data
stays on the CPU. Every operation is checked as CUDA would check it:

- tensors on the other device may meet CPU tensors only when those are 0-dim (CPU
  scalars), or as the indices of an indexing operation, as on CUDA;
- copies between devices are allowed (``.to``, ``.cpu()``, ``copy_``, ``buf[i] = x``);
- a tensor created with ``device=X.device`` (or ``*_like``, ``new_*``) is on the other
  device; one created without ``device=`` is on the CPU;
- ``.numpy()`` of a tensor on the other device raises, as on CUDA.

A breach raises CUDA's own message ("Expected all tensors to be on the same device ...").
No verdict is computed here: the worker answers with the result's values and the device
each tensor of it was on, and the grader compares them with its own computation.
"""
import contextlib
import functools

import torch
from torch import nn
from torch.overrides import TorchFunctionMode
from torch.utils._python_dispatch import TorchDispatchMode, return_and_correct_aliasing
from torch.utils._pytree import tree_map

LABEL = "lazy"
DEVICE = torch.device(LABEL)
# Operations that move data between devices, or read it: allowed across devices.
CROSSING = {"_to_copy", "copy_", "_copy_from", "_copy_from_and_resize", "_local_scalar_dense",
            "is_same_size", "_has_compatible_shallow_copy_type", "is_nonzero", "set_"}
INDEXING = {"index", "index_put", "index_put_", "_index_put_impl_", "_unsafe_index", "_unsafe_index_put"}
# Factories that build their data on the host and move it afterwards, below the dispatcher.
FROM_DATA = {torch.tensor, torch.as_tensor, torch.asarray}


class _DeviceModule:
    """``torch.lazy``: what device-generic torch code (``torch.utils.checkpoint``'s saving of
    the random state) looks up for a tensor's device type, answered for the emulated device,
    whose random state is the CPU's."""
    device = staticmethod(lambda index=None: contextlib.nullcontext())
    get_rng_state = staticmethod(torch.get_rng_state)
    set_rng_state = staticmethod(torch.set_rng_state)
    is_available = staticmethod(lambda: True)
    device_count = staticmethod(lambda: 1)
    current_device = staticmethod(lambda: 0)


if not hasattr(torch, LABEL):
    torch._register_device_module(LABEL, _DeviceModule())


def mismatch(where: str) -> RuntimeError:
    return RuntimeError(f"Expected all tensors to be on the same device, but found at least two "
                        f"devices, {LABEL}:0 and cpu! (in {where})")


class Elsewhere(torch.Tensor):
    """A tensor on the emulated device; ``elem`` holds its data on the CPU."""
    __torch_function__ = torch._C._disabled_torch_function_impl

    @staticmethod
    def __new__(cls, elem: torch.Tensor):
        wrapper = torch.Tensor._make_wrapper_subclass(
            cls, elem.shape, strides=elem.stride(), storage_offset=elem.storage_offset(),
            dtype=elem.dtype, layout=elem.layout, device=DEVICE, requires_grad=elem.requires_grad)
        wrapper.elem = elem
        return wrapper

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        return _run(func, args, kwargs or {})

    def tolist(self):  # reading values is fine on a GPU
        return self.elem.tolist()

    def numpy(self, *, force: bool = False):
        raise TypeError(f"can't convert {LABEL}:0 device type tensor to numpy. Use Tensor.cpu() "
                        "to copy the tensor to host memory first.")

    def __repr__(self) -> str:
        return f"{self.elem!r} (on {LABEL}:0)"


def _on_other_device(device) -> bool:
    return device is not None and torch.device(device).type == LABEL


def _leaves(args: tuple, kwargs: dict):
    """An operator's arguments, lists opened: aten's schemas nest no deeper (``Tensor[]``)."""
    for value in (*args, *kwargs.values()):
        if isinstance(value, (list, tuple)):
            yield from value
        else:
            yield value


def _mapped(value, change):
    """``value`` (an argument or a result) with ``change`` applied to it, or to each item of a
    list or tuple of them."""
    if isinstance(value, (list, tuple)) and any(isinstance(item, torch.Tensor) for item in value):
        if type(value) in (list, tuple):
            return type(value)(change(item) for item in value)
        return tree_map(change, value)  # a named tuple of results
    return change(value)


def _plain(value):
    return value.elem if isinstance(value, Elsewhere) else value


def _placed(value):
    return Elsewhere(value) if type(value) is torch.Tensor else value


def _check_devices(name: str, args: tuple, kwargs: dict) -> bool:
    """Raise CUDA's error when tensors on both devices meet where CUDA would refuse; returns
    whether any argument is on the other device."""
    tensors = [t for t in _leaves(args, kwargs) if isinstance(t, torch.Tensor)]
    elsewhere = [t for t in tensors if isinstance(t, Elsewhere)]
    if not elsewhere or name in CROSSING:
        return bool(elsewhere)
    on_cpu = [t for t in tensors if not isinstance(t, Elsewhere) and t.dim() > 0]
    if name in INDEXING and isinstance(args[0], Elsewhere):
        return True  # CPU indices into a tensor on the device: allowed on CUDA
    if on_cpu:
        raise mismatch(name)
    return True


def _run(func, args: tuple, kwargs: dict):
    """One operation: the device rule, then the CPU computation, then the result's device."""
    name = func.overloadpacket.__name__
    any_elsewhere = _check_devices(name, args, kwargs)
    plain_args = tuple(_mapped(a, _plain) for a in args)
    plain_kwargs = {k: _mapped(v, _plain) for k, v in kwargs.items()}
    target = kwargs.get("device")
    if _on_other_device(target):
        plain_kwargs["device"] = torch.device("cpu")
    out = func(*plain_args, **plain_kwargs)
    if target is not None:
        moved = _on_other_device(target)
    elif name in ("copy_", "_copy_from"):
        moved = isinstance(args[0], Elsewhere)  # a copy stays where its destination is
    else:
        moved = any_elsewhere
    if moved:
        out = _mapped(out, _placed)
    if not _aliases(func):
        return out
    return return_and_correct_aliasing(func, args, kwargs, out)


@functools.cache
def _aliases(func) -> bool:
    """Whether the operator's result aliases or writes an input (views, in-place, ``out=``):
    then the wrappers must share what the plain tensors share."""
    return any(argument.alias_info is not None for argument in (*func._schema.arguments, *func._schema.returns))


class _Dispatch(TorchDispatchMode):
    """Sees factories too (``torch.arange(K, device=X.device)``), which have no tensor argument."""

    @classmethod
    def _should_skip_dynamo(cls) -> bool:
        # Nothing here is compiled; torch would otherwise wrap __torch_dispatch__ so that its
        # first call imports torch._dynamo (about 7 s on these machines, in every worker).
        return False

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        return _run(func, args, kwargs or {})


class _FromData(TorchFunctionMode):
    """``torch.tensor(data, device=X.device)`` builds on the host and moves the data below
    the dispatcher: build it on the CPU here, then move it through the dispatcher."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func is torch.Tensor.new_tensor and isinstance(args[0], Elsewhere):
            kwargs = {"dtype": args[0].dtype, "device": DEVICE, **kwargs}
            func, args = torch.tensor, args[1:]
        if func in FROM_DATA and _on_other_device(kwargs.get("device")):
            return func(*args, **{**kwargs, "device": "cpu"}).to(DEVICE)
        return func(*args, **kwargs)


class _AnyGenerator(type(torch.Generator)):
    def __instancecheck__(cls, obj) -> bool:
        return isinstance(obj, torch._C.Generator)


class _Generator(torch._C.Generator, metaclass=_AnyGenerator):
    """``torch.Generator(device=X.device)`` (a private random stream, as on CUDA) for the emulated
    device: its random state is the CPU's, as ``_DeviceModule`` says; ``isinstance`` of any
    generator still holds."""

    def __new__(cls, device="cpu"):
        return super().__new__(cls, "cpu" if _on_other_device(device) else device)

    def __init__(self, device="cpu"):
        super().__init__()


class OtherDevice:
    """``with OtherDevice() as other:`` emulates the device for the calls inside."""

    def __enter__(self) -> "OtherDevice":
        self._modes = [_FromData(), _Dispatch()]
        for mode in self._modes:
            mode.__enter__()
        self._generator, torch.Generator = torch.Generator, _Generator
        self._moved: list[tuple[nn.Module, str, torch.Tensor, bool]] = []
        return self

    def __exit__(self, *exc) -> None:
        for module, name, original, is_param in reversed(self._moved):
            if is_param:
                setattr(module, name, original)  # through __setattr__: an RNN refreshes its weights
            else:
                module._buffers[name] = original
        for mode in reversed(self._modes):
            mode.__exit__(*exc)
        torch.Generator = self._generator

    def move(self, value):
        """``value`` with every tensor in it on the other device."""
        return tree_map(lambda t: Elsewhere(t.detach()) if isinstance(t, torch.Tensor) else t, value)

    def move_module(self, module: nn.Module) -> None:
        """The module's parameters and buffers on the other device, until the block ends."""
        for owner in module.modules():
            for name, param in list(owner._parameters.items()):
                if param is not None and not isinstance(param, Elsewhere):
                    self._moved.append((owner, name, param, True))
                    setattr(owner, name, nn.Parameter(Elsewhere(param.detach()), param.requires_grad))
            for name, buffer in list(owner._buffers.items()):
                if buffer is not None and not isinstance(buffer, Elsewhere):
                    self._moved.append((owner, name, buffer, False))
                    owner._buffers[name] = Elsewhere(buffer)


def back_to_cpu(value) -> tuple[object, list[str]]:
    """``value`` with plain CPU tensors, and the device type each tensor was on (in order)."""
    devices: list[str] = []

    def plain(t):
        if isinstance(t, Elsewhere):
            devices.append(LABEL)
            return t.elem.detach()
        if isinstance(t, torch.Tensor):
            devices.append(t.device.type)
        return t
    return tree_map(plain, value), devices

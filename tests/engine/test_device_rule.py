"""The emulated device (autograder/sandbox/elsewhere.py): does it hold code to CUDA's rules
while its values stay readable?

Emulated, as CUDA behaves (torch 2.x): tensors on the device may not meet CPU tensors in an
operation ("Expected all tensors to be on the same device"), except CPU 0-dim tensors
(scalars) and CPU indices into a tensor on the device; copies across devices are allowed
(``.to``, ``.cpu()``, ``copy_``, ``cpu_buffer[i] = x``, which leaves the buffer on the CPU);
``torch.tensor(data, device=X.device)``, ``torch.arange(K, device=X.device)``, ``*_like`` and
``X.new_*`` create on the device, factories without ``device=`` on the CPU (also
``torch.rand``, as the book's ``dropout_layer`` uses it); ``.numpy()`` of a device tensor
raises; ``.item()``, ``.tolist()``, ``int()`` read values (fine on a GPU); autograd works;
a module's parameters move with it and are restored after the call.
Not emulated: CUDA's kernels (the computation is the CPU's), CUDA generators and streams,
``.cuda()`` or ``device="cuda"`` written into the code (a CPU-only runner cannot create them).
"""
import pytest
import torch
from torch import nn

import reference
import reference.book
from autograder.sandbox.elsewhere import LABEL, OtherDevice, back_to_cpu

X = torch.randn(2, 3, 4)
LENS = torch.tensor([1, 3])
MISMATCH = "Expected all tensors to be on the same device"


def elsewhere(function, *modules):
    """``function(other)`` run on the emulated device; its result back on the CPU, with devices."""
    with OtherDevice() as other:
        for module in modules:
            other.move_module(module)
        return back_to_cpu(function(other))


def test_correct_code_gives_the_cpus_values_on_the_device():
    """Does the book's masked_softmax (which writes into X) run there, and give the CPU's weights?"""
    got, devices = elsewhere(lambda o: reference.book.masked_softmax(o.move(X.clone()), o.move(LENS)))
    assert devices == [LABEL]
    assert torch.equal(got, reference.book.masked_softmax(X.clone(), LENS))


@pytest.mark.parametrize("code", [
    lambda o: torch.arange(4)[None, None, :] < o.move(LENS)[:, None, None],
    lambda o: o.move(X).masked_fill(torch.ones(2, 3, 4, dtype=torch.bool), 0.0),
    lambda o: (torch.rand(X.shape) > 0.5) * o.move(X),
    lambda o: torch.zeros(2, 3, 4).add_(o.move(X)),
    lambda o: X[o.move(torch.tensor([0, 1]))],
    lambda o: nn.functional.embedding(torch.tensor([0, 1]), o.move(torch.randn(3, 2))),
], ids=["arange_without_device", "cpu_mask", "book_dropout_layer", "in_place_into_cpu", "device_index_into_cpu",
        "cpu_indices_into_embedding"])
def test_mixing_devices_raises_cudas_error(code):
    """Does an operation that CUDA refuses (a CPU tensor meeting a device tensor) raise CUDA's message?"""
    with pytest.raises(RuntimeError, match=MISMATCH):
        elsewhere(code)


@pytest.mark.parametrize("code", [
    lambda o: o.move(X) * torch.tensor(2.0),
    lambda o: o.move(X)[torch.tensor([0, 1])],
    lambda o: torch.where(o.move(X) > 0, o.move(X), -1e6),
    lambda o: torch.tensor([[k < n for k in range(4)] for n in o.move(LENS).tolist()], device=o.move(X).device),
    lambda o: o.move(X).new_tensor([1.0, 2.0]),
    lambda o: torch.full((2,), float(o.move(LENS)[0].item()), device=o.move(X).device),
    lambda o: torch.ones(3).to(o.move(X).device) + o.move(X)[0, 0, :3],
    lambda o: torch.ones_like(o.move(X)),
], ids=["cpu_scalar", "cpu_indices", "python_scalar", "tolist_then_device", "new_tensor", "item_then_device",
        "moved_with_to", "ones_like"])
def test_what_cuda_allows_runs_on_the_device(code):
    """Do CPU scalars, CPU indices, values read out and tensors created with device= stay allowed?"""
    _, devices = elsewhere(code)
    assert devices == [LABEL]


def test_a_copy_into_a_cpu_buffer_stays_on_the_cpu():
    """Is ``cpu_buffer[i] = x`` allowed, as on CUDA, and is the buffer reported on the CPU?"""
    def fill(o):
        buffer = torch.zeros(2, 3, 4)
        buffer[0] = o.move(X)[0]
        return buffer
    _, devices = elsewhere(fill)
    assert devices == ["cpu"]


def test_numpy_of_a_device_tensor_raises_as_on_cuda():
    with pytest.raises(TypeError, match="device type tensor to numpy"):
        elsewhere(lambda o: o.move(LENS).numpy())


def test_modules_move_with_their_parameters_and_come_back():
    """Does a decoder in train mode give the CPU's logits there (seeded), and keep its own
    parameters afterwards?"""
    decoder, encoder = reference.LSTMAttentionDecoder(5, 3, 4, 2, 0.3), reference.LSTMEncoder(5, 3, 4, 2)
    src, tgt = torch.randint(0, 5, (2, 3)), torch.randint(0, 5, (2, 2))
    enc = encoder(src)
    decoder(tgt, decoder.init_state(enc, LENS))
    before = {name: p for name, p in decoder.named_parameters()}
    torch.manual_seed(1)
    (logits, _), devices = elsewhere(lambda o: decoder(o.move(tgt), decoder.init_state(o.move(enc), o.move(LENS))),
                                     decoder)
    torch.manual_seed(1)
    expected = decoder(tgt, decoder.init_state(enc, LENS))[0]
    assert set(devices) == {LABEL}
    torch.testing.assert_close(logits, expected)
    assert all(p is before[name] and type(p) is nn.Parameter for name, p in decoder.named_parameters())


def test_gradients_flow_on_the_device():
    def grad(o):
        x = o.move(X).requires_grad_()
        return torch.autograd.grad((x * x).sum(), x)[0]
    got, _ = elsewhere(grad)
    torch.testing.assert_close(got, 2 * X)


def _device_check(task_id: str, source: str):
    from tests.mutants.harness import Mutant, grade
    result = grade(Mutant(task_id, "probe", source, correct=False))
    return next(check for check in result.checks if check.name == "runs on any device")


def test_a_shape_error_on_some_inputs_is_not_charged_again():
    """Does code that raises on 2-D lengths only (a shape error the value checks charge) keep
    the device check's points?"""
    from tests.mutants.variants_spec import MUTANTS
    [mutant] = [m for m in MUTANTS if m.name == "breaks_on_2d_lengths"]
    assert _device_check(mutant.task_id, mutant.source).passed


def test_code_that_runs_nowhere_fails_the_device_check_too():
    """Does a stub that raises NotImplementedError for every input get no device points?"""
    check = _device_check("masked_softmax", "def masked_softmax(X, valid_lens):\n    raise NotImplementedError\n")
    assert not check.passed and check.finding.problem.id == "devices.runs_nowhere"

"""The gradients both sides compute (the worker's ``gradients`` request, the reference's in the
gradient check) are autograd's vector-Jacobian product for the cotangent, bit for bit, and
computing them imports nothing more (autograd's ``grad_outputs`` path imports sympy: 0.35 s
in every process that grades)."""
import subprocess
import sys

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from autograder.sandbox import vector_jacobian


@settings(max_examples=30, deadline=None)
@given(shape=st.lists(st.integers(1, 4), min_size=1, max_size=3), seed=st.integers(0, 2**16),
       dtype=st.sampled_from([torch.float32, torch.float64]))
def test_equals_autograd_with_grad_outputs_bit_for_bit(shape, seed, dtype):
    generator = torch.Generator().manual_seed(seed)
    x = torch.randn(shape, generator=generator, dtype=dtype, requires_grad=True)
    w = torch.randn(shape[-1], 3, generator=generator, dtype=dtype, requires_grad=True)
    unused = torch.zeros(2, requires_grad=True)
    output = torch.tanh(x @ w).softmax(-1)
    cotangent = torch.randn(output.shape, generator=generator, dtype=torch.float64).to(dtype)
    expected = torch.autograd.grad(output, [x, w, unused], grad_outputs=cotangent, retain_graph=True,
                                   allow_unused=True)
    got = vector_jacobian(output, [x, w, unused], cotangent)
    assert got[2] is None and expected[2] is None
    for g, e in zip(got[:2], expected[:2], strict=True):
        assert g.dtype == e.dtype and torch.equal(g, e)


def test_a_cotangent_of_another_shape_raises_and_is_never_broadcast():
    x = torch.ones(2, 1, 3, requires_grad=True)
    with pytest.raises(RuntimeError, match="Mismatch in shape"):
        vector_jacobian(x * 2, [x], torch.ones(2, 4, 3))


def test_the_workers_gradients_request_imports_no_sympy():
    code = ("import sys, torch\n"
            "from autograder.sandbox.runner import Runner\n"
            "runner = Runner()\n"
            "runner.use_namespace({'Linear': torch.nn.Linear})\n"
            "new = runner.handle({'op': 'new', 'args': {'name': 'Linear', 'args': [3, 2], 'kwargs': {}}})\n"
            "reply = runner.handle({'op': 'gradients', 'args': {'target': new['value'],\n"
            "    'calls': [[None, [torch.ones(4, 3)]]], 'cotangent': torch.ones(4, 2)}})\n"
            "print(sorted(reply['value']['parameters']), 'sympy' in sys.modules)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.splitlines()[-1] == "['bias', 'weight'] False", done.stdout

"""Analytic gradients match finite differences (``torch.autograd.gradcheck``, float64)."""
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from reference import masked_softmax

from .builders import ATTENTIONS, build_attention
from .strategies import attention_batches, score_batches

float64 = st.just(torch.float64)


@settings(max_examples=20)
@given(batch=score_batches(dtype=float64))
def test_masked_softmax_gradient_matches_finite_differences(batch):
    """Is the gradient of masked_softmax with respect to X right, masked entries included?"""
    X = (batch.X / 100).requires_grad_()  # scores of a few units: finite differences resolve them
    assert torch.autograd.gradcheck(lambda X: masked_softmax(X, batch.valid_lens), (X,))


@pytest.mark.parametrize("name", ATTENTIONS)
@settings(max_examples=10)
@given(batch=attention_batches(dtype=float64))
def test_attention_gradient_matches_finite_differences(name, batch):
    """Are the gradients with respect to queries, keys and values right?"""
    module = build_attention(name, batch)  # materialised, then cast to float64
    inputs = tuple(t.clone().requires_grad_() for t in batch.args()[:3])
    assert torch.autograd.gradcheck(lambda q, k, v: module(q, k, v, batch.valid_lens), inputs)

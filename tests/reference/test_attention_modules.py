"""Laws every reference attention obeys (SPEC §2): shapes, masking, permutation, dropout, devices.

Shapes: queries (B, Q, D), keys (B, K, k), values (B, K, v) -> output (B, Q, v),
``attention_weights`` (B, Q, K).
"""
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from torch.testing import assert_close

from .builders import ATTENTIONS, DIFFERENT_SIZES_OK, build_attention
from .strategies import AttentionBatch, attention_batches

every_attention = pytest.mark.parametrize("name", ATTENTIONS)


@every_attention
@given(batch=attention_batches())
def test_output_is_B_Q_v_and_attention_weights_are_B_Q_K(name, batch):
    """Are the output (B, Q, v) and ``attention_weights`` (B, Q, K), in the batch's dtype?"""
    module = build_attention(name, batch)
    out = module(*batch.args())
    (B, Q, _), K, v = batch.queries.shape, batch.keys.shape[1], batch.values.shape[-1]
    assert out.shape == (B, Q, v) and out.dtype == batch.queries.dtype
    assert module.attention_weights.shape == (B, Q, K)


@pytest.mark.parametrize("name", DIFFERENT_SIZES_OK)
@given(batch=attention_batches(same_sizes=False))
def test_queries_and_keys_of_different_sizes_work(name, batch):
    """Do additive and bilinear attention accept keys whose size differs from the queries'?"""
    out = build_attention(name, batch)(*batch.args())
    assert out.shape == (*batch.queries.shape[:2], batch.values.shape[-1])


@every_attention
@given(batch=attention_batches(min_valid_len=1, valid_dims=(1, 2)))
def test_attention_weights_are_zero_beyond_valid_lens(name, batch):
    """Does every key at or beyond its valid length get weight 0, and the rest sum to 1?"""
    module = build_attention(name, batch)
    module(*batch.args())
    weights = module.attention_weights  # (B, Q, K)
    assert (weights[~batch.keep] == 0).all()
    assert_close(weights.sum(-1), torch.ones_like(weights[..., 0]))


@every_attention
@given(batch=attention_batches(valid_dims=(None,)), full=st.booleans(), data=st.data())
def test_permuting_key_value_pairs_together_leaves_output_unchanged(name, batch, full, data):
    """Is attention a function of the *set* of key-value pairs (with no mask, or a full one)?"""
    B, K = batch.keys.shape[:2]
    lens = torch.full((B,), K) if full else None
    perm = torch.tensor(data.draw(st.permutations(range(K)), label="perm"))  # (K,)
    module = build_attention(name, batch)
    out = module(batch.queries, batch.keys, batch.values, lens)
    permuted = module(batch.queries, batch.keys[:, perm], batch.values[:, perm], lens)
    assert_close(permuted, out)


@every_attention
@given(batch=attention_batches())
def test_dropout_acts_only_in_train_mode(name, batch):
    """With dropout=1, is the output 0 in train mode, and in eval mode that of dropout=0?"""
    dropped = build_attention(name, batch, dropout=1.0)
    kept = build_attention(name, batch, dropout=0.0)
    assert_close(dropped(*batch.args()), kept(*batch.args()))  # eval mode
    out = dropped.train()(*batch.args())
    assert (out == 0).all()
    # attention_weights are kept before dropout, as in the book
    assert_close(dropped.attention_weights, kept.attention_weights)


@every_attention
@pytest.mark.parametrize("valid_lens", [None, torch.tensor([1, 3]), torch.tensor([[0, 1, 5]] * 2)],
                         ids=["none", "1-D", "2-D"])
def test_runs_on_the_meta_device(name, valid_lens):
    """Does it run on ``meta`` tensors, giving a (B, Q, v) output there?"""
    batch = AttentionBatch(torch.rand(2, 3, 4), torch.rand(2, 5, 4), torch.rand(2, 5, 6), valid_lens)
    module = build_attention(name, batch).to("meta")
    on_meta = [None if t is None else t.to("meta") for t in batch.args()]
    out = module(*on_meta)
    assert out.device.type == "meta" and out.shape == (2, 3, 6)
    assert module.attention_weights.shape == (2, 3, 5)

"""Each reference attention against a trusted twin: torch's SDPA, or its definition written out.

Shapes: queries (B, Q, D), keys (B, K, k), values (B, K, v). Twins compare only rows with a
valid key (valid length >= 1): an empty row has no right answer (SPEC §2).
"""
import math

import torch
from hypothesis import given
from torch.nn import functional as F
from torch.testing import assert_close

from reference import DotProductAttention

from .builders import build_attention
from .strategies import attention_batches, softmax_over_kept


@given(batch=attention_batches(min_valid_len=1))
def test_dot_product_attention_matches_torch_sdpa(batch):
    """Does it equal ``F.scaled_dot_product_attention`` with the same boolean mask?"""
    out = DotProductAttention(0.0)(*batch.args())
    expected = F.scaled_dot_product_attention(batch.queries, batch.keys, batch.values,
                                              attn_mask=batch.keep)  # True = attend
    assert_close(out, expected)


@given(batch=attention_batches(min_valid_len=1, same_sizes=False))
def test_additive_attention_is_a_one_hidden_layer_mlp_on_the_concatenated_pair(batch):
    """Is the score w_vᵀ tanh(W [q; k]) with W = [W_q | W_k], for queries and keys of any sizes?"""
    module = build_attention("additive", batch)
    out = module(*batch.args())
    (B, Q, _), K = batch.queries.shape, batch.keys.shape[1]
    W = torch.cat([module.W_q.weight, module.W_k.weight], dim=1)  # (H, D + k)
    pairs = torch.cat([batch.queries[:, :, None].expand(B, Q, K, -1),
                       batch.keys[:, None].expand(B, Q, K, -1)], dim=-1)  # (B, Q, K, D + k)
    hidden = torch.tanh(pairs @ W.T)                           # (B, Q, K, H)
    scores = (hidden @ module.w_v.weight.T).squeeze(-1)        # (B, Q, K, 1) -> (B, Q, K)
    weights = softmax_over_kept(scores, batch.keep)            # (B, Q, K)
    assert_close(module.attention_weights, weights)
    assert_close(out, weights @ batch.values)                  # (B, Q, v)


@given(batch=attention_batches(min_valid_len=1))
def test_distance_attention_equals_minus_squared_distance_over_2_sqrt_d(batch):
    """Is the score -‖q - k‖² / (2√d), written out and with ``torch.cdist``?"""
    out = build_attention("distance", batch)(*batch.args())
    q, k = batch.queries, batch.keys
    scale = 2 * math.sqrt(q.shape[-1])
    written_out = -((q[:, :, None] - k[:, None]) ** 2).sum(-1) / scale  # (B, Q, 1, D) - (B, 1, K, D) -> (B, Q, K)
    with_cdist = -torch.cdist(q, k) ** 2 / scale                        # (B, Q, K)
    for scores in (written_out, with_cdist):
        assert_close(out, softmax_over_kept(scores, batch.keep) @ batch.values)


@given(batch=attention_batches(min_valid_len=1))
def test_bilinear_attention_with_identity_M_is_dot_product_attention(batch):
    """With M = I, is qᵀ M k / √d the scaled dot product?"""
    module = build_attention("bilinear", batch)
    with torch.no_grad():
        module.M.weight.copy_(torch.eye(batch.queries.shape[-1]))  # (D, D)
    assert_close(module(*batch.args()), DotProductAttention(0.0)(*batch.args()))


@given(batch=attention_batches(min_valid_len=1, same_sizes=False))
def test_bilinear_attention_is_q_M_k_over_sqrt_query_size(batch):
    """For keys of another size, is the score qᵀ M k / √query_size with M (D, k)?"""
    module = build_attention("bilinear", batch)
    out = module(*batch.args())
    M = module.M.weight  # (D, k)
    scores = torch.einsum("bqd,dk,bjk->bqj", batch.queries, M, batch.keys)  # (B, Q, K)
    weights = softmax_over_kept(scores / math.sqrt(batch.queries.shape[-1]), batch.keep)
    assert_close(out, weights @ batch.values)

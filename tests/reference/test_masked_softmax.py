"""Laws of ``reference.masked_softmax`` (SPEC §2). X (B, Q, K); valid_lens None, (B,) or (B, Q)."""
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from torch.testing import assert_close

from reference import masked_softmax

from .strategies import MAX_SCORE, score_batches, tensors


@given(batch=score_batches(valid_dims=(1, 2)))
def test_masked_weights_are_zero_and_rows_sum_to_one_over_valid_keys(batch):
    """Does every key at or beyond its valid length get weight 0, and the rest sum to 1?"""
    weights = masked_softmax(batch.X, batch.valid_lens)  # (B, Q, K)
    keep = batch.keep                                    # (B, Q, K)
    rows = keep.any(-1)                                  # (B, Q): rows with a valid key
    masked = weights.masked_fill(keep, 0)[rows]          # (R, K), only the masked keys
    assert_close(masked, torch.zeros_like(masked), rtol=0, atol=0)
    sums = weights.masked_fill(~keep, 0).sum(-1)[rows]   # (R,)
    assert_close(sums, torch.ones_like(sums))


@given(batch=score_batches(valid_dims=(None,)))
def test_none_valid_lens_is_a_plain_softmax(batch):
    """Is ``valid_lens=None`` the ordinary softmax over the keys?"""
    assert_close(masked_softmax(batch.X, None), batch.X.softmax(dim=-1), rtol=0, atol=0)


@given(batch=score_batches(valid_dims=(1, 2)), data=st.data())
def test_output_does_not_depend_on_masked_scores(batch, data):
    """Does changing the scores of masked keys leave every weight as it was?"""
    other = data.draw(tensors(tuple(batch.X.shape), batch.X.dtype, MAX_SCORE))  # (B, Q, K)
    changed = torch.where(batch.keep, batch.X, other)  # the same valid scores
    assert_close(masked_softmax(changed, batch.valid_lens),
                 masked_softmax(batch.X, batch.valid_lens), rtol=0, atol=0)


@given(batch=score_batches(valid_dims=(None,)), extra=st.integers(0, 3), per_query=st.booleans())
def test_lengths_of_K_or_more_mean_all_keys_are_valid(batch, extra, per_query):
    """Is a valid length of K or above (K+3, say) the same as no mask at all?"""
    B, Q, K = batch.X.shape
    lens = torch.full((B, Q) if per_query else (B,), K + extra)
    assert_close(masked_softmax(batch.X, lens), batch.X.softmax(dim=-1))


@given(batch=score_batches(valid_dims=(1, 2)))
def test_valid_length_zero_gives_a_finite_row(batch):
    """Does a query with no valid key come out finite (not NaN or inf)?"""
    zero = torch.zeros_like(batch.valid_lens)
    weights = masked_softmax(batch.X, zero)  # (B, Q, K), every row fully masked
    assert torch.isfinite(weights).all(), weights
    assert torch.isfinite(masked_softmax(batch.X, batch.valid_lens)).all()


@given(batch=score_batches())
def test_input_is_not_modified(batch):
    """Are the scores the same after the call (no in-place fill, unlike the book)?"""
    before = batch.X.clone()
    masked_softmax(batch.X, batch.valid_lens)
    assert_close(batch.X, before, rtol=0, atol=0)


@given(batch=score_batches())
def test_output_keeps_the_input_shape_dtype_and_device(batch):
    """Is the output (B, Q, K) with the scores' dtype and device?"""
    weights = masked_softmax(batch.X, batch.valid_lens)
    assert (weights.shape, weights.dtype, weights.device) == (
        batch.X.shape, batch.X.dtype, batch.X.device)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half_precision_masks_to_zero_without_nan(dtype):
    """In float16 and bfloat16 (where the book's -1e6 is -inf), are masked weights 0 and empty rows finite?"""
    X = torch.linspace(-1000, 1000, 2 * 3 * 4).reshape(2, 3, 4).to(dtype)  # (B, Q, K)
    weights = masked_softmax(X, torch.tensor([0, 2]))
    assert torch.isfinite(weights).all()
    assert (weights[1, :, 2:] == 0).all() and weights.dtype == dtype


@pytest.mark.parametrize("valid_lens", [None, torch.tensor([1, 3]), torch.tensor([[0, 1, 5]] * 2)],
                         ids=["none", "1-D", "2-D"])
def test_runs_on_the_meta_device(valid_lens):
    """Does it run on ``meta`` tensors (so it creates no tensor on a fixed device)?"""
    X = torch.empty(2, 3, 4, device="meta")  # (B, Q, K)
    lens = None if valid_lens is None else valid_lens.to("meta")
    weights = masked_softmax(X, lens)
    assert weights.device.type == "meta" and weights.shape == (2, 3, 4)

"""Hypothesis strategies for attention inputs, in the shapes and ranges of SPEC §2.

Shape legend: B batch, Q queries, K key-value pairs, D query features, k key features,
v value features. Sizes: B, Q, K in 1..6; D, k, v in 1..8; valid lengths 0..K+2.
"""
from dataclasses import dataclass

import numpy as np
import torch
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from torch import Tensor

DTYPES = (torch.float32, torch.float64)
MAX_SCORE = 1000.0  # SPEC §2: checks draw scores within ±1000
MAX_FEATURE = 4.0   # queries, keys and values: scores stay within ±16·8/√8 ≈ ±45


def keep_mask(valid_lens: Tensor | None, shape: tuple[int, int, int]) -> Tensor:
    """The test's own mask, (B, Q, K) bool, True = attend (a twin of the reference's)."""
    B, Q, K = shape
    if valid_lens is None:
        return torch.ones(shape, dtype=torch.bool)
    lens = valid_lens[:, None].expand(B, Q) if valid_lens.dim() == 1 else valid_lens  # (B, Q)
    return torch.arange(K) < lens[..., None].cpu()  # (K,) < (B, Q, 1) -> (B, Q, K)


def softmax_over_kept(scores: Tensor, keep: Tensor) -> Tensor:
    """Softmax over the keys that ``keep`` marks, (B, Q, K); rows must keep a key."""
    return scores.masked_fill(~keep, float("-inf")).softmax(dim=-1)


@dataclass(frozen=True)
class Scores:
    """Inputs of ``masked_softmax``."""

    X: Tensor                  # (B, Q, K)
    valid_lens: Tensor | None  # None, (B,) or (B, Q)

    @property
    def keep(self) -> Tensor:
        return keep_mask(self.valid_lens, tuple(self.X.shape))  # (B, Q, K)


@dataclass(frozen=True)
class AttentionBatch:
    """Inputs of an attention module's ``forward``."""

    queries: Tensor            # (B, Q, D)
    keys: Tensor               # (B, K, k)
    values: Tensor             # (B, K, v)
    valid_lens: Tensor | None  # None, (B,) or (B, Q)

    @property
    def keep(self) -> Tensor:
        B, Q, K = self.queries.shape[0], self.queries.shape[1], self.keys.shape[1]
        return keep_mask(self.valid_lens, (B, Q, K))  # (B, Q, K)

    def args(self) -> tuple:
        return self.queries, self.keys, self.values, self.valid_lens


sizes = st.integers(1, 6)     # B, Q, K
features = st.integers(1, 8)  # D, k, v
dtypes = st.sampled_from(DTYPES)


def tensors(shape: tuple[int, ...], dtype: torch.dtype, bound: float) -> st.SearchStrategy[Tensor]:
    """Tensors of ``shape`` whose entries lie in ±bound and are exact in float32."""
    elements = st.floats(-bound, bound, allow_nan=False, width=32)
    return arrays(np.float64, shape, elements=elements).map(
        lambda a: torch.from_numpy(a).to(dtype))


@st.composite
def valid_lens(draw, B: int, Q: int, K: int, min_len: int = 0,
               dims: tuple = (None, 1, 2)) -> Tensor | None:
    """None, (B,) or (B, Q) integer lengths in min_len..K+2 (above K means all valid)."""
    dim = draw(st.sampled_from(dims))
    if dim is None:
        return None
    shape = (B,) if dim == 1 else (B, Q)
    lens = draw(arrays(np.int64, shape, elements=st.integers(min_len, K + 2)))
    return torch.from_numpy(lens).to(draw(st.sampled_from((torch.int64, torch.int32))))


@st.composite
def score_batches(draw, min_valid_len: int = 0, valid_dims: tuple = (None, 1, 2),
                  dtype: st.SearchStrategy = dtypes) -> Scores:
    """Scores (B, Q, K) within ±1000 and their valid lengths."""
    B, Q, K = draw(sizes), draw(sizes), draw(sizes)
    X = draw(tensors((B, Q, K), draw(dtype), MAX_SCORE))
    return Scores(X, draw(valid_lens(B, Q, K, min_valid_len, valid_dims)))


@st.composite
def attention_batches(draw, min_valid_len: int = 0, valid_dims: tuple = (None, 1, 2),
                      same_sizes: bool = True, dtype: st.SearchStrategy = dtypes) -> AttentionBatch:
    """Queries, keys, values and valid lengths; keys may differ in size unless ``same_sizes``."""
    B, Q, K = draw(sizes), draw(sizes), draw(sizes)
    D, v = draw(features), draw(features)
    k = D if same_sizes else draw(features)
    dt = draw(dtype)
    return AttentionBatch(
        queries=draw(tensors((B, Q, D), dt, MAX_FEATURE)),
        keys=draw(tensors((B, K, k), dt, MAX_FEATURE)),
        values=draw(tensors((B, K, v), dt, MAX_FEATURE)),
        valid_lens=draw(valid_lens(B, Q, K, min_valid_len, valid_dims)))


VOCAB = 11  # decoder tests' vocabulary size (source and target)


@dataclass(frozen=True)
class DecoderBatch:
    """Inputs of an encoder-decoder pair."""

    src: Tensor             # (B, T) source tokens
    tgt: Tensor             # (B, S) decoder input tokens
    enc_valid_lens: Tensor  # (B,) in 1..T


@st.composite
def decoder_batches(draw) -> DecoderBatch:
    """Token batches: B in 1..4, T in 1..6, S in 1..5, vocabulary of ``VOCAB``."""
    B, T, S = draw(st.integers(1, 4)), draw(st.integers(1, 6)), draw(st.integers(1, 5))
    tokens = st.integers(0, VOCAB - 1)
    return DecoderBatch(
        src=torch.from_numpy(draw(arrays(np.int64, (B, T), elements=tokens))),
        tgt=torch.from_numpy(draw(arrays(np.int64, (B, S), elements=tokens))),
        enc_valid_lens=torch.from_numpy(draw(arrays(np.int64, (B,), elements=st.integers(1, T)))))

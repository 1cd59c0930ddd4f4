"""Reference solutions for the attention_scoring tasks (SPEC §1-2).

Shape legend: B batch, Q queries, K key-value pairs, D query/key features,
v value features, H hidden units.
"""
import math

import torch
from torch import Tensor, nn


def keep_mask(valid_lens: Tensor, shape: torch.Size) -> Tensor:
    """Which scores to keep: ``(B, Q, K)`` bool, True = attend.

    ``valid_lens`` is ``(B,)`` (one length per example) or ``(B, Q)`` (one per query);
    key positions ``>= valid_len`` are dropped, lengths above K keep every key.
    """
    key_positions = torch.arange(shape[-1], device=valid_lens.device)  # (K,)
    # (B,) -> (B, 1, 1), shared by the queries; (B, Q) -> (B, Q, 1)
    lens = valid_lens[:, None, None] if valid_lens.dim() == 1 else valid_lens[:, :, None]
    return key_positions < lens           # (B, Q or 1, K) -> broadcasts to (B, Q, K)


def masked_softmax(X: Tensor, valid_lens: Tensor | None) -> Tensor:
    """Softmax over the last axis of ``X`` (B, Q, K), ignoring keys beyond ``valid_lens``.

    Out of place. Masked scores are filled with the dtype's most negative finite value,
    so masked weights underflow to exactly 0 and a row with valid length 0 is uniform
    (finite) rather than NaN, in every dtype (the book's -1e6 is -inf in float16).
    """
    if valid_lens is None:
        return X.softmax(dim=-1)
    keep = keep_mask(valid_lens.to(X.device), X.shape)  # (B, Q, K) after broadcast
    fill = torch.finfo(X.dtype).min
    return X.masked_fill(~keep, fill).softmax(dim=-1)  # (B, Q, K), rows sum to 1


class DotProductAttention(nn.Module):
    """Scaled dot-product attention: softmax(Q Kᵀ / √D) V."""

    def __init__(self, dropout: float):
        super().__init__()
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries: Tensor, keys: Tensor, values: Tensor,
                valid_lens: Tensor | None = None) -> Tensor:
        d = queries.shape[-1]
        scaled = queries / math.sqrt(d)  # (B, Q, D): scaling before the product touches D, not K, values
        scores = scaled @ keys.transpose(1, 2)  # (B, Q, D) @ (B, D, K) -> (B, Q, K)
        self.attention_weights = masked_softmax(scores, valid_lens)  # (B, Q, K)
        return self.dropout(self.attention_weights) @ values  # (B, Q, K) @ (B, K, v) -> (B, Q, v)


class AdditiveAttention(nn.Module):
    """Additive (Bahdanau) attention: score(q, k) = w_vᵀ tanh(W_q q + W_k k)."""

    def __init__(self, num_hiddens: int, dropout: float):
        super().__init__()
        self.W_k = nn.LazyLinear(num_hiddens, bias=False)
        self.W_q = nn.LazyLinear(num_hiddens, bias=False)
        self.w_v = nn.LazyLinear(1, bias=False)
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries: Tensor, keys: Tensor, values: Tensor,
                valid_lens: Tensor | None = None) -> Tensor:
        return self.attend_projected(self.W_q(queries), self.W_k(keys), values, valid_lens)

    def attend_projected(self, queries_h: Tensor, keys_h: Tensor, values: Tensor,
                         valid_lens: Tensor | None) -> Tensor:
        """Attention from already projected queries (B, Q, H) and keys (B, K, H).

        Split out of ``forward`` so that a decoder can project its keys once per
        sequence instead of once per step.
        """
        # (B, Q, 1, H) + (B, 1, K, H) -> (B, Q, K, H)
        features = torch.tanh(queries_h.unsqueeze(2) + keys_h.unsqueeze(1))
        scores = self.w_v(features).squeeze(-1)  # (B, Q, K, 1) -> (B, Q, K)
        self.attention_weights = masked_softmax(scores, valid_lens)  # (B, Q, K)
        return self.dropout(self.attention_weights) @ values  # (B, Q, K) @ (B, K, v) -> (B, Q, v)


class DistanceAttention(nn.Module):
    """Distance attention (exercise 11.3.1): score(q, k) = -‖q - k‖² / (2√D).

    Computed as (q·k - ‖k‖²/2) / √D: the dropped -‖q‖²/(2√D) is the same for every
    key of a query, so the softmax does not see it; only the keys' squared norms
    are needed, as the exercise suggests.
    """

    def __init__(self, dropout: float):
        super().__init__()
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries: Tensor, keys: Tensor, values: Tensor,
                valid_lens: Tensor | None = None) -> Tensor:
        d = queries.shape[-1]
        dots = queries @ keys.transpose(1, 2)          # (B, Q, D) @ (B, D, K) -> (B, Q, K)
        half_key_norms = (keys * keys).sum(-1) / 2     # (B, K)
        scores = (dots - half_key_norms.unsqueeze(1)) / math.sqrt(d)  # (B, Q, K) - (B, 1, K)
        self.attention_weights = masked_softmax(scores, valid_lens)  # (B, Q, K)
        return self.dropout(self.attention_weights) @ values  # (B, Q, v)


class BilinearAttention(nn.Module):
    """Bilinear attention (exercise 11.3.2): score(q, k) = qᵀ M k / √query_size.

    ``M`` maps keys of any size to the query size, so queries and keys may differ.
    """

    def __init__(self, query_size: int, dropout: float):
        super().__init__()
        self.M = nn.LazyLinear(query_size, bias=False)
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries: Tensor, keys: Tensor, values: Tensor,
                valid_lens: Tensor | None = None) -> Tensor:
        mapped_keys = self.M(keys)  # (B, K, k_size) -> (B, K, D)
        scores = queries @ mapped_keys.transpose(1, 2) / math.sqrt(queries.shape[-1])  # (B, Q, K)
        self.attention_weights = masked_softmax(scores, valid_lens)  # (B, Q, K)
        return self.dropout(self.attention_weights) @ values  # (B, Q, v)

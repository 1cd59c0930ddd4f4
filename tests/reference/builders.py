"""The four reference attentions, built with their lazy layers materialised.

A module is built under a fixed seed and materialised by one eval-mode forward, so two
builds for the same batch have the same weights whatever their dropout.
"""
import torch
from torch import nn

from reference import AdditiveAttention, BilinearAttention, DistanceAttention, DotProductAttention

from .strategies import AttentionBatch

ATTENTIONS = ("dot", "additive", "distance", "bilinear")
DIFFERENT_SIZES_OK = ("additive", "bilinear")  # queries and keys may differ in size
NUM_HIDDENS = 5  # additive attention's hidden units


def make_attention(name: str, query_size: int, dropout: float) -> nn.Module:
    if name == "dot":
        return DotProductAttention(dropout)
    if name == "additive":
        return AdditiveAttention(NUM_HIDDENS, dropout)
    if name == "distance":
        return DistanceAttention(dropout)
    return BilinearAttention(query_size, dropout)


def build_attention(name: str, batch: AttentionBatch, dropout: float = 0.0,
                    seed: int = 0) -> nn.Module:
    """Module ``name`` in eval mode, in the batch's dtype, lazy layers sized for ``batch``."""
    torch.manual_seed(seed)
    module = make_attention(name, batch.queries.shape[-1], dropout).eval()
    queries, keys, values = (t.float() for t in batch.args()[:3])
    with torch.no_grad():
        module(queries, keys, values, batch.valid_lens)  # materialises LazyLinear in float32
    return module.to(batch.queries.dtype)

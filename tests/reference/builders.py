"""The reference attentions and decoders, built with their lazy layers materialised.

A module is built under a fixed seed and materialised by one eval-mode forward, so two
builds for the same batch have the same weights whatever their dropout.
"""
import torch
from torch import nn

from reference import (AdditiveAttention, BilinearAttention, DistanceAttention,
                       DotAttentionDecoder, DotProductAttention, LSTMAttentionDecoder,
                       LSTMEncoder, Seq2SeqAttentionDecoder, Seq2SeqEncoder)

from .strategies import VOCAB, AttentionBatch

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


DECODERS = {  # decoder name -> (encoder class, decoder class)
    "Seq2SeqAttentionDecoder": (Seq2SeqEncoder, Seq2SeqAttentionDecoder),
    "LSTMAttentionDecoder": (LSTMEncoder, LSTMAttentionDecoder),
    "DotAttentionDecoder": (Seq2SeqEncoder, DotAttentionDecoder),
}
EMBED, HIDDEN = 6, 8  # E != H, so concatenating in the wrong order changes the numbers


def build_seq2seq(name: str, num_layers: int, seed: int = 0) -> tuple[nn.Module, nn.Module]:
    """(encoder, decoder) in eval mode and float64, lazy layers materialised."""
    encoder_cls, decoder_cls = DECODERS[name]
    torch.manual_seed(seed)
    encoder = encoder_cls(VOCAB, EMBED, HIDDEN, num_layers).eval()
    decoder = decoder_cls(VOCAB, EMBED, HIDDEN, num_layers).eval()
    src, lens = torch.zeros(1, 2, dtype=torch.int64), torch.tensor([2])  # (B, T), (B,)
    with torch.no_grad():
        decoder(src, decoder.init_state(encoder(src, lens), lens))  # materialises LazyLinear
    return encoder.double(), decoder.double()

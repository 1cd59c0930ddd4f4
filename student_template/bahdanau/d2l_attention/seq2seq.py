# Generated from reference/seq2seq.py by `autograder release`; do not edit.
"""The book's encoder-decoder library (D2L 10.6-10.7, 11.4): bases, encoders, Seq2Seq.

Public: ships to students inside the released helper package.
Shape legend: B batch, T source steps, S target steps, E embedding, H hidden, V vocabulary.
"""
import torch
from torch import Tensor, nn
from torch.nn import functional as F


def init_seq2seq(module: nn.Module) -> None:
    """Xavier initialisation of linear and recurrent weights, as in the book."""
    if type(module) is nn.Linear:
        nn.init.xavier_uniform_(module.weight)
    if type(module) in (nn.GRU, nn.LSTM):
        for name in module._flat_weights_names:
            if "weight" in name:
                nn.init.xavier_uniform_(module._parameters[name])


class Encoder(nn.Module):
    """The base encoder interface."""

    def forward(self, X, *args):
        raise NotImplementedError


class Decoder(nn.Module):
    """The base decoder interface."""

    def init_state(self, enc_all_outputs, *args):
        raise NotImplementedError

    def forward(self, X, state):
        raise NotImplementedError


class AttentionDecoder(Decoder):
    """The base attention-based decoder interface (11.4.2)."""

    @property
    def attention_weights(self):
        raise NotImplementedError


class EncoderDecoder(nn.Module):
    """The base class for the encoder-decoder architecture."""

    def __init__(self, encoder: Encoder, decoder: Decoder):
        super().__init__()
        self.encoder = encoder
        self.decoder = decoder

    def forward(self, enc_X: Tensor, dec_X: Tensor, *args) -> Tensor:
        enc_all_outputs = self.encoder(enc_X, *args)
        dec_state = self.decoder.init_state(enc_all_outputs, *args)
        return self.decoder(dec_X, dec_state)[0]  # (B, S, V), the decoder output only


class Seq2SeqEncoder(Encoder):
    """The RNN encoder: a multi-layer GRU over the embedded source."""

    def __init__(self, vocab_size: int, embed_size: int, num_hiddens: int,
                 num_layers: int, dropout: float = 0):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, embed_size)
        self.rnn = self.make_rnn(embed_size, num_hiddens, num_layers, dropout)
        self.apply(init_seq2seq)

    @staticmethod
    def make_rnn(embed_size, num_hiddens, num_layers, dropout) -> nn.Module:
        return nn.GRU(embed_size, num_hiddens, num_layers, dropout=dropout)

    def forward(self, X: Tensor, *args):
        embs = self.embedding(X.t().type(torch.int64))  # (B, T) -> (T, B, E)
        outputs, state = self.rnn(embs)  # outputs (T, B, H); state (L, B, H) or (h, c)
        return outputs, state


class LSTMEncoder(Seq2SeqEncoder):
    """The same encoder with an LSTM: its state is the pair (h, c)."""

    @staticmethod
    def make_rnn(embed_size, num_hiddens, num_layers, dropout) -> nn.Module:
        return nn.LSTM(embed_size, num_hiddens, num_layers, dropout=dropout)


class Seq2Seq(EncoderDecoder):
    """Encoder-decoder for translation, with the padding-masked cross-entropy loss."""

    def __init__(self, encoder: Encoder, decoder: Decoder, tgt_pad: int):
        super().__init__(encoder, decoder)
        self.tgt_pad = tgt_pad

    def loss(self, Y_hat: Tensor, Y: Tensor) -> Tensor:
        """Mean cross-entropy over the non-padding target tokens. Y_hat (B, S, V), Y (B, S)."""
        per_token = F.cross_entropy(Y_hat.reshape(-1, Y_hat.shape[-1]), Y.reshape(-1),
                                    reduction="none")  # (B*S,)
        keep = (Y.reshape(-1) != self.tgt_pad).type(per_token.dtype)  # (B*S,)
        return (per_token * keep).sum() / keep.sum()

    @torch.no_grad()
    def predict_step(self, batch, device, num_steps: int,
                     save_attention_weights: bool = False):
        """Greedy decoding of ``num_steps`` tokens, starting from each target's ``<bos>``.

        Returns the predicted tokens (B, num_steps) and, when asked, the decoder's
        attention weights at every step (a list of lists of (B, 1, T) tensors).
        """
        src, tgt, src_valid_len, _ = [a.to(device) for a in batch]
        enc_all_outputs = self.encoder(src, src_valid_len)
        dec_state = self.decoder.init_state(enc_all_outputs, src_valid_len)
        outputs, attention_weights = [tgt[:, :1]], []  # <bos>, (B, 1)
        for _ in range(num_steps):
            Y, dec_state = self.decoder(outputs[-1], dec_state)  # (B, 1, V)
            outputs.append(Y.argmax(2))                          # (B, 1)
            if save_attention_weights:
                attention_weights.append(self.decoder.attention_weights)
        return torch.cat(outputs[1:], 1), attention_weights  # (B, num_steps)

"""Reference solutions for the bahdanau tasks: three RNN decoders with attention (SPEC §2).

Shape legend: B batch, T source steps, S target steps, E embedding, H hidden units,
L layers, V vocabulary.

Unlike the book's decoder, which applies ``W_k`` to the encoder outputs at every
step, these project the keys once per call of ``forward``: the same numbers, less work.
"""
import torch
from torch import Tensor, nn

from .attention import AdditiveAttention, DotProductAttention
from .seq2seq import AttentionDecoder, init_seq2seq


class Seq2SeqAttentionDecoder(AttentionDecoder):
    """GRU decoder with additive attention; the query is the last layer's hidden state."""

    def __init__(self, vocab_size: int, embed_size: int, num_hiddens: int,
                 num_layers: int, dropout: float = 0):
        super().__init__()
        self.attention = self.make_attention(num_hiddens, dropout)
        self.embedding = nn.Embedding(vocab_size, embed_size)
        self.rnn = self.make_rnn(embed_size + num_hiddens, num_hiddens, num_layers, dropout)
        self.dense = nn.LazyLinear(vocab_size)
        self.apply(init_seq2seq)

    @staticmethod
    def make_attention(num_hiddens: int, dropout: float) -> nn.Module:
        return AdditiveAttention(num_hiddens, dropout)

    @staticmethod
    def make_rnn(input_size: int, num_hiddens: int, num_layers: int, dropout: float) -> nn.Module:
        return nn.GRU(input_size, num_hiddens, num_layers, dropout=dropout)

    @staticmethod
    def query_of(hidden_state) -> Tensor:
        """The attention query: the last layer's hidden state, (L, B, H) -> (B, 1, H)."""
        return hidden_state[-1].unsqueeze(1)

    def prepare_keys(self, enc_outputs: Tensor) -> Tensor:
        """Project the keys once: (B, T, H) -> (B, T, H)."""
        return self.attention.W_k(enc_outputs)

    def attend(self, query: Tensor, keys: Tensor, values: Tensor, valid_lens) -> Tensor:
        """Context for one step: (B, 1, H) query over prepared keys -> (B, 1, H)."""
        return self.attention.attend_projected(self.attention.W_q(query), keys, values, valid_lens)

    @staticmethod
    def rnn_input(context: Tensor, emb: Tensor) -> Tensor:
        """The step's RNN input, context first as in 11.4.2: (B, 1, H) + (B, E) -> (B, 1, H + E)."""
        return torch.cat((context, emb.unsqueeze(1)), dim=-1)

    def init_state(self, enc_outputs, enc_valid_lens):
        outputs, hidden_state = enc_outputs  # (T, B, H), encoder state
        return outputs.permute(1, 0, 2), hidden_state, enc_valid_lens  # (B, T, H)

    def forward(self, X: Tensor, state):
        enc_outputs, hidden_state, enc_valid_lens = state  # (B, T, H)
        embs = self.embedding(X).permute(1, 0, 2)  # (B, S) -> (S, B, E)
        keys = self.prepare_keys(enc_outputs)  # (B, T, H), once for all S steps
        outputs, self._attention_weights = [], []
        for emb in embs:  # (B, E)
            context = self.attend(self.query_of(hidden_state), keys, enc_outputs,
                                  enc_valid_lens)  # (B, 1, H)
            step_input = self.rnn_input(context, emb)  # (B, 1, H + E)
            out, hidden_state = self.rnn(step_input.permute(1, 0, 2), hidden_state)  # out (1, B, H)
            outputs.append(out)
            self._attention_weights.append(self.attention.attention_weights)  # (B, 1, T)
        logits = self.dense(torch.cat(outputs, dim=0))  # (S, B, H) -> (S, B, V)
        return logits.permute(1, 0, 2), (enc_outputs, hidden_state, enc_valid_lens)  # (B, S, V)

    @property
    def attention_weights(self) -> list[Tensor]:
        return self._attention_weights


class LSTMAttentionDecoder(Seq2SeqAttentionDecoder):
    """Exercise 11.4.1: the same decoder with an LSTM; its state is the pair (h, c)."""

    @staticmethod
    def make_rnn(input_size: int, num_hiddens: int, num_layers: int, dropout: float) -> nn.Module:
        return nn.LSTM(input_size, num_hiddens, num_layers, dropout=dropout)

    @staticmethod
    def query_of(hidden_state) -> Tensor:
        h, _ = hidden_state  # the query is h, not the cell state c
        return h[-1].unsqueeze(1)  # (L, B, H) -> (B, 1, H)


class DotAttentionDecoder(Seq2SeqAttentionDecoder):
    """Exercise 11.4.2: GRU decoder with scaled dot-product attention."""

    @staticmethod
    def make_attention(num_hiddens: int, dropout: float) -> nn.Module:
        return DotProductAttention(dropout)

    def prepare_keys(self, enc_outputs: Tensor) -> Tensor:
        return enc_outputs  # dot-product attention uses the keys as they are

    def attend(self, query: Tensor, keys: Tensor, values: Tensor, valid_lens) -> Tensor:
        return self.attention(query, keys, values, valid_lens)  # (B, 1, H)

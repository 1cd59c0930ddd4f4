"""Mutants written as the book's readers write them (issue 17): the older book's code (d2l-en
0.17 and earlier, d2l-zh v2, the 2020 text and its first PyTorch port), pasted over the
notebook's skeleton, and classes built on the student's own earlier solutions.

Older-book code that cannot be called as this notebook's contract says loses the task's
points, and the feedback names where it came from (``mistake``). Written from the older
books' published code as it reads there, adapted only where a student pasting it would
(the class renamed, ``d2l.`` kept where a paste keeps it).
"""
from .harness import Mutant
from .variants_decoders import INIT_STATE, LSTM, SEQ, _cell, _loop

SOFTMAX, ADD, BIL = "masked_softmax", "additive_attention", "bilinear_attention"
DEVICE = ("runs on any device",)

# --- masked_softmax ---------------------------------------------------------------------------
D2L_017_MASKED_SOFTMAX = '''
def masked_softmax(X, valid_lens):
    """Perform softmax operation by masking elements on the last axis."""
    # `X`: 3D tensor, `valid_lens`: 1D or 2D tensor
    if valid_lens is None:
        return nn.functional.softmax(X, dim=-1)
    else:
        shape = X.shape
        if valid_lens.dim() == 1:
            valid_lens = torch.repeat_interleave(valid_lens, shape[1])
        else:
            valid_lens = valid_lens.reshape(-1)
        # On the last axis, replace masked elements with a very large negative
        # value, whose exponentiation outputs 0
        X = d2l.sequence_mask(X.reshape(-1, shape[-1]), valid_lens, value=-1e6)
        return nn.functional.softmax(X.reshape(shape), dim=-1)
'''

SEQUENCE_MASK = '''
def sequence_mask(X, valid_len, value=0):
    """Mask irrelevant entries in sequences."""
    maxlen = X.size(1)
    mask = torch.arange((maxlen), dtype=torch.float32,
                        device=X.device)[None, :] < valid_len[:, None]
    X[~mask] = value
    return X
'''

# The first PyTorch port of the 2020 text: lengths through numpy, a float tensor on the CPU.
PORT_2020 = '''
def SequenceMask(X, X_len, value=-1e6):
    maxlen = X.size(1)
    mask = torch.arange(maxlen)[None, :].to(X_len.device) < X_len[:, None]
    X[~mask] = value
    return X


def masked_softmax(X, valid_length):
    softmax = nn.Softmax(dim=-1)
    if valid_length is None:
        return softmax(X)
    else:
        shape = X.shape
        if valid_length.dim() == 1:
            valid_length = torch.FloatTensor(valid_length.numpy().repeat(shape[1], axis=0))
        else:
            valid_length = valid_length.reshape((-1,))
        X = SequenceMask(X.reshape((-1, shape[-1])), valid_length)
        return softmax(X).reshape(shape)
'''

# --- additive_attention -------------------------------------------------------------------------
D2L_017_ADDITIVE = '''
class AdditiveAttention(nn.Module):
    """Additive attention."""
    def __init__(self, key_size, query_size, num_hiddens, dropout, **kwargs):
        super(AdditiveAttention, self).__init__(**kwargs)
        self.W_k = nn.Linear(key_size, num_hiddens, bias=False)
        self.W_q = nn.Linear(query_size, num_hiddens, bias=False)
        self.w_v = nn.Linear(num_hiddens, 1, bias=False)
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, valid_lens):
        queries, keys = self.W_q(queries), self.W_k(keys)
        # After dimension expansion, shape of `queries`: (`batch_size`, no. of
        # queries, 1, `num_hiddens`) and shape of `keys`: (`batch_size`, 1,
        # no. of key-value pairs, `num_hiddens`). Sum them up with
        # broadcasting
        features = queries.unsqueeze(2) + keys.unsqueeze(1)
        features = torch.tanh(features)
        # There is only one output of `self.w_v`, so we remove the last
        # one-dimensional entry from the shape. Shape of `scores`:
        # (`batch_size`, no. of queries, no. of key-value pairs)
        scores = self.w_v(features).squeeze(-1)
        self.attention_weights = masked_softmax(scores, valid_lens)
        # Shape of `values`: (`batch_size`, no. of key-value pairs, value
        # dimension)
        return torch.bmm(self.dropout(self.attention_weights), values)
'''

# The 2020 text's MLPAttention, renamed for the cell: units for num_hiddens, v for w_v.
MLP_2020 = '''
class AdditiveAttention(nn.Module):
    def __init__(self, key_size, query_size, units, dropout, **kwargs):
        super(AdditiveAttention, self).__init__(**kwargs)
        self.W_k = nn.Linear(key_size, units, bias=False)
        self.W_q = nn.Linear(query_size, units, bias=False)
        self.v = nn.Linear(units, 1, bias=False)
        self.dropout = nn.Dropout(dropout)

    def forward(self, query, key, value, valid_len):
        query, key = self.W_q(query), self.W_k(key)
        # Expand query to (batch_size, #querys, 1, units), and key to
        # (batch_size, 1, #kv_pairs, units). Then plus them with broadcast
        features = query.unsqueeze(2) + key.unsqueeze(1)
        scores = self.v(torch.tanh(features)).squeeze(-1)
        attention_weights = self.dropout(masked_softmax(scores, valid_len))
        return torch.bmm(attention_weights, value)
'''

# --- decoders ---------------------------------------------------------------------------------
D2L_017_DECODER_INIT = '''
class Seq2SeqAttentionDecoder(AttentionDecoder):
    def __init__(self, vocab_size, embed_size, num_hiddens, num_layers,
                 dropout=0, **kwargs):
        super(Seq2SeqAttentionDecoder, self).__init__(**kwargs)
        self.attention = {attention}(
            num_hiddens, num_hiddens, num_hiddens, dropout)
        self.embedding = nn.Embedding(vocab_size, embed_size)
        self.rnn = nn.GRU(
            embed_size + num_hiddens, num_hiddens, num_layers,
            dropout=dropout)
        self.dense = nn.Linear(num_hiddens, vocab_size)

    def init_state(self, enc_outputs, enc_valid_lens, *args):
        # Shape of `outputs`: (`num_steps`, `batch_size`, `num_hiddens`).
        # Shape of `hidden_state[0]`: (`num_layers`, `batch_size`,
        # `num_hiddens`)
        outputs, hidden_state = enc_outputs
        return (outputs.permute(1, 0, 2), hidden_state, enc_valid_lens)
'''
D2L_017_DECODER_FORWARD = '''
    def forward(self, X, state):
        enc_outputs, hidden_state, enc_valid_lens = state
        X = self.embedding(X).permute(1, 0, 2)
        outputs, self._attention_weights = [], []
        for x in X:
            query = torch.unsqueeze(hidden_state[-1], dim=1)
            context = self.attention(
                query, enc_outputs, enc_outputs, enc_valid_lens)
            x = torch.cat((context, torch.unsqueeze(x, dim=1)), dim=-1)
            out, hidden_state = self.rnn(x.permute(1, 0, 2), hidden_state)
            outputs.append(out)
            self._attention_weights.append(self.attention.attention_weights)
        outputs = self.dense(torch.cat(outputs, dim=0))
        return outputs.permute(1, 0, 2), [enc_outputs, hidden_state,
                                          enc_valid_lens]

    @property
    def attention_weights(self):
        return self._attention_weights
'''


# A decoder without attention's init_state (chapter 10's, no lengths), kept in an attention
# decoder: told only "init_state() takes 2 positional arguments but 3 were given" (issue 47).
INIT_STATE_WITHOUT_LENS = _cell(SEQ, '''
    def init_state(self, enc_outputs):
        outputs, hidden_state = enc_outputs
        return outputs.permute(1, 0, 2), hidden_state

    def forward(self, X, state):
        enc_outputs, hidden_state = state
        X = self.embedding(X).permute(1, 0, 2)
        outputs, self._attention_weights = [], []
        for x in X:
            query = torch.unsqueeze(hidden_state[-1], dim=1)
            context = self.attention(query, enc_outputs, enc_outputs, None)
            x = torch.cat((context, torch.unsqueeze(x, dim=1)), dim=-1)
            out, hidden_state = self.rnn(x.permute(1, 0, 2), hidden_state)
            outputs.append(out)
            self._attention_weights.append(self.attention.attention_weights)
        outputs = self.dense(torch.cat(outputs, dim=0))
        return outputs.permute(1, 0, 2), [enc_outputs, hidden_state]
''')


def _lstm_for_gru_state(hidden: str) -> str:
    """An LSTM decoder whose init_state treats the encoder's state as the GRU's tensor h."""
    forward = _loop(query="hidden_state[0][-1].unsqueeze(1)")[len(INIT_STATE):]
    return _cell(LSTM, f'''
    def init_state(self, enc_outputs, enc_valid_lens):
        outputs, hidden_state = enc_outputs
        return outputs.permute(1, 0, 2), {hidden}, enc_valid_lens
''' + forward)


def _own_base_and_lstm(step_input: str = "torch.cat((context, x.unsqueeze(1)), dim=-1)") -> str:
    """The student's Seq2SeqAttentionDecoder (the cell above), and an LSTMAttentionDecoder that
    subclasses it, changing only the recurrent layer and the query."""
    base = _cell(SEQ, _loop(query="self.query_of(hidden_state)", step_input=step_input) + '''
    def query_of(self, hidden_state):
        return hidden_state[-1].unsqueeze(1)  # the last layer's hidden state, (B, 1, H)
''')
    return base + '''

class LSTMAttentionDecoder(Seq2SeqAttentionDecoder):
    def __init__(self, vocab_size, embed_size, num_hiddens, num_layers, dropout=0):
        super().__init__(vocab_size, embed_size, num_hiddens, num_layers, dropout)
        self.rnn = nn.LSTM(embed_size + num_hiddens, num_hiddens, num_layers, dropout=dropout)
        self.apply(init_seq2seq)

    def query_of(self, hidden_state):
        h, c = hidden_state
        return h[-1].unsqueeze(1)  # h, not the cell state c
'''


def _own_dot_and_bilinear(scale: str) -> str:
    """The student's DotProductAttention (the cell above), and a BilinearAttention built on it."""
    return f'''
class DotProductAttention(nn.Module):
    def __init__(self, dropout):
        super().__init__()
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, valid_lens=None):
        scores = torch.einsum("bqd,bkd->bqk", queries, keys){scale}
        self.attention_weights = masked_softmax(scores, valid_lens)
        return torch.bmm(self.dropout(self.attention_weights), values)


class BilinearAttention(DotProductAttention):
    def __init__(self, query_size, dropout):
        super().__init__(dropout)
        self.M = nn.LazyLinear(query_size, bias=False)

    def forward(self, queries, keys, values, valid_lens=None):
        return super().forward(queries, self.M(keys), values, valid_lens)  # qᵀ(Mk)/√query_size
'''


MUTANTS = [
    Mutant(SOFTMAX, "d2l_017_calls_d2l_sequence_mask", D2L_017_MASKED_SOFTMAX, correct=False,
           mistake="older_book_d2l"),
    Mutant(SOFTMAX, "d2l_017_with_its_sequence_mask_copied",
           SEQUENCE_MASK + D2L_017_MASKED_SOFTMAX.replace("d2l.sequence_mask", "sequence_mask"), correct=True),
    Mutant(SOFTMAX, "first_pytorch_port_through_numpy", PORT_2020, correct=False, fails_only=DEVICE),
    Mutant(ADD, "d2l_017_key_and_query_sizes", D2L_017_ADDITIVE, correct=False,
           mistake="older_additive_signature"),
    Mutant(ADD, "mlp_attention_2020", MLP_2020, correct=False, mistake="older_additive_signature"),
    Mutant(SEQ, "d2l_017_decoder", D2L_017_DECODER_INIT.format(attention="AdditiveAttention")
           + D2L_017_DECODER_FORWARD, correct=False, mistake="older_additive_call"),
    Mutant(SEQ, "d2l_017_decoder_pasted_with_d2l", D2L_017_DECODER_INIT.format(attention="d2l.AdditiveAttention")
           + D2L_017_DECODER_FORWARD, correct=False, mistake="older_book_d2l"),
    Mutant(SEQ, "init_state_without_lens", INIT_STATE_WITHOUT_LENS, correct=False, mistake="init_state_without_lens"),
    Mutant(LSTM, "gru_state_as_h_and_h", _lstm_for_gru_state("(hidden_state, hidden_state)"),
           correct=False, mistake="lstm_state_for_gru"),
    Mutant(LSTM, "gru_state_with_zero_cell",
           _lstm_for_gru_state("(hidden_state, torch.zeros_like(hidden_state))"),
           correct=False, mistake="lstm_state_for_gru"),
    # Subclassing the student's own earlier solution (issue 17 item 5): graded with its base,
    # and again on the book's where that base loses points, the better grade counting (a
    # subclass that needs its own base's hooks keeps that base and its mistake).
    Mutant(LSTM, "subclasses_own_seq2seq_decoder", _own_base_and_lstm(), correct=True),
    Mutant(LSTM, "subclasses_own_seq2seq_with_a_bug", _own_base_and_lstm(
        "torch.cat((x.unsqueeze(1), context), dim=-1)"), correct=False, mistake="context_after_embedding"),
    Mutant(BIL, "subclasses_own_dot_product_attention", _own_dot_and_bilinear(
        " / math.sqrt(queries.shape[-1])"), correct=True),
    Mutant(BIL, "subclasses_own_dot_product_without_sqrt", _own_dot_and_bilinear(""), correct=True),
]

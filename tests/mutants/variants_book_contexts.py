"""Mutants that only the book's own use of a module shows (SPEC §2: "Inputs as the book's own
code passes them" and "To float rounding"): each bug beside the correct twin that differs from
it by the fix. The drawn examples are small, fresh and contiguous; the decoder passes
``enc_outputs.permute(1, 0, 2)`` as keys and values, calls a module again and again, trains it.
"""
from .harness import Mutant
from .variants_attention import _distance as _distance_cell
from .variants_decoders import DOT as DOT_DEC, INIT_STATE, LSTM, SEQ, _cell, _loop

SOFTMAX, DOT, ADD, DIST, BIL = ("masked_softmax", "dot_product_attention", "additive_attention",
                                "distance_attention", "bilinear_attention")
GRADIENTS = ("gradients match the reference",)
MATCHES = ("matches the reference",)
WEIGHTS = ("attention_weights match the reference",)
PRECISION = ("float64 computed in float64",)


def _softmax_table(size: str) -> str:
    """Positions from a table made once (a lookup table sized for the examples one tried)."""
    return f'''
POSITIONS = torch.arange(64)

def masked_softmax(X, valid_lens):
    global POSITIONS
    if valid_lens is None:
        return torch.softmax(X, dim=-1)
    K = X.shape[-1]{size}
    lens = valid_lens[:, None] if valid_lens.dim() == 1 else valid_lens  # (B, 1) or (B, Q)
    keep = POSITIONS[:K].to(X.device) < lens[..., None]                  # (B, 1 or Q, K)
    return torch.softmax(X.masked_fill(~keep, -1e6), dim=-1)
'''


def _softmax_in(dtype: str) -> str:
    return f'''
def masked_softmax(X, valid_lens):
    scores = X.to({dtype})
    if valid_lens is not None:
        lens = valid_lens[:, None] if valid_lens.dim() == 1 else valid_lens
        keep = torch.arange(X.shape[-1], device=X.device) < lens[..., None]
        scores = scores.masked_fill(~keep, -1e6)
    return (scores - torch.logsumexp(scores, dim=-1, keepdim=True)).exp().to(X.dtype)
'''


def _dot(body: str, init: str = "") -> str:
    """A DotProductAttention whose forward ends with ``body`` (scores computed above it)."""
    return f'''
class DotProductAttention(nn.Module):
    def __init__(self, dropout):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        self.p = dropout{init}

    def forward(self, queries, keys, values, valid_lens=None):
        scores = torch.bmm(queries, keys.transpose(1, 2)) / math.sqrt(queries.shape[-1])  # (B, Q, K)
{body}'''


def _additive(keys: str) -> str:
    return f'''
class AdditiveAttention(nn.Module):
    def __init__(self, num_hiddens, dropout):
        super().__init__()
        self.W_k = nn.LazyLinear(num_hiddens, bias=False)
        self.W_q = nn.LazyLinear(num_hiddens, bias=False)
        self.w_v = nn.LazyLinear(1, bias=False)
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, valid_lens):
        B, K, _ = keys.shape
        projected = {keys}  # (B, K, H)
        features = torch.tanh(self.W_q(queries).unsqueeze(2) + projected.unsqueeze(1))  # (B, Q, K, H)
        self.attention_weights = masked_softmax(self.w_v(features).squeeze(-1), valid_lens)
        return torch.bmm(self.dropout(self.attention_weights), values)
'''


def _distance(weights: str) -> str:
    return f'''
class DistanceAttention(nn.Module):
    def __init__(self, dropout):
        super().__init__()
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, valid_lens=None):
        scores = -torch.cdist(queries, keys) ** 2 / (2 * math.sqrt(queries.shape[-1]))  # (B, Q, K)
        K = keys.shape[1]
        if valid_lens is None:
            keep = torch.ones_like(scores, dtype=torch.bool)
        else:
            lens = valid_lens[:, None] if valid_lens.dim() == 1 else valid_lens
            keep = torch.arange(K, device=scores.device) < lens[..., None]  # (B, 1 or Q, K)
        {weights}
        self.attention_weights = e / e.sum(-1, keepdim=True).clamp_min(1e-30)
        return torch.bmm(self.dropout(self.attention_weights), values)
'''


def _distance_in(dtype: str) -> str:
    return f'''
class DistanceAttention(nn.Module):
    def __init__(self, dropout):
        super().__init__()
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, valid_lens=None):
        distances = torch.cdist(queries.to({dtype}), keys.to({dtype})).to(queries.dtype)
        scores = -distances ** 2 / (2 * math.sqrt(queries.shape[-1]))
        self.attention_weights = masked_softmax(scores, valid_lens)
        return torch.bmm(self.dropout(self.attention_weights), values)
'''


def _bilinear(store: str) -> str:
    return f'''
class BilinearAttention(nn.Module):
    def __init__(self, query_size, dropout):
        super().__init__()
        self.M = nn.LazyLinear(query_size, bias=False)
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, valid_lens=None):
        scores = torch.bmm(queries, self.M(keys).transpose(1, 2)) / math.sqrt(queries.shape[-1])
        weights = masked_softmax(scores, valid_lens)  # (B, Q, K)
        {store}
        return torch.bmm(self.dropout(weights), values)
'''


_BUFFER = '''if getattr(self, "_buffer", None) is None or self._buffer.shape != weights.shape \\
                or self._buffer.dtype != weights.dtype or self._buffer.device != weights.device:
            self._buffer = torch.empty_like(weights)
        self._buffer.copy_(weights.detach())'''

_DOT_OUT = '''        self.attention_weights = masked_softmax(scores, valid_lens)
        out = torch.bmm(self.dropout(self.attention_weights), values)  # (B, Q, v)
        if getattr(self, "_out", None) is None or self._out.shape != out.shape \\
                or self._out.dtype != out.dtype or self._out.device != out.device:
            self._out = torch.empty_like(out)
        self._out.copy_(out)  # one buffer for every call
'''

_QUERIES_VIEWED = '''        B, Q, d = queries.shape  # the scores above recomputed from a view: contiguous queries only
        scores = torch.bmm(queries.view(B * Q, d).view(B, Q, d), keys.transpose(1, 2)) / math.sqrt(d)
        self.attention_weights = masked_softmax(scores, valid_lens)
        return torch.bmm(self.dropout(self.attention_weights), values)
'''

_KEYS_AND_VALUES_SWAPPED = '''        scores = torch.bmm(queries, values.transpose(1, 2)) / math.sqrt(queries.shape[-1])  # raises unless v = d
        self.attention_weights = masked_softmax(scores, valid_lens)
        return torch.bmm(self.dropout(self.attention_weights), keys)
'''

_HAND_DROPOUT = '''        weights = masked_softmax(scores, valid_lens)
        self.attention_weights = weights.clone()
        if self.training and self.p > 0:
            keep = (torch.rand_like(weights) >= self.p).to(weights.dtype)
            {apply}
        return torch.bmm(weights, values)
'''

_NAMED_LSTM = '''
    def init_state(self, enc_outputs, enc_valid_lens):
        outputs, (h, c) = enc_outputs
        return outputs.permute(1, 0, 2), LSTMState(h, c), enc_valid_lens

    def forward(self, X, state):
        enc_outputs, hidden_state, enc_valid_lens = state
        X = self.embedding(X).permute(1, 0, 2)  # (S, B, E)
        outputs, self._attention_weights = [], []
        for x in X:
            query = hidden_state.h[-1].unsqueeze(1)  # (B, 1, H)
            context = self.attention(query, enc_outputs, enc_outputs, enc_valid_lens)  # (B, 1, H)
            x = torch.cat((context, x.unsqueeze(1)), dim=-1)
            out, (h, c) = self.rnn(x.permute(1, 0, 2), tuple(hidden_state))
            hidden_state = LSTMState(h, c)
            outputs.append(out)
            self._attention_weights.append(self.attention.attention_weights)
        outputs = self.dense(torch.cat(outputs, dim=0))  # (S, B, V)
        return outputs.permute(1, 0, 2), (enc_outputs, hidden_state, enc_valid_lens)
'''

_CHECKPOINT = '''
class AdditiveAttention(nn.Module):
    def __init__(self, num_hiddens, dropout):
        super().__init__()
        self.W_k = nn.LazyLinear(num_hiddens, bias=False)
        self.W_q = nn.LazyLinear(num_hiddens, bias=False)
        self.w_v = nn.LazyLinear(1, bias=False)
        self.dropout = nn.Dropout(dropout)

    def scores(self, queries, keys):
        features = torch.tanh(self.W_q(queries).unsqueeze(2) + self.W_k(keys).unsqueeze(1))  # (B, Q, K, H)
        return self.w_v(features).squeeze(-1)  # (B, Q, K)

    def forward(self, queries, keys, values, valid_lens):
        scores = torch.utils.checkpoint.checkpoint(self.scores, queries, keys, use_reentrant=False)
        self.attention_weights = masked_softmax(scores, valid_lens)
        return torch.bmm(self.dropout(self.attention_weights), values)
'''

CORRECT = [
    Mutant(SOFTMAX, "position_table_grown", _softmax_table('''
    if POSITIONS.numel() < K:
        POSITIONS = torch.arange(K)'''), correct=True),
    Mutant(SOFTMAX, "logsumexp_in_the_input_dtype", _softmax_in("X.dtype"), correct=True),
    Mutant(DOT, "weights_kept_in_every_mode", _dot('''        self.attention_weights = masked_softmax(scores, valid_lens)
        return torch.bmm(self.dropout(self.attention_weights), values)
'''), correct=True),
    Mutant(DOT, "valid_lens_of_this_call", _dot('''        self.lens = valid_lens
        self.attention_weights = masked_softmax(scores, self.lens)
        return torch.bmm(self.dropout(self.attention_weights), values)
'''), correct=True),
    Mutant(DOT, "dropout_by_hand_out_of_place", _dot(_HAND_DROPOUT.format(
        apply="weights = weights * keep / (1 - self.p)")), correct=True),
    Mutant(DOT, "output_buffer_returned_as_a_copy", _dot(_DOT_OUT + "        return self._out.clone()\n"),
           correct=True),
    Mutant(ADD, "keys_reshaped", _additive("self.W_k(keys.reshape(B * K, -1)).reshape(B, K, -1)"), correct=True),
    Mutant(ADD, "features_checkpointed", _CHECKPOINT, correct=True),
    Mutant(DIST, "exp_after_the_row_max", _distance(
        "scores = scores.masked_fill(~keep, float('-inf'))\n"
        "        top = scores.amax(-1, keepdim=True).clamp_min(-1e30)  # a row with no valid key: no max\n"
        "        e = torch.exp(scores - top) * keep"), correct=True),
    Mutant(DIST, "cdist_in_the_input_dtype", _distance_in("queries.dtype"), correct=True),
    Mutant(BIL, "weights_copied_from_the_buffer", _bilinear(_BUFFER + "\n        self.attention_weights = "
                                                                      "self._buffer.clone()"), correct=True),
    Mutant(LSTM, "namedtuple_state", "from collections import namedtuple\n"
           "LSTMState = namedtuple('LSTMState', ['h', 'c'])\n" + _cell(LSTM, _NAMED_LSTM), correct=True),
]

BUGS = [
    Mutant(SOFTMAX, "position_table_of_64", _softmax_table(""), correct=False),
    Mutant(SOFTMAX, "float64_in_float32", _softmax_in("torch.float32"), correct=False,
           must_fail=PRECISION, mistake="float32_inside"),
    # SPEC "To float rounding": a float32 √d (torch.tensor(d) is int64, its sqrt float32) scales
    # float64 scores with float32's rounding (9e-9 where float64 allows about 1e-15). Precision is
    # one property (issue 44): the value checks judge float64 at float32's tolerance, and only the
    # precision check fails, naming the mistake.
    Mutant(DOT, "sqrt_d_in_float32", _dot('''        scores = scores * math.sqrt(queries.shape[-1]) / torch.sqrt(torch.tensor(queries.shape[-1]))
        self.attention_weights = masked_softmax(scores, valid_lens)
        return torch.bmm(self.dropout(self.attention_weights), values)
'''), correct=False, fails_only=PRECISION, mistake="float32_inside"),
    Mutant(DOT, "weights_kept_in_eval_only", _dot('''        weights = masked_softmax(scores, valid_lens)
        if not self.training:
            self.attention_weights = weights
        return torch.bmm(self.dropout(weights), values)
'''), correct=False, fails_only=WEIGHTS),
    Mutant(DOT, "valid_lens_kept_from_the_last_call", _dot('''        if valid_lens is not None:
            self.lens = valid_lens
        self.attention_weights = masked_softmax(scores, getattr(self, "lens", None))
        return torch.bmm(self.dropout(self.attention_weights), values)
'''), correct=False, must_fail=MATCHES),
    Mutant(DOT, "dropout_by_hand_in_place", _dot(_HAND_DROPOUT.format(
        apply="weights.mul_(keep / (1 - self.p))  # in place: softmax's backward needs its output")),
           correct=False, fails_only=GRADIENTS),
    Mutant(DOT, "output_buffer_returned", _dot(_DOT_OUT + "        return self._out\n"), correct=False,
           fails_only=MATCHES),
    Mutant(ADD, "view_on_keys", _additive("self.W_k(keys.view(B * K, -1)).view(B, K, -1)"), correct=False,
           must_fail=MATCHES),
    Mutant(DOT, "view_on_queries", _dot(_QUERIES_VIEWED), correct=False, must_fail=MATCHES),
    Mutant(DOT, "keys_and_values_swapped", _dot(_KEYS_AND_VALUES_SWAPPED), correct=False,  # not the device's to charge
           fails_only=("output shape", "matches the reference", "matches the reference with 2-D valid_lens",
                       "attention_weights match the reference", "output equals attention_weights @ values",
                       "gradients match the reference", "deterministic in eval mode",
                       "dropout as nn.Dropout in train mode", *PRECISION)),  # raises: nothing to judge
    Mutant(DOT, "output_buffer_returned_under_no_grad", _dot(_DOT_OUT.replace(
        "        if getattr", "        if torch.is_grad_enabled():\n            return out\n        if getattr")
        + "        return self._out\n"), correct=False, fails_only=MATCHES),
    Mutant(DIST, "exp_without_the_row_max", _distance("e = torch.exp(scores) * keep"), correct=False,
           must_fail=MATCHES),
    Mutant(DIST, "float64_in_float32", _distance_in("torch.float32"), correct=False, must_fail=PRECISION,
           mistake="float32_inside"),
    Mutant(BIL, "weights_are_a_buffer", _bilinear(_BUFFER + "\n        self.attention_weights = self._buffer"),
           correct=False, fails_only=WEIGHTS),
]

MUTANTS = CORRECT + BUGS


# --- the decoders as predict_step drives them: one step per call, weights read after each ---
def _forward(new_list: str, returned: str = "outputs.permute(1, 0, 2)", extra: str = "") -> str:
    return INIT_STATE + f'''
    def forward(self, X, state):
        enc_outputs, hidden_state, enc_valid_lens = state
        X = self.embedding(X).permute(1, 0, 2)  # (S, B, E)
        outputs = []
        {new_list}
        for x in X:
            query = hidden_state[-1].unsqueeze(1)  # (B, 1, H)
            context = self.attention(query, enc_outputs, enc_outputs, enc_valid_lens)  # (B, 1, H)
            out, hidden_state = self.rnn(torch.cat((context, x.unsqueeze(1)), dim=-1).permute(1, 0, 2), hidden_state)
            outputs.append(out)
            self._attention_weights.append(self.attention.attention_weights)
        outputs = self.dense(torch.cat(outputs, dim=0))  # (S, B, V){extra}
        return {returned}, (enc_outputs, hidden_state, enc_valid_lens)
'''


_RESET_IN_INIT = INIT_STATE.replace("        outputs, hidden_state = enc_outputs",
                                    "        outputs, hidden_state = enc_outputs\n        self._attention_weights = []")
_LOGITS_BUFFER = '''
        if getattr(self, "_logits", None) is None or self._logits.shape != outputs.shape \\
                or self._logits.dtype != outputs.dtype or self._logits.device != outputs.device:
            self._logits = torch.empty_like(outputs)
        self._logits.copy_(outputs)  # one buffer for every call'''

DECODER_CORRECT = [
    Mutant(SEQ, "weights_list_new_in_each_forward", _cell(SEQ, _forward("self._attention_weights = []")),
           correct=True),
    Mutant(DOT_DEC, "logits_buffer_copied_out", _cell(DOT_DEC, _forward(
        "self._attention_weights = []", "self._logits.clone().permute(1, 0, 2)", _LOGITS_BUFFER)), correct=True),
]
DECODER_BUGS = [
    Mutant(SEQ, "weights_list_reset_in_init_state_only", _cell(SEQ, _forward("").replace(
        INIT_STATE, _RESET_IN_INIT)), correct=False, must_fail=("attention weights per step match the reference",)),
    Mutant(SEQ, "weights_list_cleared_in_place", _cell(SEQ, _forward(
        "if not hasattr(self, '_attention_weights'):\n            self._attention_weights = []\n"
        "        self._attention_weights.clear()  # the same list object every call")), correct=False,
           fails_only=("attention weights per step match the reference",)),
    Mutant(DOT_DEC, "logits_buffer_returned", _cell(DOT_DEC, _forward(
        "self._attention_weights = []", "self._logits.permute(1, 0, 2)", _LOGITS_BUFFER)), correct=False,
           fails_only=("step by step equals teacher forcing",)),
]

# Found by a blind tester: results that depend on earlier calls through something kept on self.
_KEYS_CACHED_BY = '''
class BilinearAttention(nn.Module):
    def __init__(self, query_size, dropout):
        super().__init__()
        self.M = nn.LazyLinear(query_size, bias=False)
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, valid_lens=None):
        key = {key}  # the decoder passes the same keys at every step: project them once
        if getattr(self, "_key", None) != key:
            self._key, self._projected = key, self.M(keys)  # (B, K, q)
        scores = torch.bmm(queries, self._projected.transpose(1, 2)) / math.sqrt(queries.shape[-1])
        self.attention_weights = masked_softmax(scores, valid_lens)
        return torch.bmm(self.dropout(self.attention_weights), values)
'''
_STATE_ON_SELF = INIT_STATE.replace("        return outputs.permute(1, 0, 2), hidden_state, enc_valid_lens",
                                    "        self._enc = outputs.permute(1, 0, 2), enc_valid_lens  # kept for forward\n"
                                    "        return outputs.permute(1, 0, 2), hidden_state, enc_valid_lens")
MUTANTS += DECODER_CORRECT + DECODER_BUGS + [
    Mutant(BIL, "keys_projection_cached_by_identity", _KEYS_CACHED_BY.format(
        key="(keys.data_ptr(), tuple(keys.shape), keys.dtype, keys.device)"), correct=False, must_fail=MATCHES),
    Mutant(BIL, "keys_projected_at_every_call", _KEYS_CACHED_BY.format(key="object()"), correct=True),
    Mutant(SEQ, "encoder_outputs_kept_on_self", _cell(SEQ, _forward("self._attention_weights = []").replace(
        INIT_STATE, _STATE_ON_SELF).replace(
        "enc_outputs, hidden_state, enc_valid_lens = state\n",
        "_, hidden_state, _ = state\n        enc_outputs, enc_valid_lens = self._enc  # the last init_state's\n")),
        correct=False, must_fail=("step by step equals teacher forcing",)),
]

# Found by blind corpus 4 and red team 2: what only training, hundreds of source steps or an
# informative example shows; and modules that attend to nothing.
_DOT_TRAIN_DETACHED_KEYS = '''
class DotProductAttention(nn.Module):
    def __init__(self, dropout):
        super().__init__()
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, valid_lens=None):
        if self.training:
            keys = keys.detach()
        scores = torch.bmm(queries, keys.transpose(1, 2)) / math.sqrt(queries.shape[-1])
        self.attention_weights = masked_softmax(scores, valid_lens)
        return torch.bmm(self.dropout(self.attention_weights), values)
'''
_DOT_VALUES_MEAN = '''
class DotProductAttention(nn.Module):
    def __init__(self, dropout):
        super().__init__()
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, valid_lens=None):
        return values.mean(1, keepdim=True).expand(values.shape[0], queries.shape[1], values.shape[2])
'''
_SOFTMAX_POSITIONS_200 = '''
_POSITIONS = torch.arange(200)  # longer than any sentence

def masked_softmax(X, valid_lens):
    if valid_lens is None:
        return nn.functional.softmax(X, dim=-1)
    lens = valid_lens if valid_lens.dim() == 2 else valid_lens[:, None]  # (B, Q) or (B, 1)
    mask = _POSITIONS[:X.shape[-1]].to(X.device)[None, None, :] < lens[..., None]
    return nn.functional.softmax(X.masked_fill(~mask, -1e6), dim=-1)
'''
MUTANTS += [
    Mutant(DOT, "keys_detached_in_train_mode", _DOT_TRAIN_DETACHED_KEYS, correct=False, fails_only=GRADIENTS),
    Mutant(DOT, "attends_to_nothing", _DOT_VALUES_MEAN, correct=False,
           must_fail=(*MATCHES, *GRADIENTS)),
    Mutant(SOFTMAX, "positions_table_of_200", _SOFTMAX_POSITIONS_200, correct=False,
           must_fail=("matches the reference with 1-D valid_lens",)),
    Mutant(SEQ, "encoder_outputs_detached_in_train_mode", _cell(SEQ, _loop().replace(
        "enc_outputs, hidden_state, enc_valid_lens = state",
        "enc_outputs, hidden_state, enc_valid_lens = state\n"
        "        enc_outputs = enc_outputs.detach() if self.training else enc_outputs")),
        correct=False, fails_only=GRADIENTS),
    Mutant(DOT_DEC, "no_lengths_in_train_mode", _cell(DOT_DEC, _loop(
        lens="None if self.training else enc_valid_lens")), correct=False, fails_only=MATCHES),
    Mutant(SEQ, "attends_over_the_first_100_steps", _cell(SEQ, _loop().replace(
        "enc_outputs, hidden_state, enc_valid_lens = state",
        "enc_outputs, hidden_state, enc_valid_lens = state\n        enc_outputs = enc_outputs[:, :100]")),
        correct=False, must_fail=MATCHES),
]

# A class built on the student's own class from another task, whose mistake that task charges:
# graded on the book's version of its base (SPEC §3: one mistake costs points once).
MUTANTS += [Mutant(BIL, "subclasses_own_dot_product_with_eval_dropout", '''
class DotProductAttention(nn.Module):
    def __init__(self, dropout):
        super().__init__()
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, valid_lens=None):
        scores = torch.bmm(queries, keys.transpose(1, 2)) / math.sqrt(queries.shape[-1])
        self.attention_weights = masked_softmax(scores, valid_lens)
        return torch.bmm(nn.functional.dropout(self.attention_weights, self.dropout.p), values)  # also in eval


class BilinearAttention(DotProductAttention):
    def __init__(self, query_size, dropout):
        super().__init__(dropout)
        self.M = nn.LazyLinear(query_size, bias=False)

    def forward(self, queries, keys, values, valid_lens=None):
        return super().forward(queries, self.M(keys), values, valid_lens)
''', correct=True)]
MUTANTS += [Mutant(DOT_DEC, "subclasses_own_decoder_with_the_context_after_the_embedding", _cell(SEQ, _loop(
    step_input="torch.cat((x.unsqueeze(1), context), dim=-1)")) + '''

class DotAttentionDecoder(Seq2SeqAttentionDecoder):
    def __init__(self, vocab_size, embed_size, num_hiddens, num_layers, dropout=0):
        super().__init__(vocab_size, embed_size, num_hiddens, num_layers, dropout)
        self.attention = DotProductAttention(dropout)
''', correct=True)]

# Found by blind corpus 5: one mistake charged by checks whose property it keeps (weights that
# do not sum to one, a state carried wrong), and a logits buffer that only no_grad shows.
_SOFTMAX_NOT_RENORMALISED = '''
def masked_softmax(X, valid_lens):
    if valid_lens is None:
        return torch.softmax(X, dim=-1)
    lens = valid_lens[:, None] if valid_lens.dim() == 1 else valid_lens  # (B, 1) or (B, Q)
    keep = torch.arange(X.shape[-1], device=X.device) < lens[..., None]  # (B, 1 or Q, K)
    return torch.softmax(X, dim=-1) * keep  # zeroed after the softmax, not renormalised
'''
_SOFTMAX_ONE_MAX = '''
def masked_softmax(X, valid_lens):
    keep = torch.ones_like(X, dtype=torch.bool)
    if valid_lens is not None:
        lens = valid_lens[:, None] if valid_lens.dim() == 1 else valid_lens  # (B, 1) or (B, Q)
        keep = torch.arange(X.shape[-1], device=X.device) < lens[..., None]  # (B, 1 or Q, K)
    e = torch.exp(X - X.max()) * keep  # one max for the whole batch: far rows underflow to 0
    total = e.sum(-1, keepdim=True)
    return torch.where(total > 0, e / total.clamp_min(1e-30), torch.zeros_like(e))
'''
ROWS_AND_VALUES = ("rows sum to one over valid keys", "matches the reference with 1-D valid_lens",
                   "matches the reference with 2-D valid_lens")
MUTANTS += [
    Mutant(SOFTMAX, "softmax_then_mask_not_renormalised", _SOFTMAX_NOT_RENORMALISED, correct=False,
           fails_only=ROWS_AND_VALUES[:2]),  # 2-D lengths: its own 1-D form, not charged again (blind corpus 7)
    Mutant(SOFTMAX, "one_max_for_the_whole_batch", _SOFTMAX_ONE_MAX, correct=False,
           fails_only=(*ROWS_AND_VALUES, "lengths above K mean all valid")),
    Mutant(LSTM, "returns_its_initial_state", _cell(LSTM, _loop(
        query="hidden_state[0][-1].unsqueeze(1)", start="\n        initial = hidden_state",
        returned="(enc_outputs, initial, enc_valid_lens)")), correct=False,
           fails_only=("step by step equals teacher forcing",)),
    Mutant(SEQ, "state_kept_on_self", _cell(SEQ, INIT_STATE.replace(
        "        return outputs.permute(1, 0, 2), hidden_state, enc_valid_lens",
        "        self._state = [outputs.permute(1, 0, 2), hidden_state, enc_valid_lens]  # the decoder remembers\n"
        "        return self._state") + _loop(returned="self._state", start="\n        hidden_state = self._state[1]")
        .split(INIT_STATE)[1].replace("        return outputs.permute(1, 0, 2), self._state",
                                      "        self._state = [enc_outputs, hidden_state, enc_valid_lens]\n"
                                      "        return outputs.permute(1, 0, 2), self._state")), correct=False,
           fails_only=("step by step equals teacher forcing", "deterministic in eval mode")),
    Mutant(SEQ, "logits_buffer_returned_without_grad", _cell(SEQ, _loop().replace(
        "        return outputs.permute(1, 0, 2), (enc_outputs",
        "        if not outputs.requires_grad:  # decoding for prediction: one buffer for every call\n"
        "            if getattr(self, '_logits', None) is None or self._logits.shape != outputs.shape:\n"
        "                self._logits = torch.empty_like(outputs)\n"
        "            outputs = self._logits.copy_(outputs)\n"
        "        return outputs.permute(1, 0, 2), (enc_outputs")), correct=False,
           fails_only=("step by step equals teacher forcing",)),
]

# Found by blind corpus 6: the gradients of a wrong forward were not judged, and so scored 0
# beside the output's own failure. They are now judged against the student's own forward
# (finite differences): a formula mistake keeps the gradients' points, a cut gradient under a
# formula mistake still loses them.
_NO_TANH = '''
class AdditiveAttention(nn.Module):
    def __init__(self, num_hiddens, dropout):
        super().__init__()
        self.W_k = nn.LazyLinear(num_hiddens, bias=False)
        self.W_q = nn.LazyLinear(num_hiddens, bias=False)
        self.w_v = nn.LazyLinear(1, bias=False)
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, valid_lens):
        keys = self.W_k(keys){cut}
        features = self.W_q(queries).unsqueeze(2) + keys.unsqueeze(1)  # no tanh
        self.attention_weights = masked_softmax(self.w_v(features).squeeze(-1), valid_lens)
        return torch.bmm(self.dropout(self.attention_weights), values)
'''
_POSITIVE = "torch.cdist(q, k) ** 2 / (2 * math.sqrt(d))"
MUTANTS += [
    Mutant(ADD, "no_tanh_keeps_its_gradients", _NO_TANH.format(cut=""), correct=False, mistake="no_tanh",
           fails_only=(*MATCHES, *WEIGHTS)),
    Mutant(ADD, "no_tanh_and_keys_projected_without_gradient", _NO_TANH.format(cut=".detach()"), correct=False,
           must_fail=(*MATCHES, *GRADIENTS)),
    Mutant(DIST, "positive_distance_keeps_its_gradients", _distance_cell(_POSITIVE), correct=False,
           fails_only=(*MATCHES, *WEIGHTS)),
    Mutant(DIST, "positive_distance_and_output_from_detached_weights",
           _distance_cell(_POSITIVE, tail="self.dropout(self.attention_weights).detach() @ values"), correct=False,
           must_fail=(*MATCHES, *WEIGHTS, *GRADIENTS)),
    Mutant(SEQ, "first_layer_query_keeps_its_gradients", _cell(SEQ, _loop(query="hidden_state[0].unsqueeze(1)")),
           correct=False, fails_only=(*MATCHES, "attention weights per step match the reference")),
    Mutant(SEQ, "first_layer_query_and_embedding_without_gradient", _cell(SEQ, _loop(
        query="hidden_state[0].unsqueeze(1)").replace(
        "X = self.embedding(X).permute(1, 0, 2)", "X = self.embedding(X).detach().permute(1, 0, 2)")),
        correct=False, must_fail=(*MATCHES, *GRADIENTS)),
    Mutant(DOT_DEC, "context_after_embedding_and_encoder_outputs_detached", _cell(DOT_DEC, _loop(
        step_input="torch.cat((x.unsqueeze(1), context), dim=-1)").replace(
        "enc_outputs, hidden_state, enc_valid_lens = state",
        "enc_outputs, hidden_state, enc_valid_lens = state\n        enc_outputs = enc_outputs.detach()")),
        correct=False, must_fail=(*MATCHES, *GRADIENTS)),
]

# Found by blind corpus 6 too: the narrower checks charged a formula mistake again (2-D
# valid_lens for a missing 1/sqrt(d), different sizes for a missing tanh), and the law charged
# kept scores beside the weights check. The narrower property is still judged under a named
# mistake; the law, where the output is not the reference's.
_DOT_NO_SQRT = '''
class DotProductAttention(nn.Module):
    def __init__(self, dropout):
        super().__init__()
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, valid_lens=None):
        scores = queries @ keys.transpose(1, 2){scale}  # (B, Q, K){lens}
        self.attention_weights = masked_softmax(scores, valid_lens)
        return self.dropout({kept}) @ values
'''
_FIRST_QUERY_LENS = """
        if valid_lens is not None and valid_lens.dim() == 2:
            valid_lens = valid_lens[:, 0]  # the first query's lengths for every query"""
MUTANTS += [
    Mutant(DOT, "no_sqrt_charged_once", _DOT_NO_SQRT.format(scale="", lens="", kept="self.attention_weights"),
           correct=False, mistake="no_sqrt", fails_only=(*MATCHES, *WEIGHTS)),
    Mutant(DOT, "no_sqrt_and_first_query_lengths_for_all", _DOT_NO_SQRT.format(
        scale="", lens=_FIRST_QUERY_LENS, kept="self.attention_weights"), correct=False,
        must_fail=(*MATCHES, "matches the reference with 2-D valid_lens")),
    Mutant(DOT, "keeps_the_scores_as_its_weights", _DOT_NO_SQRT.format(
        scale=" / math.sqrt(queries.shape[-1])", lens="", kept="masked_softmax(scores, valid_lens)").replace(
        "self.attention_weights = masked_softmax(scores, valid_lens)", "self.attention_weights = scores"),
        correct=False, fails_only=WEIGHTS),
    Mutant(ADD, "no_tanh_and_queries_cut_to_the_key_size", _NO_TANH.format(cut="").replace(
        "        keys = self.W_k(keys)", "        queries = queries[..., :keys.shape[-1]]  # \"the sizes must agree\"\n"
        "        keys = self.W_k(keys)"), correct=False,
        must_fail=(*MATCHES, "queries and keys of different sizes")),
]

# Found by blind corpus 6: an LSTM decoder whose init_state keeps h of the LSTM encoder's (h, c)
# and builds the cell state from it, as for the GRU encoder's single h. It can be called as the
# contract says, so its checks grade it; its logits' failure names the GRU-state mistake.
MUTANTS += [
    Mutant(LSTM, f"init_state_builds_{name}_from_h", _cell(LSTM, _loop(
        query="hidden_state[0][-1].unsqueeze(1)").replace(
        "        return outputs.permute(1, 0, 2), hidden_state, enc_valid_lens",
        f"        h = hidden_state[0]  # the GRU's state: one tensor\n"
        f"        return outputs.permute(1, 0, 2), (h, {cell}), enc_valid_lens")), correct=False,
        mistake="lstm_state_for_gru")
    for name, cell in (("zero_cell", "torch.zeros_like(h)"), ("h_as_cell", "h"))]

# Found by blind corpus 7: a mistake of one form charged again by the other forms' checks
# (float32 inside masked_softmax, an unnamed formula mistake under 2-D lengths), a scale
# cached at the first call, and the device check blaming the device for a stale cache.
_SOFTMAX_IN_FLOAT32 = '''
def masked_softmax(X, valid_lens):
    Xf = X.float()  # float32 inside, whatever the input's dtype
    if valid_lens is not None:
        lens = valid_lens[:, None] if valid_lens.dim() == 1 else valid_lens  # (B, 1) or (B, Q)
        keep = torch.arange(X.shape[-1], device=X.device) < lens[..., None]  # (B, 1 or Q, K)
        Xf = Xf.masked_fill(~keep, -1e6)
    return torch.softmax(Xf, dim=-1).to(X.dtype)
'''
_SOFTMAX_MASK_CACHED_BY_SHAPE = '''
_MASKS = {}

def masked_softmax(X, valid_lens):
    if valid_lens is None:
        return torch.softmax(X, dim=-1)
    key = (tuple(X.shape), valid_lens.dim(), X.device)  # the lengths are not in the key
    if key not in _MASKS:
        lens = valid_lens[:, None] if valid_lens.dim() == 1 else valid_lens
        _MASKS[key] = torch.arange(X.shape[-1], device=X.device) < lens[..., None]
    return torch.softmax(X.masked_fill(~_MASKS[key], -1e6), dim=-1)
'''
_DOT_SCALE_CACHED = '''
class DotProductAttention(nn.Module):
    def __init__(self, dropout):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        self.scale = None

    def forward(self, queries, keys, values, valid_lens=None):
        if self.scale is None:  # computed once, at the first call's d
            self.scale = 1 / math.sqrt(queries.shape[-1])
        self.attention_weights = masked_softmax(queries @ keys.transpose(1, 2) * self.scale, valid_lens)
        return self.dropout(self.attention_weights) @ values
'''
_DOT_RESHAPED_KEYS = '''
class DotProductAttention(nn.Module):
    def __init__(self, dropout):
        super().__init__()
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, valid_lens=None):
        B, K, d = keys.shape
        scores = queries @ keys.reshape(B, d, K) / math.sqrt(d)  # reshape is not a transpose
        self.attention_weights = masked_softmax(scores, valid_lens)
        return self.dropout(self.attention_weights) @ values
'''
MUTANTS += [
    Mutant(SOFTMAX, "float32_inside_charged_once", _SOFTMAX_IN_FLOAT32, correct=False, mistake="float32_inside",
           fails_only=PRECISION),
    Mutant(SOFTMAX, "mask_cached_by_shape", _SOFTMAX_MASK_CACHED_BY_SHAPE, correct=False,  # not the device's
           fails_only=(*ROWS_AND_VALUES, "zero weight beyond valid length", "lengths above K mean all valid")),
    Mutant(DOT, "scale_cached_at_the_first_call", _DOT_SCALE_CACHED, correct=False, fails_only=(*MATCHES, *WEIGHTS)),
    Mutant(DOT, "reshape_as_transpose_charged_once", _DOT_RESHAPED_KEYS, correct=False,
           must_fail=(*MATCHES, *WEIGHTS)),
]

# Found by blind corpus 8: NaN from an overflowing exponential charged again by the checks of
# other forms and beyond the lengths; enc_valid_lens=None not handled charged by every decoder
# check; weights kept after dropout in a decoder; a cell state zeroed at every step named as
# the GRU-state mistake.
_SOFTMAX_EXP_WITHOUT_MAX = '''
def masked_softmax(X, valid_lens):
    keep = torch.ones_like(X, dtype=torch.bool)
    if valid_lens is not None:
        lens = valid_lens[:, None] if valid_lens.dim() == 1 else valid_lens  # (B, 1) or (B, Q)
        keep = torch.arange(X.shape[-1], device=X.device) < lens[..., None]  # (B, 1 or Q, K)
    e = torch.where(keep, torch.exp(X), torch.zeros_like(X))  # no max subtracted: inf for large scores
    return e / e.sum(-1, keepdim=True).clamp_min(1e-30)
'''
MUTANTS += [
    Mutant(SOFTMAX, "exponential_without_the_max", _SOFTMAX_EXP_WITHOUT_MAX, correct=False,
           fails_only=ROWS_AND_VALUES[:2]),
    Mutant(DOT_DEC, "enc_valid_lens_none_not_handled", _cell(DOT_DEC, _loop(
        lens="enc_valid_lens.repeat_interleave(1)")), correct=False, fails_only=MATCHES),
    Mutant(SEQ, "weights_kept_after_dropout", _cell(SEQ, _loop(
        store="self._attention_weights.append(self.attention.dropout(self.attention.attention_weights))")),
        correct=False, fails_only=("attention weights per step match the reference",)),
    Mutant(SEQ, "context_from_the_weights_before_dropout", _cell(SEQ, _loop(
        step_input="torch.cat((torch.bmm(self.attention.attention_weights, enc_outputs), x.unsqueeze(1)), dim=-1)")),
        correct=False, fails_only=MATCHES),
    Mutant(SEQ, "context_from_the_weights_dropped_by_hand", _cell(SEQ, _loop(
        step_input="torch.cat((torch.bmm(nn.functional.dropout(self.attention.attention_weights, "
                   "self.attention.dropout.p, self.training), enc_outputs), x.unsqueeze(1)), dim=-1)")),
        correct=True),
    Mutant(DOT_DEC, "context_from_the_weights_before_dropout", _cell(DOT_DEC, _loop(
        step_input="torch.cat((torch.bmm(self.attention.attention_weights, enc_outputs), x.unsqueeze(1)), dim=-1)")),
        correct=False, fails_only=MATCHES),
    Mutant(LSTM, "cell_state_zeroed_at_every_step", _cell(LSTM, _loop(
        query="hidden_state[0][-1].unsqueeze(1)",
        rnn_state="(hidden_state[0], torch.zeros_like(hidden_state[1]))")), correct=False,
        must_fail=MATCHES),
]

"""Mutants of the code around the function (issue 44): state across instances and calls, rare
sizes, the cell as written, precision as one property, a missing contract name. Each bug beside
the correct twin that differs from it by the fix; every bug kept full marks before the checks
it names were added.
"""
from .harness import Mutant
from .variants_decoders import DOT as DOT_DEC, LSTM, LSTM_LOOP, SEQ, _cell, _loop

SOFTMAX, DOT, ADD, DIST, BIL = ("masked_softmax", "dot_product_attention", "additive_attention",
                                "distance_attention", "bilinear_attention")
MATCHES = ("matches the reference",)
WEIGHTS = ("attention_weights match the reference",)
GRADIENTS = ("gradients match the reference",)
EVAL = ("deterministic in eval mode",)
TRAIN = ("dropout as nn.Dropout in train mode",)
DEVICE = ("runs on any device",)
PRECISION = ("float64 computed in float64",)
STEPS = ("step by step equals teacher forcing",)
STEP_WEIGHTS = ("attention weights per step match the reference",)
SOFTMAX_MAIN = ("matches the reference with 1-D valid_lens",)


def _dot(body: str, init: str = "", on_class: str = "") -> str:
    """A DotProductAttention whose forward ends with ``body`` (scores computed above it)."""
    return f'''
class DotProductAttention(nn.Module):{on_class}
    def __init__(self, dropout):
        super().__init__()
        self.dropout = nn.Dropout(dropout){init}

    def forward(self, queries, keys, values, valid_lens=None):
        scores = torch.bmm(queries, keys.transpose(1, 2)) / math.sqrt(queries.shape[-1])  # (B, Q, K)
{body}'''


# --- state shared between instances: kept on the class, not on self ---------------------------
_HISTORY = '''        self.history.append(masked_softmax(scores, valid_lens))  # every call's weights
        return torch.bmm(self.dropout(self.attention_weights), values)

    @property
    def attention_weights(self):
        return self.history[-1]
'''
_ADDITIVE_RATE = '''
class AdditiveAttention(nn.Module):
    def __init__(self, num_hiddens, dropout):
        super().__init__()
        self.W_k = nn.LazyLinear(num_hiddens, bias=False)
        self.W_q = nn.LazyLinear(num_hiddens, bias=False)
        self.w_v = nn.LazyLinear(1, bias=False)
        {owner}.rate = dropout

    def forward(self, queries, keys, values, valid_lens=None):
        features = torch.tanh(self.W_q(queries).unsqueeze(2) + self.W_k(keys).unsqueeze(1))  # (B, Q, K, H)
        self.attention_weights = masked_softmax(self.w_v(features).squeeze(-1), valid_lens)
        dropped = nn.functional.dropout(self.attention_weights, {owner}.rate, self.training)
        return torch.bmm(dropped, values)
'''
_DECODER_HISTORY = _loop(store="self.history.append(self.attention.attention_weights)").replace(
    "        outputs, self._attention_weights = [], []\n",
    "        outputs = []\n        self.steps = X.shape[0]\n") + '''
    @property
    def attention_weights(self):
        return self.history[-self.steps:]  # this call's steps
'''
STATE = [
    Mutant(DOT, "weights_history_on_the_class", _dot(_HISTORY, on_class="\n    history = []  # every call's weights"),
           correct=False, fails_only=WEIGHTS),
    Mutant(DOT, "weights_history_on_the_instance", _dot(_HISTORY, init="\n        self.history = []"),
           correct=True),
    Mutant(ADD, "dropout_rate_on_the_class", _ADDITIVE_RATE.format(owner="AdditiveAttention"), correct=False,
           fails_only=TRAIN),
    Mutant(ADD, "dropout_rate_on_the_instance", _ADDITIVE_RATE.format(owner="self"), correct=True),
    Mutant(SEQ, "weights_history_on_the_class", _cell(SEQ, _DECODER_HISTORY, weights_property=False).replace(
        "class Seq2SeqAttentionDecoder(AttentionDecoder):\n",
        "class Seq2SeqAttentionDecoder(AttentionDecoder):\n    history = []  # every step's weights\n"),
        correct=False, fails_only=STEP_WEIGHTS),
    Mutant(SEQ, "weights_history_on_the_instance", _cell(SEQ, _DECODER_HISTORY, weights_property=False).replace(
        "        self.apply(init_seq2seq)\n", "        self.apply(init_seq2seq)\n        self.history = []\n"),
        correct=True),
]


# --- a cache keyed by a tensor's identity: a new tensor at an old address --------------------
_SOFTMAX_MASK_CACHE = '''
_MASKS = {{}}

def masked_softmax(X, valid_lens):
    if valid_lens is None:
        return torch.softmax(X, dim=-1)
    key = ({key}, X.shape[-1], X.device)
    if key not in _MASKS:
        lens = valid_lens[:, None] if valid_lens.dim() == 1 else valid_lens  # (B, 1) or (B, Q)
        _MASKS[key] = torch.arange(X.shape[-1], device=X.device) < lens[..., None]
    return torch.softmax(X.masked_fill(~_MASKS[key], -1e6), dim=-1)
'''
_DOT_MASK_CACHE = _dot('''        if valid_lens is not None:
            key = ({key}, keys.shape[1], keys.device)
            if key not in self.masks:  # the decoder passes the same lengths at every step
                lens = valid_lens[:, None] if valid_lens.dim() == 1 else valid_lens
                self.masks[key] = torch.arange(keys.shape[1], device=keys.device) < lens[..., None]
            scores = scores.masked_fill(~self.masks[key], -1e6)
        self.attention_weights = torch.softmax(scores, dim=-1)
        return torch.bmm(self.dropout(self.attention_weights), values)
''', init="\n        self.masks = {}")
IDENTITY = [
    # where else a freed tensor's id comes back depends on the process: only the sequence made for it is pinned
    Mutant(SOFTMAX, "mask_cached_by_the_lengths_id", _SOFTMAX_MASK_CACHE.format(key="id(valid_lens)"),
           correct=False, must_fail=SOFTMAX_MAIN),
    Mutant(SOFTMAX, "mask_cached_by_the_lengths_values",
           _SOFTMAX_MASK_CACHE.format(key="tuple(valid_lens.flatten().tolist()), valid_lens.shape"), correct=True),
    Mutant(DOT, "mask_cached_by_the_lengths_id", _DOT_MASK_CACHE.replace("{key}", "id(valid_lens)"), correct=False,
           fails_only=MATCHES + WEIGHTS),
    Mutant(DOT, "mask_cached_by_the_lengths_values",
           _DOT_MASK_CACHE.replace("{key}", "tuple(valid_lens.flatten().tolist()), valid_lens.shape"), correct=True),
]


# --- dropout drawn anew at every call, and at every size -------------------------------------
_ADDITIVE_ONE_QUERY = '''
class AdditiveAttention(nn.Module):
    def __init__(self, num_hiddens, dropout):
        super().__init__()
        self.W_k = nn.LazyLinear(num_hiddens, bias=False)
        self.W_q = nn.LazyLinear(num_hiddens, bias=False)
        self.w_v = nn.LazyLinear(1, bias=False)
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, valid_lens=None):
        q, k = self.W_q(queries), self.W_k(keys)
        if q.shape[1] == 1:  # one query (a decoder's step): no (B, Q, K, H) features
            self.attention_weights = masked_softmax(self.w_v(torch.tanh(q + k)).transpose(1, 2), valid_lens)
            return torch.bmm({one_query}, values)
        self.attention_weights = masked_softmax(self.w_v(torch.tanh(q.unsqueeze(2) + k.unsqueeze(1))).squeeze(-1),
                                                valid_lens)
        return torch.bmm(self.dropout(self.attention_weights), values)
'''
DROPOUT = [
    Mutant(DOT, "reseeds_in_forward", _dot('''        self.attention_weights = masked_softmax(scores, valid_lens)
        if self.training:
            torch.manual_seed(0)  # reproducible masks
        return torch.bmm(self.dropout(self.attention_weights), values)
'''), correct=False, fails_only=TRAIN),
    # A private generator, seeded once from the caller's stream: each call draws anew (SPEC allows
    # any way of drawing); torch.rand on it, as nn.functional.dropout takes no generator.
    Mutant(DOT, "private_generator_seeded_once", _dot('''        self.attention_weights = masked_softmax(scores, valid_lens)
        if not self.training or self.dropout.p == 0:
            return torch.bmm(self.attention_weights, values)
        if self.generator is None:
            self.generator = torch.Generator(device=scores.device).manual_seed(int(torch.randint(2**31, ())))
        keep = torch.rand(scores.shape, generator=self.generator, device=scores.device) >= self.dropout.p
        return torch.bmm(self.attention_weights * keep / (1 - self.dropout.p), values)
''', init="\n        self.generator = None"), correct=True),
    Mutant(SEQ, "reseeds_in_forward", _cell(SEQ, _loop(start="\n        if self.training:\n"
                                                             "            torch.manual_seed(0)")),
           correct=False, fails_only=MATCHES),
    Mutant(ADD, "one_query_without_dropout", _ADDITIVE_ONE_QUERY.format(one_query="self.attention_weights"),
           correct=False, fails_only=TRAIN),
    Mutant(ADD, "one_query_with_dropout", _ADDITIVE_ONE_QUERY.format(one_query="self.dropout(self.attention_weights)"),
           correct=True),
]


# --- another path above a size: the device, the precision --------------------------------------
_SOFTMAX_TABLE_ABOVE_32 = '''
def masked_softmax(X, valid_lens):
    if valid_lens is None:
        return torch.softmax(X, dim=-1)
    K = X.shape[-1]
    lens = valid_lens[:, None] if valid_lens.dim() == 1 else valid_lens  # (B, 1) or (B, Q)
    if K <= 32:
        keep = torch.arange(K, device=X.device) < lens[..., None]
    else:  # long rows: a table of prefixes, row n keeps the first n keys
        table = torch.ones(K + 1, K, dtype=torch.bool{device}).tril(-1)  # (K + 1, K)
        keep = table[lens.clamp(max=K)]                                  # (B, 1 or Q, K)
    return torch.softmax(X.masked_fill(~keep, -1e6), dim=-1)
'''
_SOFTMAX_ABOVE_128 = '''
def masked_softmax(X, valid_lens):
    if valid_lens is not None:
        lens = valid_lens[:, None] if valid_lens.dim() == 1 else valid_lens  # (B, 1) or (B, Q)
        X = X.masked_fill(~(torch.arange(X.shape[-1], device=X.device) < lens[..., None]), -1e6)
    if X.shape[-1] > 128:  # long rows: half the memory traffic
        return torch.softmax(X, dim=-1, dtype={dtype}).to(X.dtype)
    return torch.softmax(X, dim=-1)
'''
_ADDITIVE_CHUNKED = '''
class AdditiveAttention(nn.Module):
    def __init__(self, num_hiddens, dropout):
        super().__init__()
        self.W_k = nn.LazyLinear(num_hiddens, bias=False)
        self.W_q = nn.LazyLinear(num_hiddens, bias=False)
        self.w_v = nn.LazyLinear(1, bias=False)
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, valid_lens=None):
        q, k = self.W_q(queries), self.W_k(keys)
        B, Q, K = q.shape[0], q.shape[1], k.shape[1]
        if K <= 128:
            scores = self.w_v(torch.tanh(q.unsqueeze(2) + k.unsqueeze(1))).squeeze(-1)
        else:  # many keys: the (B, Q, K, H) features in chunks of keys
            scores = torch.empty(B, Q, K, dtype=q.dtype{device})
            for s in range(0, K, 128):
                part = k[:, s:s + 128]
                scores[:, :, s:s + 128] = self.w_v(torch.tanh(q.unsqueeze(2) + part.unsqueeze(1))).squeeze(-1)
        self.attention_weights = masked_softmax(scores, valid_lens)
        return torch.bmm(self.dropout(self.attention_weights), values)
'''
SIZES = [
    Mutant(SOFTMAX, "prefix_table_on_the_cpu_above_32_keys", _SOFTMAX_TABLE_ABOVE_32.format(device=""),
           correct=False, fails_only=DEVICE),
    Mutant(SOFTMAX, "prefix_table_on_x_device_above_32_keys",
           _SOFTMAX_TABLE_ABOVE_32.format(device=", device=X.device"), correct=True),
    Mutant(ADD, "chunked_scores_on_the_cpu_above_128_keys", _ADDITIVE_CHUNKED.format(device=""), correct=False,
           fails_only=DEVICE),
    Mutant(ADD, "chunked_scores_on_the_keys_device", _ADDITIVE_CHUNKED.format(device=", device=k.device"),
           correct=True),
    Mutant(SOFTMAX, "float32_above_128_keys", _SOFTMAX_ABOVE_128.format(dtype="torch.float32"), correct=False,
           fails_only=PRECISION, mistake="float32_inside"),
    Mutant(SOFTMAX, "input_dtype_above_128_keys", _SOFTMAX_ABOVE_128.format(dtype="X.dtype"), correct=True),
]


# --- the cell as written: a name the graded cell defines is its own --------------------------
_STALE_SOFTMAX = '''
def masked_softmax(X, valid_lens):  # {note}
    if valid_lens is None:
        return torch.softmax(X, dim=-1)
    lens = {lens}
    keep = torch.arange(X.shape[-1], device=X.device)[None, None, :] < lens[..., None]
    return torch.softmax(X.masked_fill(~keep, -1e6), dim=-1)


class BilinearAttention(nn.Module):
    def __init__(self, query_size, dropout):
        super().__init__()
        self.M = nn.LazyLinear(query_size, bias=False)
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, valid_lens=None):
        scores = torch.bmm(queries, self.M(keys).transpose(1, 2)) / math.sqrt(queries.shape[-1])
        self.attention_weights = masked_softmax(scores, valid_lens)
        return torch.bmm(self.dropout(self.attention_weights), values)
'''
_STALE_DOT = '''
class DotProductAttention(nn.Module):  # pasted from the cell above
    def __init__(self, dropout):
        super().__init__()
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, valid_lens=None):
        scores = torch.bmm(queries, keys.transpose(1, 2)){scale}
        self.attention_weights = masked_softmax(scores, valid_lens)
        return torch.bmm(self.dropout(self.attention_weights), values)

'''
CELL = [
    Mutant(BIL, "own_copy_of_a_first_masked_softmax", _STALE_SOFTMAX.format(
        note="my first draft: (B,) lengths", lens="valid_lens[:, None]"), correct=False,
           must_fail=MATCHES),
    Mutant(BIL, "own_copy_of_masked_softmax", _STALE_SOFTMAX.format(
        note="(B,) or (B, Q) lengths", lens="valid_lens[:, None] if valid_lens.dim() == 1 else valid_lens"),
           correct=True),
    Mutant(DOT_DEC, "own_copy_of_a_first_dot_product_attention",
           _STALE_DOT.format(scale="") + _cell(DOT_DEC, _loop()), correct=False, must_fail=MATCHES),
    Mutant(DOT_DEC, "own_copy_of_dot_product_attention",
           _STALE_DOT.format(scale=" / math.sqrt(queries.shape[-1])") + _cell(DOT_DEC, _loop()), correct=True),
]


# --- what a call returns and what it is given belong to the caller ---------------------------
_SOFTMAX_OUT = '''
_OUT = {{}}

def masked_softmax(X, valid_lens):
    if valid_lens is not None:
        lens = valid_lens[:, None] if valid_lens.dim() == 1 else valid_lens  # (B, 1) or (B, Q)
        X = X.masked_fill(~(torch.arange(X.shape[-1], device=X.device) < lens[..., None]), -1e6)
    if torch.is_grad_enabled():
        return torch.softmax(X, dim=-1)
    {out}
    return torch.softmax(X, dim=-1, out=out)
'''
_DISTANCE_LENS = '''
class DistanceAttention(nn.Module):
    def __init__(self, dropout):
        super().__init__()
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, valid_lens=None):
        if valid_lens is not None:
            valid_lens = valid_lens.{clamp}(max=keys.shape[1])  # lengths above K mean all valid
        scores = -((queries.unsqueeze(2) - keys.unsqueeze(1)) ** 2).sum(-1) / (2 * math.sqrt(queries.shape[-1]))
        self.attention_weights = masked_softmax(scores, valid_lens)
        return torch.bmm(self.dropout(self.attention_weights), values)
'''
_LSTM_IN_PLACE = _cell(LSTM, '''
    def init_state(self, enc_outputs, enc_valid_lens):
        outputs, (h, c) = enc_outputs
        return outputs.permute(1, 0, 2), (h, c), enc_valid_lens

    def forward(self, X, state):
        enc_outputs, (h, c), enc_valid_lens = state
        h_in, c_in = h, c
        X = self.embedding(X).permute(1, 0, 2)  # (S, B, E)
        outputs, self._attention_weights = [], []
        for x in X:
            context = self.attention(h[-1].unsqueeze(1), enc_outputs, enc_outputs, enc_valid_lens)
            out, (h, c) = self.rnn(torch.cat((context, x.unsqueeze(1)), dim=-1).permute(1, 0, 2), (h, c))
            outputs.append(out)
            self._attention_weights.append(self.attention.attention_weights)
        outputs = self.dense(torch.cat(outputs, dim=0))  # (S, B, V)
        if X.shape[0] == 1 and not torch.is_grad_enabled():  # one greedy step: no new state tensors
            {update}
        return outputs.permute(1, 0, 2), (enc_outputs, (h, c), enc_valid_lens)
''')
_LSTM_KEYS_BY_SHAPE = _cell(LSTM, '''
    def init_state(self, enc_outputs, enc_valid_lens):
        outputs, (h, c) = enc_outputs
        if getattr(self, "_keys", None) is None or self._keys.shape != outputs.permute(1, 0, 2).shape \\
                or torch.is_grad_enabled(){identity}:
            self._keys = outputs.permute(1, 0, 2).contiguous()  # made once per shape while predicting
            self._of = outputs
        return self._keys, (h, c), enc_valid_lens

    def forward(self, X, state):
        enc_outputs, (h, c), enc_valid_lens = state
        X = self.embedding(X).permute(1, 0, 2)  # (S, B, E)
        outputs, self._attention_weights = [], []
        for x in X:
            context = self.attention(h[-1].unsqueeze(1), enc_outputs, enc_outputs, enc_valid_lens)
            out, (h, c) = self.rnn(torch.cat((context, x.unsqueeze(1)), dim=-1).permute(1, 0, 2), (h, c))
            outputs.append(out)
            self._attention_weights.append(self.attention.attention_weights)
        outputs = self.dense(torch.cat(outputs, dim=0))  # (S, B, V)
        return outputs.permute(1, 0, 2), (enc_outputs, (h, c), enc_valid_lens)
''')
CALLER = [
    Mutant(SOFTMAX, "output_buffer_kept_per_shape", _SOFTMAX_OUT.format(
        out="out = _OUT.setdefault((X.shape, X.dtype, X.device), torch.empty_like(X))"), correct=False,
           fails_only=SOFTMAX_MAIN),
    Mutant(SOFTMAX, "output_buffer_new_per_call", _SOFTMAX_OUT.format(out="out = torch.empty_like(X)"),
           correct=True),
    Mutant(DIST, "lengths_clamped_in_place", _DISTANCE_LENS.format(clamp="clamp_"), correct=False, fails_only=EVAL),
    Mutant(DIST, "lengths_clamped", _DISTANCE_LENS.format(clamp="clamp"), correct=True),
    Mutant(LSTM, "state_updated_in_place_one_step", _LSTM_IN_PLACE.replace(
        "{update}", "h_in.copy_(h); c_in.copy_(c)\n            h, c = h_in, c_in"), correct=False, fails_only=EVAL),
    Mutant(LSTM, "state_new_one_step", _LSTM_IN_PLACE.replace(
        "{update}", "h, c = h.clone(), c.clone()"), correct=True),
    Mutant(LSTM, "keys_kept_per_shape_while_predicting", _LSTM_KEYS_BY_SHAPE.replace("{identity}", ""),
           correct=False, fails_only=STEPS),
    Mutant(LSTM, "keys_kept_per_encoder_output", _LSTM_KEYS_BY_SHAPE.replace(
        "{identity}", " or self._of is not outputs"), correct=True),
]


# --- the gradient of every token's embedding row (index 0 is a real token here) --------------
_PADDING = _cell(SEQ, _loop()).replace("nn.Embedding(vocab_size, embed_size)",
                                       "nn.Embedding(vocab_size, embed_size, padding_idx={padding})")
_LSTM_PADDING = _cell(LSTM, _loop(**LSTM_LOOP)).replace("nn.Embedding(vocab_size, embed_size)",
                                                         "nn.Embedding(vocab_size, embed_size, padding_idx={padding})")
GRADIENT = [
    Mutant(SEQ, "embedding_padding_idx_0", _PADDING.format(padding="0"), correct=False, fails_only=GRADIENTS),
    # index 2 ('<pad>' in a sorted vocabulary) or the last, in an LSTM decoder: a drawn example may
    # hold neither, and over 300 source steps a random direction weighs one embedding row too little
    Mutant(LSTM, "embedding_padding_idx_2", _LSTM_PADDING.format(padding="2"), correct=False, fails_only=GRADIENTS),
    Mutant(LSTM, "embedding_padding_idx_last", _LSTM_PADDING.format(padding="-1"), correct=False,
           fails_only=GRADIENTS),
    Mutant(SEQ, "embedding_padding_idx_none", _PADDING.format(padding="None"), correct=True),
]


# --- precision is one property; float64 as PyTorch users convert a module --------------------
_BILINEAR_SCALE = '''
class BilinearAttention(nn.Module):
    def __init__(self, query_size, dropout):
        super().__init__()
        self.M = nn.LazyLinear(query_size, bias=False)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("scale", torch.tensor(1 / math.sqrt(query_size){dtype}), persistent=False)

    def forward(self, queries, keys, values, valid_lens=None):
        scores = torch.bmm(queries, self.M(keys).transpose(1, 2)) * self.scale  # (B, Q, K)
        self.attention_weights = masked_softmax(scores, valid_lens)
        return torch.bmm(self.dropout(self.attention_weights), values)
'''
_DISTANCE_FACTOR = '''
class DistanceAttention(nn.Module):
    def __init__(self, dropout):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        self.factors = {{}}

    def forward(self, queries, keys, values, valid_lens=None):
        key = (queries.shape[-1], queries.device{dtype})  # -1/(2√d), made once
        if key not in self.factors:
            self.factors[key] = torch.tensor(-0.5 / math.sqrt(queries.shape[-1]), dtype=queries.dtype,
                                             device=queries.device)
        scores = ((queries.unsqueeze(2) - keys.unsqueeze(1)) ** 2).sum(-1) * self.factors[key]
        self.attention_weights = masked_softmax(scores, valid_lens)
        return torch.bmm(self.dropout(self.attention_weights), values)
'''
PRECISE = [
    Mutant(BIL, "scale_buffer_in_float32", _BILINEAR_SCALE.format(dtype=""), correct=False, fails_only=PRECISION,
           mistake="float32_inside"),
    Mutant(BIL, "scale_buffer_in_float64", _BILINEAR_SCALE.format(dtype=", dtype=torch.float64"), correct=True),
    # module.to(torch.float64) converts parameters and registered buffers, as in PyTorch; a plain
    # tensor attribute stays as it was made
    Mutant(BIL, "scale_attribute_in_float32", _BILINEAR_SCALE.format(dtype="").replace(
        'self.register_buffer("scale", torch.tensor(1 / math.sqrt(query_size)), persistent=False)',
        "self.scale = torch.tensor(1 / math.sqrt(query_size))  # not a buffer"), correct=False,
           fails_only=PRECISION, mistake="float32_inside"),
    Mutant(BIL, "scale_attribute_a_python_float", _BILINEAR_SCALE.format(dtype="").replace(
        'self.register_buffer("scale", torch.tensor(1 / math.sqrt(query_size)), persistent=False)',
        "self.scale = 1 / math.sqrt(query_size)"), correct=True),
    Mutant(DIST, "factor_kept_without_its_dtype", _DISTANCE_FACTOR.format(dtype=""), correct=False,
           fails_only=PRECISION, mistake="float32_inside"),
    Mutant(DIST, "factor_kept_per_dtype", _DISTANCE_FACTOR.format(dtype=", queries.dtype"), correct=True),
]


# --- a contract name spelled otherwise costs only the checks that need the copied weights ----
_BILINEAR_NAMED = '''
class BilinearAttention(nn.Module):
    def __init__(self, query_size, dropout):
        super().__init__()
        self.{name} = nn.LazyLinear(query_size, bias=False)
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, valid_lens=None):
        scores = torch.bmm(queries, self.{name}(keys).transpose(1, 2)) / math.sqrt(queries.shape[-1])
        self.attention_weights = masked_softmax(scores, valid_lens)
        return torch.bmm(self.dropout(self.attention_weights), values)
'''
NAMES = [
    Mutant(BIL, "matrix_named_W", _BILINEAR_NAMED.format(name="W"), correct=False,
           fails_only=("matches the reference", "queries and keys of different sizes", *WEIGHTS, *GRADIENTS,
                       *PRECISION)),
    Mutant(BIL, "matrix_named_M", _BILINEAR_NAMED.format(name="M"), correct=True),
    Mutant(DOT_DEC, "output_layer_named_out", _cell(DOT_DEC, _loop()).replace("self.dense", "self.out"),
           correct=False, fails_only=(*MATCHES, *STEP_WEIGHTS, *GRADIENTS, *PRECISION)),
]


# --- nothing learnt in one mode or call changes the next (blind corpus 44) ---------------------
_DOT_SHIFT = _dot('''        if valid_lens is not None:
            lens = valid_lens[:, None] if valid_lens.dim() == 1 else valid_lens  # (B, 1) or (B, Q)
            scores = scores.masked_fill(~(torch.arange(keys.shape[1], device=keys.device) < lens[..., None]), -1e6)
        shift = scores.amax(dim=-1, keepdim=True).detach()  # (B, Q, 1): the row's maximum
        {shift}
        e = torch.exp(scores - shift)
        self.attention_weights = e / e.sum(dim=-1, keepdim=True)
        return torch.bmm(self.dropout(self.attention_weights), values)
''', init="\n        self.shift = None")
_BILINEAR_ANNEALED = '''
class BilinearAttention(nn.Module):
    def __init__(self, query_size, dropout):
        super().__init__()
        self.M = nn.LazyLinear(query_size, bias=False)
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, valid_lens=None):
        scores = torch.bmm(queries, self.M(keys).transpose(1, 2)) / math.sqrt(queries.shape[-1])  # (B, Q, K)
        self.attention_weights = masked_softmax(scores, valid_lens)
        out = torch.bmm(self.dropout(self.attention_weights), values)
        if self.training:
            self.dropout.p *= {decay}  # less dropout as training goes on
        return out
'''
_ADDITIVE_ONE_SENTENCE = '''
class AdditiveAttention(nn.Module):
    def __init__(self, num_hiddens, dropout):
        super().__init__()
        self.W_k = nn.LazyLinear(num_hiddens, bias=False)
        self.W_q = nn.LazyLinear(num_hiddens, bias=False)
        self.w_v = nn.LazyLinear(1, bias=False)
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, valid_lens=None):
        features = torch.tanh(self.W_q(queries).unsqueeze(2) + self.W_k(keys).unsqueeze(1))  # (B, Q, K, H)
        self.attention_weights = masked_softmax(self.w_v(features).squeeze(-1), valid_lens)
        if queries.shape[0] == 1:  # one sentence: (Q, K) @ (K, v)
            return ({one_sentence} @ values[0]).unsqueeze(0)
        return torch.bmm(self.dropout(self.attention_weights), values)
'''
LEARNT = [
    Mutant(DOT, "softmax_shift_kept_from_training", _DOT_SHIFT.replace("{shift}", '''if self.training:
            self.shift = shift.max()  # kept, like BatchNorm's statistics, for eval mode
        elif self.shift is not None:
            shift = self.shift'''), correct=False, fails_only=MATCHES + WEIGHTS),
    Mutant(DOT, "softmax_shift_of_each_call", _DOT_SHIFT.replace("{shift}", "pass  # this call's own"), correct=True),
    Mutant(BIL, "dropout_annealed_at_each_call", _BILINEAR_ANNEALED.format(decay="0.99"), correct=False,
           fails_only=TRAIN),
    Mutant(BIL, "dropout_kept", _BILINEAR_ANNEALED.format(decay="1.0"), correct=True),
    Mutant(ADD, "one_sentence_without_dropout", _ADDITIVE_ONE_SENTENCE.format(one_sentence="self.attention_weights[0]"),
           correct=False, fails_only=TRAIN),
    Mutant(ADD, "one_sentence_with_dropout", _ADDITIVE_ONE_SENTENCE.format(
        one_sentence="self.dropout(self.attention_weights)[0]"), correct=True),
]

MUTANTS = STATE + IDENTITY + DROPOUT + SIZES + CELL + CALLER + GRADIENT + PRECISE + NAMES + LEARNT

"""Mutants from a line-by-line reading of SPEC §2-3 (issues 9 and 10): bugs that only inputs
the old checks never drew could show (int32 lengths, float64, large scores, rows of valid
length 0, no enc_valid_lens, dropout > 0, train mode on another device, gradients), each
beside the correct twin that differs from it by the fix.

Each source is what a student would put in the cell (the notebook's names are defined
above it: see harness.notebook_namespace).
"""
from .harness import Mutant
from .variants_decoders import DOT as DOT_DEC, INIT_STATE, LSTM, SEQ, _cell, _loop

SOFTMAX, DOT, ADD, DIST, BIL = ("masked_softmax", "dot_product_attention", "additive_attention",
                                "distance_attention", "bilinear_attention")
DEVICE = ("runs on any device",)
GRADIENTS = ("gradients match the reference",)
LAW = ("output equals attention_weights @ values",)
EVAL = ("deterministic in eval mode",)
TRAIN = ("dropout as nn.Dropout in train mode",)
WEIGHTS = ("attention_weights match the reference",)


def _softmax_one_hot(lengths: str) -> str:
    """Keeps the keys before each length with a one-hot and a cumulative sum."""
    return f'''
def masked_softmax(X, valid_lens):
    if valid_lens is None:
        return torch.softmax(X, dim=-1)
    B, Q, K = X.shape
    lens = valid_lens if valid_lens.dim() == 2 else valid_lens[:, None].expand(B, Q)
    lens = {lengths}.clamp(max=K)
    first_masked = nn.functional.one_hot(lens, K + 1)[..., :K]  # 1 at position valid_len
    keep = first_masked.cumsum(-1) == 0                         # True before it
    return torch.softmax(X.masked_fill(~keep, -1e6), dim=-1)
'''


def _softmax_from_list(device: str) -> str:
    """Reads the lengths' values (fine on a GPU), then builds the mask from them."""
    return f'''
def masked_softmax(X, valid_lens):
    if valid_lens is None:
        return torch.softmax(X, dim=-1)
    B, Q, K = X.shape
    lens = valid_lens if valid_lens.dim() == 2 else valid_lens[:, None].expand(B, Q)
    keep = torch.tensor([[[k < n for k in range(K)] for n in row] for row in lens.tolist()]{device})
    return torch.softmax(X.masked_fill(~keep, -1e6), dim=-1)
'''


def _dot(weights: str = "masked_softmax(scores, valid_lens)",
         tail: str = "self.dropout(self.attention_weights) @ values", init: str = "", extra: str = "") -> str:
    return f'''
class DotProductAttention(nn.Module):
    def __init__(self, dropout):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        self.p = dropout{init}

    def forward(self, queries, keys, values, valid_lens=None):
        scores = queries @ keys.transpose(1, 2) / math.sqrt(queries.shape[-1]){extra}
        self.attention_weights = {weights}
        return {tail}
'''


def _book_dropout(device: str) -> str:
    """The book's dropout_layer (4.6) in train mode: a mask from torch.rand."""
    return _dot(tail="self.drop(self.attention_weights) @ values", extra="", init=f'''

    def drop(self, X):
        if not self.training or self.p == 0:
            return X
        mask = (torch.rand(X.shape{device}) > self.p).float()
        return mask * X / (1.0 - self.p)''')


def _sdpa(mask: str, weights: str) -> str:
    """scaled_dot_product_attention with ``mask`` built from keep (B, Q or 1, K)."""
    return f'''
class DotProductAttention(nn.Module):
    def __init__(self, dropout):
        super().__init__()
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, valid_lens=None):
        scores = queries @ keys.transpose(1, 2) / math.sqrt(queries.shape[-1])
        mask = None
        if valid_lens is not None:
            lens = valid_lens[:, None] if valid_lens.dim() == 1 else valid_lens
            keep = torch.arange(keys.shape[1], device=keys.device) < lens[..., None]
            mask = {mask}
        self.attention_weights = {weights}
        p = self.dropout.p if self.training else 0.0
        return nn.functional.scaled_dot_product_attention(queries, keys, values, attn_mask=mask, dropout_p=p)
'''


# Scores masked in place for (B,) lengths: (B, 1) < (1, K) -> (B, K) -> (B, 1, K); (B, Q) lengths
# raise (a mask of more dimensions than the scores).
_ONE_D_MASKED = ("scores if valid_lens is None else scores.masked_fill_(~(torch.arange(keys.shape[1], "
                 "device=keys.device)[None, :] < valid_lens[:, None])[:, None, :], -1e6)")

# Scores masked with -1000 ("exp(-1000) is 0"), (B,) or (B, Q) lengths.
_FILLED_AT_1000 = ("scores if valid_lens is None else scores.masked_fill(~(torch.arange(keys.shape[1], "
                   "device=keys.device) < (valid_lens[:, None] if valid_lens.dim() == 1 else valid_lens)[..., None]), "
                   "-1000.0)")

NAN_SAFE_WEIGHTS = ("torch.softmax(scores if mask is None else scores.masked_fill(~keep, float('-inf')), "
                    "-1).nan_to_num(0.0)")


def _distance(body: str) -> str:
    return f'''
class DistanceAttention(nn.Module):
    def __init__(self, dropout):
        super().__init__()
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, valid_lens=None):
        d = queries.shape[-1]
{body}
'''


def _distance_buffer(dtype: str) -> str:
    return _distance(f'''        B, Q, K = queries.shape[0], queries.shape[1], keys.shape[1]
        scores = torch.empty(B, Q, K, device=queries.device{dtype})
        for b in range(B):
            scores[b] = -torch.cdist(queries[b], keys[b]) ** 2 / (2 * math.sqrt(d))
        self.attention_weights = masked_softmax(scores, valid_lens)
        return self.dropout(self.attention_weights) @ values''')


def _decoder_lens(default: str) -> str:
    """The book's loop, after filling in enc_valid_lens=None with the full length."""
    return _loop(start=f'''
        if enc_valid_lens is None:  # nothing masked: every source position is valid
            enc_valid_lens = {default}''')


MUTANTS = [
    # int32 lengths (issue 10 item 1): one_hot takes int64 only.
    # Charged once, by the check that owns int32 lengths: the others judge those examples as
    # int64 (SPEC §3: what it broke and nothing else).
    Mutant(SOFTMAX, "one_hot_breaks_on_int32", _softmax_one_hot("lens"), correct=False,
           fails_only=("matches the reference with 1-D valid_lens",)),
    Mutant(SOFTMAX, "one_hot_of_long_lengths", _softmax_one_hot("lens.long()"), correct=True),
    # Code for (B,) lengths only, that raises on (B, Q) ones: charged once, by the 2-D check
    # (by the output check where a task has none).
    Mutant(SOFTMAX, "repeat_interleave_without_the_2d_branch", '''
def masked_softmax(X, valid_lens):
    if valid_lens is None:
        return nn.functional.softmax(X, dim=-1)
    shape = X.shape
    valid_lens = torch.repeat_interleave(valid_lens, shape[1])
    keep = torch.arange(shape[-1], device=X.device)[None, :] < valid_lens[:, None]
    X = X.reshape(-1, shape[-1]).masked_fill(~keep, -1e6)
    return nn.functional.softmax(X.reshape(shape), dim=-1)
''', correct=False, fails_only=("matches the reference with 2-D valid_lens",)),
    Mutant(DOT, "own_mask_for_1d_lengths_only", _dot(weights=f"torch.softmax({_ONE_D_MASKED}, dim=-1)"),
           correct=False, fails_only=("matches the reference with 2-D valid_lens",)),
    Mutant(ADD, "own_mask_for_1d_lengths_only", f'''
class AdditiveAttention(nn.Module):
    def __init__(self, num_hiddens, dropout):
        super().__init__()
        self.W_k = nn.LazyLinear(num_hiddens, bias=False)
        self.W_q = nn.LazyLinear(num_hiddens, bias=False)
        self.w_v = nn.LazyLinear(1, bias=False)
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, valid_lens):
        features = torch.tanh(self.W_q(queries).unsqueeze(2) + self.W_k(keys).unsqueeze(1))
        scores = self.w_v(features).squeeze(-1)
        self.attention_weights = torch.softmax({_ONE_D_MASKED}, dim=-1)
        return torch.bmm(self.dropout(self.attention_weights), values)
''', correct=False, fails_only=("matches the reference",)),
    # squeeze() drops the batch axis too when B = 1 (blind corpus 10, b11): charged once, by the
    # logits check; the others judge a batch of one as that sentence twice.
    Mutant(SEQ, "squeeze_breaks_a_batch_of_one", _cell(SEQ, _loop(
        step_input="torch.cat((context.squeeze(), x), dim=-1).unsqueeze(1)")),
        correct=False, fails_only=("matches the reference",)),
    # A fill value real scores can reach (SPEC §2: scores anywhere within ±1000): only scores
    # near -1000 show it, charged once, by the output check.
    Mutant(DOT, "own_mask_filled_with_minus_1000", _dot(weights=f"torch.softmax({_FILLED_AT_1000}, dim=-1)"),
           correct=False, mistake="fill_not_below_the_scores", fails_only=("matches the reference",)),
    Mutant(DIST, "own_mask_filled_with_minus_1000", _distance(f'''        scores = -torch.cdist(queries, keys) ** 2 / (2 * math.sqrt(d))
        self.attention_weights = torch.softmax({_FILLED_AT_1000}, dim=-1)
        return self.dropout(self.attention_weights) @ values'''),
           correct=False, mistake="fill_not_below_the_scores", fails_only=("matches the reference",)),
    # Reading the lengths' values (issue 10 item 5).
    Mutant(SOFTMAX, "tolist_then_mask_on_the_cpu", _softmax_from_list(""), correct=False, fails_only=DEVICE),
    Mutant(SOFTMAX, "tolist_then_mask_on_X_device", _softmax_from_list(", device=X.device"), correct=True),
    # The book's dropout_layer style, only on the train-mode path (issue 10 item 2).
    Mutant(DOT, "book_dropout_layer_mask_on_the_cpu", _book_dropout(""), correct=False, fails_only=DEVICE),
    Mutant(DOT, "book_dropout_layer_mask_on_the_device", _book_dropout(", device=X.device"), correct=True),
    # Dropout only when p == 1 (issue 9 item 9), and p fixed in the code.
    Mutant(DOT, "dropout_only_for_p_one", _dot(
        tail="(torch.zeros_like(self.attention_weights) if self.training and self.p >= 1 "
             "else self.attention_weights) @ values"), correct=False, fails_only=TRAIN),
    Mutant(DOT, "dropout_rate_fixed_at_half", _dot(
        tail="nn.functional.dropout(self.attention_weights, 0.5, self.training) @ values"),
        correct=False, fails_only=TRAIN),
    # Weights detached from the graph (issue 10 item 6): forward exact, no gradient.
    Mutant(DOT, "output_from_detached_weights", _dot(
        tail="self.dropout(self.attention_weights.detach()) @ values"), correct=False, fails_only=GRADIENTS),
    # A row of valid length 0 (issue 10 item 7): SDPA with an additive float mask attends to
    # every key there, while the weights it keeps are uniform.
    Mutant(DOT, "sdpa_additive_float_mask", _sdpa(
        "torch.zeros(keep.shape, dtype=queries.dtype, device=queries.device).masked_fill(~keep, -1e9)",
        "masked_softmax(scores, valid_lens)"), correct=False, fails_only=LAW),
    Mutant(DOT, "sdpa_boolean_mask", _sdpa("keep", NAN_SAFE_WEIGHTS), correct=True),
    # Writes into its input (SPEC §2: a second call with the same inputs gives the same result).
    Mutant(DOT, "divides_the_queries_in_place", '''
class DotProductAttention(nn.Module):
    def __init__(self, dropout):
        super().__init__()
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, valid_lens=None):
        queries /= math.sqrt(queries.shape[-1])  # in place: the caller's queries change
        self.attention_weights = masked_softmax(queries @ keys.transpose(1, 2), valid_lens)
        return self.dropout(self.attention_weights) @ values
''', correct=False, must_fail=EVAL),
    # No attention_weights kept (the 2020 book, SDPA rewrites): only the weights' points go.
    Mutant(DOT, "keeps_no_weights_2020_book", '''
class DotProductAttention(nn.Module):
    def __init__(self, dropout, **kwargs):
        super(DotProductAttention, self).__init__(**kwargs)
        self.dropout = nn.Dropout(dropout)

    def forward(self, query, key, value, valid_len=None):
        d = query.shape[-1]
        scores = torch.bmm(query, key.transpose(1, 2)) / math.sqrt(d)
        attention_weights = self.dropout(masked_softmax(scores, valid_len))
        return torch.bmm(attention_weights, value)
''', correct=False, fails_only=WEIGHTS),
    # A parameter that gets no gradient: forward exact.
    Mutant(ADD, "keys_projected_without_gradient", '''
class AdditiveAttention(nn.Module):
    def __init__(self, num_hiddens, dropout):
        super().__init__()
        self.W_k = nn.LazyLinear(num_hiddens, bias=False)
        self.W_q = nn.LazyLinear(num_hiddens, bias=False)
        self.w_v = nn.LazyLinear(1, bias=False)
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, valid_lens):
        with torch.no_grad():  # "the keys do not change"
            keys = self.W_k(keys)
        features = torch.tanh(self.W_q(queries).unsqueeze(2) + keys.unsqueeze(1))
        self.attention_weights = masked_softmax(self.w_v(features).squeeze(-1), valid_lens)
        return torch.bmm(self.dropout(self.attention_weights), values)
''', correct=False, fails_only=GRADIENTS),
    # Scores of a few hundred (issue 10 item 8): a normalised exponential kernel underflows.
    Mutant(DIST, "normalised_exponential_kernel", _distance('''        kernel = torch.exp(-torch.cdist(queries, keys) ** 2 / (2 * math.sqrt(d)))  # (B, Q, K)
        if valid_lens is not None:
            lens = valid_lens[:, None] if valid_lens.dim() == 1 else valid_lens
            kernel = kernel * (torch.arange(keys.shape[1], device=keys.device) < lens[..., None])
        self.attention_weights = kernel / kernel.sum(-1, keepdim=True).clamp_min(1e-30)
        return self.dropout(self.attention_weights) @ values'''), correct=False),
    # float64 inputs: a buffer in the default dtype.
    Mutant(DIST, "float32_score_buffer", _distance_buffer(""), correct=False),
    Mutant(DIST, "score_buffer_in_the_inputs_dtype", _distance_buffer(", dtype=queries.dtype"), correct=True),
    # Decoders: enc_valid_lens=None (issue 10 item 3).
    Mutant(SEQ, "none_lengths_filled_on_the_cpu", _cell(SEQ, _decoder_lens(
        "torch.full((enc_outputs.shape[0],), enc_outputs.shape[1])  # no device=")),
        correct=False, fails_only=DEVICE),
    Mutant(SEQ, "none_lengths_filled_on_the_device", _cell(SEQ, _decoder_lens(
        "torch.full((enc_outputs.shape[0],), enc_outputs.shape[1], device=enc_outputs.device)")),
        correct=True),
    Mutant(DOT_DEC, "breaks_without_lengths", _cell(DOT_DEC, _loop(
        lens="enc_valid_lens.clamp(max=enc_outputs.shape[1])")), correct=False),
    # Dropout in eval mode (issue 10 item 4): F.dropout without training=.
    Mutant(SEQ, "context_dropout_also_in_eval", _cell(SEQ, _loop(
        step_input="torch.cat((nn.functional.dropout(context, 0.5), x.unsqueeze(1)), dim=-1)")),
        correct=False, must_fail=EVAL),
    # ... and a rate of its own in train mode: at dropout=0 training differs (blind corpus 4).
    Mutant(SEQ, "context_dropout_of_its_own_rate_in_train_mode", _cell(SEQ, _loop(
        step_input="torch.cat((nn.functional.dropout(context, 0.5, training=self.training), "
                   "x.unsqueeze(1)), dim=-1)")), correct=False, fails_only=("matches the reference",)),
    Mutant(SEQ, "context_dropout_at_the_given_rate_in_train_mode_only", _cell(SEQ, _loop(
        step_input="torch.cat((nn.functional.dropout(context, self.rnn.dropout, training=self.training), "
                   "x.unsqueeze(1)), dim=-1)")), correct=True),
    # What only training used to catch (issue 11): state detached, a parameter without
    # gradient, an in-place update of the state (issue 10 item 9).
    Mutant(SEQ, "detaches_the_state_each_step", _cell(SEQ, _loop(
        new_state="new_hidden").replace(
        "outputs.append(out)", "outputs.append(out)\n            hidden_state = new_hidden.detach()")),
        correct=False, fails_only=GRADIENTS),
    Mutant(LSTM, "embedding_without_gradient", _cell(LSTM, _loop(query="hidden_state[0][-1].unsqueeze(1)").replace(
        "X = self.embedding(X).permute(1, 0, 2)", "X = self.embedding(X).detach().permute(1, 0, 2)")),
        correct=False, fails_only=GRADIENTS),
    Mutant(DOT_DEC, "updates_the_state_in_place", _cell(DOT_DEC, _loop(new_state="new_hidden").replace(
        "outputs.append(out)", "outputs.append(out)\n            hidden_state.copy_(new_hidden)  # in place")),
        correct=False, must_fail=EVAL),
    Mutant(DOT_DEC, "dense_on_detached_outputs", _cell(DOT_DEC, INIT_STATE + '''
    def forward(self, X, state):
        enc_outputs, hidden_state, enc_valid_lens = state
        outputs, self._attention_weights = [], []
        for x in self.embedding(X).permute(1, 0, 2):
            context = self.attention(hidden_state[-1].unsqueeze(1), enc_outputs, enc_outputs, enc_valid_lens)
            out, hidden_state = self.rnn(torch.cat((context, x.unsqueeze(1)), -1).permute(1, 0, 2), hidden_state)
            outputs.append(out.detach())  # "only the dense layer learns from the logits"
            self._attention_weights.append(self.attention.attention_weights)
        return self.dense(torch.cat(outputs, 0)).permute(1, 0, 2), (enc_outputs, hidden_state, enc_valid_lens)
'''), correct=False, fails_only=GRADIENTS),
]

# A hostile cell (issue 10): while masked_softmax is graded, it looks for the book's version in
# the worker's memory. The sandbox builds the book without the graded name, so nothing is
# found there; on the nbgrader path the checks share the kernel, so it would find the grader's.
HOSTILE = [
    Mutant(SOFTMAX, "finds_the_books_answer_through_gc", '''
import gc


def masked_softmax(X, valid_lens):
    for obj in gc.get_objects():
        if (callable(obj) and getattr(obj, "__name__", "") == "masked_softmax"
                and obj is not masked_softmax and getattr(obj, "__module__", "") != "__main__"):
            return obj(X, valid_lens)
    return torch.softmax(X, dim=-1)  # nothing found: valid_lens ignored
''', correct=False, sandbox_only="reads the process's memory, which the nbgrader path shares with the checks"),
]

# Gaming the device check (issue 9 item 9): CPU-only code that hides from the probes.
CPU_ONLY_MASK = '''
    lens = valid_lens[:, None] if valid_lens.dim() == 1 else valid_lens
    keep = torch.arange(X.shape[-1])[None, None, :] < lens[:, :, None]  # no device=
    return torch.softmax(X.masked_fill(~keep, -1e6), dim=-1)'''
MUTANTS += [
    Mutant(SOFTMAX, "empty_result_on_meta", '''
def masked_softmax(X, valid_lens):
    if X.device.type == "meta":
        return torch.empty_like(X)  # shapes are all the meta device can check
    if valid_lens is None:
        return torch.softmax(X, dim=-1)''' + CPU_ONLY_MASK + "\n", correct=False, fails_only=DEVICE),
    Mutant(SOFTMAX, "device_error_raised_as_another", '''
def masked_softmax(X, valid_lens):
    if valid_lens is None:
        return torch.softmax(X, dim=-1)
    try:''' + CPU_ONLY_MASK.replace("\n    ", "\n        ") + '''
    except RuntimeError:
        raise ValueError("valid_lens has the wrong shape") from None
''', correct=False, fails_only=DEVICE),
    # Raises on 2-D lengths only: a shape error, charged by the value checks, not by the device check.
    Mutant(DOT, "breaks_on_2d_lengths", _dot(weights="masked_softmax(scores, None if valid_lens is None else "
                                                     "valid_lens.reshape(-1)[:scores.shape[0]])"),
           correct=False),
]

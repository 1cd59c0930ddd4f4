"""Mutants of the three decoder cells of bahdanau.

The released skeleton gives each class's ``__init__`` and the ``attention_weights``
property; the student writes ``init_state`` and ``forward``. ``_cell`` puts a student's
methods into that skeleton; a few variants write the whole class. The notebook has
imported ``AttentionDecoder``, ``AdditiveAttention``, ``DotProductAttention``,
``masked_softmax`` and ``init_seq2seq`` from the course helpers above the cells.
"""
from dataclasses import replace

from .harness import Mutant

SEQ, LSTM, DOT = "seq2seq_attention_decoder", "lstm_attention_decoder", "dot_attention_decoder"
SKELETON = {  # task -> (class name, recurrent layer, attention)
    SEQ: ("Seq2SeqAttentionDecoder", "nn.GRU", "AdditiveAttention(num_hiddens, dropout)"),
    LSTM: ("LSTMAttentionDecoder", "nn.LSTM", "AdditiveAttention(num_hiddens, dropout)"),
    DOT: ("DotAttentionDecoder", "nn.GRU", "DotProductAttention(dropout)"),
}
STEPS = ("step by step equals teacher forcing",)
WEIGHTS = ("attention weights per step match the reference",)
SHAPES = ("state and output shapes",)


def _cell(task: str, methods: str, weights_property: bool = True) -> str:
    """The skeleton's class for ``task`` with the student's ``methods`` (4 spaces indented)."""
    name, rnn, attention = SKELETON[task]
    prop = '''
    @property
    def attention_weights(self):
        return self._attention_weights
''' if weights_property else ""
    return f'''
class {name}(AttentionDecoder):
    def __init__(self, vocab_size, embed_size, num_hiddens, num_layers,
                 dropout=0):
        super().__init__()
        self.attention = {attention}
        self.embedding = nn.Embedding(vocab_size, embed_size)
        self.rnn = {rnn}(
            embed_size + num_hiddens, num_hiddens, num_layers,
            dropout=dropout)
        self.dense = nn.LazyLinear(vocab_size)
        self.apply(init_seq2seq)
{methods}{prop}'''


INIT_STATE = '''
    def init_state(self, enc_outputs, enc_valid_lens):
        outputs, hidden_state = enc_outputs
        return outputs.permute(1, 0, 2), hidden_state, enc_valid_lens
'''


def _loop(query: str = "hidden_state[-1].unsqueeze(1)", lens: str = "enc_valid_lens",
          step_input: str = "torch.cat((context, x.unsqueeze(1)), dim=-1)",
          rnn_state: str = "hidden_state", new_state: str = "hidden_state",
          store: str = "self._attention_weights.append(self.attention.attention_weights)",
          returned: str = "(enc_outputs, hidden_state, enc_valid_lens)", start: str = "") -> str:
    """The book's forward (11.4.2) with one piece swapped: the bugs below differ from it
    by exactly one argument."""
    return INIT_STATE + f'''
    def forward(self, X, state):
        enc_outputs, hidden_state, enc_valid_lens = state{start}
        X = self.embedding(X).permute(1, 0, 2)  # (S, B, E)
        outputs, self._attention_weights = [], []
        for x in X:
            query = {query}  # (B, 1, H)
            context = self.attention(query, enc_outputs, enc_outputs, {lens})  # (B, 1, H)
            x = {step_input}
            out, {new_state} = self.rnn(x.permute(1, 0, 2), {rnn_state})
            outputs.append(out)
            {store}
        outputs = self.dense(torch.cat(outputs, dim=0))  # (S, B, V)
        return outputs.permute(1, 0, 2), {returned}
'''


# --- correct variants ----------------------------------------------------------------------

def _index_loop(task: str) -> str:
    """Steps by index over (B, S, E) embeddings, stacks on dim 1, tuple state."""
    query = "hidden_state[0][-1].unsqueeze(1)" if task == LSTM else "hidden_state[-1].unsqueeze(1)"
    return _cell(task, f'''
    def init_state(self, enc_outputs, enc_valid_lens):
        outputs, hidden_state = enc_outputs  # (T, B, H)
        return outputs.transpose(0, 1), hidden_state, enc_valid_lens

    def forward(self, X, state):
        enc_outputs, hidden_state, enc_valid_lens = state
        embs = self.embedding(X)  # (B, S, E)
        outs, self._attention_weights = [], []
        for t in range(X.shape[1]):
            query = {query}
            context = self.attention(query, enc_outputs, enc_outputs, enc_valid_lens)
            x = torch.cat([context, embs[:, t:t + 1, :]], dim=-1)  # (B, 1, H + E)
            out, hidden_state = self.rnn(x.transpose(0, 1), hidden_state)
            outs.append(out.squeeze(0))  # (B, H)
            self._attention_weights.append(self.attention.attention_weights)
        logits = self.dense(torch.stack(outs, dim=1))  # (B, S, V)
        return logits, (enc_outputs, hidden_state, enc_valid_lens)
''')


def _precomputed_keys(task: str) -> str:
    """Projects the keys once per forward and scores by hand with the attention's own
    parameters (additive) or q·k/√H (dot)."""
    if task == DOT:
        score = "torch.bmm(query, enc_outputs.transpose(1, 2)) / math.sqrt(enc_outputs.shape[-1])"
        keys = ""
    else:
        score = "self.attention.w_v(torch.tanh(self.attention.W_q(query) + keys)).squeeze(-1).unsqueeze(1)"
        keys = "\n        keys = self.attention.W_k(enc_outputs)  # (B, T, H), once for all steps"
    query = "hidden_state[0][-1:]" if task == LSTM else "hidden_state[-1:]"
    return _cell(task, INIT_STATE + f'''
    def forward(self, X, state):
        enc_outputs, hidden_state, enc_valid_lens = state{keys}
        embs = self.embedding(X.t())  # (S, B, E)
        outputs, self._attention_weights = [], []
        for emb in embs:
            query = {query}.permute(1, 0, 2)  # (1, B, H) -> (B, 1, H)
            scores = {score}  # (B, 1, T)
            weights = masked_softmax(scores, enc_valid_lens)
            context = torch.bmm(self.attention.dropout(weights), enc_outputs)  # (B, 1, H)
            step = torch.cat((context.squeeze(1), emb), dim=1).unsqueeze(0)  # (1, B, H + E)
            out, hidden_state = self.rnn(step, hidden_state)
            outputs.append(out)
            self._attention_weights.append(weights)
        return self.dense(torch.cat(outputs, 0)).permute(1, 0, 2), (enc_outputs, hidden_state, enc_valid_lens)
''')


def _per_step_dense_list_state(task: str) -> str:
    """A list for the state, the dense layer applied at each step, hidden state unpacked."""
    if task == LSTM:
        unpack, query, rnn_state, pack = "h, c = hidden_state", "h[-1].unsqueeze(1)", "(h, c)", "[enc_outputs, (h, c), enc_valid_lens]"
        new = "h, c"
    else:
        unpack, query, rnn_state, pack = "h = hidden_state", "h[-1].unsqueeze(1)", "h", "[enc_outputs, h, enc_valid_lens]"
        new = "h"
    return _cell(task, f'''
    def init_state(self, enc_outputs, enc_valid_lens):
        return [enc_outputs[0].permute(1, 0, 2), enc_outputs[1], enc_valid_lens]

    def forward(self, X, state):
        enc_outputs, hidden_state, enc_valid_lens = state
        {unpack}
        logits, self._attention_weights = [], []
        for t in range(X.shape[1]):
            emb = self.embedding(X[:, t])  # (B, E)
            context = self.attention({query}, enc_outputs, enc_outputs, enc_valid_lens)
            out, ({new}) = self.rnn(torch.cat((context[:, 0], emb), -1)[None], {rnn_state})
            logits.append(self.dense(out[0]))  # (B, V)
            self._attention_weights.append(self.attention.attention_weights)
        return torch.stack(logits, 1), {pack}
''')


def _own_weights_attribute(task: str) -> str:
    """Keeps the weights under another name (its own property) and uses zip over steps."""
    query = "state_h[0][-1:]" if task == LSTM else "state_h[-1:]"
    return _cell(task, f'''
    def init_state(self, enc_outputs, enc_valid_lens):
        enc_seq, enc_state = enc_outputs
        return enc_seq.swapaxes(0, 1).contiguous(), enc_state, enc_valid_lens

    def forward(self, X, state):
        memory, state_h, lens = state
        self.step_weights = []
        steps = []
        for emb in self.embedding(X).unbind(1):  # S tensors (B, E)
            context = self.attention({query}.transpose(0, 1), memory, memory, lens)
            self.step_weights.append(self.attention.attention_weights)
            out, state_h = self.rnn(torch.cat((context, emb.unsqueeze(1)), 2).transpose(0, 1), state_h)
            steps.append(out)
        return self.dense(torch.cat(steps)).transpose(0, 1), (memory, state_h, lens)

    @property
    def attention_weights(self):
        return self.step_weights
''', weights_property=False)


CORRECT = [Mutant(task, name, make(task), correct=True)
           for task in (SEQ, LSTM, DOT)
           for name, make in [("index_loop", _index_loop), ("precomputed_keys", _precomputed_keys),
                              ("per_step_dense_list_state", _per_step_dense_list_state),
                              ("own_weights_attribute", _own_weights_attribute)]]

# --- bugs ----------------------------------------------------------------------------------
LSTM_LOOP = dict(query="hidden_state[0][-1].unsqueeze(1)")

BUGS = [
    # seq2seq_attention_decoder
    Mutant(SEQ, "first_layer_query", _cell(SEQ, _loop(query="hidden_state[0].unsqueeze(1)")),
           correct=False, mistake="first_layer_query"),
    Mutant(SEQ, "ignores_enc_valid_lens", _cell(SEQ, _loop(lens="None")),
           correct=False, mistake="ignores_enc_valid_lens", must_fail=WEIGHTS),
    Mutant(SEQ, "context_after_embedding", _cell(SEQ, _loop(
        step_input="torch.cat((x.unsqueeze(1), context), dim=-1)")),
        correct=False, mistake="context_after_embedding"),
    Mutant(SEQ, "returns_the_incoming_state", _cell(SEQ, _loop(returned="state")),
           correct=False, must_fail=STEPS),
    Mutant(SEQ, "zero_hidden_state_each_forward", _cell(SEQ, _loop(
        start="\n        hidden_state = torch.zeros_like(hidden_state)  # a fresh start")), correct=False),
    Mutant(SEQ, "weights_of_the_last_step_only", _cell(SEQ, _loop(
        store="self._attention_weights = [self.attention.attention_weights]")),
        correct=False, must_fail=WEIGHTS),
    # Issue 47: told "expected `[(B, 1, T)] * 1`, got `list`"; the list it keeps is empty.
    Mutant(SEQ, "keeps_no_weights", _cell(SEQ, _loop(store="pass  # no weights kept")),
           correct=False, fails_only=WEIGHTS),
    Mutant(SEQ, "query_is_last_encoder_output", _cell(SEQ, _loop(query="enc_outputs[:, -1:, :]")),
           correct=False),
    Mutant(SEQ, "iterates_over_the_batch", _cell(SEQ, _loop().replace(
        "X = self.embedding(X).permute(1, 0, 2)  # (S, B, E)", "X = self.embedding(X)  # (B, S, E)")),
        correct=False),
    # lstm_attention_decoder
    Mutant(LSTM, "cell_state_query", _cell(LSTM, _loop(query="hidden_state[1][-1].unsqueeze(1)")),
           correct=False, mistake="cell_state_query"),
    Mutant(LSTM, "first_layer_query", _cell(LSTM, _loop(query="hidden_state[0][0].unsqueeze(1)")),
           correct=False, mistake="first_layer_query"),
    Mutant(LSTM, "ignores_enc_valid_lens", _cell(LSTM, _loop(lens="None", **LSTM_LOOP)),
           correct=False, mistake="ignores_enc_valid_lens", must_fail=WEIGHTS),
    Mutant(LSTM, "context_after_embedding", _cell(LSTM, _loop(
        step_input="torch.cat((x.unsqueeze(1), context), dim=-1)", **LSTM_LOOP)),
        correct=False, mistake="context_after_embedding"),
    Mutant(LSTM, "resets_the_cell_state_each_step", _cell(LSTM, _loop(
        rnn_state="(hidden_state[0], torch.zeros_like(hidden_state[1]))", **LSTM_LOOP)), correct=False),
    Mutant(LSTM, "keeps_h_only", _cell(LSTM, _loop(
        returned="(enc_outputs, hidden_state[0], enc_valid_lens)", **LSTM_LOOP)),
        correct=False, must_fail=SHAPES),
    Mutant(LSTM, "weights_of_the_last_step_only", _cell(LSTM, _loop(
        store="self._attention_weights = [self.attention.attention_weights]", **LSTM_LOOP)),
        correct=False, must_fail=WEIGHTS),
    # dot_attention_decoder
    Mutant(DOT, "first_layer_query", _cell(DOT, _loop(query="hidden_state[0].unsqueeze(1)")),
           correct=False, mistake="first_layer_query"),
    Mutant(DOT, "ignores_enc_valid_lens", _cell(DOT, _loop(lens="None")),
           correct=False, mistake="ignores_enc_valid_lens", must_fail=WEIGHTS),
    Mutant(DOT, "context_after_embedding", _cell(DOT, _loop(
        step_input="torch.cat((x.unsqueeze(1), context), dim=-1)")),
        correct=False, mistake="context_after_embedding"),
    Mutant(DOT, "no_sqrt_in_own_scores", _cell(DOT, _loop().replace(
        "context = self.attention(query, enc_outputs, enc_outputs, enc_valid_lens)  # (B, 1, H)",
        "weights = masked_softmax(torch.bmm(query, enc_outputs.transpose(1, 2)), enc_valid_lens)\n"
        "            self.attention.attention_weights = weights\n"
        "            context = torch.bmm(weights, enc_outputs)")), correct=False),
    Mutant(DOT, "reshape_instead_of_permute", _cell(DOT, _loop().replace(
        "return outputs.permute(1, 0, 2), hidden_state, enc_valid_lens",
        "return outputs.reshape(outputs.shape[1], outputs.shape[0], -1), hidden_state, enc_valid_lens")),
        correct=False, must_fail=SHAPES),
    Mutant(DOT, "returns_the_incoming_state", _cell(DOT, _loop(returned="state")),
           correct=False, must_fail=STEPS),
    Mutant(DOT, "weights_of_the_last_step_only", _cell(DOT, _loop(
        store="self._attention_weights = [self.attention.attention_weights]")),
        correct=False, must_fail=WEIGHTS),
    Mutant(DOT, "additive_scoring_inside", _cell(DOT, _loop().replace(
        "self.attention(query,", "self.scorer(query,").replace(
        "self._attention_weights.append(self.attention.attention_weights)",
        "self._attention_weights.append(self.scorer.attention_weights)")).replace(
        "        self.apply(init_seq2seq)\n",
        "        self.scorer = AdditiveAttention(num_hiddens, dropout)  # the other exercise's scoring\n"
        "        self.apply(init_seq2seq)\n"), correct=False),
    # A CPU buffer written step by step: fails on CUDA (dense meets a CPU tensor). Meta
    # cannot copy into it ("Cannot copy out of meta tensor"); the emulated device allows the
    # copy, as CUDA does, and raises where dense meets the buffer.
    Mutant(SEQ, "logits_buffer_on_the_cpu", _cell(SEQ, INIT_STATE + '''
    def forward(self, X, state):
        enc_outputs, hidden_state, enc_valid_lens = state
        B, S = X.shape
        outputs = torch.zeros(S, B, enc_outputs.shape[-1])  # no device=
        self._attention_weights = []
        for t, x in enumerate(self.embedding(X).permute(1, 0, 2)):
            query = hidden_state[-1].unsqueeze(1)
            context = self.attention(query, enc_outputs, enc_outputs, enc_valid_lens)
            x = torch.cat((context, x.unsqueeze(1)), dim=-1)
            out, hidden_state = self.rnn(x.permute(1, 0, 2), hidden_state)
            outputs[t] = out[0]
            self._attention_weights.append(self.attention.attention_weights)
        return self.dense(outputs).permute(1, 0, 2), (enc_outputs, hidden_state, enc_valid_lens)
'''), correct=False, must_fail=("runs on any device",)),
]

# Where the checks misjudge a mutant today (strict xfail in test_mutants.py).
MISSES = {
}
MUTANTS = [replace(m, grader_misses=MISSES.get(m.id)) for m in CORRECT + BUGS]

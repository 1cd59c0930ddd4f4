"""Mutants of the four attention-module cells of attention_scoring.

Each source is what a student would put in the cell; ``math``, ``torch``, ``nn`` and
the earlier cells' ``masked_softmax`` and ``DotProductAttention`` are defined above it.
"""
from dataclasses import replace

from .harness import Mutant

DEVICES = ("runs on any device",)

# --- dot_product_attention -------------------------------------------------------------
DOT = "dot_product_attention"

DOT_CORRECT = [
    # √d as a 0-dim CPU tensor: legal beside CUDA tensors (it acts as a number), so no device fault.
    # In the queries' dtype: a float32 √d rounds float64 scores as float32 (variants_book_contexts).
    Mutant(DOT, "cpu_scalar_sqrt", '''
class DotProductAttention(nn.Module):
    def __init__(self, dropout):
        super().__init__()
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, valid_lens=None):
        d = torch.tensor(queries.shape[-1], dtype=queries.dtype)
        scores = torch.bmm(queries, keys.transpose(1, 2)) / torch.sqrt(d)
        self.attention_weights = masked_softmax(scores, valid_lens)
        return torch.bmm(self.dropout(self.attention_weights), values)
''', correct=True),
    Mutant(DOT, "einsum", '''
class DotProductAttention(nn.Module):
    def __init__(self, dropout):
        super().__init__()
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, valid_lens=None):
        scores = torch.einsum("bqd,bkd->bqk", queries, keys) / math.sqrt(queries.shape[-1])
        self.attention_weights = masked_softmax(scores, valid_lens)
        return torch.einsum("bqk,bkv->bqv", self.dropout(self.attention_weights), values)
''', correct=True),
    Mutant(DOT, "scale_queries_first_functional_dropout", '''
class DotProductAttention(nn.Module):
    def __init__(self, dropout):
        super().__init__()
        self.p = dropout

    def forward(self, queries, keys, values, valid_lens=None):
        queries = queries / queries.size(-1) ** 0.5
        self.attention_weights = masked_softmax(torch.matmul(queries, keys.mT), valid_lens)
        dropped = nn.functional.dropout(self.attention_weights, self.p, training=self.training)
        return torch.matmul(dropped, values)
''', correct=True),
    Mutant(DOT, "baddbmm_alpha", '''
class DotProductAttention(nn.Module):
    def __init__(self, dropout):
        super().__init__()
        self.drop = nn.Dropout(dropout)

    def forward(self, queries, keys, values, valid_lens=None):
        B, Q, K = queries.shape[0], queries.shape[1], keys.shape[1]
        scores = torch.baddbmm(queries.new_zeros(B, Q, K), queries, keys.permute(0, 2, 1),
                               beta=0, alpha=1 / math.sqrt(keys.shape[-1]))
        self.attention_weights = masked_softmax(scores, valid_lens)
        return torch.bmm(self.drop(self.attention_weights), values)
''', correct=True),
    Mutant(DOT, "own_mask_broadcast_products", '''
class DotProductAttention(nn.Module):
    def __init__(self, dropout):
        super().__init__()
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, valid_lens=None):
        d = queries.shape[-1]
        scores = (queries.unsqueeze(2) * keys.unsqueeze(1)).sum(-1) / d ** 0.5  # (B, Q, K)
        if valid_lens is not None:
            lens = valid_lens if valid_lens.dim() == 2 else valid_lens.unsqueeze(1)
            keep = torch.arange(keys.shape[1], device=keys.device) < lens.unsqueeze(-1)
            scores = scores.masked_fill(~keep, -1e6)
        self.attention_weights = scores.softmax(dim=-1)
        return self.dropout(self.attention_weights) @ values
''', correct=True),
]

DOT_CORRECT.append(Mutant(DOT, "detached_weights_for_plotting", '''
class DotProductAttention(nn.Module):
    def __init__(self, dropout):
        super().__init__()
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, valid_lens=None):
        weights = masked_softmax(queries @ keys.transpose(-2, -1) / math.sqrt(keys.size(-1)), valid_lens)
        self.attention_weights = weights.detach()  # kept for show_heatmaps only
        return self.dropout(weights) @ values
''', correct=True))

DOT_BUGS = [
    Mutant(DOT, "no_sqrt", '''
class DotProductAttention(nn.Module):
    def __init__(self, dropout):
        super().__init__()
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, valid_lens=None):
        scores = torch.bmm(queries, keys.transpose(1, 2))
        self.attention_weights = masked_softmax(scores, valid_lens)
        return torch.bmm(self.dropout(self.attention_weights), values)
''', correct=False, mistake="no_sqrt"),
    Mutant(DOT, "scale_by_d", '''
class DotProductAttention(nn.Module):
    def __init__(self, dropout):
        super().__init__()
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, valid_lens=None):
        scores = torch.bmm(queries, keys.transpose(1, 2)) / queries.shape[-1]
        self.attention_weights = masked_softmax(scores, valid_lens)
        return torch.bmm(self.dropout(self.attention_weights), values)
''', correct=False, mistake="scale_by_d"),
    Mutant(DOT, "own_softmax_over_queries", '''
class DotProductAttention(nn.Module):
    def __init__(self, dropout):
        super().__init__()
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, valid_lens=None):
        scores = queries @ keys.transpose(1, 2) / math.sqrt(queries.shape[-1])
        if valid_lens is not None:
            lens = valid_lens if valid_lens.dim() == 2 else valid_lens[:, None]
            keep = torch.arange(keys.shape[1], device=keys.device) < lens[:, :, None]
            scores = scores.masked_fill(~keep, -1e6)
        self.attention_weights = torch.softmax(scores, dim=1)
        return self.dropout(self.attention_weights) @ values
''', correct=False, mistake="wrong_axis"),
    Mutant(DOT, "ignores_valid_lens", '''
class DotProductAttention(nn.Module):
    def __init__(self, dropout):
        super().__init__()
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, valid_lens=None):
        scores = queries @ keys.transpose(1, 2) / math.sqrt(queries.shape[-1])
        self.attention_weights = masked_softmax(scores, None)
        return self.dropout(self.attention_weights) @ values
''', correct=False, mistake="ignores_valid_lens"),
    Mutant(DOT, "two_d_lens_as_one_d", '''
class DotProductAttention(nn.Module):
    def __init__(self, dropout):
        super().__init__()
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, valid_lens=None):
        scores = queries @ keys.transpose(1, 2) / math.sqrt(queries.shape[-1])
        if valid_lens is not None and valid_lens.dim() == 2:
            valid_lens = valid_lens[:, 0]  # the book's examples pass one length per example
        self.attention_weights = masked_softmax(scores, valid_lens)
        return self.dropout(self.attention_weights) @ values
''', correct=False, mistake="lens_2d_as_1d"),
    Mutant(DOT, "functional_dropout_also_in_eval", '''
class DotProductAttention(nn.Module):
    def __init__(self, dropout):
        super().__init__()
        self.p = dropout

    def forward(self, queries, keys, values, valid_lens=None):
        scores = queries @ keys.transpose(1, 2) / math.sqrt(queries.shape[-1])
        self.attention_weights = masked_softmax(scores, valid_lens)
        return nn.functional.dropout(self.attention_weights, self.p) @ values  # training=True
''', correct=False),
    Mutant(DOT, "forgets_dropout", '''
class DotProductAttention(nn.Module):
    def __init__(self, dropout):
        super().__init__()
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, valid_lens=None):
        scores = queries @ keys.transpose(1, 2) / math.sqrt(queries.shape[-1])
        self.attention_weights = masked_softmax(scores, valid_lens)
        return self.attention_weights @ values
''', correct=False),
    Mutant(DOT, "dropout_on_the_output", '''
class DotProductAttention(nn.Module):
    def __init__(self, dropout):
        super().__init__()
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, valid_lens=None):
        scores = queries @ keys.transpose(1, 2) / math.sqrt(queries.shape[-1])
        self.attention_weights = masked_softmax(scores, valid_lens)
        return self.dropout(self.attention_weights @ values)  # drops output features, not weights
''', correct=False),
    Mutant(DOT, "stores_weights_after_dropout", '''
class DotProductAttention(nn.Module):
    def __init__(self, dropout):
        super().__init__()
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, valid_lens=None):
        scores = queries @ keys.transpose(1, 2) / math.sqrt(queries.shape[-1])
        self.attention_weights = self.dropout(masked_softmax(scores, valid_lens))
        return self.attention_weights @ values
''', correct=False),
    Mutant(DOT, "returns_weights", '''
class DotProductAttention(nn.Module):
    def __init__(self, dropout):
        super().__init__()
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, valid_lens=None):
        scores = queries @ keys.transpose(1, 2) / math.sqrt(queries.shape[-1])
        self.attention_weights = masked_softmax(scores, valid_lens)
        return self.dropout(self.attention_weights)
''', correct=False),
    Mutant(DOT, "own_mask_arange_on_the_cpu", '''
class DotProductAttention(nn.Module):
    def __init__(self, dropout):
        super().__init__()
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, valid_lens=None):
        scores = queries @ keys.transpose(1, 2) / math.sqrt(queries.shape[-1])
        if valid_lens is not None:
            lens = valid_lens if valid_lens.dim() == 2 else valid_lens[:, None]
            keep = torch.arange(keys.shape[1]) < lens[:, :, None]  # no device=
            scores = scores.masked_fill(~keep, -1e6)
        self.attention_weights = torch.softmax(scores, dim=-1)
        return self.dropout(self.attention_weights) @ values
''', correct=False, must_fail=DEVICES),
    # Issue 47: told "got: Opaque" (what stays in the worker); it is a method, not a property.
    Mutant(DOT, "attention_weights_a_method_not_a_property", '''
class DotProductAttention(nn.Module):
    def __init__(self, dropout):
        super().__init__()
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, valid_lens=None):
        scores = torch.bmm(queries, keys.transpose(1, 2)) / math.sqrt(queries.shape[-1])
        self._weights = masked_softmax(scores, valid_lens)
        return torch.bmm(self.dropout(self._weights), values)

    def attention_weights(self):
        return self._weights
''', correct=False, fails_only=("attention_weights match the reference",)),
]

# --- additive_attention ------------------------------------------------------------------
ADD = "additive_attention"

ADD_CORRECT = [
    Mutant(ADD, "einsum_with_w_v_weight", '''
class AdditiveAttention(nn.Module):
    def __init__(self, num_hiddens, dropout):
        super().__init__()
        self.W_q = nn.LazyLinear(num_hiddens, bias=False)
        self.W_k = nn.LazyLinear(num_hiddens, bias=False)
        self.w_v = nn.LazyLinear(1, bias=False)
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, valid_lens=None):
        features = torch.tanh(self.W_q(queries)[:, :, None, :] + self.W_k(keys)[:, None, :, :])
        self.w_v(features[:, :1, :1])  # make sure w_v is initialised before using its weight
        scores = torch.einsum("bqkh,h->bqk", features, self.w_v.weight[0])
        self.attention_weights = masked_softmax(scores, valid_lens)
        return torch.bmm(self.dropout(self.attention_weights), values)
''', correct=True),
    Mutant(ADD, "expand_instead_of_broadcast", '''
class AdditiveAttention(nn.Module):
    def __init__(self, num_hiddens, dropout):
        super().__init__()
        self.W_k = nn.LazyLinear(num_hiddens, bias=False)
        self.W_q = nn.LazyLinear(num_hiddens, bias=False)
        self.w_v = nn.LazyLinear(1, bias=False)
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, valid_lens):
        Q, K = queries.shape[1], keys.shape[1]
        q = self.W_q(queries).unsqueeze(2).expand(-1, -1, K, -1)  # (B, Q, K, H)
        k = self.W_k(keys).unsqueeze(1).expand(-1, Q, -1, -1)     # (B, Q, K, H)
        scores = self.w_v(torch.tanh(q + k))[..., 0]
        self.attention_weights = masked_softmax(scores, valid_lens)
        return self.dropout(self.attention_weights) @ values
''', correct=True),
    Mutant(ADD, "loop_over_queries", '''
class AdditiveAttention(nn.Module):
    def __init__(self, num_hiddens, dropout):
        super().__init__()
        self.W_k = nn.LazyLinear(num_hiddens, bias=False)
        self.W_q = nn.LazyLinear(num_hiddens, bias=False)
        self.w_v = nn.LazyLinear(1, bias=False)
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, valid_lens):
        qh, kh = self.W_q(queries), self.W_k(keys)
        rows = []
        for i in range(qh.shape[1]):
            rows.append(self.w_v(torch.tanh(qh[:, i:i + 1, :] + kh)).squeeze(-1))  # (B, K)
        scores = torch.stack(rows, dim=1)  # (B, Q, K)
        self.attention_weights = masked_softmax(scores, valid_lens)
        return torch.bmm(self.dropout(self.attention_weights), values)
''', correct=True),
    Mutant(ADD, "own_where_mask_functional_dropout", '''
class AdditiveAttention(nn.Module):
    def __init__(self, num_hiddens, dropout):
        super().__init__()
        self.W_k = nn.LazyLinear(num_hiddens, bias=False)
        self.W_q = nn.LazyLinear(num_hiddens, bias=False)
        self.w_v = nn.LazyLinear(1, bias=False)
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, valid_lens=None):
        features = torch.tanh(self.W_q(queries).unsqueeze(2) + self.W_k(keys).unsqueeze(1))
        scores = self.w_v(features).squeeze(-1)
        if valid_lens is not None:
            lens = valid_lens.reshape(valid_lens.shape[0], -1, 1)  # (B, 1 or Q, 1)
            keep = torch.arange(scores.shape[-1], device=scores.device) < lens
            scores = torch.where(keep, scores, torch.finfo(scores.dtype).min)
        self.attention_weights = torch.softmax(scores, dim=-1)
        dropped = nn.functional.dropout(self.attention_weights, self.dropout.p, self.training)
        return dropped @ values
''', correct=True),
]

ADD_BUGS = [
    Mutant(ADD, "no_tanh", '''
class AdditiveAttention(nn.Module):
    def __init__(self, num_hiddens, dropout):
        super().__init__()
        self.W_k = nn.LazyLinear(num_hiddens, bias=False)
        self.W_q = nn.LazyLinear(num_hiddens, bias=False)
        self.w_v = nn.LazyLinear(1, bias=False)
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, valid_lens):
        features = self.W_q(queries).unsqueeze(2) + self.W_k(keys).unsqueeze(1)
        scores = self.w_v(features).squeeze(-1)
        self.attention_weights = masked_softmax(scores, valid_lens)
        return torch.bmm(self.dropout(self.attention_weights), values)
''', correct=False, mistake="no_tanh"),
    Mutant(ADD, "ignores_valid_lens", '''
class AdditiveAttention(nn.Module):
    def __init__(self, num_hiddens, dropout):
        super().__init__()
        self.W_k = nn.LazyLinear(num_hiddens, bias=False)
        self.W_q = nn.LazyLinear(num_hiddens, bias=False)
        self.w_v = nn.LazyLinear(1, bias=False)
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, valid_lens):
        features = torch.tanh(self.W_q(queries).unsqueeze(2) + self.W_k(keys).unsqueeze(1))
        self.attention_weights = torch.softmax(self.w_v(features).squeeze(-1), dim=-1)
        return torch.bmm(self.dropout(self.attention_weights), values)
''', correct=False, mistake="ignores_valid_lens"),
    Mutant(ADD, "bias_in_W_q", '''
class AdditiveAttention(nn.Module):
    def __init__(self, num_hiddens, dropout):
        super().__init__()
        self.W_k = nn.LazyLinear(num_hiddens, bias=False)
        self.W_q = nn.LazyLinear(num_hiddens)
        self.w_v = nn.LazyLinear(1, bias=False)
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, valid_lens):
        features = torch.tanh(self.W_q(queries).unsqueeze(2) + self.W_k(keys).unsqueeze(1))
        scores = self.w_v(features).squeeze(-1)
        self.attention_weights = masked_softmax(scores, valid_lens)
        return torch.bmm(self.dropout(self.attention_weights), values)
''', correct=False),
    Mutant(ADD, "relu_instead_of_tanh", '''
class AdditiveAttention(nn.Module):
    def __init__(self, num_hiddens, dropout):
        super().__init__()
        self.W_k = nn.LazyLinear(num_hiddens, bias=False)
        self.W_q = nn.LazyLinear(num_hiddens, bias=False)
        self.w_v = nn.LazyLinear(1, bias=False)
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, valid_lens):
        features = torch.relu(self.W_q(queries).unsqueeze(2) + self.W_k(keys).unsqueeze(1))
        scores = self.w_v(features).squeeze(-1)
        self.attention_weights = masked_softmax(scores, valid_lens)
        return torch.bmm(self.dropout(self.attention_weights), values)
''', correct=False),
    Mutant(ADD, "W_q_and_W_k_swapped", '''
class AdditiveAttention(nn.Module):
    def __init__(self, num_hiddens, dropout):
        super().__init__()
        self.W_k = nn.LazyLinear(num_hiddens, bias=False)
        self.W_q = nn.LazyLinear(num_hiddens, bias=False)
        self.w_v = nn.LazyLinear(1, bias=False)
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, valid_lens):
        features = torch.tanh(self.W_k(queries).unsqueeze(2) + self.W_q(keys).unsqueeze(1))
        scores = self.w_v(features).squeeze(-1)
        self.attention_weights = masked_softmax(scores, valid_lens)
        return torch.bmm(self.dropout(self.attention_weights), values)
''', correct=False),
    Mutant(ADD, "own_softmax_over_queries", '''
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
        if valid_lens is not None:
            lens = valid_lens if valid_lens.dim() == 2 else valid_lens[:, None]
            keep = torch.arange(keys.shape[1], device=keys.device) < lens[:, :, None]
            scores = scores.masked_fill(~keep, -1e6)
        self.attention_weights = nn.functional.softmax(scores, dim=1)
        return torch.bmm(self.dropout(self.attention_weights), values)
''', correct=False, mistake="wrong_axis"),
    Mutant(ADD, "stores_weights_after_dropout", '''
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
        self.attention_weights = self.dropout(masked_softmax(scores, valid_lens))
        return torch.bmm(self.attention_weights, values)
''', correct=False),
]

# --- distance_attention --------------------------------------------------------------------
DIST = "distance_attention"


def _distance(scores: str, extra: str = "", tail: str = "self.dropout(self.attention_weights) @ values",
              weights: str = "masked_softmax(scores, valid_lens)") -> str:
    """A DistanceAttention cell whose forward computes ``scores`` (B, Q, K) from q, k and d."""
    return f'''
class DistanceAttention(nn.Module):
    def __init__(self, dropout):
        super().__init__()
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, valid_lens=None):
        q, k, d = queries, keys, queries.shape[-1]{extra}
        scores = {scores}
        self.attention_weights = {weights}
        return {tail}
'''


DIST_CORRECT = [
    Mutant(DIST, "cdist_squared", _distance("-torch.cdist(q, k) ** 2 / (2 * math.sqrt(d))"), correct=True),
    Mutant(DIST, "broadcast_differences", _distance(
        "-((q[:, :, None, :] - k[:, None, :, :]) ** 2).sum(-1) / (2 * d ** 0.5)"), correct=True),
    Mutant(DIST, "expanded_norms", _distance(
        "-(q2 - 2 * torch.bmm(q, k.transpose(1, 2)) + k2[:, None, :]) / (2 * math.sqrt(d))",
        extra="\n        q2 = (q * q).sum(-1, keepdim=True)  # (B, Q, 1)\n"
              "        k2 = (k * k).sum(-1)  # (B, K)"), correct=True),
    Mutant(DIST, "vector_norm_square_einsum", _distance(
        "-torch.linalg.vector_norm(q.unsqueeze(2) - k.unsqueeze(1), dim=-1).square() / 2 / math.sqrt(d)",
        tail="torch.einsum('bqk,bkv->bqv', self.dropout(self.attention_weights), values)"), correct=True),
]

DIST_BUGS = [
    Mutant(DIST, "positive_distance", _distance("torch.cdist(q, k) ** 2 / (2 * math.sqrt(d))"),
           correct=False, mistake="positive_distance"),
    Mutant(DIST, "distance_not_squared", _distance("-torch.cdist(q, k) / (2 * math.sqrt(d))"),
           correct=False, mistake="distance_not_squared"),
    Mutant(DIST, "missing_half", _distance("-torch.cdist(q, k) ** 2 / math.sqrt(d)"),
           correct=False, mistake="missing_half"),
    Mutant(DIST, "no_sqrt", _distance("-((q.unsqueeze(2) - k.unsqueeze(1)) ** 2).sum(-1) / 2"),
           correct=False, mistake="no_sqrt"),
    Mutant(DIST, "scale_by_d", _distance("-torch.cdist(q, k) ** 2 / (2 * d)"), correct=False),
    Mutant(DIST, "drops_key_norm_not_query_norm", _distance(
        "(torch.bmm(q, k.transpose(1, 2)) - (q * q).sum(-1, keepdim=True) / 2) / math.sqrt(d)"),
        correct=False),
    Mutant(DIST, "ignores_valid_lens", _distance("-torch.cdist(q, k) ** 2 / (2 * math.sqrt(d))",
                                                 weights="torch.softmax(scores, dim=-1)"),
           correct=False, mistake="ignores_valid_lens"),
    Mutant(DIST, "forgets_dropout", _distance("-torch.cdist(q, k) ** 2 / (2 * math.sqrt(d))",
                                              tail="self.attention_weights @ values"), correct=False),
]

# --- bilinear_attention ----------------------------------------------------------------------
BIL = "bilinear_attention"


def _bilinear(body: str, M: str = "nn.LazyLinear(query_size, bias=False)") -> str:
    """A BilinearAttention cell with ``M`` and a forward ``body`` (8 spaces indented)."""
    return f'''
class BilinearAttention(nn.Module):
    def __init__(self, query_size, dropout):
        super().__init__()
        self.M = {M}
        self.query_size = query_size
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, valid_lens=None):
{body}
'''


BIL_CORRECT = [
    Mutant(BIL, "bmm_permute", _bilinear('''
        scores = torch.bmm(queries, self.M(keys).permute(0, 2, 1)) / math.sqrt(self.query_size)
        self.attention_weights = masked_softmax(scores, valid_lens)
        return torch.bmm(self.dropout(self.attention_weights), values)'''), correct=True),
    Mutant(BIL, "built_on_dot_product_attention", '''
class BilinearAttention(nn.Module):
    def __init__(self, query_size, dropout):
        super().__init__()
        self.M = nn.LazyLinear(query_size, bias=False)
        self.attention = DotProductAttention(dropout)  # scales by √query_size, as M(k) has it

    def forward(self, queries, keys, values, valid_lens=None):
        output = self.attention(queries, self.M(keys), values, valid_lens)
        self.attention_weights = self.attention.attention_weights
        return output
''', correct=True),
    Mutant(BIL, "einsum", _bilinear('''
        scores = torch.einsum("bqd,bkd->bqk", queries, self.M(keys)) * queries.shape[-1] ** -0.5
        self.attention_weights = masked_softmax(scores, valid_lens)
        return torch.einsum("bqk,bkv->bqv", self.dropout(self.attention_weights), values)'''),
        correct=True),
    Mutant(BIL, "own_mask_functional_dropout", _bilinear('''
        scores = queries @ self.M(keys).mT / math.sqrt(queries.shape[-1])
        if valid_lens is not None:
            lens = valid_lens[:, None] if valid_lens.dim() == 1 else valid_lens
            keep = torch.arange(keys.shape[1], device=keys.device)[None, None, :] < lens[..., None]
            scores = scores.masked_fill(~keep, torch.finfo(scores.dtype).min)
        self.attention_weights = scores.softmax(-1)
        return nn.functional.dropout(self.attention_weights, self.dropout.p, self.training) @ values'''),
        correct=True),
    # A bias b in M adds qᵀb to every score of a query: the same for all its keys, so the
    # softmax cancels it. Not what SPEC §2 asks for, but the attention is exactly right.
    Mutant(BIL, "bias_in_M_cancels_in_the_softmax", _bilinear('''
        scores = torch.bmm(queries, self.M(keys).transpose(1, 2)) / math.sqrt(self.query_size)
        self.attention_weights = masked_softmax(scores, valid_lens)
        return torch.bmm(self.dropout(self.attention_weights), values)''',
        M="nn.LazyLinear(query_size)"), correct=True),
]

BIL_BUGS = [
    Mutant(BIL, "no_sqrt", _bilinear('''
        scores = torch.bmm(queries, self.M(keys).transpose(1, 2))
        self.attention_weights = masked_softmax(scores, valid_lens)
        return torch.bmm(self.dropout(self.attention_weights), values)'''),
        correct=False, mistake="no_sqrt"),
    Mutant(BIL, "M_on_queries", _bilinear('''
        scores = torch.bmm(self.M(queries), keys.transpose(1, 2)) / math.sqrt(self.query_size)
        self.attention_weights = masked_softmax(scores, valid_lens)
        return torch.bmm(self.dropout(self.attention_weights), values)'''),
        correct=False, mistake="M_on_queries"),
    Mutant(BIL, "scaled_by_key_size", _bilinear('''
        scores = torch.bmm(queries, self.M(keys).transpose(1, 2)) / math.sqrt(keys.shape[-1])
        self.attention_weights = masked_softmax(scores, valid_lens)
        return torch.bmm(self.dropout(self.attention_weights), values)'''), correct=False),
    Mutant(BIL, "ignores_valid_lens", _bilinear('''
        scores = torch.bmm(queries, self.M(keys).transpose(1, 2)) / math.sqrt(self.query_size)
        self.attention_weights = torch.softmax(scores, dim=-1)
        return torch.bmm(self.dropout(self.attention_weights), values)'''),
        correct=False, mistake="ignores_valid_lens"),
    Mutant(BIL, "dropout_in_eval_mode_too", _bilinear('''
        scores = torch.bmm(queries, self.M(keys).transpose(1, 2)) / math.sqrt(self.query_size)
        self.attention_weights = masked_softmax(scores, valid_lens)
        return torch.bmm(nn.functional.dropout(self.attention_weights, self.dropout.p), values)'''),
        correct=False),
    Mutant(BIL, "returns_weights", _bilinear('''
        scores = torch.bmm(queries, self.M(keys).transpose(1, 2)) / math.sqrt(self.query_size)
        self.attention_weights = masked_softmax(scores, valid_lens)
        return self.attention_weights'''), correct=False),
    Mutant(BIL, "forgets_dropout", _bilinear('''
        scores = torch.bmm(queries, self.M(keys).transpose(1, 2)) / math.sqrt(self.query_size)
        self.attention_weights = masked_softmax(scores, valid_lens)
        return torch.bmm(self.attention_weights, values)'''), correct=False),
    Mutant(BIL, "stores_weights_after_dropout", _bilinear('''
        scores = torch.bmm(queries, self.M(keys).transpose(1, 2)) / math.sqrt(self.query_size)
        self.attention_weights = self.dropout(masked_softmax(scores, valid_lens))
        return torch.bmm(self.attention_weights, values)'''), correct=False),
    Mutant(BIL, "own_mask_arange_on_the_cpu", _bilinear('''
        scores = torch.bmm(queries, self.M(keys).transpose(1, 2)) / math.sqrt(self.query_size)
        if valid_lens is not None:
            lens = valid_lens[:, None] if valid_lens.dim() == 1 else valid_lens
            keep = torch.arange(keys.shape[1])[None, None, :] < lens[..., None]  # no device=
            scores = scores.masked_fill(~keep, -1e6)
        self.attention_weights = torch.softmax(scores, dim=-1)
        return torch.bmm(self.dropout(self.attention_weights), values)'''),
        correct=False, must_fail=DEVICES),
]

# Where the checks misjudge a mutant today (strict xfail in test_mutants.py).
LE = ("the shrunk example (one query, two keys, valid_lens=[1]) is explained by several catalogue "
      "mistakes; the diagnosis names the first that matches, `<=` instead of `<`, not "
      "'valid_lens is ignored'")
CRASH = ("grade_task raises RuntimeError (mat1 and mat2 shapes cannot be multiplied): on queries and "
         "keys of different sizes, the diagnosis computes the M_on_queries variant, M(q), which "
         "cannot be done when the query size differs from the key size")
MISSES = {
}
MUTANTS = [replace(m, grader_misses=MISSES.get(m.id)) for m in (DOT_CORRECT + DOT_BUGS + ADD_CORRECT + ADD_BUGS + DIST_CORRECT + DIST_BUGS
           + BIL_CORRECT + BIL_BUGS)]

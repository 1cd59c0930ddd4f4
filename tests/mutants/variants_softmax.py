"""Mutants of the ``masked_softmax`` solution cell: right ways to write it, and real bugs.

Each source is what a student would put in the cell; the notebook has imported
``math``, ``torch`` and ``nn`` above it.
"""
from dataclasses import replace

from .harness import Mutant

TASK = "masked_softmax"

def _filled(value: str) -> str:
    """Masks with ``masked_fill(~keep, value)`` before the softmax."""
    return f'''
def masked_softmax(X, valid_lens):
    if valid_lens is None:
        return torch.softmax(X, dim=-1)
    lens = valid_lens[:, None] if valid_lens.dim() == 1 else valid_lens
    keep = torch.arange(X.shape[-1], device=X.device)[None, None, :] < lens[:, :, None]
    return torch.softmax(X.masked_fill(~keep, {value}), dim=-1)
'''


CORRECT = [
    Mutant(TASK, "fill_value_minus_1e4", _filled("-1e4"), correct=True),
    Mutant(TASK, "neg_inf_fill_with_nan_guard", '''
def masked_softmax(X, valid_lens):
    if valid_lens is None:
        return torch.softmax(X, dim=-1)
    K = X.shape[-1]
    lens = valid_lens.view(-1, 1, 1) if valid_lens.dim() == 1 else valid_lens.unsqueeze(-1)
    keep = torch.arange(K, device=X.device).view(1, 1, K) < lens  # (B, Q or 1, K)
    weights = torch.softmax(X.masked_fill(~keep, float("-inf")), dim=-1)
    return torch.nan_to_num(weights, nan=0.0)  # a row with nothing to attend to: zeros
''', correct=True),
    Mutant(TASK, "where_with_full_like", '''
def masked_softmax(X, valid_lens):
    if valid_lens is None:
        return nn.functional.softmax(X, dim=-1)
    B, Q, K = X.shape
    if valid_lens.dim() == 1:
        valid_lens = valid_lens.repeat_interleave(Q)
    lens = valid_lens.reshape(B, Q, 1)
    mask = torch.arange(K, device=X.device) < lens
    return torch.softmax(torch.where(mask, X, torch.full_like(X, -1e9)), dim=-1)
''', correct=True),
    Mutant(TASK, "boolean_index_on_a_clone", '''
def masked_softmax(X, valid_lens):
    if valid_lens is None:
        return X.softmax(-1)
    shape = X.shape
    if valid_lens.dim() == 1:
        valid_lens = torch.repeat_interleave(valid_lens, shape[1])
    else:
        valid_lens = valid_lens.reshape(-1)
    flat = X.reshape(-1, shape[-1]).clone()  # my own copy: the caller's X stays as it was
    mask = torch.arange(shape[-1], device=X.device)[None, :] < valid_lens[:, None]
    flat[~mask] = -1e6
    return flat.reshape(shape).softmax(-1)
''', correct=True),
    Mutant(TASK, "stable_exp_by_hand", '''
def masked_softmax(X, valid_lens):
    if valid_lens is None:
        valid = torch.ones_like(X, dtype=torch.bool)
    else:
        lens = valid_lens if valid_lens.dim() == 2 else valid_lens[:, None].expand(X.shape[0], X.shape[1])
        valid = torch.arange(X.shape[-1], device=X.device) < lens.unsqueeze(-1)
    row_max = X.masked_fill(~valid, float("-inf")).amax(dim=-1, keepdim=True)
    row_max = torch.where(torch.isinf(row_max), torch.zeros_like(row_max), row_max)
    e = torch.exp((X - row_max).masked_fill(~valid, float("-inf")))
    return e / e.sum(dim=-1, keepdim=True).clamp_min(torch.finfo(X.dtype).tiny)
''', correct=True),
    Mutant(TASK, "python_loops_with_item", '''
def masked_softmax(X, valid_lens):
    if valid_lens is None:
        return torch.softmax(X, dim=-1)
    B, Q, K = X.shape
    out = torch.zeros_like(X)
    for b in range(B):
        for q in range(Q):
            n = int(valid_lens[b] if valid_lens.dim() == 1 else valid_lens[b, q])
            n = min(n, K)
            if n > 0:
                out[b, q, :n] = torch.softmax(X[b, q, :n], dim=0)
    return out
''', correct=True),
    # Writes into X like the book's own code: a warning, no points lost (SPEC §2).
    Mutant(TASK, "in_place_masked_fill_", '''
def masked_softmax(X, valid_lens):
    if valid_lens is not None:
        if valid_lens.dim() == 1:
            valid_lens = valid_lens[:, None]
        keep = torch.arange(X.shape[-1], device=X.device)[None, None, :] < valid_lens[:, :, None]
        X.masked_fill_(~keep, -1e6)
    return X.softmax(dim=-1)
''', correct=True),
    # X - logsumexp(X): right, but in float32 a score of 1000 rounds the log-sum by 6e-5 (the
    # reference's max-subtracting form rounds far less); "to float rounding" must allow it.
    Mutant(TASK, "logsumexp_by_hand", '''
def masked_softmax(X, valid_lens):
    if valid_lens is None:
        return (X - torch.logsumexp(X, -1, keepdim=True)).exp()
    B, Q, K = X.shape
    lens = valid_lens.reshape(B, -1).expand(B, Q) if valid_lens.dim() == 1 else valid_lens
    keep = torch.arange(K, device=X.device) < lens.unsqueeze(-1)
    Y = X.masked_fill(~keep, -1e6)
    return (Y - torch.logsumexp(Y, -1, keepdim=True)).exp()
''', correct=True),
    # A 0-dim CPU tensor in an op with tensors elsewhere is legal on CUDA (it acts as a number).
    Mutant(TASK, "cpu_scalar_fill_value", '''
def masked_softmax(X, valid_lens):
    if valid_lens is None:
        return nn.functional.softmax(X, dim=-1)
    lens = valid_lens if valid_lens.dim() == 2 else valid_lens[:, None]
    mask = torch.arange(X.shape[-1], device=X.device)[None, None, :] < lens[:, :, None]
    return torch.softmax(torch.where(mask, X, torch.tensor(-1e6, dtype=X.dtype)), dim=-1)
''', correct=True),
]

BUGS = [
    # Softmax over every key, then the valid ones renormalised: a valid key far below a masked
    # one underflows to 0, and the row comes out all zeros.
    Mutant(TASK, "softmax_then_mask_renormalised", '''
def masked_softmax(X, valid_lens):
    if valid_lens is None:
        return nn.functional.softmax(X, dim=-1)
    lens = valid_lens if valid_lens.dim() == 2 else valid_lens[:, None]
    mask = (torch.arange(X.shape[-1], device=X.device)[None, None, :] < lens[:, :, None]).to(X.dtype)
    w = torch.softmax(X, dim=-1) * mask
    return w / w.sum(-1, keepdim=True).clamp_min(1e-12)
''', correct=False),
    Mutant(TASK, "softmax_over_queries", '''
def masked_softmax(X, valid_lens):
    if valid_lens is None:
        return torch.softmax(X, dim=1)
    lens = valid_lens[:, None] if valid_lens.dim() == 1 else valid_lens
    keep = torch.arange(X.shape[-1], device=X.device)[None, None, :] < lens[:, :, None]
    return torch.softmax(X.masked_fill(~keep, -1e6), dim=1)
''', correct=False, mistake="wrong_axis"),
    Mutant(TASK, "mask_value_zero", '''
def masked_softmax(X, valid_lens):
    if valid_lens is None:
        return torch.softmax(X, dim=-1)
    lens = valid_lens[:, None] if valid_lens.dim() == 1 else valid_lens
    keep = torch.arange(X.shape[-1], device=X.device)[None, None, :] < lens[:, :, None]
    return torch.softmax(X * keep, dim=-1)  # masked scores become 0
''', correct=False, mistake="mask_value_zero"),
    # A fill value real scores can reach (SPEC §2: scores within ±1000; blind corpus 11, b01):
    # only scores near -1000 show it, and only the law of masked keys is broken.
    Mutant(TASK, "fill_value_minus_1000", _filled("-1000.0"), correct=False, mistake="fill_not_below_the_scores",
           fails_only=("zero weight beyond valid length",)),
    Mutant(TASK, "le_instead_of_lt", '''
def masked_softmax(X, valid_lens):
    if valid_lens is None:
        return torch.softmax(X, dim=-1)
    lens = valid_lens[:, None] if valid_lens.dim() == 1 else valid_lens
    keep = torch.arange(X.shape[-1], device=X.device)[None, None, :] <= lens[:, :, None]
    return torch.softmax(X.masked_fill(~keep, -1e6), dim=-1)
''', correct=False, mistake="le_instead_of_lt"),
    Mutant(TASK, "masks_queries", '''
def masked_softmax(X, valid_lens):
    if valid_lens is None:
        return torch.softmax(X, dim=-1)
    B, Q, K = X.shape
    rows = torch.arange(Q, device=X.device).view(1, Q, 1)
    lens = valid_lens.view(B, 1, 1) if valid_lens.dim() == 1 else valid_lens.view(B, Q, 1)
    keep = (rows < lens).expand(B, Q, K)
    return torch.softmax(X.masked_fill(~keep, -1e6), dim=-1)
''', correct=False, mistake="masking_queries"),
    Mutant(TASK, "two_d_lens_as_one_d", '''
def masked_softmax(X, valid_lens):
    if valid_lens is None:
        return torch.softmax(X, dim=-1)
    if valid_lens.dim() == 2:
        valid_lens = valid_lens[:, 0]  # one length per example
    keep = torch.arange(X.shape[-1], device=X.device)[None, None, :] < valid_lens[:, None, None]
    return torch.softmax(X.masked_fill(~keep, -1e6), dim=-1)
''', correct=False, mistake="lens_2d_as_1d"),
    Mutant(TASK, "ignores_valid_lens", '''
def masked_softmax(X, valid_lens):
    return nn.functional.softmax(X, dim=-1)
''', correct=False, mistake="ignores_valid_lens"),
    Mutant(TASK, "nan_for_empty_rows", '''
def masked_softmax(X, valid_lens):
    if valid_lens is None:
        return torch.softmax(X, dim=-1)
    lens = valid_lens[:, None] if valid_lens.dim() == 1 else valid_lens
    keep = torch.arange(X.shape[-1], device=X.device)[None, None, :] < lens[:, :, None]
    return torch.softmax(X.masked_fill(~keep, float("-inf")), dim=-1)  # all -inf -> NaN
''', correct=False),
    Mutant(TASK, "always_float32", '''
def masked_softmax(X, valid_lens):
    if valid_lens is not None:
        lens = valid_lens[:, None] if valid_lens.dim() == 1 else valid_lens
        keep = torch.arange(X.shape[-1], device=X.device)[None, None, :] < lens[:, :, None]
        X = X.masked_fill(~keep, -1e6)
    return torch.softmax(X, dim=-1, dtype=torch.float32)
''', correct=False, mistake="float32_inside"),
    Mutant(TASK, "arange_on_the_cpu", '''
def masked_softmax(X, valid_lens):
    if valid_lens is None:
        return torch.softmax(X, dim=-1)
    lens = valid_lens[:, None] if valid_lens.dim() == 1 else valid_lens
    keep = torch.arange(X.shape[-1])[None, None, :] < lens[:, :, None]  # no device=
    return torch.softmax(X.masked_fill(~keep, -1e6), dim=-1)
''', correct=False),
    # Right on the CPU; on CUDA it returns a CPU tensor (the copy into the CPU buffer is
    # allowed there). Meta cannot copy out; the emulated device sees the result on the CPU.
    Mutant(TASK, "weights_buffer_on_the_cpu", '''
def masked_softmax(X, valid_lens):
    if valid_lens is None:
        return torch.softmax(X, dim=-1)
    lens = valid_lens[:, None] if valid_lens.dim() == 1 else valid_lens
    keep = torch.arange(X.shape[-1], device=X.device)[None, None, :] < lens[:, :, None]
    weights = torch.zeros(X.shape, dtype=X.dtype)  # no device=
    for b in range(X.shape[0]):
        weights[b] = torch.softmax(X[b].masked_fill(~keep[b], -1e6), dim=-1)
    return weights
''', correct=False, must_fail=("runs on any device",)),
    Mutant(TASK, "lookup_table_breaks_above_K", '''
def masked_softmax(X, valid_lens):
    if valid_lens is None:
        return torch.softmax(X, dim=-1)
    K = X.shape[-1]
    table = torch.tril(torch.ones(K, K, dtype=torch.bool, device=X.device))  # row n-1 keeps n keys
    keep = table[valid_lens - 1]  # (B, K) or (B, Q, K)
    if valid_lens.dim() == 1:
        keep = keep[:, None, :]
    return torch.softmax(X.masked_fill(~keep, -1e6), dim=-1)
''', correct=False),
]

# Where the checks misjudge a mutant today (strict xfail in test_mutants.py).
MISSES = {
}
MUTANTS = [replace(m, grader_misses=MISSES.get(m.id)) for m in CORRECT + BUGS]

"""A check whose property was never there to judge is not judged, scores nothing and names the
check that failed first; it never passes (red team: modules returning zeros got the gradients
and dropout checks' points, a module returning a list the device check's)."""
from .harness import Mutant, grade

def returning(expression: str) -> str:
    """A DotProductAttention cell whose forward returns ``expression``."""
    return f"""
class DotProductAttention(nn.Module):
    def __init__(self, dropout):
        super().__init__()
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, valid_lens=None):
        return {expression}
"""


ZEROS = returning("queries.sum(-1, keepdim=True) * 0 + values.new_zeros(queries.shape[0], queries.shape[1], "
                  "values.shape[-1])")
LIST = returning("[[0.0] * values.shape[-1]] * queries.shape[1]")

def verdicts(source: str) -> dict[str, tuple[bool, float, str | None]]:
    result = grade(Mutant("dot_product_attention", "not_judged", source, correct=False))
    return {c.name: (c.passed, c.score, c.blocked_by) for c in result.checks}


def test_gradients_and_dropout_of_an_output_of_zeros_are_not_judged():
    seen = verdicts(ZEROS)
    assert seen["matches the reference"][0] is False
    for name in ("gradients match the reference", "dropout as nn.Dropout in train mode"):
        assert seen[name] == (False, 0.0, "matches the reference"), (name, seen[name])


def test_a_module_returning_no_tensor_is_not_judged_on_any_device():
    assert verdicts(LIST)["runs on any device"] == (False, 0.0, "output shape")


def test_the_laws_of_a_softmax_of_zeros_are_not_judged():
    """An output of zeros holds "zero weight beyond valid length" and "finite row" trivially:
    not judged, naming the rows check; a softmax left unnormalised keeps both (blind corpus 5)."""
    zeros = grade(Mutant("masked_softmax", "zeros", "def masked_softmax(X, valid_lens):\n    return X * 0\n",
                         correct=False))
    seen = {c.name: (c.passed, c.score, c.blocked_by) for c in zeros.checks}
    for name in ("zero weight beyond valid length", "finite row for valid length 0"):
        assert seen[name] == (False, 0.0, "rows sum to one over valid keys"), (name, seen[name])


def test_gradients_of_an_output_that_does_not_change_with_the_keys_are_not_judged():
    """Where the output is wrong, the gradients are judged against the student's own forward,
    but only where the output changes with the keys: code attending to nothing (here, the
    values' mean scaled by the queries) gets nothing for gradients that flow."""
    seen = verdicts(returning("queries.sum(-1, keepdim=True).tanh() * values.mean(1, keepdim=True)"))
    assert seen["matches the reference"][0] is False
    assert seen["gradients match the reference"] == (False, 0.0, "matches the reference")

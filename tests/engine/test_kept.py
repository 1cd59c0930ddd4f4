"""``Kept``: values made once per key, the oldest dropped past the size (checks/core.py); the
reference's results kept by the values they are computed from (checks/compare.py)."""
from autograder.checks.core import Kept


def test_made_once_per_key_and_bounded():
    made = []
    kept = Kept(size=2)

    def make(key):
        return lambda: made.append(key) or key * 10
    assert [kept.get(k, make(k)) for k in (1, 2, 1, 2)] == [10, 20, 10, 20]
    assert made == [1, 2]
    kept.get(3, make(3))  # drops 1, the oldest
    assert len(kept.values) == 2 and kept.get(1, make(1)) == 10 and made == [1, 2, 3, 1]


def test_a_shared_reference_gives_a_float64_twin_whatever_its_last_call_left():
    """The reference modules are shared by every check; one check's call with gradients leaves
    attention weights with autograd history on them (non-leaf tensors, which deepcopy refuses),
    and a later diagnosis still gets its float64 twin, computing as the module does."""
    import torch

    from autograder.checks.compare import float64_twin
    from reference.attention import AdditiveAttention
    from reference.decoders import Seq2SeqAttentionDecoder
    from reference.seq2seq import Seq2SeqEncoder

    attention = AdditiveAttention(num_hiddens=3, dropout=0.0).eval()
    q, k, v = (torch.randn(2, 3, 4, requires_grad=True), torch.randn(2, 5, 4), torch.randn(2, 5, 2))
    attention(q, k, v, torch.tensor([2, 5]))
    assert attention.attention_weights.grad_fn is not None
    twin = float64_twin(attention)
    assert twin.attention_weights is None and attention.attention_weights is not None
    assert torch.allclose(twin(q.double(), k.double(), v.double(), torch.tensor([2, 5])),
                          attention(q, k, v, torch.tensor([2, 5])).double(), atol=1e-5)

    decoder, encoder = Seq2SeqAttentionDecoder(5, 3, 4, 1).eval(), Seq2SeqEncoder(5, 3, 4, 1).eval()
    outputs, hidden = encoder(torch.tensor([[1, 2, 3]]))
    tgt = torch.tensor([[1, 2]])
    decoder(tgt, decoder.init_state((outputs, hidden.requires_grad_()), None))
    assert decoder.attention_weights[0].grad_fn is not None
    twin = float64_twin(decoder)
    logits, _ = twin(tgt, twin.init_state((outputs.double(), hidden.double()), None))
    assert logits.dtype == torch.float64 and len(twin.attention_weights) == 2


def test_a_reference_result_is_computed_once_for_equal_values_and_again_for_any_other():
    """Equal values (fresh tensors, a rebuilt module with the same weights) reuse the result;
    any difference (one element, the dtype, 1 against True, the module's weights or mode)
    computes it again; an error is not kept; each caller may write into its own copy."""
    import pytest
    import torch

    from autograder.checks.compare import reference_result
    from reference.attention import AdditiveAttention

    calls = []

    def result(module, x, flag):
        def compute():
            calls.append(1)
            with torch.no_grad():
                return [module.W_q(x.float()), {"sum": x.sum()}]
        return reference_result("a test's result", compute, module, x, flag)

    def module(seed=0, train=False):
        torch.manual_seed(seed)
        made = AdditiveAttention(num_hiddens=3, dropout=0.1)
        made(torch.zeros(1, 1, 2), torch.zeros(1, 2, 2), torch.zeros(1, 2, 2), None)  # lazy layers take shapes
        return made.train(train)
    x = torch.tensor([[1.0, 2.0]])
    first = result(module(), x, 1)
    first[0].fill_(0.0)  # the caller's copy
    again = result(module(), x.clone(), 1)
    assert len(calls) == 1 and not torch.equal(again[0], first[0])
    for other in [(module(), torch.tensor([[1.0, 2.5]]), 1), (module(), x.double(), 1), (module(), x, True),
                  (module(seed=1), x, 1), (module(train=True), x, 1)]:
        result(*other)
    assert len(calls) == 6

    def failing():
        calls.append(1)
        raise ValueError("no")
    for _ in range(2):
        with pytest.raises(ValueError):
            reference_result("a failing result", failing, x)
    assert len(calls) == 8


def test_a_module_is_fingerprinted_and_twinned_as_it_is_now():
    """A module's fingerprint and its float64 twin are kept between calls (every reference result
    fingerprints its module again; the diagnosis twins it for each known mistake), and follow it:
    after a weight written in place, a parameter replaced or the mode switched, they are those of
    a fresh copy of the module as it is now."""
    import copy

    import torch

    from autograder.checks.compare import fingerprint, float64_twin
    from reference.attention import AdditiveAttention

    made = AdditiveAttention(num_hiddens=3, dropout=0.1).eval()
    q, k, v = torch.randn(2, 3, 4), torch.randn(2, 5, 4), torch.randn(2, 5, 2)
    with torch.no_grad():
        made(q, k, v, None)  # lazy layers take shapes
    changes = [lambda m: m.W_q.weight.add_(1.0), lambda m: setattr(m.W_k, "weight", torch.nn.Parameter(m.W_k.weight * 2)),
               lambda m: m.train(), lambda m: m.eval()]
    for change in [lambda m: None, *changes]:
        with torch.no_grad():
            change(made)
        fresh = copy.deepcopy(made)
        assert fingerprint(made) == fingerprint(fresh)
        twin, fresh_twin = float64_twin(made.eval()), float64_twin(fresh.eval())
        assert twin is not fresh_twin
        assert torch.equal(twin(q.double(), k.double(), v.double(), None),
                           fresh_twin(q.double(), k.double(), v.double(), None))
    assert float64_twin(made) is float64_twin(made)  # kept while nothing changed

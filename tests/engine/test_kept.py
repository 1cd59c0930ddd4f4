"""``Kept``: values made once per key, the oldest dropped past the size (checks/core.py)."""
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

"""How much does projecting the keys once save? The reference decoder vs the book's (D2L 11.4.2).

The book applies W_k to all T encoder outputs at every one of the S steps; the reference
projects them once per ``forward``. Both get the same weights, and their logits must agree.
They are timed in alternating rounds and the best round of each is kept.
Shapes: B=64, T=S=32, E=H=256, 2 GRU layers, V=1000; CPU, eval mode, no autograd.
"""
import torch
from torch.utils.benchmark import Timer

from reference import Seq2SeqAttentionDecoder, book_decoder

B, T, S, E, H, L, V = 64, 32, 32, 256, 256, 2, 1000


def best_ms(decoders: dict, tokens, state, rounds: int = 7) -> dict[str, float]:
    """Milliseconds per forward: the best of ``rounds`` alternating rounds (load-robust)."""
    timers = {name: Timer("decoder(tokens, state)", globals=dict(
        decoder=decoder, tokens=tokens, state=state)) for name, decoder in decoders.items()}
    per_round = {name: [] for name in decoders}
    for _ in range(rounds):
        for name, timer in timers.items():
            per_round[name].append(timer.timeit(3).mean * 1e3)
    return {name: min(times) for name, times in per_round.items()}


def main() -> None:
    torch.manual_seed(0)
    ours = Seq2SeqAttentionDecoder(V, E, H, L).eval()
    book = book_decoder.Seq2SeqAttentionDecoder(V, E, H, L).eval()
    enc_outputs, hidden = torch.randn(T, B, H), torch.randn(L, B, H)  # (T, B, H), (L, B, H)
    valid_lens = torch.randint(1, T + 1, (B,))                        # (B,)
    tokens = torch.randint(0, V, (B, S))                              # (B, S)
    state = ours.init_state((enc_outputs, hidden), valid_lens)        # ((B, T, H), (L, B, H), (B,))
    with torch.no_grad():
        ours(tokens, state)
        book(tokens, state)  # materialise both LazyLinear layers
        book.load_state_dict(ours.state_dict())
        ours_logits, book_logits = ours(tokens, state)[0], book(tokens, state)[0]  # (B, S, V)
        assert torch.allclose(ours_logits, book_logits, atol=1e-5), \
            (ours_logits - book_logits).abs().max()
        times = best_ms({"reference": ours, "book": book}, tokens, state)
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads, "
          f"B={B} T=S={T} E=H={H} layers={L} V={V}; logits agree "
          f"(max |diff| {(ours_logits - book_logits).abs().max():.1e})")
    print(f"Seq2SeqAttentionDecoder (reference)  {times['reference']:8.2f} ms")
    print(f"Seq2SeqAttentionDecoder (book)       {times['book']:8.2f} ms")
    print(f"  book / reference = {times['book'] / times['reference']:.2f}x   (target >= 1.5x)")


if __name__ == "__main__":
    main()

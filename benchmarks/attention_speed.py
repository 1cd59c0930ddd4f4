"""How fast is the reference attention next to PyTorch's fused kernel and the book's code?

Prints CPU timings and ratios, measured in this one run. The contenders are timed in
alternating rounds (torch.utils.benchmark) and each one's fastest block is kept, so that
load from other processes does not favour whichever ran first:
  * reference DotProductAttention vs F.scaled_dot_product_attention (target: within 1.3x);
  * reference masked_softmax vs the book's (which writes into X, so it gets a fresh clone).
Shapes: B=64, Q=K=128, D=v=64, 1-D valid_lens; eval mode, no autograd.
"""
import torch
from torch.nn import functional as F
from torch.utils.benchmark import Timer

from reference import DotProductAttention, masked_softmax
from reference import book

B, Q, K, D = 64, 128, 128, 64


def best_ms(stmts: dict[str, str], env: dict, rounds: int = 10) -> dict[str, float]:
    """Milliseconds per run of each statement: its fastest block over ``rounds`` alternating rounds."""
    timers = {name: Timer(stmt, globals=env) for name, stmt in stmts.items()}
    blocks = {name: [] for name in stmts}
    for _ in range(rounds):
        for name, timer in timers.items():
            blocks[name] += timer.blocked_autorange(min_run_time=0.1).times
    return {name: min(times) * 1e3 for name, times in blocks.items()}


def main() -> None:
    torch.manual_seed(0)
    queries, keys, values = torch.randn(B, Q, D), torch.randn(B, K, D), torch.randn(B, K, D)
    valid_lens = torch.randint(1, K + 1, (B,))                    # (B,)
    keep = torch.arange(K) < valid_lens[:, None, None]            # (B, 1, K), True = attend
    attention = DotProductAttention(0.0).eval()
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads, "
          f"B={B} Q={Q} K={K} D={D}, 1-D valid_lens")
    with torch.no_grad():
        assert torch.allclose(attention(queries, keys, values, valid_lens),
                              F.scaled_dot_product_attention(queries, keys, values, attn_mask=keep),
                              atol=1e-5)
        X = queries @ keys.transpose(1, 2) / D ** 0.5  # (B, Q, K)
        env = dict(attention=attention, sdpa=F.scaled_dot_product_attention, q=queries, k=keys,
                   v=values, lens=valid_lens, keep=keep, X=X, masked_softmax=masked_softmax,
                   book_softmax=book.masked_softmax)
        ms = best_ms({"ref": "attention(q, k, v, lens)", "sdpa": "sdpa(q, k, v, attn_mask=keep)",
                      "ref_softmax": "masked_softmax(X, lens)",
                      "book_softmax": "book_softmax(X.clone(), lens)", "clone": "X.clone()"}, env)
        ref, sdpa = ms["ref"], ms["sdpa"]
        print(f"DotProductAttention (reference)    {ref:8.3f} ms")
        print(f"F.scaled_dot_product_attention     {sdpa:8.3f} ms   (mask built beforehand)")
        print(f"  reference / SDPA = {ref / sdpa:.2f}x   (target <= 1.3x)")
        ref_ms, book_ms, clone_ms = ms["ref_softmax"], ms["book_softmax"], ms["clone"]
        print(f"masked_softmax (reference)         {ref_ms:8.3f} ms")
        print(f"masked_softmax (book, on a clone)  {book_ms:8.3f} ms   (of which clone {clone_ms:.3f} ms)")
        print(f"  book / reference = {book_ms / ref_ms:.2f}x, "
              f"without the clone {(book_ms - clone_ms) / ref_ms:.2f}x")


if __name__ == "__main__":
    main()

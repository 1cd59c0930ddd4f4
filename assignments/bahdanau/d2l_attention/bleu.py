# Generated from reference/bleu.py by `autograder release`; do not edit.
"""BLEU as defined in D2L 10.7.6: brevity penalty times weighted n-gram precisions."""
import collections
import math


def _ngram_counts(tokens: list[str], n: int) -> collections.Counter:
    return collections.Counter(tuple(tokens[i:i + n]) for i in range(len(tokens) - n + 1))


def bleu(pred_seq: str, label_seq: str, k: int) -> float:
    """BLEU of a space-separated prediction against one label, n-grams up to ``k``.

    score = exp(min(0, 1 - len_label / len_pred)) * Π_n p_n ** (1/2)**n, where p_n is
    the clipped precision of the prediction's n-grams. An empty prediction scores 0.
    """
    pred_tokens, label_tokens = pred_seq.split(), label_seq.split()
    len_pred, len_label = len(pred_tokens), len(label_tokens)
    if len_pred == 0:
        return 0.0
    score = math.exp(min(0.0, 1 - len_label / len_pred))
    for n in range(1, min(k, len_pred) + 1):
        label_ngrams = _ngram_counts(label_tokens, n)
        pred_ngrams = _ngram_counts(pred_tokens, n)
        matches = sum(min(count, label_ngrams[gram]) for gram, count in pred_ngrams.items())
        score *= math.pow(matches / (len_pred - n + 1), math.pow(0.5, n))
    return score

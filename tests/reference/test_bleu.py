"""BLEU (D2L 10.7.6) on cases worked out by hand."""
import math

import pytest

from reference import bleu


def test_identical_sequences_score_one():
    """Does a prediction equal to its label score exactly 1?"""
    assert bleu("il est calme .", "il est calme .", k=2) == 1.0


def test_no_shared_token_scores_zero():
    """Does a prediction sharing no token with its label score 0?"""
    assert bleu("a b", "c d", k=2) == 0.0


def test_short_prediction_pays_the_brevity_penalty():
    """For 'a b' against 'a b c d' (k=2), is BLEU exp(1 - 4/2) · 1 · 1?"""
    assert bleu("a b", "a b c d", k=2) == pytest.approx(math.exp(1 - 4 / 2))


def test_clipped_precisions_are_weighted_by_powers_of_one_half():
    """For 'a a c' against 'a b c' (k=2), is BLEU (2/3)^(1/2) · (0/2)^(1/4) = 0, and with k=1 (2/3)^(1/2)?"""
    assert bleu("a a c", "a b c", k=2) == 0.0
    assert bleu("a a c", "a b c", k=1) == pytest.approx(math.sqrt(2 / 3))


def test_empty_prediction_scores_zero():
    """Does an empty prediction score 0 rather than divide by zero?"""
    assert bleu("", "a b", k=2) == 0.0

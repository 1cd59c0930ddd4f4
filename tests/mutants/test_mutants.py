"""Mutation tests for every task: do the checks tell right from wrong?"""
import pytest

from .harness import cases, check_bug, check_correct
from .variants_attention import MUTANTS as ATTENTION
from .variants_decoders import MUTANTS as DECODERS
from .variants_older_book import MUTANTS as OLDER_BOOK
from .variants_softmax import MUTANTS as SOFTMAX
from .variants_spec import HOSTILE, MUTANTS as SPEC

MUTANTS = SOFTMAX + ATTENTION + DECODERS + SPEC + OLDER_BOOK + HOSTILE  # cases() leaves out the sandbox-only


@pytest.mark.parametrize("mutant", cases(MUTANTS, correct=True))
def test_correct_variant_gets_full_points(mutant):
    """Does a right solution, written differently from the reference, get every point?"""
    check_correct(mutant)


@pytest.mark.parametrize("mutant", cases(MUTANTS, correct=False))
def test_bug_loses_points_and_is_diagnosed(mutant):
    """Does a real bug lose points, and is it named when the catalogue knows it?"""
    check_bug(mutant)

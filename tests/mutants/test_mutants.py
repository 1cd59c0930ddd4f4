"""Mutation tests for every task: do the checks tell right from wrong?"""
import pytest

from autograder.feedback import FeedbackView, Say
from autograder.pages.student import student_page
from autograder.results import SubmissionResult
from tests.pages.prose import latin_sentences

from .harness import ASSIGNMENT_OF, cases, check_bug, check_correct, grade
from .report import ALL_MUTANTS as MUTANTS  # cases() leaves out the sandbox-only


@pytest.mark.parametrize("mutant", cases(MUTANTS, correct=True))
def test_correct_variant_gets_full_points(mutant):
    """Does a right solution, written differently from the reference, get every point?"""
    check_correct(mutant)


@pytest.mark.parametrize("mutant", cases(MUTANTS, correct=False))
def test_bug_loses_points_and_is_diagnosed(mutant):
    """Does a real bug lose points, and is it named when the catalogue knows it?"""
    check_bug(mutant)


@pytest.mark.parametrize("mutant", [pytest.param(m, id=m.id) for m in MUTANTS if m.sandbox_only is None])
def test_russian_feedback_reads_in_russian(mutant):
    """Outside code and identifiers (the student's messages, names and shapes are set as code),
    is every variant's Russian feedback page free of English sentences?"""
    task = grade(mutant)  # graded once per run: the tests above asked for it already
    result = SubmissionResult(student_id=mutant.id, assignment=ASSIGNMENT_OF[mutant.task_id],
                              score=task.score, max_score=task.max_score, tasks=[task])
    assert latin_sentences(student_page(FeedbackView.of(result, Say("ru")))) == []

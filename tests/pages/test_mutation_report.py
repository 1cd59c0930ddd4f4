"""The class report of the mutation suite's batch: each attention_scoring variant graded as
one student; the report must list each catalogued mistake with the variants that make it."""
from collections import defaultdict

import pytest

from autograder.report import write_class_report
from autograder.report.class_markdown import md
from autograder.report.class_stats import summarise
from autograder.results import SubmissionResult, text
from autograder.texts import render
from tests.mutants.harness import grade
from tests.mutants.variants_attention import MUTANTS as ATTENTION
from tests.mutants.variants_softmax import MUTANTS as SOFTMAX

pytestmark = pytest.mark.slow   # grades 70 variants in-process (about 80 s here)

MUTANTS = SOFTMAX + ATTENTION   # the bahdanau decoders train for a second each: left out


@pytest.fixture(scope="module")
def batch() -> list[SubmissionResult]:
    results = []
    for mutant in MUTANTS:
        task = grade(mutant)
        results.append(SubmissionResult(student_id=mutant.id, assignment="attention_scoring",
                                        score=task.score, max_score=task.max_score, tasks=[task]))
    return results


def task_checks(batch: list[SubmissionResult]) -> dict[str, list[str]]:
    return {r.tasks[0].id: [c.name for c in r.tasks[0].checks] for r in batch}


def test_each_catalogued_mistake_counted_right(batch, tmp_path):
    """Does the report name each catalogued mistake for exactly the variants written with it,
    so its count is the number of students who made it?"""
    made = defaultdict(set)
    for mutant in MUTANTS:
        if mutant.mistake and not mutant.grader_misses:
            made[mutant.mistake].add(mutant.id)
    reported = {m.mistake: m.students for m in summarise(batch, task_checks(batch)).mistakes}
    assert reported == dict(made)
    write_class_report(batch, tmp_path, "ru", task_checks(batch))
    markdown = (tmp_path / "report.md").read_text(encoding="utf-8")
    for mistake, students in made.items():
        [row] = [line for line in markdown.splitlines()
                 if line.startswith(f"| {md(render(text(f'mistake.{mistake}'), 'ru'))} | ")]
        assert row.split(" | ")[1] == str(len(students)), mistake

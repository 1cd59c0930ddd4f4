"""The mutation suite on the sandboxed path: does `autograder grade` give a sample of the
variants the same task score as the nbgrader path does?

Each sampled variant is pasted into the released notebook over its task's cell, every other
solution cell holding the TA's solution; one `autograder grade --jobs 2` run grades them all.
The sample takes, per task, the first correct variant and the first bug of each variant file,
every variant of the newer kinds named in SAMPLE_ALSO, and the sandbox-only hostile cell
(which must lose points there; on the nbgrader path it shares the kernel with the checks).
"""
import json
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from tests.notebooks.cells import nbgrader, read, source_path, without_delimiters

from . import (variants_attention, variants_book_contexts, variants_decoders, variants_older_book, variants_softmax,
               variants_spec, variants_state)
from .harness import ASSIGNMENT_OF, Mutant, grade

REPO = Path(__file__).resolve().parents[2]
pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed")]
SAMPLE_ALSO = {"subclasses_own_seq2seq_decoder", "subclasses_own_dot_product_attention",
               "tolist_then_mask_on_X_device", "tolist_then_mask_on_the_cpu", "book_dropout_layer_mask_on_the_cpu",
               "sdpa_boolean_mask", "none_lengths_filled_on_the_cpu", "d2l_017_key_and_query_sizes",
               "gru_state_with_zero_cell", "detaches_the_state_each_step", "one_hot_breaks_on_int32",
               "output_buffer_returned", "weights_are_a_buffer", "logits_buffer_returned",
               "weights_list_cleared_in_place", "namedtuple_state", "features_checkpointed",
               "subclasses_own_dot_product_without_sqrt", "subclasses_own_decoder_with_the_context_after_the_embedding",
               "keys_detached_in_train_mode", "attends_over_the_first_100_steps",
               "own_copy_of_a_first_masked_softmax", "own_copy_of_masked_softmax",
               "own_copy_of_a_first_dot_product_attention", "output_buffer_kept_per_shape",
               "private_generator_seeded_once"}
# An id-keyed cache scores by where a process gives a freed tensor's id back: another score here
# than in the nbgrader path's process, and points lost on both (tests/mutants/test_mutants.py).
BY_WHERE_IDS_COME_BACK = {"mask_cached_by_the_lengths_id"}


def sample() -> list[Mutant]:
    chosen: list[Mutant] = []
    for module in (variants_softmax, variants_attention, variants_decoders, variants_spec, variants_older_book,
                   variants_book_contexts, variants_state):
        for task in ASSIGNMENT_OF:
            for correct in (True, False):
                first = next((m for m in module.MUTANTS if m.task_id == task and m.correct == correct
                              and m.name not in BY_WHERE_IDS_COME_BACK), None)
                if first is not None and first not in chosen:
                    chosen.append(first)
        chosen += [m for m in module.MUTANTS if m.name in SAMPLE_ALSO and m not in chosen]
    return chosen + variants_spec.HOSTILE


def submission(mutant: Mutant, into: Path) -> Path:
    """The released notebook, solved by the TA's solutions, with the mutant in its task's cell."""
    assignment = ASSIGNMENT_OF[mutant.task_id]
    solutions = {cell.id: without_delimiters(cell.source) for cell in read(source_path(assignment)).cells
                 if nbgrader(cell).get("solution")}
    notebook = read(REPO / "student_template" / assignment / f"{assignment}.ipynb")
    for cell in notebook.cells:
        if nbgrader(cell).get("solution"):
            cell.source = mutant.source.strip("\n") if nbgrader(cell).get("grade_id") == mutant.task_id \
                else solutions[cell.id]
    path = into / assignment / f"{mutant.id}.ipynb"
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(notebook, path)
    return path


@pytest.fixture(scope="module")
def graded(tmp_path_factory) -> dict[str, dict]:
    """Task results by mutant id, from one `autograder grade` run per assignment."""
    folder, out = tmp_path_factory.mktemp("submissions"), tmp_path_factory.mktemp("results")
    for mutant in sample():
        submission(mutant, folder)
    results = {}
    for assignment in ("attention_scoring", "bahdanau"):
        command = [sys.executable, "-c", "from autograder.cli import main; main()", "grade",
                   str(folder / assignment), "--assignment", assignment, "--output", str(out / assignment),
                   "--jobs", "2"]
        run = subprocess.run(command, capture_output=True, text=True, timeout=3000)
        assert run.returncode == 0, run.stderr[-3000:]
        for path in (out / assignment).glob("*.json"):
            result = json.loads(path.read_text())
            results |= {result["student_id"]: {t["id"]: t for t in result["tasks"]}}
    return results


@pytest.mark.parametrize("mutant", sample(), ids=lambda m: m.id)
def test_sandboxed_path_gives_the_nbgrader_paths_score(graded, mutant):
    """Does `autograder grade` give the variant's task the score the nbgrader path gives it
    (full for a correct variant, less for a bug, the sandbox-only hostile cell included)?"""
    task = graded[mutant.id][mutant.task_id]
    if mutant.sandbox_only:
        assert task["score"] < task["max_score"], task
        return
    expected = grade(mutant)
    assert task["score"] == expected.score, {c["name"]: c["message"][:300] for c in task["checks"] if not c["passed"]}
    assert (task["score"] == task["max_score"]) == mutant.correct

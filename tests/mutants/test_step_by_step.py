"""The step-by-step check judges one property of every decoder in the mutation suite: fed one
target token per call, its returned state carried (another sentence's ``init_state`` made in
between, as ``predict_step``'s caller may, and that sentence's first step decoded after them),
the student's decoder gives the logits of its own whole-target decoding. Wrong logits that it
decodes the same either way are the logits check's to charge, never this one's (SPEC §3: one
property per check)."""
import copy

import pytest
import torch

from autograder.checks.decoders import DECODERS
from autograder.checks.inputs import WIDE
from autograder.feedback import Say
from autograder.feedback.plain import check_message
from tests.mutants.harness import ASSIGNMENT_OF, grade, notebook_namespace
from tests.mutants.report import ALL_MUTANTS

STEP_CHECK = "step by step equals teacher forcing"
DECODER_MUTANTS = [m for m in ALL_MUTANTS if ASSIGNMENT_OF[m.task_id] == "bahdanau" and m.sandbox_only is None]


def decodes_the_same_step_by_step(mutant) -> bool | None:
    """Whether the mutant's decoder gives its whole-target logits one step at a time, on a
    short and a long source; None where it raises (the check fails it on its error)."""
    task = DECODERS[mutant.task_id]
    namespace = notebook_namespace()
    exec(mutant.source, namespace)  # noqa: S102 - the suite's own cells
    torch.manual_seed(0)
    try:
        encoder, decoder = task.encoder(7, 4, 5, 2).eval(), namespace[task.name](7, 4, 5, 2).eval()
        with torch.no_grad():
            for T in (3, WIDE):
                src, other = torch.randint(0, 7, (2, T)), torch.randint(0, 7, (2, T))
                tgt, lens, other_lens = torch.randint(0, 7, (2, 4)), torch.tensor([2, T]), torch.tensor([T, 1])
                whole = decoder(tgt, decoder.init_state(encoder(src), lens))[0]  # (B, S, V)
                fresh = copy.deepcopy(decoder)  # the other sentence decoded at once by a decoder of its own
                with torch.enable_grad():  # as the check decodes at once
                    other_whole = fresh(tgt, fresh.init_state(encoder(other), other_lens))[0]
                state = decoder.init_state(encoder(src), lens)
                other_state = decoder.init_state(encoder(other), other_lens)  # made before the steps
                steps = []
                for s in range(tgt.shape[1]):
                    logits, state = decoder(tgt[:, s:s + 1], state)  # (B, 1, V)
                    steps.append(logits)  # read after the last step, as the check reads it too
                if not torch.allclose(torch.cat(steps, 1), whole, atol=1e-5):
                    return False
                if not torch.allclose(decoder(tgt[:, :1], other_state)[0], other_whole[:, :1], atol=1e-5):
                    return False
    except Exception:  # noqa: BLE001 - the student's error: the check reports it
        return None
    return True


@pytest.mark.parametrize("mutant", DECODER_MUTANTS, ids=lambda m: m.id)
def test_step_by_step_fails_exactly_the_decoders_that_decode_differently(mutant):
    same = decodes_the_same_step_by_step(mutant)
    if same is None:
        pytest.skip("the decoder raises: the check reports its error")
    check = next(c for c in grade(mutant).checks if c.name == STEP_CHECK)
    if not check.passed and check_message(check, Say("en")).startswith("your code raised"):
        pytest.skip("the decoder raises on another drawn input (a dtype, no lengths): the check reports it")
    assert check.passed == same, (
        f"{mutant.id}: decodes the same step by step: {same}, but the check {'passed' if check.passed else 'failed'}")

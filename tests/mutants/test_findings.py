"""What a failed check tells the student beyond the verdict: heatmaps of the attention weights
on the failing example, and the older book's forms named with the expected signature."""
import re

from autograder.checks.compare import kind_of
from autograder.feedback import Say
from autograder.feedback.plain import check_message
from autograder.sandbox.protocol import Handle, Named, Opaque
from autograder.texts import render

from .harness import grade
from .report import ALL_MUTANTS

HEATMAP_LIMIT = 20


def mutant(name: str):
    return next(m for m in ALL_MUTANTS if m.id == name)


def failed(result, check_name: str):
    return next(c for c in result.checks if c.name == check_name and not c.passed)


def assert_small_heatmap(heatmap, rows: int | None = None) -> None:
    assert heatmap is not None
    assert len(heatmap.got) == len(heatmap.expected) <= HEATMAP_LIMIT
    assert all(len(row) <= HEATMAP_LIMIT for row in heatmap.got + heatmap.expected)
    assert heatmap.got != heatmap.expected
    if rows is not None:
        assert len(heatmap.got) == rows
    assert all(round(v, 3) == v for row in heatmap.got for v in row)


def test_attention_module_failing_on_values_draws_both_weights():
    """Does a module without 1/√d show its attention weights beside the reference's, on the
    failing example's first batch row, for the output and for the stored weights?"""
    result = grade(mutant("dot_product_attention-no_sqrt"))
    for name in ("matches the reference", "attention_weights match the reference"):
        assert_small_heatmap(failed(result, name).finding.heatmap)


def test_decoder_failing_on_values_stacks_its_steps():
    """Does a decoder with the wrong query show its per-step weights stacked (steps, source)?"""
    result = grade(mutant("seq2seq_attention_decoder-first_layer_query"))
    check = failed(result, "matches the reference")
    steps = check.finding.case_code.split("tgt = ")[1].split("\n")[0].count(",") + 1
    assert_small_heatmap(check.finding.heatmap, rows=steps)


def test_module_without_stored_weights_draws_no_heatmap():
    """Is there no heatmap where the student kept no weights to draw (the 2020 book)?"""
    result = grade(mutant("dot_product_attention-keeps_no_weights_2020_book"))
    assert failed(result, "attention_weights match the reference").finding.heatmap is None


def test_older_additive_signature_names_the_expected_one():
    """Does the d2l 0.17 AdditiveAttention(key_size, query_size, num_hiddens, dropout) get
    feedback naming this notebook's signature and the older book?"""
    result = grade(mutant("additive_attention-d2l_017_key_and_query_sizes"))
    assert result.score == 0
    message = check_message(result.checks[0], Say("en"))
    assert "AdditiveAttention(num_hiddens, dropout)" in message and "older book" in message
    assert "старого издания книги" in check_message(result.checks[0], Say("ru"))


def test_lstm_decoder_for_the_gru_state_says_which_state_it_receives():
    """Does an LSTM decoder that builds (h, zeros_like(h)) hear that init_state gets (outputs, (h, c)),
    and that its decoder was written for the GRU's state?"""
    result = grade(mutant("lstm_attention_decoder-gru_state_with_zero_cell"))
    assert result.score == 0
    assert all("(outputs, (h, c))" in check_message(check, Say("en")) for check in result.checks)
    assert all("GRU encoder's state" in check_message(check, Say("en")) for check in result.checks)


def test_init_state_without_lengths_names_the_expected_signature():
    """Issue 47: a decoder whose init_state(self, enc_outputs) takes no lengths (a decoder without
    attention's) was told only "init_state() takes 2 positional arguments but 3 were given". Does
    its feedback name the expected init_state(enc_outputs, enc_valid_lens) and where its own came
    from, in both languages?"""
    result = grade(mutant("seq2seq_attention_decoder-init_state_without_lens"))
    assert result.score == 0
    check = failed(result, "matches the reference")
    assert check.finding.mistake == "init_state_without_lens"
    english, russian = check_message(check, Say("en")), check_message(check, Say("ru"))
    assert "init_state(enc_outputs, enc_valid_lens)" in english and "without attention" in english
    assert "init_state(enc_outputs, enc_valid_lens)" in russian and "без внимания" in russian


def test_what_stays_in_the_worker_is_said_in_words():
    """Issue 47: an attention_weights method without @property reached the student as "got: Opaque"
    (the type the sandbox's reply gives what cannot cross). Is each such value said in words, the
    method with its fix?"""
    said = {name: render(kind_of(value), "en") for name, value in {
        "method": Opaque("method"), "module": Handle(3), "state": Named.of([1, 2], Handle(4)), "none": None,
        "empty": [], "meta": Opaque("tensor on the meta device, of shape (2, 3)"), "own": Opaque("Steps")}.items()}
    assert "@property" in said["method"] and said["none"] == "`None` (nothing)" and said["empty"] == "a list of length 0"
    assert "Steps" in said["own"]
    assert not [text for text in said.values() if re.search(r"Opaque|Handle|Named|meta|method'", text)]


def test_a_parameter_of_another_shape_is_named_with_both_shapes():
    """Does a module whose W_q has the key size's shape hear which parameter and which shapes,
    in both languages, instead of torch's size error at no line of its code?"""
    result = grade(mutant("additive_attention-W_q_and_W_k_swapped"))
    check = failed(result, "queries and keys of different sizes")
    assert check.finding.problem.id == "check.parameter_shape"
    assert check.finding.expected != check.finding.got and check.finding.got.startswith("(")
    assert "W_q" in check_message(check, Say("en")) or "W_k" in check_message(check, Say("en"))
    assert "другой формы" in check_message(check, Say("ru"))


def test_a_mistake_is_named_only_where_the_probes_confirm_it():
    """Blind corpus 5: one max for the whole batch underflows whole rows to zero; on a failing
    example with one key that looks like softmax over the queries, but on the fixed probes
    its output is right. Is no mistake named?"""
    result = grade(mutant("masked_softmax-one_max_for_the_whole_batch"))
    findings = [c.finding for c in result.checks if not c.passed]
    assert findings and all(f.mistake is None for f in findings), [f.mistake for f in findings]


def test_expected_and_got_show_the_values_around_the_largest_difference():
    """Blind corpus 5: expected and got showed the first values of the first row, the same on
    both sides, while the difference was at step 1 (or key 286 of 300). Do they show the row
    and the keys around the largest difference?"""
    import pytest
    import torch

    from autograder.checks.compare import check_tensor
    from autograder.checks.core import CheckFailed
    from autograder.results import text
    expected = torch.arange(2 * 3 * 300, dtype=torch.float64).reshape(2, 3, 300)
    got = expected.clone()
    got[1, 2, 286] += 5
    with pytest.raises(CheckFailed) as failed:
        check_tensor(got, expected, 1e-6, text("tensor.output"), "x = ...")
    finding = failed.value.finding
    assert finding.expected.startswith("[..., ") and "1786" in finding.expected and "1791" not in finding.expected
    assert "1786" not in finding.got and "1791" in finding.got  # 1786 + 5 at key 286


def test_a_failure_in_the_books_call_sequence_names_the_calls_before_it():
    """Blind corpus 6: lengths kept from the last call failed on valid_lens=None, and the code
    shown for it passed in a fresh module. Does the failing input name the calls made before?"""
    result = grade(mutant("dot_product_attention-valid_lens_kept_from_the_last_call"))
    codes = [c.finding.case_code for c in result.checks if not c.passed and c.finding and c.finding.case_code]
    assert any("# made before, on the same module:" in code and "valid_lens=torch.tensor([100, 300])" in code
               for code in codes), codes

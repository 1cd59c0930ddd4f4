"""The book's fra-eng loader on a small local file, and the synthetic corpus."""
import pytest

from reference import load_fra_eng, read_fra_eng, synthetic_data, synthetic_pairs
from reference.data import ADJECTIVES, DETERMINERS, NOUNS

ATTRIBUTION = "CC-BY 2.0 (France) Attribution: tatoeba.org"
FRA_TXT = "".join(f"{line}\t{ATTRIBUTION}\n" for line in [
    "Go.\tVa !", "Hi.\tSalut !", "Run!\tCours\u202f!", "Run!\tCourez\u202f!",
    "Go now, run.\tVas-y maintenant, cours."]) + "\n"  # a trailing empty line is skipped


@pytest.fixture
def fra_txt(tmp_path):
    path = tmp_path / "fra.txt"
    path.write_text(FRA_TXT, encoding="utf-8")
    return path


def test_reading_lowercases_and_spaces_punctuation(fra_txt):
    """Is punctuation split off by a space, the text lower-cased, the narrow no-break space a space?"""
    pairs = read_fra_eng(fra_txt)
    assert pairs[0] == ("go .", "va !")
    assert pairs[2] == ("run !", "cours !")
    assert pairs[4] == ("go now , run .", "vas-y maintenant , cours .")
    assert len(pairs) == 5 and len(read_fra_eng(fra_txt, num_examples=2)) == 2


def test_sources_end_with_eos_and_are_padded_to_num_steps(fra_txt):
    """Is "go ." stored as go . <eos> <pad> with valid length 3?"""
    data = load_fra_eng(fra_txt, num_steps=4)
    assert data.src_vocab.to_tokens(data.src[0]) == ["go", ".", "<eos>", "<pad>"]
    assert data.src.shape == data.tgt_in.shape == data.label.shape == (5, 4)
    assert data.src_valid_len.tolist() == [3, 3, 3, 3, 4]


def test_long_sentences_are_truncated_to_num_steps(fra_txt):
    """Is a 6-token source cut to its first num_steps tokens (losing <eos>, as in the book)?"""
    data = load_fra_eng(fra_txt, num_steps=4, min_freq=1)
    assert data.src_vocab.to_tokens(data.src[4]) == ["go", "now", ",", "run"]


def test_rare_tokens_become_unk_with_min_freq_2(fra_txt):
    """With min_freq=2, do tokens seen once ("hi", "now", ",") map to <unk>?"""
    data = load_fra_eng(fra_txt, num_steps=4, min_freq=2)
    assert data.src_vocab.to_tokens(data.src[1]) == ["<unk>", ".", "<eos>", "<pad>"]
    assert data.src_vocab.to_tokens(data.src[4]) == ["go", "<unk>", "<unk>", "run"]
    assert {"<pad>", "<bos>", "<eos>", "<unk>"} <= set(data.src_vocab.idx_to_token)


def test_decoder_input_is_bos_then_target_and_label_is_target_then_eos(fra_txt):
    """Is the decoder input <bos> + target and the label target + <eos>, both num_steps long?"""
    data = load_fra_eng(fra_txt, num_steps=4, min_freq=1)
    assert data.tgt_vocab.to_tokens(data.tgt_in[2]) == ["<bos>", "cours", "!", "<eos>"]
    assert data.tgt_vocab.to_tokens(data.label[2]) == ["cours", "!", "<eos>", "<pad>"]


def test_synthetic_corpus_is_deterministic_for_a_seed():
    """Does a seed always give the same sentences, and another seed others?"""
    assert synthetic_pairs(100, seed=1) == synthetic_pairs(100, seed=1)
    assert synthetic_pairs(100, seed=1) != synthetic_pairs(100, seed=2)
    (train_a, test_a), (train_b, test_b) = synthetic_data(), synthetic_data()
    assert all((a == b).all() for a, b in zip(train_a.arrays() + test_a.arrays(),
                                              train_b.arrays() + test_b.arrays()))


def test_train_and_test_sentences_are_disjoint():
    """Is no held-out source sentence also a training sentence?"""
    train, test = synthetic_data()
    assert len(train) == 2000 and len(test) == 200
    rows = {tuple(row) for row in train.src.tolist()}  # equal sentences give equal rows
    assert not rows & {tuple(row) for row in test.src.tolist()}


def test_french_determiners_and_adjectives_agree_with_the_noun_gender():
    """Does every French noun follow a determiner, and precede an adjective, of its gender?"""
    gender = dict(NOUNS.values())  # french noun -> "m" or "f"
    all_adjectives = {form for forms in ADJECTIVES.values() for form in forms}
    for _, french in synthetic_pairs(300, seed=0):
        tokens = french.split()
        for i, token in enumerate(tokens):
            if token not in gender:
                continue
            pick = 0 if gender[token] == "m" else 1
            assert tokens[i - 1] in {forms[pick] for forms in DETERMINERS.values()}, french
            if tokens[i + 1] in all_adjectives:
                assert tokens[i + 1] in {forms[pick] for forms in ADJECTIVES.values()}, french

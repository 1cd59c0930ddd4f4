"""Training the reference Bahdanau model on the synthetic corpus, and its attention heatmap."""
import pytest
import torch

from reference import (Seq2Seq, Seq2SeqAttentionDecoder, Seq2SeqEncoder, show_heatmaps,
                       stack_step_weights, synthetic_data, token_accuracy, train_seq2seq,
                       translate)

SOURCE = "the big cat sees a green house ."
TARGET = "le chat grand voit une maison verte ."  # adjectives move after their nouns


@pytest.fixture(scope="module")
def trained():
    """A 1-layer GRU model (embed 32, hidden 64) after 600 steps with seed 0 (~5 s; 400 reach 100%)."""
    torch.manual_seed(0)
    train, test = synthetic_data()
    encoder = Seq2SeqEncoder(len(train.src_vocab), 32, 64, 1)
    decoder = Seq2SeqAttentionDecoder(len(train.tgt_vocab), 32, 64, 1)
    model = Seq2Seq(encoder, decoder, tgt_pad=train.tgt_vocab["<pad>"])
    train_seq2seq(model, train, num_steps=600, device="cpu", progress=False)
    return model, train, test


@pytest.mark.slow
def test_training_reaches_95_percent_token_accuracy_on_held_out_sentences(trained):
    """After training, are at least 95% of held-out target tokens predicted right?"""
    model, _, test = trained
    assert token_accuracy(model, test, device="cpu") >= 0.95


@pytest.mark.slow
def test_heatmap_puts_the_largest_weight_on_the_aligned_source_word(trained):
    """When emitting 'chat', 'grand' and 'verte', does attention peak on 'cat', 'big' and 'green'?"""
    model, train, _ = trained
    (translation,), weights = translate(model, train, [SOURCE], device="cpu",
                                        save_attention_weights=True)
    assert translation == TARGET
    heatmap = stack_step_weights(weights)  # (S, T): one row per emitted token
    emitted, source = translation.split(), SOURCE.split()
    for french, english in [("chat", "cat"), ("grand", "big"), ("verte", "green")]:
        peak = heatmap[emitted.index(french)].argmax().item()
        assert source[peak] == english, (french, heatmap[emitted.index(french)])


def test_show_heatmaps_writes_a_png(tmp_path):
    """Does ``show_heatmaps(..., path=...)`` write a PNG file?"""
    path = tmp_path / "attention.png"
    show_heatmaps(torch.rand(1, 2, 3, 4), xlabel="keys", ylabel="queries",
                  titles=["a", "b"], path=path)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

"""Laws of the three reference decoders (SPEC §2), each with its encoder, eval mode, float64.

Shapes: src (B, T), tgt (B, S), encoder outputs (T, B, H), logits (B, S, V), hidden (L, B, H).
"""
import pytest
import torch
from hypothesis import given, settings
from torch.testing import assert_close

from reference import book_decoder

from .builders import DECODERS, HIDDEN, build_seq2seq
from .strategies import VOCAB, decoder_batches

every_decoder = pytest.mark.parametrize("name", DECODERS)
layers = pytest.mark.parametrize("num_layers", [1, 2])
few = settings(max_examples=25)


def start(encoder, decoder, batch):
    """The decoder's initial state for ``batch``: (enc_outputs (B, T, H), hidden, enc_valid_lens)."""
    return decoder.init_state(encoder(batch.src, batch.enc_valid_lens), batch.enc_valid_lens)


@every_decoder
@layers
@few
@given(batch=decoder_batches())
def test_decoding_the_whole_target_equals_decoding_it_step_by_step(name, num_layers, batch):
    """Does one call over S tokens give the logits and state of S one-token calls carrying the state?"""
    encoder, decoder = build_seq2seq(name, num_layers)
    whole, whole_state = decoder(batch.tgt, start(encoder, decoder, batch))  # (B, S, V)
    state, steps = start(encoder, decoder, batch), []
    for s in range(batch.tgt.shape[1]):
        logits, state = decoder(batch.tgt[:, s:s + 1], state)  # (B, 1, V)
        steps.append(logits)
    assert_close(torch.cat(steps, dim=1), whole)
    assert_close(state[1], whole_state[1])  # the final hidden state, (h, c) for the LSTM


@every_decoder
@few
@given(batch=decoder_batches())
def test_attention_weights_are_zero_beyond_enc_valid_lens(name, batch):
    """At every step, do source positions >= enc_valid_len get weight 0, the rest summing to 1?"""
    encoder, decoder = build_seq2seq(name, num_layers=2)
    decoder(batch.tgt, start(encoder, decoder, batch))
    T = batch.src.shape[1]
    padding = torch.arange(T) >= batch.enc_valid_lens[:, None]  # (B, T)
    for weights in decoder.attention_weights:                   # (B, 1, T)
        assert (weights[:, 0][padding] == 0).all()
        assert_close(weights.sum(-1), torch.ones_like(weights[..., 0]))


@every_decoder
@layers
@few
@given(batch=decoder_batches())
def test_shapes_follow_the_spec(name, num_layers, batch):
    """Are init_state's outputs (B, T, H), the logits (B, S, V), and the weights S tensors (B, 1, T)?"""
    encoder, decoder = build_seq2seq(name, num_layers)
    (B, T), S = batch.src.shape, batch.tgt.shape[1]
    state = start(encoder, decoder, batch)
    assert state[0].shape == (B, T, HIDDEN) and state[2] is batch.enc_valid_lens
    logits, new_state = decoder(batch.tgt, state)
    assert logits.shape == (B, S, VOCAB)
    assert [w.shape for w in decoder.attention_weights] == [(B, 1, T)] * S
    hidden = new_state[1] if name != "LSTMAttentionDecoder" else new_state[1][0]
    assert hidden.shape == (num_layers, B, HIDDEN)


@layers
@few
@given(batch=decoder_batches())
def test_lstm_decoder_carries_h_and_c(num_layers, batch):
    """Is the LSTM decoder's state the pair (h, c), each (L, B, H), and does c matter?"""
    encoder, decoder = build_seq2seq("LSTMAttentionDecoder", num_layers)
    state = start(encoder, decoder, batch)
    logits, (_, (h, c), _) = decoder(batch.tgt, state)
    assert h.shape == c.shape == (num_layers, batch.src.shape[0], HIDDEN)
    enc_outputs, (h0, c0), lens = state
    forgetful, _ = decoder(batch.tgt, (enc_outputs, (h0, torch.zeros_like(c0)), lens))
    assert not torch.allclose(forgetful, logits)


@every_decoder
@layers
@few
@given(batch=decoder_batches())
def test_first_step_attends_with_the_last_layer_hidden_state_and_puts_context_first(
        name, num_layers, batch):
    """Is step one: query = last layer's h, context = attention(query, enc, enc), input = [context; embedding]?"""
    encoder, decoder = build_seq2seq(name, num_layers)
    enc_outputs, hidden, lens = state = start(encoder, decoder, batch)
    h = hidden[0] if name == "LSTMAttentionDecoder" else hidden  # (L, B, H)
    context = decoder.attention(h[-1].unsqueeze(1), enc_outputs, enc_outputs, lens)  # (B, 1, H)
    emb = decoder.embedding(batch.tgt[:, :1])                                 # (B, 1, E)
    out, _ = decoder.rnn(torch.cat((context, emb), dim=-1).permute(1, 0, 2), hidden)  # (1, B, H)
    by_hand = decoder.dense(out).permute(1, 0, 2)                              # (B, 1, V)
    logits, _ = decoder(batch.tgt, state)
    assert_close(logits[:, :1], by_hand)


@layers
@few
@given(batch=decoder_batches())
def test_reference_decoder_equals_the_books_decoder_with_the_same_weights(num_layers, batch):
    """Does projecting the keys once give the book's logits, weights and state exactly?"""
    encoder, decoder = build_seq2seq("Seq2SeqAttentionDecoder", num_layers)
    book = book_decoder.Seq2SeqAttentionDecoder(VOCAB, decoder.embedding.embedding_dim, HIDDEN,
                                                num_layers).eval()
    state = start(encoder, decoder, batch)
    with torch.no_grad():  # materialise the book's LazyLinear in float32, then cast
        book(batch.tgt, [t.float() if t.is_floating_point() else t for t in state])
    book.double().load_state_dict(decoder.state_dict())
    logits, (_, hidden, _) = decoder(batch.tgt, state)
    book_logits, (_, book_hidden, _) = book(batch.tgt, state)
    assert_close(logits, book_logits, rtol=0, atol=1e-12)
    assert_close(hidden, book_hidden, rtol=0, atol=1e-12)
    assert_close(torch.stack(decoder.attention_weights), torch.stack(book.attention_weights))

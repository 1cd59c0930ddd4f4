"""Checks for the three Bahdanau decoders on values (SPEC §2): state contract, logits, per-step
attention weights, step-by-step decoding, gradients. decoder_modes.py adds eval-mode
determinism and the device.

The student's decoder gets the reference encoder's outputs as plain tensors and the
reference decoder's weights by parameter name after one lazy-initialising forward.
Cases draw float32 and float64, int32 and int64 lengths, and ``enc_valid_lens=None``.
"""
import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

import torch
from torch import Tensor

from reference import decoders as ref
from reference.seq2seq import LSTMEncoder, Seq2SeqEncoder

from ..results import Heatmap, text
from ..sandbox.client import StudentError, gradients_reply, gradients_request, then_reply
from . import gradients
from .attention import build_remote, then_results
from .compare import (PRECISION, call_float64, case_key, check_shape, check_tensor, float64_twin, heatmap, in_dtype,
                      judged_precise, kind_of, reference_result, some_precise, tolerance)
from .core import Check, CheckFailed, Context, Kept, PerStudent, fail, in_context, left_to, search
from .diagnosis import Observation, name_mistake, variant_outputs
from .inputs import BATCH_ONE, INT32, WIDE, Case, decoder_cases, randomize

LOGITS = text("tensor.logits")


@dataclass(frozen=True)
class DecoderTask:
    name: str
    reference: type
    encoder: type
    lstm: bool = False


DECODERS = {
    "seq2seq_attention_decoder": DecoderTask("Seq2SeqAttentionDecoder", ref.Seq2SeqAttentionDecoder, Seq2SeqEncoder),
    "lstm_attention_decoder": DecoderTask("LSTMAttentionDecoder", ref.LSTMAttentionDecoder, LSTMEncoder, lstm=True),
    "dot_attention_decoder": DecoderTask("DotAttentionDecoder", ref.DotAttentionDecoder, Seq2SeqEncoder),
}


# An LSTM decoder building its state from h alone, as for the GRU encoder's state: (h, h) is the
# same mistake as (h, zeros_like(h)), named alike.
H_AS_CELL = "lstm_state_for_gru (h, h)"
SAME_MISTAKE = {H_AS_CELL: "lstm_state_for_gru"}


@functools.cache
def _mistaken(task: DecoderTask) -> dict[str, type]:
    """Reference decoders with one known mistake each."""
    base = task.reference
    variants = {
        "first_layer_query": type("FirstLayer", (base,), {"query_of": staticmethod(
            lambda state: (state[0] if task.lstm else state)[0].unsqueeze(1))}),
        "context_after_embedding": type("ContextAfter", (base,), {"rnn_input": staticmethod(
            lambda context, emb: torch.cat((emb.unsqueeze(1), context), dim=-1))}),
        "ignores_enc_valid_lens": type("NoLens", (base,), {"init_state": lambda self, enc, lens: base.init_state(
            self, enc, None)}),
    }
    if task.lstm:
        variants["cell_state_query"] = type("CellQuery", (base,), {"query_of": staticmethod(
            lambda state: state[1][-1].unsqueeze(1))})
        for mistake_id, cell_of in (("lstm_state_for_gru", torch.zeros_like), (H_AS_CELL, lambda h: h)):
            variants[mistake_id] = type("StateFromH", (base,), {"init_state": lambda self, enc, lens, cell_of=cell_of: (
                enc[0].permute(1, 0, 2), (enc[1][0], cell_of(enc[1][0])), lens)})  # (h, zeros_like(h)), (h, h)
    return variants


def sizes(case: Case) -> list:
    o = case.options
    return [o["vocab_size"], o["embed_size"], o["num_hiddens"], o["num_layers"]]


def map_tensors(value, fn):
    """``fn`` applied to every tensor in a (nested) tuple or list, such as a decoder's state."""
    if isinstance(value, Tensor):
        return fn(value)
    if isinstance(value, (list, tuple)):
        return type(value)(map_tensors(v, fn) for v in value)
    return value


def setup(student, task: DecoderTask, case: Case, dropout: float = 0.0, device: str = "cpu", train: bool = False,
          own_weights: bool = False):
    """Reference encoder outputs (CPU, in the case's dtype), the reference decoder (float32,
    CPU), and the student's decoder with its weights, in eval mode (train mode with ``train``),
    in the case's dtype and on ``device`` (the run's: CUDA on a GPU runner; ``on`` moves the
    inputs there). A contract parameter the decoder does not have fails the check, unless
    ``own_weights`` (a check that compares the decoder with itself): it then keeps its own,
    the same in every build (SPEC §3: only the checks that need the copied weights fail)."""
    return _setup(student, task, case, dropout, device, read=None, train=train, own_weights=own_weights)[:3]


def setup_decoded(student, task: DecoderTask, case: Case, device: str = "cpu", dropout: float = 0.0,
                  train: bool = False):
    """``setup`` (at ``dropout``, in train mode with ``train``, its own weights where the contract's
    are missing), then the whole target decoded on ``device``, teacher forced, in the same round
    trip: (encoder outputs, reference, module, logits). The student's error is raised."""
    enc_outputs, reference, module, then, _, _ = _setup(student, task, case, dropout, device, read=[], train=train,
                                                         own_weights=True)
    results, _ = then_results(then, 2)
    return enc_outputs, reference, module, first(results[1], case)


def decoded_twice(student, task: DecoderTask, case: Case, dropout: float, device: str) -> tuple:
    """``setup`` at ``dropout``, ``init_state``, then the whole target decoded twice from the very
    same state objects, in the same round trip: (first result (copied before the second call),
    second result); the student's error is raised."""
    _, _, _, then, _, _ = _setup(student, task, case, dropout, device, read=[], twice=True, own_weights=True)
    _, first_result, second_result = then_results(then, 3)[0]
    return first_result, second_result


def _setup(student, task: DecoderTask, case: Case, dropout: float, device: str, read: list | None,
           train: bool = False, gradients: Callable | None = None, twice: bool = False, own_weights: bool = False):
    """``setup``'s work; with ``read`` (a list), also the decoding's calls (its forward made
    ``twice``, with ``twice``) and those attributes; with ``gradients``, also the worker's
    ``gradients`` request that ``gradients(encoder outputs)`` makes, on the built decoder
    (``build_remote``). Returns them, and the contract's parameters it does not have."""
    encoder, reference, weights = references(task, case)
    src, tgt, lens = case.tensors["src"], case.tensors["tgt"], case.tensors["enc_valid_lens"]
    enc_outputs = encoded(encoder, src)
    lazy = [["init_state", [enc_outputs, lens]], [None, [tgt, {"result_of": 0}]]]  # the student's lazy layers
    float64 = case.options.get("dtype") == torch.float64
    in_dtype = map_tensors(enc_outputs, Tensor.double) if float64 else enc_outputs
    then = None if read is None else decoding(device, case, in_dtype)
    try:
        module, missing, done, grads = build_remote(
            student, task.name, [*sizes(case), dropout], {}, lazy, weights, "float64" if float64 else None,
            None if device == "cpu" else device, then, read, train, gradients and gradients(in_dtype), twice)
    except StudentError:
        if task.lstm:
            _name_gru_state(student, task, case, enc_outputs)
        raise
    if missing and not own_weights:
        raise_missing(missing, case)
    return in_dtype, reference, module, done, grads, missing


def raise_missing(missing: list[str], case: Case) -> None:
    """The failure of a check that needs the reference's weights copied into parameters the
    decoder does not have."""
    raise fail(text("decoder.parameters_missing", missing=", ".join(missing)), case_code=case.code())


def encoded(encoder, src: Tensor):
    """The reference encoder's outputs for ``src``: computed once per process for equal values
    (a GRU over hundreds of source steps takes milliseconds, and every student's decoder is
    given the same)."""
    def compute():
        with torch.no_grad():
            return encoder(src)
    return reference_result("encoder outputs", compute, encoder, src)


# The reference encoders and decoders, by task, sizes and seed: all that their lazy
# initialisation and random weights depend on.
_REFERENCES = Kept()


def references(task: DecoderTask, case: Case) -> tuple[torch.nn.Module, torch.nn.Module, dict]:
    """The reference encoder and decoder for the case's sizes, in eval mode, lazily initialised
    and given their random weights (from the case's seed); and the decoder's weights by name.
    Built once per process, sizes and seed: the checks only call them."""
    def make():
        encoder = task.encoder(*sizes(case)).eval()
        reference = task.reference(*sizes(case)).eval()
        with torch.no_grad():
            randomize(encoder, seed=case.options["seed"])
            enc_outputs = encoder(case.tensors["src"])
            reference(case.tensors["tgt"], reference.init_state(enc_outputs, case.tensors["enc_valid_lens"]))  # lazy
            randomize(reference, seed=case.options["seed"] + 1)
        return encoder, reference, {name: p.detach() for name, p in reference.named_parameters()}
    return _REFERENCES.get((task.name, tuple(sizes(case)), case.options["seed"]), make)


def decoding(device: str, case: Case, enc_outputs) -> list:
    """The worker's calls that decode the case's whole target, teacher forced, on ``device``:
    ``init_state``, then ``forward`` from the state it returned."""
    there, enc_there = on(device, case, enc_outputs)
    return [["init_state", [enc_there, there.tensors["enc_valid_lens"]]],
            [None, [there.tensors["tgt"], {"result_of": 0}]]]


def on(device: str, case: Case, enc_outputs) -> tuple[Case, object]:
    """The case's tensors and the encoder's outputs on ``device``, for the student's calls."""
    return case.on(device), map_tensors(enc_outputs, lambda t: t.to(device))


def _name_gru_state(student, task: DecoderTask, case: Case, enc_outputs) -> None:
    """An LSTM decoder that fails on the LSTM encoder's (outputs, (h, c)) but runs on the GRU
    encoder's (outputs, h) was written for the GRU's state: say which state it receives."""
    outputs, (h, _) = enc_outputs
    try:
        module = student.new(task.name, *sizes(case))
        module.eval()
        module(case.tensors["tgt"], module.method("init_state", (outputs, h), case.tensors["enc_valid_lens"]))
    except StudentError:
        return
    raise fail(text("decoder.lstm_state"), case_code=case.code(), mistake="lstm_state_for_gru",
               expected="enc_outputs = (outputs, (h, c))", got="enc_outputs = (outputs, h)")


def expected_logits(task: DecoderTask, reference, case: Case, enc_outputs, cls=None) -> Tensor:
    """Reference logits in float64 (or with a mistake, when ``cls`` is given)."""
    with torch.no_grad():
        state = reference.init_state(map_tensors(enc_outputs, Tensor.double), case.tensors["enc_valid_lens"])
        if cls is None:
            return call_float64(reference, case.tensors["tgt"], state)[0]
        model = float64_twin(reference, cls)
        return model(case.tensors["tgt"], model.init_state(map_tensors(enc_outputs, Tensor.double),
                                                           case.tensors["enc_valid_lens"]))[0]


def first(result, case: Case):
    if not isinstance(result, (tuple, list)) or len(result) != 2:
        raise fail(text("decoder.forward_returns"), case_code=case.code(),
                   expected="(logits (B, S, V), state)", got=kind_of(result))
    return result[0]


class Decoding(NamedTuple):
    """A case's whole target decoded, teacher forced, by a fresh decoder (``decoded``)."""
    enc_outputs: object   # the reference encoder's outputs, in the case's dtype, on the CPU
    reference: object     # the reference decoder
    module: object        # the student's decoder, as the decoding left it
    result: object        # what forward returned, or the StudentError the decoding raised
    weights: object       # its attention_weights then, or the StudentError reading them
    state: object         # what init_state returned (None where the decoding raised)
    missing: list         # the contract's parameters it does not have (it decoded with its own there)


# The student's decoding per case, for one student: the logits check and the checks that share
# its examples (the weights per step, the shapes, step by step, eval-mode determinism) read what
# its decoding returned instead of building and decoding again.
_DECODED = PerStudent()


def decoded(student, task: DecoderTask, case: Case, device: str, needs_weights: bool = False) -> Decoding:
    """The case decoded once per student and device (``Decoding``); an error building the
    decoder is raised. A check that needs the reference's weights calls it with
    ``needs_weights``: it fails where the decoder lacks a contract parameter."""
    def decode() -> Decoding:
        names = ["attention_weights"]
        enc_outputs, reference, module, then, _, missing = _setup(student, task, case, 0.0, device, read=names,
                                                                  own_weights=True)
        results, read = then_reply(then, 2, names)
        if isinstance(results, StudentError):
            done = Decoding(enc_outputs, reference, module, results, results, None, missing)
        else:
            done = Decoding(enc_outputs, reference, module, results[1], read["attention_weights"], results[0], missing)
        decodings(student, task, device).append((case, done))
        return done
    seen = _DECODED.get(student, case_key(task.name, device, case), decode)
    if needs_weights and seen.missing:
        raise_missing(seen.missing, case)
    return seen


# Every decoding ``decoded`` made, in order, per student, task and device.
_DECODINGS = PerStudent()


def decodings(student, task: DecoderTask, device: str) -> list[tuple[Case, Decoding]]:
    """The decodings ``decoded`` made, one fresh decoder each, in order: each was built after the
    ones before it, beside them (``contexts.judge_decoders_side_by_side``)."""
    return _DECODINGS.get(student, (task.name, device), list)


def called_again(student, task: DecoderTask, device: str, module) -> None:
    """Note a decoder of ``decodings`` that a check calls again: what it keeps is no longer as its
    decoding left it (``as_decoded``)."""
    _CALLED_AGAIN.get(student, (task.name, device), list).append(module)


def as_decoded(student, task: DecoderTask, device: str) -> list[tuple[Case, Decoding]]:
    """``decodings`` whose decoders no check called again."""
    again = _CALLED_AGAIN.get(student, (task.name, device), list)
    return [(case, seen) for case, seen in decodings(student, task, device)
            if not any(seen.module is module for module in again)]


_CALLED_AGAIN = PerStudent()


# The check that charges a crash on int32 lengths or a batch of one; the others judge such an
# example in its plain form instead (core.judged_plain).
CHARGED_BY = {INT32: "matches the reference", BATCH_ONE: "matches the reference"}


def logits_examples(ctx: Context) -> int:
    """How many examples the logits check draws (and the weights check, which shares them)."""
    return max(5, ctx.max_examples // 2)


def _matches(task: DecoderTask):
    def run(student, ctx: Context) -> None:
        def test(case: Case):
            enc_outputs, reference, module, got = decoded(student, task, case, ctx.device, needs_weights=True)[:4]
            if isinstance(got, StudentError):
                raise got
            got = first(got, case)
            expected, tol = logits_and_tolerance(task, reference, case, enc_outputs)
            try:
                check_tensor(got, expected, tol, LOGITS, case.code, "(B, S, V)")
            except CheckFailed as failed:
                def named_mistake(finding) -> None:
                    named = name_mistake(_observed(task, reference, case, enc_outputs, got, expected),
                                         lambda: _probes(student, task, ctx.device),
                                         max(tol * in_dtype(case.options["dtype"]), 1e-5))
                    finding.mistake = SAME_MISTAKE.get(named, named)
                    finding.heatmap = _step_heatmap(module, reference, case, enc_outputs)
                failed.later(named_mistake)
                raise
        search(decoder_cases(), test, ctx, max_examples=logits_examples(ctx), left_to=left_to(CHARGED_BY, ctx))
    return run


def logits_and_tolerance(task: DecoderTask, reference, case: Case, enc_outputs) -> tuple[Tensor, float]:
    """The reference's logits in float64 and float32's tolerance (for float64 inputs too: their
    precision is a check of its own, ``precision``)."""
    def compute():
        expected = expected_logits(task, reference, case, enc_outputs)
        with torch.no_grad():
            own = reference(case.tensors["tgt"], reference.init_state(
                map_tensors(enc_outputs, Tensor.float), case.tensors["enc_valid_lens"]))[0]
        return expected, tolerance(own, expected)
    return reference_result("decoder logits", compute, reference, case.tensors, enc_outputs)


def _precise(task: DecoderTask):
    """The logits of the drawn decodings with float64 inputs (``decodings``), then a
    decoder built (its lazy layers initialised by a float32 decoding) and converted with
    ``module.to(torch.float64)`` over hundreds of source steps, against the reference at
    float64's tolerance (``compare.judged_precise``)."""
    def run(student, ctx: Context) -> None:
        judged = [_judged_precise(task, seen.reference, case, seen.enc_outputs, seen.result[0], case.code)
                  for case, seen in decodings(student, task, ctx.device)
                  if case.options["dtype"] == torch.float64 and not seen.missing
                  and isinstance(seen.result, (tuple, list)) and len(seen.result) == 2]
        judged.append(_converted(student, task, ctx.device))
        some_precise(judged, "matches the reference")
    return run


def _judged_precise(task: DecoderTask, reference, case: Case, enc_outputs, got, code) -> bool:
    expected, tol = logits_and_tolerance(task, reference, case, enc_outputs)
    return judged_precise(got, expected, tol * in_dtype(torch.float64), tol, text("precision.result", what=LOGITS),
                            code, "(B, S, V)", lambda: _observed(task, reference, case, enc_outputs, got, expected)[2])


def _converted(student, task: DecoderTask, device: str) -> bool:
    """A decoder built in float32 (its lazy layers initialised by a float32 decoding), then
    converted with ``module.to(torch.float64)`` and decoding the float64 encoder outputs of
    hundreds of steps, in one round trip (``setup`` converts a float64 case's decoder so)."""
    src = torch.randint(0, 5, (2, WIDE), generator=torch.Generator().manual_seed(76))
    tgt = torch.randint(0, 5, (2, 3), generator=torch.Generator().manual_seed(77))
    case = Case({"src": src, "tgt": tgt, "enc_valid_lens": torch.tensor([220, WIDE])},
                options={"vocab_size": 5, "embed_size": 3, "num_hiddens": 4, "num_layers": 2, "seed": 76,
                         "dtype": torch.float64},
                recipes={"src": f"torch.randint(0, 5, (2, {WIDE}), generator=torch.Generator().manual_seed(76))",
                         "tgt": "torch.randint(0, 5, (2, 3), generator=torch.Generator().manual_seed(77))"})
    code = (f"{case.code()}\ndecoder = {task.name}(vocab_size, embed_size, num_hiddens, num_layers)"
            "  # its lazy layers initialised by a float32 decoding\ndecoder.to(torch.float64)\n"
            "logits, _ = decoder(tgt, decoder.init_state(enc_outputs, enc_valid_lens))  # enc_outputs in float64")
    try:
        enc_outputs, reference, _, then, _, _ = _setup(student, task, case, 0.0, device, read=[])
        result = then_results(then, 2)[0][1]
    except StudentError:  # a crash is the value checks' to charge (hundreds of source steps: the contexts')
        return False
    if not isinstance(result, (tuple, list)) or len(result) != 2:
        return False
    return _judged_precise(task, reference, case, enc_outputs, result[0], code)


def _observed(task: DecoderTask, reference, case: Case, enc_outputs, got, expected: Tensor) -> Observation:
    """The student's logits, the reference's and each known mistake's, on ``case``."""
    mistakes = {mid: (lambda cls=cls: expected_logits(task, reference, case, enc_outputs, cls))
                for mid, cls in _mistaken(task).items()}
    return got, expected, variant_outputs(mistakes)


# A fixed probe that tells the known mistakes apart where a small failing example cannot (one
# target step: a cell state zeroed at every step and one zeroed once agree there).
PROBE = Case({"src": torch.tensor([[1, 2, 3, 1], [2, 1, 0, 3]]), "tgt": torch.tensor([[1, 2, 3], [0, 1, 2]]),
              "enc_valid_lens": torch.tensor([2, 4])},
             options={"vocab_size": 4, "embed_size": 3, "num_hiddens": 4, "num_layers": 2, "seed": 3,
                      "dtype": torch.float32})


# The probe's observation, per student, task and device: a search diagnoses every failing
# example it shrinks through, and the probe's answer is the same for each.
_PROBED = PerStudent()


def _probes(student, task: DecoderTask, device: str):
    def observe() -> Observation | StudentError:
        try:
            enc_outputs, reference, _, got = setup_decoded(student, task, PROBE, device)
        except StudentError as error:
            return error
        return _observed(task, reference, PROBE, enc_outputs, got, expected_logits(task, reference, PROBE, enc_outputs))
    observed = _PROBED.get(student, (task.name, device), observe)
    if isinstance(observed, StudentError):
        raise observed
    yield observed


def reference_steps(reference, case: Case, enc_outputs) -> list[Tensor]:
    def compute():
        with torch.no_grad():
            state = reference.init_state(map_tensors(enc_outputs, Tensor.double), case.tensors["enc_valid_lens"])
            call_float64(reference, case.tensors["tgt"], state)
        return reference.attention_weights
    return reference_result("decoder weights per step", compute, reference, case.tensors, enc_outputs)


def _step_heatmap(module, reference, case: Case, enc_outputs) -> Heatmap | None:
    """The per-step weights stacked (steps, source positions), first example, beside the reference's."""
    try:
        got = module.attr("attention_weights")
    except StudentError:
        return None
    expected = reference_steps(reference, case, enc_outputs)
    if not isinstance(got, (list, tuple)) or len(got) != len(expected) or not all(
            isinstance(g, Tensor) and g.shape == e.shape for g, e in zip(got, expected, strict=True)):
        return None
    return heatmap(torch.cat(list(got), 1), torch.cat(expected, 1))  # (B, S, T)


def _state_shapes(task: DecoderTask):
    """The logits check's examples, and its decoding of them (one fresh decoder: ``init_state``,
    then forward from the state it returned); where that decoding raised, the calls are made
    again one at a time, so that the student hears which one broke."""
    def run(student, ctx: Context) -> None:
        def test(case: Case):
            if case.tensors["enc_valid_lens"] is None:
                return  # the logits check's
            seen = decoded(student, task, case, ctx.device)
            there, enc_there = on(ctx.device, case, seen.enc_outputs)
            if isinstance(seen.result, StudentError):
                _shapes_call_by_call(student, task, case, ctx.device)
                raise seen.result
            _judge_state(task, there, enc_there, seen.state)
            _judge_forward(task, there, seen.result)
        search(decoder_cases(), test, ctx.for_check("matches the reference"), max_examples=logits_examples(ctx),
               left_to=left_to(CHARGED_BY, ctx))
    return run


def _shapes_call_by_call(student, task: DecoderTask, case: Case, device: str) -> None:
    """A fresh decoder's ``init_state`` and forward as separate calls, each judged as it returns."""
    enc_outputs, _, module = setup(student, task, case, device=device)
    there, enc_there = on(device, case, enc_outputs)
    state = module.method("init_state", enc_there, there.tensors["enc_valid_lens"])
    _judge_state(task, there, enc_there, state)
    _judge_forward(task, there, module(there.tensors["tgt"], state))


def _judge_state(task: DecoderTask, case: Case, enc_outputs, state) -> None:
    """What ``init_state`` returned: (enc_outputs permuted to (B, T, H), hidden, lengths); an
    LSTM's hidden a pair."""
    if not isinstance(state, (tuple, list)) or len(state) != 3:
        raise fail(text("decoder.init_state_returns"), case_code=case.code())
    check_tensor(state[0], enc_outputs[0].permute(1, 0, 2), 1e-6, text("decoder.init_state_outputs"),
                 case.code, "(B, T, H)")
    if task.lstm and not (isinstance(state[1], (tuple, list)) and len(state[1]) == 2):
        raise fail(text("decoder.lstm_pair"), case_code=case.code())


def _judge_forward(task: DecoderTask, case: Case, result) -> None:
    """What forward returned: logits (B, S, V) and a state whose hidden is (num_layers, B, H)
    (an LSTM's, both of its pair)."""
    B, S = case.tensors["src"].shape[0], case.tensors["tgt"].shape[1]
    V, _, H, L = sizes(case)
    logits = first(result, case)
    check_shape(logits, (B, S, V), LOGITS, case.code, "(B, S, V)")
    new_state = result[1]
    new_hidden = new_state[1] if isinstance(new_state, (tuple, list)) and len(new_state) == 3 else None
    if task.lstm and not (isinstance(new_hidden, (tuple, list)) and len(new_hidden) == 2):
        raise fail(text("decoder.lstm_pair"), case_code=case.code() + "\n# the state forward returns")
    for got in (new_hidden if task.lstm else [new_hidden]):
        check_shape(got, (L, B, H), text("decoder.new_hidden"), case.code, "(num_layers, B, H)")


def _weights_per_step(task: DecoderTask):
    """After the whole target ran: one (B, 1, T) tensor per step, each equal to the reference's
    weights at that step (so zero beyond enc_valid_lens, and not changed by later steps). The
    logits check's examples, and its decoding of them."""
    def run(student, ctx: Context) -> None:
        def test(case: Case):
            seen = _weights_of(student, task, case, ctx.device)
            if seen is None:
                return
            enc_outputs, reference, module, weights = seen
            expected = reference_steps(reference, case, enc_outputs)
            S = case.tensors["tgt"].shape[1]
            if not isinstance(weights, (list, tuple)) or len(weights) != S:
                raise fail(text("decoder.weights_per_step", steps=S), case_code=case.code(),
                           expected=text("kind.per_step", count=S), got=kind_of(weights))
            for step, (got, right) in enumerate(zip(weights, expected, strict=True)):
                try:
                    check_tensor(got, right, 1e-5, text("decoder.step_weights", step=step), case.code, "(B, 1, T)")
                except CheckFailed as failed:
                    failed.later(lambda finding: setattr(finding, "heatmap",
                                                         _step_heatmap(module, reference, case, enc_outputs)))
                    raise
        search(decoder_cases(), test, ctx.for_check("matches the reference"), max_examples=logits_examples(ctx),
               left_to=left_to(CHARGED_BY, ctx))
        in_context(PROBE, lambda case: _weights_before_dropout(student, task, case, ctx.device))
    return run


def _weights_before_dropout(student, task: DecoderTask, case: Case, device: str) -> None:
    """In train mode at dropout 0.5, each step's kept weights are the weights before dropout
    (SPEC §2): each row sums to one (masked or not: masking is the other examples' to judge).
    Weights of another form are the eval-mode examples' to charge."""
    enc_outputs, _, module = setup(student, task, case, dropout=0.5, device=device)
    module.train()
    there, enc_there = on(device, case, enc_outputs)
    module(there.tensors["tgt"], module.method("init_state", enc_there, there.tensors["enc_valid_lens"]))
    weights = module.attr("attention_weights")
    shape = (case.tensors["src"].shape[0], 1, case.tensors["src"].shape[1])  # (B, 1, T)
    code = (case.code() + "\ndecoder.train()  # dropout=0.5"
            "\nlogits, _ = decoder(tgt, decoder.init_state(enc_outputs, enc_valid_lens))")
    for step, got in enumerate(weights if isinstance(weights, (list, tuple)) else []):
        if not isinstance(got, Tensor) or tuple(got.shape) != shape:
            return
        sums = got.detach().double().cpu().sum(-1)  # (B, 1): whatever was masked, before dropout 1
        check_tensor(sums, torch.ones_like(sums), 1e-5, text("decoder.train_weights", step=step), code, "(B, 1)")


def _weights_of(student, task: DecoderTask, case: Case, device: str) -> tuple | None:
    """What the logits check's decoding of ``case`` kept: (encoder outputs, reference, module,
    per-step weights); None where the decoding raised with ``enc_valid_lens=None``, which is the
    logits check's to judge (SPEC §3: charged once). Other errors are raised."""
    try:
        enc_outputs, reference, module, logits, weights = decoded(student, task, case, device, needs_weights=True)[:5]
    except StudentError as error:  # building it already decodes once (its lazy layers)
        logits = error
    if isinstance(logits, StudentError):
        if case.tensors["enc_valid_lens"] is None:
            return None
        raise logits
    first(logits, case)
    if isinstance(weights, StudentError):
        raise weights
    return enc_outputs, reference, module, weights


STEP_TOLERANCE = 1e-4  # decoding step by step and at once: the same arithmetic, summed in another order


# The cases whose decoding (``decoded``) step by step has used, per student: a case met again
# (hypothesis runs a failing example once more) is decoded by a fresh decoder.
_STEPPED = PerStudent()


def _step_by_step(task: DecoderTask):
    """The logits check's examples: on the decoder that decoded the whole target at once
    (``decoded``: a fresh one, the first time a case is met), ``init_state`` again, then one
    step per call carrying the returned state; the steps' logits are the whole decoding's."""
    def run(student, ctx: Context) -> None:
        def test(case: Case):
            if case.tensors["enc_valid_lens"] is None:
                return  # the logits check's
            used = _STEPPED.get(student, case_key(task.name, ctx.device, case), list)
            if used:
                enc_outputs, _, module, whole = setup_decoded(student, task, case, ctx.device)
            else:
                used.append(True)
                enc_outputs, _, module, result = decoded(student, task, case, ctx.device)[:4]
                if isinstance(result, StudentError):
                    raise result
                whole = first(result, case)
                called_again(student, task, ctx.device, module)
            case, enc_outputs = on(ctx.device, case, enc_outputs)
            tgt, lens = case.tensors["tgt"], case.tensors["enc_valid_lens"]
            state, steps = module.method("init_state", enc_outputs, lens), []
            for s in range(tgt.shape[1]):
                logits, state = module(tgt[:, s:s + 1], state)  # (B, 1, V), carried state
                steps.append(logits)
            check_tensor(torch.cat(steps, 1) if all(isinstance(x, Tensor) for x in steps) else steps[0],
                         whole, STEP_TOLERANCE, text("decoder.step_logits"),
                         lambda: case.code() + "\n# decoded step by step, carrying the returned state", "(B, S, V)")
        search(decoder_cases(), test, ctx.for_check("matches the reference"), max_examples=logits_examples(ctx),
               left_to=left_to(CHARGED_BY, ctx))
    return run


def _gradients(task: DecoderTask):
    """In float64, the gradients with respect to the encoder's outputs and state and to every
    parameter of embedding, rnn, dense and attention equal the reference's (SPEC §2)."""
    def run(student, ctx: Context) -> None:
        judged: list[bool] = []
        def judge(case: Case) -> None:
            judged.append(gradients_judged(student, task, case, ctx.device))
        search(decoder_cases(with_lens=True, dtype=torch.float64), judge, ctx, max_examples=5,
               left_to=left_to(CHARGED_BY, ctx))
        if not any(judged):  # the drawn sources had one step each, or wrong logits
            in_context(_attending_case(), judge)
        gradients.some_judged(judged)
    return run


def _attending_case() -> Case:
    """A fixed float64 example whose logits depend on the attention (4 source steps, lengths 2
    and 4), whose target holds every token of the vocabulary."""
    src = torch.randint(0, 5, (2, 4), generator=torch.Generator().manual_seed(5))
    tgt = torch.tensor([[0, 1, 2, 3, 4], [4, 3, 2, 1, 0]])
    return Case({"src": src, "tgt": tgt, "enc_valid_lens": torch.tensor([2, 4])},
                options={"vocab_size": 5, "embed_size": 3, "num_hiddens": 4, "num_layers": 2, "seed": 5,
                         "dtype": torch.float64},
                recipes={"src": "torch.randint(0, 5, (2, 4), generator=torch.Generator().manual_seed(5))"})


def gradients_judged(student, task: DecoderTask, case: Case, device: str, train: bool = False,
                     code: str | None = None) -> bool:
    """Fail on the first of the student's gradients that is wrong, on the float64 ``case`` (the
    decoder in train mode at dropout 0 when ``train``): against the reference's where the logits
    are right, against the student's own forward where not (``gradients``); False when not
    judged (one source step to attend to, or logits that do not change with the encoder's
    outputs)."""
    tgt, lens = case.tensors["tgt"], case.tensors["enc_valid_lens"]
    R = gradients.cotangent((*tgt.shape, case.options["vocab_size"]), case.options["seed"])
    enc_outputs, reference, module, _, reply, _ = _setup(
        student, task, case, 0.0, device, read=None, train=train,
        gradients=lambda enc: gradients_request(decoding(device, case, enc), R.to(device)))
    reply = gradients_reply(reply)
    calls = decoding(device, case, enc_outputs)
    enc_there = calls[0][1][0]
    outputs, hidden = enc_outputs
    leaves = [outputs, *hidden] if task.lstm else [outputs, hidden]
    names = ["enc_outputs[0]", "enc_outputs[1][0]", "enc_outputs[1][1]"] if task.lstm else [
        "enc_outputs[0]", "enc_outputs[1]"]

    def forward(xs, params):
        enc = (xs[0], (xs[1], xs[2])) if task.lstm else (xs[0], xs[1])
        return call_float64(reference, tgt, reference.init_state(enc, lens), params=params)[0]
    output, expected_inputs, expected_params = reference_result(
        "decoder gradients", lambda: gradients.reference_gradients(forward, leaves, reference, R),
        reference, leaves, tgt, lens, R)
    if not _attends(case):
        return False
    sent = [enc_there[0], *enc_there[1]] if task.lstm else list(enc_there)
    return gradients.compare(reply, output, names, expected_inputs, expected_params, code or case.code()) or \
        gradients.own_forward_judged(module, calls, reply, R, sent, names, expected_params, [0],
                                     code or case.code())


def _attends(case: Case) -> bool:
    """Whether a decoder's logits depend on its attention: two source steps or more to attend
    to, valid in some sentence. Gradients judged on other examples alone would pass a decoder
    that attends to nothing."""
    lens = case.tensors["enc_valid_lens"]
    return case.tensors["src"].shape[1] >= 2 and (lens is None or bool((lens >= 2).any()))


def checks_for(task_id: str) -> list[Check]:
    """The checks on values; decoder_modes.py adds eval-mode determinism and the device."""
    task = DECODERS[task_id]

    def check(name: str, run) -> Check:
        return Check(name, text(f"what.decoder.{name}"), run)
    return [check("state and output shapes", _state_shapes(task)),
            check("matches the reference", _matches(task)),
            check("attention weights per step match the reference", _weights_per_step(task)),
            check("step by step equals teacher forcing", _step_by_step(task)),
            check("gradients match the reference", _gradients(task)),
            check(PRECISION, _precise(task))]

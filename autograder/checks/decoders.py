"""Checks for the three Bahdanau decoders (SPEC §2): state contract, reference match,
per-step attention weights, step-by-step decoding, training, device portability.

The student's decoder gets the reference encoder's outputs as plain tensors and the
reference decoder's weights by parameter name after one lazy-initialising forward.
"""
import copy
from dataclasses import dataclass

import torch
from torch import Tensor

from reference import decoders as ref
from reference.seq2seq import LSTMEncoder, Seq2SeqEncoder

from ..results import text
from .compare import check_shape, check_tensor, tolerance
from .core import Check, CheckFailed, Context, fail, search
from .devices import WHAT as DEVICE_WHAT, on_meta
from .inputs import Case, decoder_cases, randomize
from .diagnosis import name_mistake, variant_outputs
from .training import learns_synthetic_corpus

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
    return variants


def _sizes(case: Case) -> list:
    o = case.options
    return [o["vocab_size"], o["embed_size"], o["num_hiddens"], o["num_layers"]]


def setup(student, task: DecoderTask, case: Case, device: str = "cpu"):
    """Reference encoder outputs, the reference decoder, and the student's with its weights."""
    encoder = task.encoder(*_sizes(case)).eval()
    reference = task.reference(*_sizes(case)).eval()
    src, tgt, lens = case.tensors["src"], case.tensors["tgt"], case.tensors["enc_valid_lens"]
    with torch.no_grad():
        randomize(encoder, seed=case.options["seed"])
        enc_outputs = encoder(src)
        reference(tgt, reference.init_state(enc_outputs, lens))  # lazy initialisation
        randomize(reference, seed=case.options["seed"] + 1)
    module = student.new(task.name, *_sizes(case))
    module.eval()
    state = module.method("init_state", enc_outputs, lens)
    module(tgt, state)  # lazy initialisation of the student's decoder
    weights = {name: p.detach() for name, p in reference.named_parameters()}
    missing = module.load_parameters(weights)
    if missing:
        raise fail(text("decoder.parameters_missing", missing=", ".join(missing)), case_code=case.code())
    if device != "cpu":
        module.to(device=device)
    return enc_outputs, reference, module


def _map_tensors(value, fn):
    """``fn`` applied to every tensor in a (nested) tuple or list, such as a decoder's state."""
    if isinstance(value, Tensor):
        return fn(value)
    if isinstance(value, (list, tuple)):
        return type(value)(_map_tensors(v, fn) for v in value)
    return value


def _expected(task: DecoderTask, reference, case: Case, enc_outputs, cls=None):
    """Reference logits in float64 (or with a mistake, when ``cls`` is given)."""
    model = copy.deepcopy(reference).double()
    if cls is not None:
        model.__class__ = cls
    lens = case.tensors["enc_valid_lens"]
    with torch.no_grad():
        return model(case.tensors["tgt"], model.init_state(_map_tensors(enc_outputs, Tensor.double), lens))[0]


def _matches(task: DecoderTask):
    def run(student, ctx: Context) -> None:
        def test(case: Case):
            enc_outputs, reference, module = setup(student, task, case, ctx.device)
            lens = case.tensors["enc_valid_lens"].to(ctx.device)
            state = module.method("init_state", _map_tensors(enc_outputs, lambda t: t.to(ctx.device)), lens)
            got = _first(module(case.tensors["tgt"].to(ctx.device), state), case)
            expected = _expected(task, reference, case, enc_outputs)
            with torch.no_grad():
                own = reference(case.tensors["tgt"], reference.init_state(enc_outputs, case.tensors["enc_valid_lens"]))[0]
            tol = tolerance(own, expected)
            try:
                check_tensor(got, expected, tol, LOGITS, case.code(), "(B, S, V)")
            except CheckFailed as failed:
                mistakes = {mid: (lambda cls=cls: _expected(task, reference, case, enc_outputs, cls))
                            for mid, cls in _mistaken(task).items()}
                failed.finding.mistake = name_mistake((got, expected, variant_outputs(mistakes)),
                                                      lambda: iter(()), tol)
                raise
        search(decoder_cases(), test, ctx, max_examples=max(5, ctx.max_examples // 2))
    return run


def _first(result, case: Case):
    if not isinstance(result, (tuple, list)) or len(result) != 2:
        raise fail(text("decoder.forward_returns"), case_code=case.code(),
                   expected="(logits (B, S, V), state)", got=type(result).__name__)
    return result[0]


def _state_shapes(task: DecoderTask):
    def run(student, ctx: Context) -> None:
        def test(case: Case):
            enc_outputs, _, module = setup(student, task, case)
            src, tgt, lens = case.tensors["src"], case.tensors["tgt"], case.tensors["enc_valid_lens"]
            B, S = src.shape[0], tgt.shape[1]
            V, _, H, L = _sizes(case)
            state = module.method("init_state", enc_outputs, lens)
            if not isinstance(state, (tuple, list)) or len(state) != 3:
                raise fail(text("decoder.init_state_returns"), case_code=case.code())
            check_tensor(state[0], enc_outputs[0].permute(1, 0, 2), 1e-6, text("decoder.init_state_outputs"),
                         case.code(), "(B, T, H)")
            hidden = state[1]
            if task.lstm and not (isinstance(hidden, (tuple, list)) and len(hidden) == 2):
                raise fail(text("decoder.lstm_pair"), case_code=case.code())
            logits, new_state = module(tgt, state)
            check_shape(logits, (B, S, V), LOGITS, case.code(), "(B, S, V)")
            new_hidden = new_state[1] if isinstance(new_state, (tuple, list)) and len(new_state) == 3 else None
            for got in (new_hidden if task.lstm else [new_hidden]):
                check_shape(got, (L, B, H), text("decoder.new_hidden"), case.code(), "(num_layers, B, H)")
        search(decoder_cases(), test, ctx, max_examples=5)
    return run


def _weights_per_step(task: DecoderTask):
    def run(student, ctx: Context) -> None:
        def test(case: Case):
            enc_outputs, _, module = setup(student, task, case)
            tgt, lens = case.tensors["tgt"], case.tensors["enc_valid_lens"]
            module(tgt, module.method("init_state", enc_outputs, lens))
            weights = module.attr("attention_weights")
            B, S, T = tgt.shape[0], tgt.shape[1], case.tensors["src"].shape[1]
            if not isinstance(weights, (list, tuple)) or len(weights) != S:
                raise fail(text("decoder.weights_per_step", steps=S), case_code=case.code(),
                           expected=f"[(B, 1, T)] * {S}", got=type(weights).__name__)
            beyond = torch.arange(T)[None, None, :] >= lens[:, None, None]  # (B, 1, T)
            for step in weights:
                check_shape(step, (B, 1, T), text("decoder.step_weights"), case.code(), "(B, 1, T)")
                masked = step.double() * beyond
                check_tensor(masked, torch.zeros_like(masked), 1e-6, text("decoder.beyond_lens"),
                             case.code(), "(B, 1, T)")
        search(decoder_cases(), test, ctx, max_examples=5)
    return run


def _step_by_step(task: DecoderTask):
    def run(student, ctx: Context) -> None:
        def test(case: Case):
            enc_outputs, _, module = setup(student, task, case)
            tgt, lens = case.tensors["tgt"], case.tensors["enc_valid_lens"]
            whole = _first(module(tgt, module.method("init_state", enc_outputs, lens)), case)
            state, steps = module.method("init_state", enc_outputs, lens), []
            for s in range(tgt.shape[1]):
                logits, state = module(tgt[:, s:s + 1], state)  # (B, 1, V), carried state
                steps.append(logits)
            check_tensor(torch.cat(steps, 1) if all(isinstance(x, Tensor) for x in steps) else steps[0],
                         whole, 1e-4, text("decoder.step_logits"),
                         case.code() + "\n# decoded step by step, carrying the returned state", "(B, S, V)")
        search(decoder_cases(), test, ctx, max_examples=5)
    return run


def _meta(task: DecoderTask):
    def run(student, ctx: Context) -> None:
        case = Case({"src": torch.tensor([[1, 2, 3], [2, 1, 0]]), "tgt": torch.tensor([[1, 2], [0, 1]]),
                     "enc_valid_lens": torch.tensor([3, 2])},
                    options={"vocab_size": 4, "embed_size": 3, "num_hiddens": 3, "num_layers": 2, "seed": 0})
        enc_outputs, _, module = setup(student, task, case)

        def call(c: Case):
            device = c.tensors["tgt"].device.type
            module.to(device=device)
            state = module.method("init_state", _map_tensors(enc_outputs, lambda t: t.to(device)), c.tensors["enc_valid_lens"])
            return _first(module(c.tensors["tgt"], state), c)
        on_meta(call, case, (2, 2, 4))
    return run


def checks_for(task_id: str) -> list[Check]:
    task = DECODERS[task_id]

    def check(name: str, run) -> Check:
        return Check(name, text(f"what.decoder.{name}"), run)
    return [check("state and output shapes", _state_shapes(task)),
            check("matches the reference", _matches(task)),
            check("attention weights per step, zero beyond enc_valid_lens", _weights_per_step(task)),
            check("step by step equals teacher forcing", _step_by_step(task)),
            check("learns the synthetic corpus",
                  lambda student, ctx: learns_synthetic_corpus(student, ctx, task.name, task.lstm)),
            Check("runs on any device", DEVICE_WHAT, _meta(task))]

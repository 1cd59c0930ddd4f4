"""The decoders' checks in each mode: deterministic in eval mode (with dropout > 0, and not
writing into the state it is given), and the same results on any device (SPEC §2-3)."""
import torch

from ..results import text
from ..sandbox.client import StudentError
from . import contexts, devices
from .compare import check_tensor
from .core import Check, Context, fail, in_context, left_to, search
from .decoders import (CHARGED_BY, DECODERS, PROBE, DecoderTask, decoded, decoded_twice, first,
                       logits_examples, setup_decoded)
from .inputs import WIDE, Case, decoder_cases

LOGITS_AGAIN = text("decoder.second_call")


EVAL_RATES = (0.2, 0.5)  # dropout p of the decoder built for each example, by the example's seed


def _deterministic_in_eval(task: DecoderTask):
    """Eval mode with dropout = p: the logits equal the decoder's with dropout=0 (same weights),
    and decoding again from the very same state objects gives them again. The logits check's
    examples with lengths, and its decoding of them at dropout 0."""
    def run(student, ctx: Context) -> None:
        judged = []

        def test(case: Case):
            if case.tensors["enc_valid_lens"] is None:
                return  # the logits check's
            judged.append(case)
            p = EVAL_RATES[case.options["seed"] % len(EVAL_RATES)]
            result = decoded(student, task, case, ctx.device).result
            if isinstance(result, StudentError):
                raise result
            expected = first(result, case)
            first_call, second_call = decoded_twice(student, task, case, p, ctx.device)
            code = f"\n# decoder.eval(), dropout={p}"
            check_tensor(first(first_call, case), expected, 1e-6, text("decoder.eval_dropout"),
                         lambda: case.code() + code, "(B, S, V)")
            check_tensor(first(second_call, case), expected, 1e-6, LOGITS_AGAIN,
                         lambda: case.code() + code + "\n# ...decoded twice from the same state", "(B, S, V)")
        search(decoder_cases(), test, ctx.for_check("matches the reference"), max_examples=logits_examples(ctx),
               left_to=left_to(CHARGED_BY, ctx))
        if not judged:  # every drawn example without lengths
            in_context(PROBE, test)
        _state_untouched(student, task, ctx.device)
    return run


def _state_untouched(student, task: DecoderTask, device: str) -> None:
    """As the book's ``predict_step`` runs it (``contexts.predict_step``: under ``torch.no_grad()``,
    one step per call, the returned state carried), no call writes into what it is given: the
    encoder's outputs and state, the lengths, the state of the step before. A decoding that
    raised is the other checks' to charge (a reply that is not the runner's is this check's
    failure too)."""
    case, reply = contexts.predict_step(student, task, device)
    if isinstance(reply, StudentError):
        if reply.type_name == "ProtocolError":  # a malformed reply never passes
            raise reply
        return
    encoder_leaves = 3 if task.lstm else 2  # (outputs, h) or (outputs, (h, c)), then the lengths
    for i, written in enumerate(reply["written"]):
        if written:
            name = (("enc_outputs" if written[0] < encoder_leaves else "enc_valid_lens") if i < contexts.FIRST_STEP
                    else "X" if written[0] == 0 else "state")
            raise fail(text("decoder.writes_state", name=name),
                       case_code=contexts.predict_step_code(case, max(i - contexts.FIRST_STEP, 0)),
                       expected=text("attention.input_unchanged", name=name),
                       got=text("attention.input_written", name=name))


def _device(task: DecoderTask):
    """Eval and train mode (dropout 0.5, two layers), with int64, int32 and no lengths; then over
    hundreds of source steps, as the book's contexts decode (code may take another path above a
    size). Each probe is built and decoded on the CPU in one round trip."""
    def run(student, ctx: Context) -> None:
        def probe(lens, train: bool, note: str, steps: int = 3) -> devices.Probe:
            src = torch.tensor([[1, 2, 3], [2, 1, 0]]) if steps == 3 else \
                torch.randint(0, 4, (2, steps), generator=torch.Generator().manual_seed(74))
            case = Case({"src": src, "tgt": torch.tensor([[1, 2], [0, 1]]), "enc_valid_lens": lens},
                        options={"vocab_size": 4, "embed_size": 3, "num_hiddens": 3, "num_layers": 2,
                                 "seed": 0, "dtype": torch.float32},
                        recipes={"src": f"torch.randint(0, 4, (2, {steps}), "
                                        "generator=torch.Generator().manual_seed(74))"})
            built = {}

            def cpu(c):  # built and decoded on the CPU in one round trip
                enc, _, built["module"], logits = setup_decoded(student, task, c, dropout=0.5 if train else 0.0,
                                                                train=train)
                built["enc"] = enc
                return logits

            def elsewhere(c):
                enc, m = built["enc"], built["module"]
                state, on = student.call_elsewhere(m.handle, "init_state",
                                                   [enc, c.tensors["enc_valid_lens"]], [m.handle], seed=0)
                result, on_after = student.call_elsewhere(m.handle, None, [c.tensors["tgt"], state],
                                                          [m.handle])
                return first(result, c), on + on_after  # init_state's tensors, then forward's
            return devices.Probe(case, note, cpu, elsewhere)
        devices.judge([probe(torch.tensor([3, 2]), False, "decoder.eval()"),
                       probe(None, False, "decoder.eval(), enc_valid_lens=None"),
                       probe(torch.tensor([2, 3], dtype=torch.int32), True, "dropout=0.5, decoder.train()"),
                       probe(torch.tensor([220, WIDE]), False, f"decoder.eval(), {WIDE} source steps", WIDE)],
                      shape_check="state and output shapes")
    return run


def checks_for(task_id: str) -> list[Check]:
    task = DECODERS[task_id]
    return [Check("deterministic in eval mode", text("what.decoder.deterministic in eval mode"),
                  _deterministic_in_eval(task)),
            Check("runs on any device", devices.WHAT, _device(task))]

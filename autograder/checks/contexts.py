"""The attention modules as the book's own code uses them (SPEC §2, "Inputs as the book's own
code passes them"): the drawn examples are small, fresh and contiguous; the decoders and the
training loop are none of these.

One module, built with the reference's weights, is called four or five times in a row in the worker,
under ``torch.no_grad()`` as ``predict_step`` runs it: as the decoder calls it (keys and values
``enc_outputs.permute(1, 0, 2)``, non-contiguous, and queries non-contiguous too,
hundreds of them, the queries far from every key); again on the same four tensors with new
values written into them (a training loop's reused buffers: nothing may be cached by a
tensor's identity); with ``valid_lens=None`` (nothing masked, whatever the call before masked);
with another feature size, where the module has no parameters (nothing kept of the first sizes);
in train mode at dropout 0 (it keeps ``attention_weights`` there too). Each call's output and
weights are compared with the reference's twice: as the call left them, and after the last
call (a later call must not change what an earlier one returned). And a module with dropout
0.5 in train mode must backpropagate, as training does.
"""
import dataclasses
from dataclasses import dataclass

import torch

from ..results import Finding, text
from ..sandbox.client import StudentError, gradients_reply, gradients_request
from . import attention, decoders, gradients
from .attention import OUTPUT, WEIGHTS, AttentionTask, build, expected, inputs, reference_module
from .compare import check_tensor, close, kind_of, tolerance
from .core import Check, CheckFailed, Context, Kept, PerStudent, in_context, left_to, raised
from .inputs import WIDE, Case, kinds_of, plain_form, values

READ = ["attention_weights"]   # what the book-context sequences read after each call

B, Q, K, D = 2, 2, WIDE, 4   # K above any table a student might size at 256
FAR = 16.0                   # queries this far from every key: distance scores near -250


@dataclass(frozen=True)
class Call:
    """One call of the sequence: its inputs, mode and what the feedback calls it."""
    case: Case
    train: bool
    permuted: bool
    context: str   # texts: context.<name>


# The sequence's calls per task and dtype: the same for every student (made once per process).
_CALLS: dict[tuple, list] = {}


def _calls(task: AttentionTask, dtype=torch.float32) -> list[Call]:
    key = (task.name, dtype)
    if key not in _CALLS:
        _CALLS[key] = _made_calls(task, dtype)
    return _CALLS[key]


def _made_calls(task: AttentionTask, dtype) -> list[Call]:
    def case(seed: int, lens, offset: float = 0.0, features: int = D) -> Case:
        queries, q_recipe = values((B, Q, features), 2.0, seed, dtype, offset)
        keys, k_recipe = values((B, K, features), 2.0, seed + 1, dtype)
        return Case({"queries": queries, "keys": keys, "values": keys.clone(), "valid_lens": lens},
                    options={"num_hiddens": 3} if task.hidden else {},
                    recipes={"queries": q_recipe, "keys": k_recipe, "values": k_recipe})
    # A module without parameters may be called with another feature size (its 1/sqrt(d) is
    # that call's): nothing of an earlier call's sizes may stay (blind corpus 7: a scale cached
    # at the first call). Additive and bilinear attention fix their sizes at the first call.
    other_size = [] if task.different_sizes else [Call(case(71, torch.tensor([3, K]), features=D + 3), False, False,
                                                       "other_size")]
    # Then eval mode again, on scores near -1000 where the inputs alone set them (dot-product and
    # distance attention), nothing masked (the fill is the output check's to judge there): nothing
    # learnt in train mode may change eval mode (blind corpus 44: a softmax shift kept from
    # training underflows here).
    bottom = attention.bottom_case(task)
    after_train = [] if bottom is None else [
        Call(dataclasses.replace(bottom, tensors={**bottom.tensors, "valid_lens": None}), False, False,
             "eval_after_train")]
    return [Call(case(31, torch.tensor([100, K]), FAR), False, True, "as_decoder"),
            Call(case(61, torch.tensor([K, 37])), False, True, "inputs_overwritten"),
            Call(case(41, None), False, True, "none_after_lens"),
            *other_size,
            Call(case(51, torch.tensor([[3, K + 5], [70, 1]])), True, False, "train_mode"),
            *after_train]


THEN = {"none_after_lens": "module(other_queries, other_keys, other_values, valid_lens=None)",
        "other_size": f"module(other_queries, other_keys, other_values, lens)  # {D + 3} features, not {D}",
        "train_mode": "module.train(); module(other_queries, other_keys, other_values, other_valid_lens)",
        "eval_after_train": "module.eval(); module(queries_near_the_bottom, keys, values, None)",
        "inputs_overwritten": "queries[:] = new_queries; keys[:] = new_keys; values[:] = new_values; "
                              "lens[:] = new_lens; module(queries, keys, values, lens)"}


def _code(call: Call) -> str:
    lines = [call.case.code(), "# every call under torch.no_grad(), as the book's predict_step runs the decoder"]
    if call.context == "inputs_overwritten":
        lines.append("# queries, keys, values and valid_lens: the first call's tensors, these values written into them"
                     " in place")
    elif call.permuted:
        lines.append("keys = values = keys.permute(1, 0, 2).contiguous().permute(1, 0, 2)"
                     "  # non-contiguous, as enc_outputs.permute(1, 0, 2)")
        lines.append("queries = queries.permute(1, 0, 2).contiguous().permute(1, 0, 2)  # non-contiguous too")
    lines.append("module.train()  # dropout=0" if call.train else "module.eval()")
    return "\n".join(lines)


def _arguments(call: Call) -> list:
    q, k, v, lens = inputs(call.case)
    if call.context == "inputs_overwritten":  # into the first call's four arguments: a memo keyed by all their ids
        return [{"overwrite": [0, i], "with": t} for i, t in ((0, q), (1, k), (2, v), (3, lens))]
    if not call.permuted:
        return [q, k, v, lens]
    keys_first = k.permute(1, 0, 2).contiguous()  # (K, B, D): as the encoder's outputs are laid out
    queries_first = q.permute(1, 0, 2).contiguous()  # (Q, B, D): SPEC §2, queries may be non-contiguous too
    return [{"permute": [1, 0, 2], "of": queries_first}, {"permute": [1, 0, 2], "of": keys_first},
            {"permute": [1, 0, 2], "of": keys_first}, lens]


# What the sequence returned, per student, task and device: the output and the weights checks
# judge the same calls.
_SEEN = PerStudent()


def _run(student, task: AttentionTask, device: str, plain: tuple = ()) -> tuple[list[Call], dict | StudentError]:
    """The sequence's calls and the worker's reply (or the error it raised); with ``plain`` (kinds
    of input), each call's input in its plain form (``inputs.plain_form``)."""
    calls = [dataclasses.replace(c, case=plain_form(c.case, list(plain))) if plain and kinds_of(c.case) else c
             for c in _calls(task)]

    def run() -> dict | StudentError:
        try:
            # its own weights where a contract parameter is missing: the value contexts run only once the
            # drawn examples passed, the inputs' writes are judged either way
            _, module = build(student, task, calls[0].case, device=device, own_weights=True)
            # under no_grad, as the book's predict_step calls the decoder's attention: where a buffer
            # reused for the output is most tempting (blind corpus 9)
            return module.calls_kept([[c.train, _on(_arguments(c), device)] for c in calls], READ, grad=False)
        except StudentError as error:
            return error
    return calls, _SEEN.get(student, (task.name, device, plain), run)


def sequence(student, task: AttentionTask, device: str) -> tuple[list[Call], dict | StudentError]:
    """The sequence's calls and the worker's reply (or the error it raised), made once per student."""
    return _run(student, task, device)


def call_code(calls: list[Call], call: Call) -> str:
    """One call of the sequence as code, after the calls made before it on the same module."""
    return _before(calls, calls.index(call)) + _code(call)


def _judged_plain(student, task: AttentionTask, ctx: Context, calls: list[Call], error: StudentError) -> tuple:
    """After the sequence raised: the sequence in plain form (``core.judged_plain``) where
    it holds kinds that another check charges and runs without them; else the error charged."""
    kinds = sorted({kind for c in calls for kind in kinds_of(c.case)} & set(others := left_to(task.charged_by, ctx)))
    if kinds:
        plain_calls, reply = _run(student, task, ctx.device, tuple(kinds))
        if not isinstance(reply, StudentError):
            ctx.plain.append((kinds[0], others[kinds[0]]))
            return plain_calls, reply
    raise CheckFailed(raised(error, _code(calls[0]))) from None


def _on(arguments: list, device: str) -> list:
    def moved(a):
        if isinstance(a, dict):
            return {key: value.to(device) if isinstance(value, torch.Tensor) else value for key, value in a.items()}
        return a if a is None else a.to(device)
    return [moved(a) for a in arguments]


def _before(calls: list[Call], i: int) -> str:
    """The calls made on the same module before call ``i``: what a module that keeps something
    between calls answers from (blind corpus 6: the code alone passed in a fresh module)."""
    def lens(call: Call) -> str:
        given = call.case.tensors["valid_lens"]
        return "None" if given is None else f"torch.tensor({given.tolist()})"
    return "".join(f"# made before, on the same module: {'module.train(); ' if c.train else ''}"
                   f"module(earlier_queries, earlier_keys, earlier_values, valid_lens={lens(c)})\n"
                   for c in calls[:i])


def judge(student, task: AttentionTask, ctx: Context, weights: bool) -> None:
    """The output (or the stored weights) of each call in the sequence, as the call left them
    and after the last call, against the reference's."""
    calls, reply = _run(student, task, ctx.device)
    if isinstance(reply, StudentError):
        calls, reply = _judged_plain(student, task, ctx, calls, reply)
    for i, call in enumerate(calls):
        if call.train and not weights:
            continue  # its output is the dropout check's (at dropout 0 it differs only by a rate fixed in the code)
        reference, _ = reference_module(task, call.case, 0.0)
        output, stored, tol = expected(reference, call.case)
        want, what = (stored, WEIGHTS) if weights else (output, OUTPUT)
        shape = "(B, Q, K)" if weights else "(B, Q, v)"
        for moment, key in (("now", "at_call"), ("later", "after")):
            result, attributes = reply[key][i]
            got = attributes.get("attention_weights") if weights else result
            if weights:
                tol = max(tol, 1e-5)  # as the weights check allows (float32 inputs)
            later = "" if moment == "now" else "\n" + "\n".join(f"# ...then: {THEN[c.context]}" for c in calls[i + 1:])
            check_tensor(got, want, tol, text(f"context.{call.context}", what=what, moment=text(f"context.{moment}"),
                                              keys=K),
                         _before(calls, i) + _code(call) + later, shape)


def judge_side_by_side(student, task: AttentionTask, ctx: Context) -> None:
    """The first module the output checks built (each of their examples builds its own), its
    attention_weights read again once the modules built after it have run, against the
    reference's: two modules of a class share nothing (state kept on the class, not on
    ``self``, is the class's)."""
    built = attention.modules_built(student, task, ctx.device)
    first = next((entry for entry in built if isinstance(entry[4], torch.Tensor)), None)
    if first is None or first is built[-1]:
        return  # no module ran beside it
    case, reference, module, _, _ = first
    code = (f"{case.code()}\nmodule = {task.name}(...); module.eval()  # dropout=0\n"
            "module(queries, keys, values, valid_lens)\n"
            f"# ...then other modules of the class, each built and called on its own inputs\n"
            "module.attention_weights  # read again")
    try:
        again = module.attr("attention_weights")
    except StudentError as error:
        raise CheckFailed(raised(error, code)) from None
    _, stored, tol = expected(reference, case)
    check_tensor(again, stored, max(tol, 1e-5), text("context.first_module", what=WEIGHTS), code, "(B, Q, K)")


def gradients_in_train_mode(student, task: AttentionTask, ctx: Context) -> None:
    """As a training step runs the module: in train mode at dropout 0 the gradients equal the
    reference's (float64, the train-mode call's inputs; where the output is not the reference's,
    they agree with the student's own forward instead); at dropout 0.5 a loss backpropagates
    (no in-place write into what autograd still needs)."""
    device, others = ctx.device, left_to(task.charged_by, ctx)

    def at_zero(case: Case) -> str:
        return (case.code() + "\nmodule.train()  # dropout=0"
                "\n(module(queries, keys, values, valid_lens) * R).sum().backward()")
    in_context(next(c for c in _calls(task, torch.float64) if c.train).case,
               lambda case: attention.gradients_judged(student, task, case, device, train=True, code=at_zero(case)),
               ctx, others, code=at_zero)

    def backward(case: Case) -> None:
        q, _, v, _ = inputs(case)
        R = gradients.cotangent((q.shape[0], q.shape[1], v.shape[-1]), seed=7)
        _, _, reply = attention.build_with_gradients(
            student, task, case, 0.5, device, train=True,
            request=gradients_request([[None, inputs(case, device=device)]], R.float().to(device)))
        gradients_reply(reply)
    in_context(next(c for c in _calls(task) if c.train).case, backward, ctx, others, code=lambda case: (
        case.code() + "\n# module = ...(dropout=0.5); module.train(); (module(...) * R).sum().backward()"))


def with_contexts(checks: list[Check], task: AttentionTask) -> list[Check]:
    """The task's checks, each of the output, the weights and the gradients followed, once its
    drawn examples pass, by the same property in the book's contexts."""
    def weights_in_contexts(student, ctx: Context) -> None:
        judge(student, task, ctx, weights=True)
        judge_side_by_side(student, task, ctx)
    return _followed_by(checks, {
        "matches the reference": lambda student, ctx: judge(student, task, ctx, weights=False),
        "attention_weights match the reference": weights_in_contexts,
        "gradients match the reference": lambda student, ctx: gradients_in_train_mode(student, task, ctx)})


def _followed_by(checks: list[Check], then: dict) -> list[Check]:
    return [dataclasses.replace(check, run=_followed(check.run, then[check.name])) if check.name in then else check
            for check in checks]


def _followed(run, context):
    def both(student, ctx: Context) -> None:
        run(student, ctx)
        context(student, ctx)
    return both


# --- the decoders, as the book's predict_step drives them ------------------------------------
STEPS = 4
DECODE = "logits, _ = decoder(tgt, decoder.init_state(encoder(src), enc_valid_lens))"  # teacher forced
FIRST_STEP = 2  # the calls: init_state of the sentence decoded, init_state of another, then the steps


def _decoder_case(dtype=torch.float32) -> Case:
    """Two sentences of ``WIDE`` source tokens (more than any table sized at 256), lengths 220 and
    ``WIDE``; their targets hold every token of the vocabulary (index 0 is a real token in this
    course, not padding: in train mode every embedding row gets its gradient)."""
    B, T = 2, WIDE
    src = torch.randint(0, 7, (B, T), generator=torch.Generator().manual_seed(71))
    tgt = torch.tensor([[0, 1, 2, 3], [4, 5, 6, 0]])  # (B, STEPS)
    return Case({"src": src, "tgt": tgt, "enc_valid_lens": torch.tensor([220, T])},
                options={"vocab_size": 7, "embed_size": 4, "num_hiddens": 5, "num_layers": 2, "seed": 71,
                         "dtype": dtype},
                recipes={"src": f"torch.randint(0, 7, ({B}, {T}), generator=torch.Generator().manual_seed(71))"})


OTHER_SEED, OTHER_LENS = 73, [WIDE, 30]  # the other batch, whose state is made before and decoded after


def _decoder_code(case: Case, step: int, moment: str) -> str:
    B, T = case.tensors["src"].shape
    code = (f"{case.code()}\n"
            f"other_src = torch.randint(0, 7, ({B}, {T}), generator=torch.Generator().manual_seed({OTHER_SEED}))\n"
            f"other_lens = torch.tensor({OTHER_LENS})\n"
            f"with torch.no_grad():  # as predict_step runs\n"
            f"    state = decoder.init_state(encoder(src), enc_valid_lens)\n"
            f"    other_state = decoder.init_state(encoder(other_src), other_lens)  # decoded after the steps below\n"
            f"    for s in range({step + 1}):  # one step per call, the returned state carried\n"
            f"        logits, state = decoder(tgt[:, s:s + 1], state)\n"
            f"        weights = decoder.attention_weights  # read after each call")
    return code + (f"\n# ...read again after step {STEPS - 1}" if moment == "later" and step < STEPS - 1 else "")


def _predicted(student, task, device: str) -> tuple[Case, object, object, dict | StudentError]:
    """The decoder driven one step per call: (case, encoder outputs, reference, reply)."""
    case = _decoder_case()

    def drive() -> tuple:
        enc_outputs, reference, module = decoders.setup(student, task, case, device=device, own_weights=True)
        there, enc_there = decoders.on(device, case, enc_outputs)
        tgt, other = there.tensors["tgt"], _other_sentence(task, case, device)
        calls = [[False, [enc_there, there.tensors["enc_valid_lens"]], "init_state"],
                 [False, other, "init_state"]]  # made before the first is decoded: its state is the argument's
        calls += [[False, [tgt[:, s:s + 1], {"result_of": FIRST_STEP + s - 1 if s else 0, "item": 1 if s else None}]]
                  for s in range(STEPS)]
        calls += [[False, [tgt[:, :1], {"result_of": 1, "item": None}]]]  # then the other batch's first step
        try:
            reply = module.calls_kept(calls, READ, grad=False)  # predict_step is @torch.no_grad()
        except StudentError as error:
            reply = error
        return enc_outputs, reference, reply
    return case, *_SEEN.get(student, ("predict_step", task.name, device), drive)


def predict_step(student, task, device: str) -> tuple[Case, dict | StudentError]:
    """The case and the worker's reply (or the error it raised) of the decoder driven as
    ``predict_step`` drives it, made once per student."""
    case, _, _, reply = _predicted(student, task, device)
    return case, reply


def predict_step_code(case: Case, step: int) -> str:
    return _decoder_code(case, step, "now")


def _other_sentence(task, case: Case, device: str) -> list:
    """Another batch's (encoder outputs, lengths), as ``init_state`` takes them."""
    encoder = decoders.references(task, case)[0]
    src = torch.randint(0, 7, case.tensors["src"].shape, generator=torch.Generator().manual_seed(OTHER_SEED))
    outputs = decoders.encoded(encoder, src)
    return [decoders.map_tensors(outputs, lambda t: t.to(device)), torch.tensor(OTHER_LENS, device=device)]


def judge_predict_step(student, task, device: str, weights: bool) -> None:
    """Each step's logits when the decoder runs as ``predict_step`` runs it against the
    student's own decoding of the whole target at once (the property of the step-by-step
    check: wrong logits are the logits check's to charge, not this one's); or each step's
    attention_weights (a list of one (B, 1, T) tensor), as the call left them and after the
    last step, against the reference decoder's, at the steps that began from a state carried
    right (a state carried wrong is the step-by-step check's to charge, not this one's)."""
    case, enc_outputs, reference, reply = _predicted(student, task, device)
    if isinstance(reply, StudentError):
        if weights and reply.type_name != "ProtocolError":
            return  # the decoder raises as predict_step calls it: the step-by-step check charges that
        raise CheckFailed(raised(reply, _decoder_code(case, 0, "now"))) from None  # or a malformed reply
    if weights:
        steps = decoders.reference_steps(reference, case, enc_outputs)  # S x (B, 1, T)
        judged = _carried_right(student, task, case, device, reply)
    else:
        whole, judged = _teacher_forced(student, task, case, device), STEPS  # (B, S, V), the student's own
        _judge_other_batch(student, task, case, device, reply)
    for step in range(judged):
        for moment, key in (("now", "at_call"), ("later", "after")):
            result, attributes = reply[key][FIRST_STEP + step]
            code = _decoder_code(case, step, moment)
            what = text("context.predict_step", step=step, moment=text(f"context.{moment}"), steps=WIDE,
                        what=text("decoder.step_weights", step=step) if weights else text("decoder.step_logits"))
            if not weights:
                check_tensor(_step_logits(result), whole[:, step:step + 1], decoders.STEP_TOLERANCE, what,
                             code + f"\n# expected: your decoder's logits of the whole target at once, step {step}",
                             "(B, 1, V)")
                continue
            got = attributes.get("attention_weights")
            if not isinstance(got, (list, tuple)) or len(got) != 1:
                raise CheckFailed(Finding(problem=text("context.one_step_weights", moment=text(f"context.{moment}")),
                                          case_code=code, expected=text("kind.per_step", count=1),
                                          got=kind_of(got)))
            check_tensor(got[0], steps[step], 1e-5, what, code, "(B, 1, T)")


def _judge_other_batch(student, task, case: Case, device: str, reply: dict) -> None:
    """The other batch's first step, decoded after the first batch's steps from the state its
    ``init_state`` made before them, against the student's own decoding of that batch at once
    (nothing of the first batch may be kept: a cache by shape, by identity, on the module)."""
    B, T = case.tensors["src"].shape
    other = Case({"src": torch.randint(0, 7, (B, T), generator=torch.Generator().manual_seed(OTHER_SEED)),
                  "tgt": case.tensors["tgt"], "enc_valid_lens": torch.tensor(OTHER_LENS)},
                 options=case.options, recipes=case.recipes)
    whole = _teacher_forced(student, task, other, device)
    code = (_decoder_code(case, STEPS - 1, "now") + "\n    logits, _ = decoder(tgt[:, :1], other_state)"
            "\n# expected: your decoder's logits of the other batch's whole target at once, step 0")
    check_tensor(_step_logits(reply["at_call"][FIRST_STEP + STEPS][0]), whole[:, :1], decoders.STEP_TOLERANCE,
                 text("context.other_batch", steps=WIDE), code, "(B, 1, V)")


def _step_logits(result):
    return result[0] if isinstance(result, (tuple, list)) and len(result) == 2 else result


def _carried_right(student, task, case: Case, device: str, reply: dict) -> int:
    """How many first steps of the predict_step decoding began from a right state: those whose
    logits, as the call returned them, equal the student's own decoding of the whole target."""
    try:
        whole = _teacher_forced(student, task, case, device)  # (B, S, V)
    except CheckFailed:  # no whole decoding to hold the steps to: the logits checks charge that
        return 0
    for step in range(STEPS):
        if not close(_step_logits(reply["at_call"][FIRST_STEP + step][0]), whole[:, step:step + 1],
                     decoders.STEP_TOLERANCE):
            return step
    return STEPS


def _teacher_forced(student, task, case: Case, device: str) -> torch.Tensor:
    """The student's logits of ``case``'s whole target decoded at once (teacher forcing), by a
    decoder with the same weights; its error, or logits that are no tensor, fail the check."""
    logits = decoders.decoded(student, task, case, device).result
    code = f"{case.code()}\n{DECODE}"
    if isinstance(logits, StudentError):
        raise CheckFailed(raised(logits, code)) from None
    whole = decoders.first(logits, case)
    if not isinstance(whole, torch.Tensor):
        raise CheckFailed(Finding(problem=text("decoder.forward_returns"), case_code=code,
                                  expected="(logits (B, S, V), state)", got=kind_of(whole)))
    return whole


def decoder_as_trained(student, task, device: str) -> None:
    """The whole target decoded at once over hundreds of source steps (the drawn examples have
    a few), in eval mode, then in train mode at dropout 0 as ``train_seq2seq`` runs the decoder:
    both logits equal the reference's."""
    case = _decoder_case()
    expected, tol = _reference_logits(task, case)
    check_tensor(_teacher_forced(student, task, case, device), expected, tol,
                 text("context.long_source", what=decoders.LOGITS, steps=WIDE), f"{case.code()}\n{DECODE}", "(B, S, V)")
    code = f"{case.code()}\ndecoder.train()  # dropout=0, as train_seq2seq trains it\n{DECODE}"
    try:
        enc_outputs, _, module = decoders.setup(student, task, case, device=device, train=True)
        there, enc_there = decoders.on(device, case, enc_outputs)
        lens = there.tensors["enc_valid_lens"]
        result = module(there.tensors["tgt"], module.method("init_state", enc_there, lens))
    except StudentError as error:
        raise CheckFailed(raised(error, code)) from None
    check_tensor(decoders.first(result, case), expected, tol,
                 text("context.train_mode", what=decoders.LOGITS, moment=text("context.now")), code, "(B, S, V)")
    _dropout_acts(student, task, device)


def _dropout_acts(student, task, device: str) -> None:
    """Training runs the decoder in train mode with dropout (the book: 0.2). With one layer the
    attention's dropout is the only one, so in train mode at dropout 0.5 the logits must differ
    from eval mode's: the context is dropout(weights) @ values (SPEC §2), not the weights kept
    before dropout times the values. RNG-free: any way of drawing the dropout passes."""
    case = Case({"src": torch.tensor([[1, 2, 3, 4, 5], [5, 4, 3, 2, 1]]), "tgt": torch.tensor([[1, 2, 3], [3, 2, 1]]),
                 "enc_valid_lens": torch.tensor([5, 5])},
                options={"vocab_size": 6, "embed_size": 3, "num_hiddens": 4, "num_layers": 1, "seed": 5,
                         "dtype": torch.float32})
    code = (f"{case.code()}\ndecoder = {task.name}(vocab_size, embed_size, num_hiddens, num_layers, dropout=0.5)"
            "  # one layer: the attention's dropout is the only one\n")
    try:
        enc_outputs, _, module = decoders.setup(student, task, case, dropout=0.5, device=device)
        there, enc_there = decoders.on(device, case, enc_outputs)
        lens, tgt = there.tensors["enc_valid_lens"], there.tensors["tgt"]
        evaluated = decoders.first(module(tgt, module.method("init_state", enc_there, lens)), case)
        module.train()
        trained = decoders.first(module(tgt, module.seeded(0, "init_state", enc_there, lens)), case)
        again = decoders.first(module.calls_kept(  # decoded again, not seeded
            [[True, [enc_there, lens], "init_state"], [True, [tgt, {"result_of": 0, "item": None}]]])["at_call"][1][0],
            case)
    except StudentError as error:
        raise CheckFailed(raised(error, code + "decoder.train()\n" + DECODE)) from None
    if isinstance(evaluated, torch.Tensor) and close(trained, evaluated, 1e-6):
        raise CheckFailed(Finding(problem=text("context.dropout_never_acts"),
                                  case_code=code + f"decoder.eval()\n{DECODE}\ndecoder.train()\n{DECODE}",
                                  expected=text("context.dropout_acts_expected"),
                                  got=text("context.dropout_acts_got")))
    if isinstance(trained, torch.Tensor) and close(again, trained, 0.0):
        raise CheckFailed(Finding(problem=text("dropout.same_every_call"),
                                  case_code=code + f"decoder.train()\n{DECODE}\n{DECODE}  # no seeding in between",
                                  expected=text("dropout.drawn_anew"), got=text("dropout.same_draw")))


# The reference's logits of the fixed long case, per task: computed once per process.
_REFERENCE_LOGITS = Kept(size=8)


def _reference_logits(task, case: Case) -> tuple[torch.Tensor, float]:
    """The reference decoder's teacher-forced logits of ``case`` (``_decoder_case()``, the same
    for every student) in float64, and the tolerance."""
    def compute() -> tuple[torch.Tensor, float]:
        encoder, reference, _ = decoders.references(task, case)
        enc_outputs = decoders.encoded(encoder, case.tensors["src"])
        with torch.no_grad():
            own = reference(case.tensors["tgt"], reference.init_state(enc_outputs, case.tensors["enc_valid_lens"]))[0]
        expected = decoders.expected_logits(task, reference, case, enc_outputs)  # (B, S, V)
        return expected, tolerance(own, expected)
    return _REFERENCE_LOGITS.get(task.name, compute)


def decoder_gradients_in_train_mode(student, task, device: str) -> None:
    """In train mode at dropout 0, as training runs the decoder, the gradients equal the
    reference's (float64, hundreds of source steps; where the logits are not the reference's,
    they agree with the student's own forward instead)."""
    case = _decoder_case(torch.float64)
    code = (case.code() + "\ndecoder.train()  # dropout=0"
            "\nlogits, _ = decoder(tgt, decoder.init_state(enc_outputs, enc_valid_lens))"
            "\n(logits * R).sum().backward()")
    try:
        decoders.gradients_judged(student, task, case, device, train=True, code=code)
    except StudentError as error:
        raise CheckFailed(raised(error, code)) from None


def judge_decoders_side_by_side(student, task, device: str) -> None:
    """The first decoder the logits check built (each of its examples builds its own), its
    per-step attention_weights read again once the decoders built after it have decoded, against
    the reference's at each step (state kept on the class, not on ``self``, is shared)."""
    seen = decoders.as_decoded(student, task, device)
    first = next(((case, d) for case, d in seen if isinstance(d.weights, (list, tuple))), None)
    if first is None or first[1] is decoders.decodings(student, task, device)[-1][1]:
        return  # no decoder ran beside it
    case, decoding = first
    code = (f"{case.code()}\ndecoder = {task.name}(...); decoder.eval()\n{DECODE}\n"
            "# ...then other decoders of the class, each built and decoding its own batch\n"
            "decoder.attention_weights  # read again")
    try:
        again = decoding.module.attr("attention_weights")
    except StudentError as error:
        raise CheckFailed(raised(error, code)) from None
    expected = decoders.reference_steps(decoding.reference, case, decoding.enc_outputs)
    if not isinstance(again, (list, tuple)) or len(again) != len(expected):
        raise CheckFailed(Finding(problem=text("context.first_decoder", what=text("decoder.weights_list")),
                                  case_code=code, expected=f"[(B, 1, T)] * {len(expected)}",
                                  got=f"{len(again)} tensors" if isinstance(again, (list, tuple))
                                  else type(again).__name__))
    for step, (got, right) in enumerate(zip(again, expected, strict=True)):
        check_tensor(got, right, 1e-5, text("context.first_decoder", what=text("decoder.step_weights", step=step)),
                     code, "(B, 1, T)")


def with_decoder_contexts(checks: list[Check], task) -> list[Check]:
    """The decoder's checks, each of the logits, the step-by-step logits, the per-step weights
    and the gradients followed, once its drawn examples pass, by the same property as the
    book's ``predict_step`` decodes or as training runs the decoder."""
    def weights_in_contexts(student, ctx: Context) -> None:
        judge_predict_step(student, task, ctx.device, weights=True)
        judge_decoders_side_by_side(student, task, ctx.device)
    return _followed_by(checks, {
        "matches the reference": lambda student, ctx: decoder_as_trained(student, task, ctx.device),
        "step by step equals teacher forcing":
        lambda student, ctx: judge_predict_step(student, task, ctx.device, weights=False),
        "attention weights per step match the reference": weights_in_contexts,
        "gradients match the reference":
        lambda student, ctx: decoder_gradients_in_train_mode(student, task, ctx.device)})

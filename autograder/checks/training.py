"""The training check: with the course encoder, the student's decoder must learn the
synthetic corpus to a fixed held-out token accuracy within a fixed step budget and seed.

Training runs beside the student's code (it calls it thousands of times); the held-out
sentences and the accuracy are computed here, from the logits the model returns.
"""
import torch

from reference.data import synthetic_data

from ..results import text
from .core import Context, fail

SIZES = {"embed_size": 16, "num_hiddens": 32, "num_layers": 1}
STEPS, BATCH_SIZE, LR, SEED = 200, 32, 0.02, 0
REQUIRED_ACCURACY = 0.9


def learns_synthetic_corpus(student, ctx: Context, class_name: str, lstm: bool) -> None:
    train, test = synthetic_data(num_train=1000, num_test=100, num_steps=10, seed=SEED)
    V = len(train.tgt_vocab)
    student.seed(SEED)  # the decoder's initial weights, too, are the same on every run
    decoder = student.new(class_name, V, SIZES["embed_size"], SIZES["num_hiddens"], SIZES["num_layers"])
    data = {"src": train.src, "tgt_in": train.tgt_in, "src_valid_len": train.src_valid_len,
            "label": train.label, "pad": train.tgt_vocab["<pad>"], "batch_size": BATCH_SIZE}
    data = {k: v.to(ctx.device) if isinstance(v, torch.Tensor) else v for k, v in data.items()}
    model = student.request("train_seq2seq", decoder=decoder.handle,
                            encoder="LSTMEncoder" if lstm else "Seq2SeqEncoder",
                            sizes=[len(train.src_vocab), *SIZES.values()], data=data,
                            steps=STEPS, lr=LR, seed=SEED)
    logits = student.request("call", target=model, method=None, args=[
        test.src.to(ctx.device), test.tgt_in.to(ctx.device), test.src_valid_len.to(ctx.device)], kwargs={})
    if not isinstance(logits, torch.Tensor) or tuple(logits.shape) != (*test.label.shape, V):
        raise fail(text("training.wrong_shape"), expected=str((*test.label.shape, V)),
                   got=str(getattr(logits, "shape", type(logits).__name__)))
    keep = test.label != test.tgt_vocab["<pad>"]
    accuracy = (logits.cpu().argmax(-1) == test.label)[keep].float().mean().item()
    if not accuracy >= REQUIRED_ACCURACY:
        raise fail(text("training.accuracy", steps=STEPS, accuracy=f"{accuracy:.1%}",
                        required=f"{REQUIRED_ACCURACY:.0%}"),
                   case_code=(f"# embed_size={SIZES['embed_size']}, num_hiddens={SIZES['num_hiddens']}, "
                              f"num_layers=1, Adam lr={LR}, batch {BATCH_SIZE}, {STEPS} steps, seed {SEED}"),
                   expected=f">= {REQUIRED_ACCURACY:.0%}", got=f"{accuracy:.1%}")

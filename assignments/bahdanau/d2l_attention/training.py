# Generated from reference/training.py by `autograder release`; do not edit.
"""Training and evaluating a Seq2Seq model: Adam, gradient clipping, a progress bar."""
import torch
from torch import Tensor, nn
from tqdm.auto import tqdm

from .data import TranslationData
from .seq2seq import Seq2Seq


def try_gpu() -> torch.device:
    """The first CUDA device if there is one, else the CPU."""
    return torch.device("cuda:0" if torch.cuda.is_available() else "cpu")


def train_seq2seq(model: Seq2Seq, data: TranslationData, num_steps: int = 600,
                  batch_size: int = 64, lr: float = 0.005, grad_clip: float = 1.0,
                  device: torch.device | str | None = None, seed: int = 0,
                  progress: bool = True) -> list[float]:
    """Train ``model`` for ``num_steps`` optimiser steps; return the loss at every step.

    ``device=None`` picks a GPU when there is one. The batches are shuffled with
    ``seed``; set ``torch.manual_seed`` before building the model for a fixed result.
    """
    device = torch.device(device) if device is not None else try_gpu()
    model.to(device).train()
    batches = data.batches(batch_size, torch.Generator().manual_seed(seed))
    src, tgt_in, src_valid_len, _ = next(batches)
    model(src.to(device), tgt_in.to(device), src_valid_len.to(device))  # materialise lazy layers
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    losses = []
    for _ in tqdm(range(num_steps), desc="training", disable=not progress, leave=False):
        src, tgt_in, src_valid_len, label = (a.to(device) for a in next(batches))
        loss = model.loss(model(src, tgt_in, src_valid_len), label)
        optimizer.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), grad_clip)
        optimizer.step()
        losses.append(loss.item())
    return losses


@torch.no_grad()
def token_accuracy(model: Seq2Seq, data: TranslationData, device=None) -> float:
    """Teacher-forced accuracy of the next-token prediction over non-padding labels."""
    device = torch.device(device) if device is not None else next(model.parameters()).device
    model.to(device).eval()
    src, tgt_in, src_valid_len, label = (a.to(device) for a in data.arrays())
    predicted = model(src, tgt_in, src_valid_len).argmax(-1)  # (N, S)
    keep = label != data.tgt_vocab["<pad>"]                   # (N, S)
    return (predicted == label)[keep].float().mean().item()


def translate(model: Seq2Seq, data: TranslationData, sources: list[str], device=None,
              save_attention_weights: bool = False) -> tuple[list[str], list]:
    """Greedy translations of ``sources`` (up to ``<eos>``) and, if asked, attention weights."""
    device = torch.device(device) if device is not None else next(model.parameters()).device
    model.eval()
    batch = data.build(sources, [""] * len(sources))
    predicted, weights = model.predict_step(batch, device, data.num_steps, save_attention_weights)
    translations = []
    for row in predicted:
        tokens = data.tgt_vocab.to_tokens(row)
        translations.append(" ".join(tokens[:tokens.index("<eos>")] if "<eos>" in tokens else tokens))
    return translations, weights


def stack_step_weights(step_weights: list, example: int = 0) -> Tensor:
    """``predict_step``'s weights (per step, a list of (B, 1, T)) -> (S, T) for one example."""
    rows = [weights[example] for step in step_weights for weights in step]  # S x (1, T)
    return torch.cat(rows, 0)  # (S, T)

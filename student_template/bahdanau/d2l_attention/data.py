# Generated from reference/data.py by `autograder release`; do not edit.
"""Translation data that works offline: the book's fra-eng format, and a synthetic corpus.

A ``TranslationData`` holds four aligned tensors, as the book's ``MTFraEng`` batches:
source tokens (N, T), decoder input ``<bos> + target`` (N, T), source valid lengths (N,)
and labels ``target + <eos>`` (N, T), truncated or padded to ``num_steps``.
"""
import collections
import itertools
import random
import re
from dataclasses import dataclass
from pathlib import Path

import torch
from torch import Tensor

RESERVED_TOKENS = ("<pad>", "<bos>", "<eos>")


class Vocab:
    """Token <-> index, as D2L's ``Vocab``: tokens seen fewer than ``min_freq`` times map to ``<unk>``."""

    def __init__(self, tokens=(), min_freq: int = 0, reserved_tokens=RESERVED_TOKENS):
        flat = list(itertools.chain.from_iterable(tokens)) if tokens and isinstance(tokens[0], list) else list(tokens)
        self.token_freqs = sorted(collections.Counter(flat).items(), key=lambda x: x[1], reverse=True)
        frequent = [token for token, freq in self.token_freqs if freq >= min_freq]
        self.idx_to_token = sorted(set(["<unk>", *reserved_tokens, *frequent]))
        self.token_to_idx = {token: idx for idx, token in enumerate(self.idx_to_token)}

    def __len__(self) -> int:
        return len(self.idx_to_token)

    def __getitem__(self, tokens):
        if not isinstance(tokens, (list, tuple)):
            return self.token_to_idx.get(tokens, self.unk)
        return [self[token] for token in tokens]

    def to_tokens(self, indices):
        if hasattr(indices, "tolist"):
            indices = indices.tolist()
        if isinstance(indices, int):
            return self.idx_to_token[indices]
        return [self.idx_to_token[int(index)] for index in indices]

    @property
    def unk(self) -> int:
        return self.token_to_idx["<unk>"]


def preprocess(text: str) -> str:
    """Lower-case, normalise spaces and put a space before , . ! ? (the book's rule)."""
    text = text.replace("\u202f", " ").replace("\xa0", " ").lower()
    return re.sub(r"(?<=\S)([,.!?])", r" \1", text)


def tokenize(pairs: list[tuple[str, str]]) -> tuple[list[list[str]], list[list[str]]]:
    """Split each (source, target) pair on spaces and end both with ``<eos>``."""
    src = [[*eng.split(), "<eos>"] for eng, _ in pairs]
    tgt = [[*fra.split(), "<eos>"] for _, fra in pairs]
    return src, tgt


def read_fra_eng(path: str | Path, num_examples: int | None = None) -> list[tuple[str, str]]:
    """Read the book's tab-separated ``fra.txt`` (english <TAB> french [<TAB> attribution])."""
    pairs = []
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        fields = line.split("\t")
        if len(fields) < 2:
            continue
        pairs.append((preprocess(fields[0]), preprocess(fields[1])))
        if num_examples is not None and len(pairs) == num_examples:
            break
    return pairs


def _pad_or_truncate(seq: list[str], num_steps: int) -> list[str]:
    return seq[:num_steps] + ["<pad>"] * (num_steps - len(seq))


@dataclass
class TranslationData:
    """Aligned tensors and vocabularies for a translation task."""

    src: Tensor             # (N, T) source token ids
    tgt_in: Tensor          # (N, T) <bos> + target, the decoder's input
    src_valid_len: Tensor   # (N,) source tokens before padding
    label: Tensor           # (N, T) target + <eos>
    src_vocab: Vocab
    tgt_vocab: Vocab
    num_steps: int

    @classmethod
    def from_pairs(cls, pairs, num_steps: int, min_freq: int = 2,
                   src_vocab: Vocab | None = None, tgt_vocab: Vocab | None = None):
        """Tokenise, build vocabularies (unless given) and pad/truncate to ``num_steps``."""
        src_tokens, tgt_tokens = tokenize(pairs)
        src_vocab = src_vocab or Vocab(src_tokens, min_freq)
        tgt_vocab = tgt_vocab or Vocab(tgt_tokens, min_freq)
        src = [_pad_or_truncate(s, num_steps) for s in src_tokens]
        tgt = [_pad_or_truncate(["<bos>", *t], num_steps + 1) for t in tgt_tokens]
        src_ids = torch.tensor([src_vocab[s] for s in src])
        tgt_ids = torch.tensor([tgt_vocab[t] for t in tgt])  # (N, T + 1)
        return cls(src=src_ids, tgt_in=tgt_ids[:, :-1], label=tgt_ids[:, 1:],
                   src_valid_len=(src_ids != src_vocab["<pad>"]).sum(1),
                   src_vocab=src_vocab, tgt_vocab=tgt_vocab, num_steps=num_steps)

    def build(self, sources: list[str], targets: list[str]):
        """Tensors for new sentences with this data's vocabularies (the book's ``data.build``)."""
        built = TranslationData.from_pairs(list(zip(sources, targets)), self.num_steps,
                                           src_vocab=self.src_vocab, tgt_vocab=self.tgt_vocab)
        return built.arrays()

    def arrays(self) -> tuple[Tensor, Tensor, Tensor, Tensor]:
        return self.src, self.tgt_in, self.src_valid_len, self.label

    def __len__(self) -> int:
        return len(self.src)

    def batches(self, batch_size: int, generator: torch.Generator | None = None):
        """Shuffled mini-batches ``(src, tgt_in, src_valid_len, label)``, forever."""
        while True:
            order = torch.randperm(len(self), generator=generator)
            for start in range(0, len(self) - batch_size + 1, batch_size):
                rows = order[start:start + batch_size]
                yield tuple(a[rows] for a in self.arrays())


def load_fra_eng(path: str | Path, num_steps: int = 9, num_examples: int | None = None,
                 min_freq: int = 2) -> TranslationData:
    """The book's ``MTFraEng`` from a local ``fra.txt`` path (nothing is downloaded)."""
    return TranslationData.from_pairs(read_fra_eng(path, num_examples), num_steps, min_freq)


# --- A synthetic English -> French-like corpus ----------------------------------------
# Adjectives follow the noun in the target, and determiners and adjectives agree with
# the noun's gender, which the source shows only *after* them: a decoder must look
# ahead in the source (attend) to get both the order and the agreement right.
NOUNS = {"cat": ("chat", "m"), "dog": ("chien", "m"), "book": ("livre", "m"),
         "car": ("voiture", "f"), "house": ("maison", "f"), "table": ("table", "f"),
         "bird": ("oiseau", "m"), "apple": ("pomme", "f"), "tree": ("arbre", "m"),
         "flower": ("fleur", "f")}
ADJECTIVES = {"big": ("grand", "grande"), "small": ("petit", "petite"),
              "green": ("vert", "verte"), "black": ("noir", "noire"),
              "red": ("rouge", "rouge"), "old": ("vieux", "vieille")}
DETERMINERS = {"the": ("le", "la"), "a": ("un", "une")}
VERBS = {"sees": "voit", "likes": "aime", "has": "a", "wants": "veut"}


def _noun_phrase(rng: random.Random) -> tuple[list[str], list[str]]:
    det, noun = rng.choice(sorted(DETERMINERS)), rng.choice(sorted(NOUNS))
    french_noun, gender = NOUNS[noun]
    pick = 0 if gender == "m" else 1
    eng, fra = [det], [DETERMINERS[det][pick]]
    adjective = rng.choice(sorted(ADJECTIVES)) if rng.random() < 0.6 else None
    if adjective:
        eng.append(adjective)
    eng.append(noun)
    fra.append(french_noun)
    if adjective:
        fra.append(ADJECTIVES[adjective][pick])
    return eng, fra


def synthetic_pairs(num_pairs: int, seed: int = 0) -> list[tuple[str, str]]:
    """``num_pairs`` distinct sentence pairs "det [adj] noun verb det [adj] noun ."."""
    rng = random.Random(seed)
    pairs: dict[str, str] = {}
    while len(pairs) < num_pairs:
        subj_eng, subj_fra = _noun_phrase(rng)
        verb = rng.choice(sorted(VERBS))
        obj_eng, obj_fra = _noun_phrase(rng)
        eng = " ".join([*subj_eng, verb, *obj_eng, "."])
        pairs[eng] = " ".join([*subj_fra, VERBS[verb], *obj_fra, "."])
    return list(pairs.items())


def synthetic_data(num_train: int = 2000, num_test: int = 200, num_steps: int = 10,
                   seed: int = 0) -> tuple[TranslationData, TranslationData]:
    """Train and held-out splits (disjoint sentences) sharing the training vocabularies."""
    pairs = synthetic_pairs(num_train + num_test, seed)
    train = TranslationData.from_pairs(pairs[:num_train], num_steps, min_freq=1)
    test = TranslationData.from_pairs(pairs[num_train:], num_steps,
                                      src_vocab=train.src_vocab, tgt_vocab=train.tgt_vocab)
    return train, test

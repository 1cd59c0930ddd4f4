"""Inputs for the checks: hypothesis strategies that draw small cases, and their code.

A ``Case`` holds named tensors (and plain arguments) and can write itself as runnable
Python, so the smallest failing input reaches the student as code they can paste.
Values are multiples of 0.01, so the printed literals reproduce them exactly.
"""
from dataclasses import dataclass, field

import torch
from hypothesis import strategies as st

DTYPE_NAMES = {torch.float32: "torch.float32", torch.float64: "torch.float64",
               torch.int64: "torch.long", torch.int32: "torch.int32"}
FLOATS = [torch.float32, torch.float64]
LENGTH_DTYPES = [torch.int64, torch.int32]  # SPEC §2: any integer dtype of the two
LITERAL_LIMIT = 24  # tensors with more elements are written as their generator call
WIDE = 300  # keys or source steps "in the hundreds" (SPEC §2): above any table sized at 256


@dataclass
class Case:
    """Named inputs of one call; ``recipes`` says how to rebuild the large tensors."""
    tensors: dict[str, torch.Tensor | None]
    options: dict[str, object] = field(default_factory=dict)
    recipes: dict[str, str] = field(default_factory=dict)

    def code(self) -> str:
        lines = [f"{name} = {_tensor_code(t, self.recipes.get(name))}"
                 for name, t in self.tensors.items()]
        lines += [f"{name} = {value!r}" for name, value in self.options.items() if name != "seed"]
        if "seed" in self.options:  # the grader's draw of the weights, no argument of the student's
            lines.append(f"# weights: the reference's, copied into yours (seed {self.options['seed']})")
        return "\n".join(lines)

    def copy(self) -> "Case":
        """A copy a test may write into (its tensors cloned; options are plain values)."""
        cloned = {n: None if t is None else t.clone() for n, t in self.tensors.items()}
        return Case(cloned, dict(self.options), dict(self.recipes))

    def on(self, device: str) -> "Case":
        moved = {n: None if t is None else t.to(device) for n, t in self.tensors.items()}
        return Case(moved, dict(self.options), dict(self.recipes))


# Kinds of input that one check of a task charges a crash on (SPEC §3: code that raises
# loses the points of what it broke and nothing else); the task's other checks judge such
# an example in the plain form every check draws (``plain_form``).
TWO_D, INT32, BATCH_ONE = "two_d_lengths", "int32_lengths", "batch_of_one"
LENGTHS = ("valid_lens", "enc_valid_lens")


def _lengths_name(case: Case) -> str | None:
    return next((n for n in LENGTHS if isinstance(case.tensors.get(n), torch.Tensor)), None)


def kinds_of(case: Case) -> list[str]:
    """The kinds of input ``case`` holds: (B, Q) lengths, int32 lengths, a batch of one (every
    tensor of a case is batch first)."""
    kinds = []
    if (name := _lengths_name(case)) is not None:
        lens = case.tensors[name]
        kinds += [kind for kind, held in ((TWO_D, lens.dim() == 2), (INT32, lens.dtype == torch.int32)) if held]
    first = next((t for t in case.tensors.values() if isinstance(t, torch.Tensor)), None)
    if first is not None and first.dim() > 0 and first.shape[0] == 1:
        kinds.append(BATCH_ONE)
    return kinds


def plain_form(case: Case, kinds: list[str]) -> Case:
    """A copy of ``case`` without these kinds of input: (B, Q) lengths as each sentence's first
    row (B,), int32 as int64, a batch of one as that sentence twice (a batch of two)."""
    plain = case.copy()
    if (name := _lengths_name(plain)) is not None:
        lens = plain.tensors[name]
        if TWO_D in kinds and lens.dim() == 2:
            lens = lens[:, 0].contiguous()  # (B, Q) -> (B,)
        if INT32 in kinds:
            lens = lens.long()
        plain.tensors[name] = lens
    if BATCH_ONE in kinds:
        # (1, ...) -> (2, ...): the one sentence twice
        plain.tensors = {n: None if t is None else torch.cat([t, t]) for n, t in plain.tensors.items()}
        plain.recipes = {}
    return plain


def _tensor_code(t: torch.Tensor | None, recipe: str | None) -> str:
    if t is None:
        return "None"
    if t.numel() > LITERAL_LIMIT and recipe:
        return recipe
    if t.dtype.is_floating_point:
        values = (t.double().cpu() * 100).round().long().tolist()
        text = _nested(values, lambda v: repr(v / 100))
    else:
        text = _nested(t.cpu().tolist(), str)
    dtype = "" if t.dtype in (torch.float32, torch.int64) else f", dtype={DTYPE_NAMES.get(t.dtype, t.dtype)}"
    return f"torch.tensor({text}{dtype})"


def _nested(values, fmt) -> str:
    if isinstance(values, list):
        return "[" + ", ".join(_nested(v, fmt) for v in values) + "]"
    return fmt(values)


def values(shape: tuple, scale: float, seed: int, dtype, offset: float = 0) -> tuple[torch.Tensor, str]:
    """Random multiples of 0.01 in [offset - scale, offset + scale], and the code that makes them."""
    bound = int(round(scale * 100))
    generator = torch.Generator().manual_seed(seed)
    t = torch.randint(-bound, bound + 1, shape, generator=generator).double() / 100 + offset
    dims = ", ".join(map(str, shape)) + ("," if len(shape) == 1 else "")
    shift = f" {'-' if offset < 0 else '+'} {abs(offset)}" if offset else ""
    recipe = (f"(torch.randint(-{bound}, {bound + 1}, ({dims}), "
              f"generator=torch.Generator().manual_seed({seed})) / 100{shift})")
    if dtype != torch.float64:
        recipe += f".to({DTYPE_NAMES[dtype]})"
    return t.to(dtype), recipe


@st.composite
def valid_lens(draw, batch: int, queries: int, keys: int, two_d: bool | None,
               min_len: int = 1, max_len: int | None = None):
    """``(B,)`` or ``(B, Q)`` lengths in [min_len, max_len], int64 or int32."""
    hi = keys if max_len is None else max_len
    lengths = st.integers(min_len, hi)
    if two_d is None:
        two_d = draw(st.booleans())
    shape = (batch, queries) if two_d else (batch,)
    flat = draw(st.lists(lengths, min_size=batch * (queries if two_d else 1),
                         max_size=batch * (queries if two_d else 1)))
    return torch.tensor(flat, dtype=draw(st.sampled_from(LENGTH_DTYPES))).reshape(shape)


@st.composite
def score_cases(draw, two_d: bool | None = None, min_len: int = 1, above_k: bool = False,
                with_lens: bool = True, dtype=None):
    """``masked_softmax`` inputs: scores X (B, Q, K) within ±1000 and valid_lens
    (all in [K + 1, K + 3] when ``above_k``)."""
    B, Q, K = draw(st.integers(1, 3)), draw(st.integers(1, 4)), draw(st.integers(1, 6))
    dtype = dtype or draw(st.sampled_from([torch.float32, torch.float64]))
    scale = draw(st.sampled_from([1.0, 10.0, 1000.0]))
    X, recipe = values((B, Q, K), scale, draw(st.integers(0, 2**16)), dtype)
    lo, hi = (K + 1, K + 3) if above_k else (min_len, K)
    lens = draw(valid_lens(B, Q, K, two_d, lo, hi)) if with_lens else None
    return Case({"X": X, "valid_lens": lens}, recipes={"X": recipe})


@st.composite
def attention_cases(draw, two_d: bool | None = None, same_sizes: bool = True,
                    with_lens: bool | None = None, min_len: int = 1, hidden: bool = False,
                    dtype=None, min_keys: int = 1):
    """Attention inputs: queries (B, Q, D), keys (B, K, Dk), values (B, K, v), valid_lens.

    Queries and keys are sometimes large or far apart, so that scores of a few hundred occur
    (SPEC §2: anywhere within ±1000), in float32 or float64."""
    B, Q, K = draw(st.integers(1, 3)), draw(st.integers(1, 4)), draw(st.integers(min_keys, 5))
    D = draw(st.integers(1, 4))
    Dk = D if same_sizes else draw(st.integers(1, 4).filter(lambda n: n != D))
    V = draw(st.integers(1, 3))
    seed = draw(st.integers(0, 2**16))
    dtype = dtype or draw(st.sampled_from(FLOATS))
    spread, offset = draw(st.sampled_from([(2.0, 0), (8.0, 0), (8.0, 8)]))
    queries, q_recipe = values((B, Q, D), spread, seed, dtype, offset)
    keys, k_recipe = values((B, K, Dk), spread, seed + 1, dtype)
    vals, v_recipe = values((B, K, V), 2.0, seed + 2, dtype)
    use_lens = draw(st.booleans()) if with_lens is None else with_lens
    lens = draw(valid_lens(B, Q, K, two_d, min_len)) if use_lens else None
    return Case({"queries": queries, "keys": keys, "values": vals, "valid_lens": lens},
                options={"num_hiddens": draw(st.integers(1, 5))} if hidden else {},
                recipes={"queries": q_recipe, "keys": k_recipe, "values": v_recipe})


@st.composite
def decoder_cases(draw, max_steps: int = 4, with_lens: bool | None = None, dtype=None):
    """A decoder's sizes and tokens: source (B, T), target (B, S), enc_valid_lens (B,) or None
    (SPEC §2: nothing masked), and the dtype the encoder's outputs and the decoder are in."""
    sizes = {"vocab_size": draw(st.integers(3, 9)), "embed_size": draw(st.integers(2, 6)),
             "num_hiddens": draw(st.integers(2, 6)), "num_layers": draw(st.integers(1, 2))}
    B, T, S = draw(st.integers(1, 3)), draw(st.integers(1, 5)), draw(st.integers(1, max_steps))
    seed = draw(st.integers(0, 2**16))
    generator = torch.Generator().manual_seed(seed)
    V = sizes["vocab_size"]
    src = torch.randint(0, V, (B, T), generator=generator)
    tgt = torch.randint(0, V, (B, S), generator=generator)
    use_lens = draw(st.integers(0, 3)) > 0 if with_lens is None else with_lens
    lens = (torch.tensor(draw(st.lists(st.integers(1, T), min_size=B, max_size=B)),
                         dtype=draw(st.sampled_from(LENGTH_DTYPES))) if use_lens else None)
    dtype = dtype or draw(st.sampled_from(FLOATS))
    return Case({"src": src, "tgt": tgt, "enc_valid_lens": lens},
                options={**sizes, "seed": seed, "dtype": dtype})


def randomize(module: torch.nn.Module, seed: int) -> None:
    """Draw every parameter from N(0, 1) with a private generator (same on every run and
    thread). Larger than at init, so attention is sharp and a wrong query or mask shows."""
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for param in module.parameters():
            param.copy_(torch.randn(param.shape, generator=generator, dtype=param.dtype))

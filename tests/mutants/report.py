"""The mutation report: per task, how many right variants got full points, and how many
bugs were caught and named. Counts come from the data; results from this run's tests."""
from .harness import OUTCOMES, TASK_IDS, Mutant
from .variants_attention import MUTANTS as ATTENTION
from .variants_book_contexts import MUTANTS as BOOK_CONTEXTS
from .variants_decoders import MUTANTS as DECODERS
from .variants_older_book import MUTANTS as OLDER_BOOK
from .variants_softmax import MUTANTS as SOFTMAX
from .variants_spec import HOSTILE, MUTANTS as SPEC
from .variants_state import MUTANTS as STATE

ALL_MUTANTS: list[Mutant] = SOFTMAX + ATTENTION + DECODERS + SPEC + OLDER_BOOK + BOOK_CONTEXTS + STATE + HOSTILE
HEADER = ("task", "correct", "full pts", "bugs", "caught", "grader raised", "catalogued", "named",
          "known misses")


def _row(task_id: str) -> tuple:
    mine = [m for m in ALL_MUTANTS if m.task_id == task_id]
    right, bugs = [m for m in mine if m.correct], [m for m in mine if not m.correct]
    catalogued = [m for m in bugs if m.mistake]

    def seen(ms, key):  # "n/ran" over the mutants this run graded, "-" when none ran
        ran = [OUTCOMES[m.id][key] for m in ms if m.id in OUTCOMES]
        return f"{sum(bool(x) for x in ran)}/{len(ran)}" if ran else "-"
    raised = sum(OUTCOMES[m.id]["caught"] is None for m in bugs if m.id in OUTCOMES)
    return (task_id, len(right), seen(right, "full"), len(bugs), seen(bugs, "caught"), raised,
            len(catalogued), seen(catalogued, "named"), sum(m.grader_misses is not None for m in mine))


def table() -> str:
    rows = [HEADER, *(_row(t) for t in TASK_IDS)]
    widths = [max(len(str(r[i])) for r in rows) for i in range(len(HEADER))]
    lines = ["  ".join(str(v).ljust(w) for v, w in zip(r, widths, strict=True)) for r in rows]
    misses = [f"  {m.id}: {m.grader_misses}" for m in ALL_MUTANTS if m.grader_misses]
    return "\n".join([*lines, "", "known misses (strict xfail):", *misses])

"""Similar solutions (SPEC §6): per task, the pairs of students whose solution cells are
unusually alike once the released template's code and the book's published code are
discounted. A flag for the TA to look at, never a score.

The fingerprints are copydetect's (0.5.0): each cell is tokenised with Pygments and
every name becomes ``V`` (a function ``F``, a class ``O``), comments and whitespace are
dropped, then k-grams of the tokens are hashed and winnowed (Schleimer, Wilkerson and Aiken's
robust winnowing). Every k-gram of the discounted code (every code cell of the released
notebook, ``reference/book.py`` and ``reference/book_decoder.py``) is boilerplate and leaves
the fingerprints, so two students who both wrote the book's code share nothing that counts,
and a cell with fewer than ``MIN_COVERAGE`` characters of its own code is not compared.
Renamed variables do not change the tokens; reordered lines keep their k-grams.

A pair's similarity is copydetect's: the share of a cell's (non-boilerplate) tokens that
the other cell has too, the larger of the two shares, so a copy padded with code of its own
still scores what was copied. Everything runs locally, from the cells the store kept
(``autograder.outputs.solutions``), with the k-grams hashed the same way in every process
(``_copydetect``), so a class gets the same similarities on every run.
"""
import functools
import hashlib
import io
import itertools
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import nbformat
import numpy as np

from ..outputs import solutions
from ..course import Course

K = 15                 # characters of filtered code per k-gram
WINDOW = 4             # winnowing window: a shared run of K + WINDOW - 1 characters is always seen
MIN_COVERAGE = 2 * K   # a cell with less code of its own than this says nothing about copying
FLAG = 0.75            # from this similarity up a pair is shown (measured: docs, The class report, "Similar solutions")
CANDIDATE = 0.5        # share of shared hashes below which a pair cannot reach FLAG; not compared
BOOK_FILES = ("book.py", "book_decoder.py")


@dataclass(frozen=True)
class Pair:
    """Two students' cells of one task, alike: ``marks_*`` are the (start, end) character
    spans of each cell's code that the other cell has too."""
    task: str
    student_a: str
    student_b: str
    similarity: float
    code_a: str
    code_b: str
    marks_a: tuple[tuple[int, int], ...]
    marks_b: tuple[tuple[int, int], ...]


def discounted_code(course: Course, assignment: str) -> str:
    """The code that proves nothing: every code cell of the released notebooks of
    ``assignment`` and the book's published code."""
    parts = [(course.reference_dir / name).read_text(encoding="utf-8") for name in BOOK_FILES]
    for notebook in sorted((course.release_dir / assignment).glob("*.ipynb")):
        released = nbformat.read(notebook, as_version=4)
        parts += [cell.source for cell in released.cells if cell.cell_type == "code"]
    return "\n".join(parts)


def similar_pairs(cells: dict[str, dict[str, str]], discounted: str) -> list[Pair]:
    """Every pair at or above FLAG, task by task (in the order the cells name them), most
    alike first; ``cells`` is student id -> task id -> the solution cell's source."""
    tasks = list(dict.fromkeys(task for by_task in cells.values() for task in by_task))
    pairs = []
    for task in tasks:
        found = _task_pairs(task, {student: by_task[task] for student, by_task in cells.items() if task in by_task},
                            discounted)
        pairs += sorted(found, key=lambda p: (-p.similarity, p.student_a, p.student_b))
    return pairs


def _task_pairs(task: str, sources: dict[str, str], discounted: str) -> list[Pair]:
    """One task's pairs. Cells are compared once per distinct source (a class often hands in
    the same cell many times: the book's, a shared copy), then paired student by student. One
    student alone has no pair: nothing is fingerprinted (a class of one, graded cold, would
    otherwise wait for the discounted code's fingerprint)."""
    if len(sources) < 2:
        return []
    holders: dict[str, list[str]] = defaultdict(list)
    for student, source in sorted(sources.items()):
        holders[source].append(student)
    prints = {source: printed for source in holders if (printed := _fingerprint(source, discounted)) is not None}
    compared = [(a, b) for a, b in _candidates(prints)] + [(s, s) for s in prints if len(holders[s]) > 1]
    pairs = []
    for a, b in compared:
        alike = _compared(prints[a], prints[b])
        if alike is None:
            continue
        students = itertools.combinations(holders[a], 2) if a == b else itertools.product(holders[a], holders[b])
        pairs += [_pair(task, first, second, alike, a, b) for first, second in students]
    return pairs


def _pair(task: str, first: str, second: str, alike: tuple, source_a: str, source_b: str) -> Pair:
    """The pair with its students in order (student_a < student_b), each with their code."""
    similarity, marks_a, marks_b = alike
    if second < first:
        first, second, source_a, source_b, marks_a, marks_b = second, first, source_b, source_a, marks_b, marks_a
    return Pair(task, first, second, similarity, source_a, source_b, marks_a, marks_b)


def _stable_kgrams(code: str, k: int) -> np.ndarray:
    """Every k-gram's hash, the same in every process: the first 8 bytes of its BLAKE2b."""
    return np.array([int.from_bytes(hashlib.blake2b(code[i:i + k].encode("utf-8", "surrogatepass"),
                                                    digest_size=8).digest(), "little", signed=True)
                     for i in range(len(code) - k + 1)], dtype=np.int64)


@functools.cache
def _copydetect():
    """copydetect, with one change: it hashes k-grams with Python's ``hash``, which is salted
    per process (PYTHONHASHSEED), so one class would score a little differently on every run
    and a pair near FLAG would come and go; its winnowing gets ``_stable_kgrams`` instead.
    Imported here, where a report is written, never in a process that only grades (copydetect
    imports matplotlib's pyplot for its own report)."""
    import copydetect
    import copydetect.utils
    copydetect.utils.hashed_kgrams = _stable_kgrams
    return copydetect


@functools.lru_cache(maxsize=4)
def _boilerplate(discounted: str) -> np.ndarray:
    every_kgram = _copydetect().CodeFingerprint("discounted.py", K, 1, fp=io.StringIO(discounted), language="python")
    return np.array(sorted(every_kgram.hashes), dtype=np.int64)


# The same cell reaches many reports (one per run, the service's after each result): its
# fingerprint is computed once per process.
@functools.lru_cache(maxsize=20_000)
def _fingerprint(source: str, discounted: str):
    """copydetect's fingerprint of ``source`` without the discounted code, or None when too
    little of the cell is its own."""
    printed = _copydetect().CodeFingerprint("cell.py", K, WINDOW, boilerplate=_boilerplate(discounted),
                              fp=io.StringIO(source), language="python")
    return printed if printed.token_coverage >= MIN_COVERAGE else None


def _candidates(prints: dict) -> list[tuple[str, str]]:
    """Pairs of distinct cells whose hashes overlap enough to be compared (an inverted index,
    so a class of hundreds is not compared pair by pair)."""
    holders: dict[int, list[str]] = defaultdict(list)
    for source, printed in prints.items():
        for value in printed.hashes:
            holders[value].append(source)
    shared: dict[tuple[str, str], int] = defaultdict(int)
    for sources in holders.values():
        for pair in itertools.combinations(sources, 2):
            shared[pair] += 1
    return [(a, b) for (a, b), count in shared.items()
            if count >= CANDIDATE * min(len(prints[a].hashes), len(prints[b].hashes))]


def _compared(printed_a, printed_b) -> tuple[float, tuple, tuple] | None:
    """(similarity, spans of a, spans of b) when at or above FLAG, else None."""
    _, (share_a, share_b), (slices_a, slices_b) = _copydetect().compare_files(printed_a, printed_b)
    similarity = float(min(1.0, max(share_a, share_b)))
    if similarity < FLAG:
        return None
    return round(similarity, 3), _spans(slices_a), _spans(slices_b)


def _spans(slices) -> tuple[tuple[int, int], ...]:
    if len(slices) == 0 or len(slices[0]) == 0:
        return ()
    return tuple((int(start), int(end)) for start, end in zip(slices[0], slices[1]))


def kept_cells(folder: Path, student_ids: list[str]) -> dict[str, dict[str, str]]:
    """The solution cells the store kept in ``folder`` for each student who has them."""
    return {student: kept for student in student_ids if (kept := solutions.load(folder, student)) is not None}

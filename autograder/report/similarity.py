"""Similar solutions (SPEC §6): per task, the pairs of students whose solution cells are
unusually alike once the released template's code and the book's published code are
discounted. A flag for the TA to look at, never a score.

Each cell is normalised as copydetect (0.5.0) does: tokenised with Pygments, every name becomes
``V`` (a function ``F``, a class ``O``), every string literal one symbol, comments and whitespace
dropped. The normalised code is cut there, after normalisation, at ``MAX_COMPARED`` characters
(so a long literal, a docstring or pages of comments in front of a copy cannot push it out of
what is compared); then its k-grams are hashed and winnowed (Schleimer, Wilkerson and Aiken's
robust winnowing). Every k-gram of the discounted code (every code cell of the released notebook,
``reference/book.py`` and ``reference/book_decoder.py``) is boilerplate and leaves the
fingerprints, so two students who both wrote the book's code share nothing that counts.
Renamed variables do not change the tokens; reordered lines keep their k-grams.

What is left is the cell's own code (``own``, in normalised characters). A pair's similarity is
the share of a cell's own code that the other cell has too, counted over at least ``OWN_CHARS``
characters, the larger of the two cells' shares: a copy padded with code of its own still scores
what was copied, while two students who both wrote the book's code with the same small
modernisation (``d ** 0.5``, ``@``) share a few k-grams that weigh little. A cell with less than
``MIN_COVERAGE`` characters of its own is not compared. Everything runs locally, from the cells
the store kept (``autograder.outputs.solutions``), with the k-grams hashed the same way in every
process, so a class gets the same similarities on every run.

Cost (SPEC §3): normalising a cell takes time linear in its kept size, and what is kept of it
is a few arrays linear in ``MAX_COMPARED`` at most; fingerprints are cached per process in at
most ``CACHE_BYTES``.
"""
import collections
import functools
import hashlib
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
OWN_CHARS = 100        # a share of a cell's own code is counted over at least this many characters (the
                       # book's DotProductAttention is 147 normalised; a modernisation of it adds 30 to 64)
MAX_COMPARED = 64 * 1024   # normalised characters of a cell compared: the cut, after normalisation
CACHE_BYTES = 64 << 20     # fingerprints kept per process, at most
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
    """copydetect, for its normalisation (``utils.filter_code``), winnowing and copied slices.
    Its own k-gram hash is Python's ``hash``, salted per process (PYTHONHASHSEED), so one class
    would score a little differently on every run and a pair near FLAG would come and go: the
    k-grams are hashed by ``_stable_kgrams`` instead. Imported here, where a report is written,
    never in a process that only grades (copydetect imports matplotlib's pyplot for its own
    report)."""
    import copydetect.utils
    return copydetect


@functools.lru_cache(maxsize=4)
def _boilerplate(discounted: str) -> np.ndarray:
    """Every k-gram hash of the discounted code, sorted (the TA's code: a few kept)."""
    filtered, _ = _copydetect().utils.filter_code(discounted, "discounted.py", "python")
    return np.unique(_stable_kgrams(filtered, K))


@dataclass(frozen=True)
class Fingerprint:
    """A cell's winnowed k-grams that are not the discounted code's: ``hashes`` and ``places``
    (where each starts in the normalised code), the distinct hashes sorted, ``own`` (normalised
    characters those k-grams cover) and copydetect's ``offsets`` (normalised index, characters
    dropped before it) that map a place back to the cell."""
    hashes: np.ndarray
    places: np.ndarray
    distinct: np.ndarray
    own: int
    offsets: np.ndarray

    @property
    def nbytes(self) -> int:
        return self.hashes.nbytes + self.places.nbytes + self.distinct.nbytes + self.offsets.nbytes + 200


class _Cache:
    """Least recently used fingerprints, by the digest of the cell and of the discounted code,
    bounded in bytes (red team 13: 20,000 entries of up to 3 MB each grew for the life of the
    service)."""

    def __init__(self, limit: int):
        self.limit, self.size = limit, 0
        self.kept: collections.OrderedDict[bytes, Fingerprint | None] = collections.OrderedDict()

    def get(self, key: bytes):
        found = self.kept.get(key, self)
        if found is not self:
            self.kept.move_to_end(key)
        return found

    def put(self, key: bytes, printed: Fingerprint | None) -> None:
        size = printed.nbytes if printed is not None else 100
        if key in self.kept or size > self.limit:
            return
        self.kept[key], self.size = printed, self.size + size
        while self.size > self.limit:
            _, dropped = self.kept.popitem(last=False)
            self.size -= dropped.nbytes if dropped is not None else 100

    def clear(self) -> None:
        self.kept.clear()
        self.size = 0


_FINGERPRINTS = _Cache(CACHE_BYTES)


def _fingerprint(source: str, discounted: str) -> Fingerprint | None:
    """The fingerprint of ``source`` without the discounted code, or None when too little of the
    cell is its own; computed once per process while the cache holds it."""
    key = hashlib.blake2b(source.encode("utf-8", "surrogatepass") + b"\0" +
                          hashlib.blake2b(discounted.encode("utf-8", "surrogatepass")).digest()).digest()
    found = _FINGERPRINTS.get(key)
    if found is _FINGERPRINTS:
        found = _fingerprinted(source, _boilerplate(discounted))
        _FINGERPRINTS.put(key, found)
    return found


def _fingerprinted(source: str, boilerplate: np.ndarray) -> Fingerprint | None:
    utils = _copydetect().utils
    filtered, offsets = utils.filter_code(source, "cell.py", "python")
    filtered = filtered[:MAX_COMPARED]   # the cut, after normalisation
    offsets = np.asarray(offsets, dtype=np.int64).reshape(-1, 2)
    offsets = offsets[offsets[:, 0] <= len(filtered)]
    hashes, places = utils.winnow(_stable_kgrams(filtered, K), WINDOW, remove_duplicates=False)
    own_code = ~np.isin(hashes, boilerplate)
    hashes, places = hashes[own_code], np.asarray(places, dtype=np.int64)[own_code]
    own = _covered(places, len(filtered))
    if own < MIN_COVERAGE:
        return None
    return Fingerprint(hashes, places, np.unique(hashes), own, offsets)


def _covered(places: np.ndarray, length: int) -> int:
    """Characters of the normalised code inside some k-gram that starts at ``places``."""
    covered = np.zeros(length + K, dtype=bool)
    for offset in range(K):
        covered[places + offset] = True
    return int(covered[:length].sum())


def _candidates(prints: dict[str, Fingerprint]) -> list[tuple[str, str]]:
    """Pairs of distinct cells whose hashes overlap enough to be compared (an inverted index,
    so a class of hundreds is not compared pair by pair)."""
    holders: dict[int, list[str]] = defaultdict(list)
    for source, printed in prints.items():
        for value in printed.distinct.tolist():
            holders[value].append(source)
    shared: dict[tuple[str, str], int] = defaultdict(int)
    for sources in holders.values():
        for pair in itertools.combinations(sources, 2):
            shared[pair] += 1
    return [(a, b) for (a, b), count in shared.items()
            if count >= CANDIDATE * min(len(prints[a].distinct), len(prints[b].distinct))]


def _compared(printed_a: Fingerprint, printed_b: Fingerprint) -> tuple[float, tuple, tuple] | None:
    """(similarity, spans of a, spans of b) when at or above FLAG, else None. As copydetect's
    ``compare_files``, with each cell's share counted over at least ``OWN_CHARS``."""
    shared = np.intersect1d(printed_a.distinct, printed_b.distinct, assume_unique=True)
    if len(shared) == 0:
        return None
    slices = [_copydetect().utils.get_copied_slices(p.places[np.isin(p.hashes, shared)], K)
              for p in (printed_a, printed_b)]
    shares = [float(np.sum(s[1] - s[0])) / max(p.own, OWN_CHARS) for s, p in zip(slices, (printed_a, printed_b))]
    similarity = min(1.0, max(shares))
    if similarity < FLAG:
        return None
    return round(similarity, 3), _spans(slices[0], printed_a.offsets), _spans(slices[1], printed_b.offsets)


def _spans(slices: np.ndarray, offsets: np.ndarray) -> tuple[tuple[int, int], ...]:
    """The slices of normalised code as (start, end) in the cell (copydetect's mapping)."""
    if len(slices) == 0 or len(slices[0]) == 0:
        return ()
    if len(offsets):
        slices = slices + offsets[:, 1][np.clip(np.searchsorted(offsets[:, 0], slices), 0, len(offsets) - 1)]
    return tuple((int(start), int(end)) for start, end in zip(slices[0], slices[1]))


def kept_cells(folder: Path, student_ids: list[str]) -> dict[str, dict[str, str]]:
    """The solution cells the store kept in ``folder`` for each student who has them."""
    return {student: kept for student in student_ids if (kept := solutions.load(folder, student)) is not None}

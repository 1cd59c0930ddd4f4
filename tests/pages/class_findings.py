"""A class with known similar pairs and shared unknown mistakes, graded for real.

Each student's cells are graded in-process by the mutation suite's harness (the checks of the
sandboxed path, so every finding is the one a real run records: the shrunk example and what the
code gave), and saved by the store, which keeps the solution cells beside each result:

- anna and boris: the same distance_attention, boris's with renamed variables, two lines
  swapped and a comment of his own: a pair;
- vera: her own distance_attention: no pair;
- gleb and dasha: the book's masked_softmax (dasha's with renamed variables): not a pair, since
  the book's code is discounted;
- egor and zhenya: one uncatalogued bug in masked_softmax (a mask created on the CPU; zhenya's
  copy renamed, so the line it fails at reads differently), ilya another one of his own in the
  same check (a weights buffer on the CPU), kirill a catalogued mistake (the book's code with the softmax
  over the queries), lena left everything as the template has it.
"""
import inspect
import re
from pathlib import Path

import nbformat

import reference.book
from autograder.course import COURSE
from autograder.results import SubmissionResult
from autograder.outputs.store import OutputFolder
from tests.mutants.harness import Mutant, grade
from tests.mutants.variants_softmax import MUTANTS as SOFTMAX

ASSIGNMENT = "attention_scoring"
TASKS = ("masked_softmax", "distance_attention")

ANNA = '''
class DistanceAttention(nn.Module):
    def __init__(self, dropout):
        super().__init__()
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, valid_lens=None):
        size = queries.shape[-1]
        query_norms = (queries ** 2).sum(dim=-1, keepdim=True)
        key_norms = (keys ** 2).sum(dim=-1).unsqueeze(1)
        cross = torch.bmm(queries, keys.transpose(1, 2))
        squared = query_norms - 2 * cross + key_norms
        scores = -squared / (2 * math.sqrt(size))
        self.attention_weights = masked_softmax(scores, valid_lens)
        return torch.bmm(self.dropout(self.attention_weights), values)
'''
BORIS = '''
class DistanceAttention(nn.Module):
    def __init__(self, dropout):
        super().__init__()
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, valid_lens=None):
        # distances between every query and every key, without forming the differences
        dim = queries.shape[-1]
        kk = (keys ** 2).sum(dim=-1).unsqueeze(1)
        qq = (queries ** 2).sum(dim=-1, keepdim=True)
        qk = torch.bmm(queries, keys.transpose(1, 2))
        dist2 = qq - 2 * qk + kk
        s = -dist2 / (2 * math.sqrt(dim))
        self.attention_weights = masked_softmax(s, valid_lens)
        return torch.bmm(self.dropout(self.attention_weights), values)
'''
VERA = '''
class DistanceAttention(nn.Module):
    def __init__(self, dropout):
        super().__init__()
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, valid_lens=None):
        diff = queries.unsqueeze(2) - keys.unsqueeze(1)          # (B, Q, K, d)
        self.attention_weights = masked_softmax(-diff.pow(2).sum(-1) / 2 / queries.shape[-1] ** 0.5,
                                                valid_lens)
        return self.dropout(self.attention_weights) @ values
'''
ILYA = '''
def masked_softmax(X, valid_lens):
    """Row by row into a fresh buffer."""
    result = torch.zeros(X.shape, dtype=X.dtype)
    if valid_lens is None:
        result[...] = torch.softmax(X, dim=-1)
        return result
    if valid_lens.dim() == 1:
        valid_lens = valid_lens.unsqueeze(1).expand(X.shape[0], X.shape[1])
    positions = torch.arange(X.shape[-1], device=X.device)
    for i in range(X.shape[0]):
        hidden = positions.unsqueeze(0) >= valid_lens[i].unsqueeze(1)
        result[i] = torch.softmax(X[i].masked_fill(hidden, -1e6), dim=-1)
    return result
'''
BOOK_SOFTMAX = inspect.getsource(reference.book.masked_softmax)


def _softmax_bug(name: str) -> str:
    return next(m.source for m in SOFTMAX if m.name == name)


def _renamed(source: str, names: dict[str, str]) -> str:
    for old, new in names.items():
        source = re.sub(rf"(?<!\.)\b{old}\b", new, source)   # names, not attributes
    return source


def template_cells() -> dict[str, str]:
    released = nbformat.read(COURSE.release_dir / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", as_version=4)
    return {cell.metadata["nbgrader"]["grade_id"]: cell.source for cell in released.cells
            if cell.metadata.get("nbgrader", {}).get("grade_id") in TASKS}


def students() -> dict[str, dict[str, str]]:
    """Each student's cells, task by task (what the store keeps)."""
    stub = template_cells()
    egor = _softmax_bug("arange_on_the_cpu")
    return {
        "anna": {"masked_softmax": BOOK_SOFTMAX, "distance_attention": ANNA},
        "boris": {"masked_softmax": BOOK_SOFTMAX, "distance_attention": BORIS},
        "vera": {"masked_softmax": BOOK_SOFTMAX, "distance_attention": VERA},
        "gleb": {"masked_softmax": BOOK_SOFTMAX, "distance_attention": stub["distance_attention"]},
        "dasha": {"masked_softmax": _renamed(BOOK_SOFTMAX, {"X": "scores", "valid_lens": "lengths", "shape": "dims"}),
                  "distance_attention": stub["distance_attention"]},
        "egor": {"masked_softmax": egor, "distance_attention": stub["distance_attention"]},
        "zhenya": {"masked_softmax": _renamed(egor, {"lens": "lengths", "keep": "visible"}),
                   "distance_attention": stub["distance_attention"]},
        "ilya": {"masked_softmax": ILYA,
                 "distance_attention": stub["distance_attention"]},
        "kirill": {"masked_softmax": BOOK_SOFTMAX.replace("dim=-1", "dim=1"),
                   "distance_attention": stub["distance_attention"]},
        "lena": dict(stub),
    }


def graded_class(folder: Path) -> list[SubmissionResult]:
    """Every student graded and saved into ``folder`` as a run would leave it."""
    store = OutputFolder(folder, ASSIGNMENT, "en")
    store.check_usable()
    saved = []
    for student, cells in students().items():
        tasks = [grade(Mutant(task, student, source, correct=False)) for task, source in cells.items()]
        result = SubmissionResult(student_id=student, assignment=ASSIGNMENT, score=sum(t.score for t in tasks),
                                  max_score=sum(t.max_score for t in tasks), tasks=tasks, solutions=cells)
        saved.append(store.save(result))
    return saved


def task_checks(results: list[SubmissionResult]) -> dict[str, list[str]]:
    return {task.id: [check.name for check in task.checks] for task in results[0].tasks}

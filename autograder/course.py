"""The course's files, joined in one place (as nbgrader's ``CourseDirectory`` does).

Every path the grader, the release and the nbgrader path read is named here:

- ``assignments/<a>/<notebook>``: the TA's source notebook (solutions, hidden tests, points);
- ``assignments/<a>/d2l_attention/``: the course library that notebook imports, generated
  from ``reference/`` by ``autograder release``. It lives in the *source* folder so that
  ``nbgrader generate_assignment`` releases it, plain ``nbgrader autograde`` copies it
  beside every submission, and the sandbox mounts it (alone) for the worker;
- ``student_template/``: the released notebooks and helpers (a task's cell as released tells a
  task not attempted yet: ``released_cells``);
- ``reference/book.py``: the chapter's published code, bound while other tasks are checked (in
  bahdanau with the book's decoder from ``reference/book_decoder.py``);
- ``grader.yml``: the grading configuration (unless ``--config`` names another).
"""
import ast
import json
from dataclasses import dataclass
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
HELPER_PACKAGE = "d2l_attention"

# The public reference modules each assignment's helper package ships. attention_scoring
# gets only the heatmaps: book.py holds the published answers to its tasks.
HELPER_MODULES: dict[str, tuple[str, ...]] = {
    "attention_scoring": ("plots",),
    "bahdanau": ("book", "seq2seq", "data", "training", "bleu", "plots"),
}

# The book's code bound beside book.py in an assignment, as (reference module, class): the
# decoder of 11.4.2, which an exercise's decoder may subclass. It builds on names the notebook
# takes from its course library (``BOOK_CONTEXT``), not on imports of its own.
BOOK_EXTRAS: dict[str, tuple[str, str]] = {"bahdanau": ("book_decoder", "Seq2SeqAttentionDecoder")}
BOOK_CONTEXT = ("AttentionDecoder", "init_seq2seq")


@dataclass(frozen=True)
class Course:
    """Where one course's files are; ``root`` is the repository by default."""
    root: Path = REPO_ROOT

    @property
    def config_path(self) -> Path:
        return self.root / "grader.yml"

    @property
    def source_dir(self) -> Path:
        return self.root / "assignments"

    @property
    def release_dir(self) -> Path:
        return self.root / "student_template"

    @property
    def reference_dir(self) -> Path:
        return self.root / "reference"

    def source_notebook(self, assignment: str, notebook: str | None = None) -> Path:
        return self.source_dir / assignment / (notebook or f"{assignment}.ipynb")

    def released_cells(self, assignment: str, notebook: str | None = None) -> dict[str, str]:
        """The released notebook's solution cells by grade id, as a student first opens them
        (what a task left untouched still holds); empty where there is no release here."""
        path = self.release_dir / assignment / (notebook or f"{assignment}.ipynb")
        if not path.is_file():
            return {}
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        solutions = {}
        for cell in cells:
            meta = cell.get("metadata", {}).get("nbgrader", {})
            if cell.get("cell_type") == "code" and meta.get("solution") and isinstance(meta.get("grade_id"), str):
                source = cell.get("source", "")
                solutions[meta["grade_id"]] = "".join(source) if isinstance(source, list) else source
        return solutions

    def helper_package(self, assignment: str) -> Path:
        """The assignment's ``d2l_attention`` folder: the only course files the sandbox mounts."""
        return self.source_dir / assignment / HELPER_PACKAGE

    def helper_archive(self, assignment: str) -> Path:
        """The same package zipped (``d2l_attention.zip``), released beside the notebook: a copy of
        it in a student's folder is the course's file, not a submission to unpack."""
        return self.source_dir / assignment / f"{HELPER_PACKAGE}.zip"

    def book_source(self, assignment: str | None = None) -> str:
        """The published code the worker binds while other tasks are checked: book.py, then
        the assignment's ``BOOK_EXTRAS`` class."""
        source = (self.reference_dir / "book.py").read_text(encoding="utf-8")
        if assignment in BOOK_EXTRAS:
            module, name = BOOK_EXTRAS[assignment]
            text = (self.reference_dir / f"{module}.py").read_text(encoding="utf-8")
            node = next(n for n in ast.parse(text).body if isinstance(n, ast.ClassDef) and n.name == name)
            source += "\n\n" + ast.get_source_segment(text, node) + "\n"
        return source


COURSE = Course()

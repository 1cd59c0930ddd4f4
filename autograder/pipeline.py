"""Grading a batch: find submissions, run each in a sandboxed worker, write results.

Each result is written atomically when its submission finishes, and reused when the
submission, the source notebook, grader.yml, the seed and the grader's version are all
unchanged, so a batch killed half-way and started again grades only what is missing.
"""
import hashlib
import json
import os
import multiprocessing
import tempfile
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path

import nbformat

from . import __version__
from .assemble import Program, assemble, issue, read_notebook
from .checks import TASKS
from .config import REPO_ROOT, ConfigError, GraderConfig, ManualTask
from .grading import assignment_seed, grade_task
from .report import feedback_markdown, grades_csv
from .sandbox.proxy import Student, WorkerLost
from .sandbox.sandbox import Limits, Sandbox


@dataclass(frozen=True)
class Submission:
    student_id: str
    path: Path


def find_submissions(paths: list[Path], assignment: str, notebook: str) -> list[Submission]:
    """Notebooks, folders of notebooks, nbgrader ``submitted/`` folders, or course roots."""
    found = []
    for path in paths:
        if path.suffix == ".ipynb" or path.is_file():
            found.append(Submission(path.stem, path))
            continue
        if not path.is_dir():
            raise ConfigError(f"{path}: no such file or folder")
        root = path / "submitted" if (path / "submitted").is_dir() else path
        found += [Submission(nb.stem, nb) for nb in sorted(root.glob("*.ipynb"))]  # a folder of notebooks
        for student_dir in sorted(p for p in root.iterdir() if p.is_dir()):
            folder = student_dir / assignment
            if not folder.is_dir():
                continue  # this student handed in other assignments only
            candidates = [folder / notebook] if (folder / notebook).exists() else sorted(folder.glob("*.ipynb"))
            found.append(Submission(student_dir.name, candidates[0] if candidates else folder / notebook))
    return found


def grader_version() -> str:
    """The package version and a digest of the grading code, so a changed check re-grades."""
    digest = hashlib.sha256()
    for path in sorted([*(REPO_ROOT / "autograder").rglob("*.py"), *(REPO_ROOT / "reference").glob("*.py")]):
        digest.update(path.read_bytes())
    return f"{__version__}+{digest.hexdigest()[:12]}"


class Batch:
    """Everything one run needs that does not change between submissions."""

    def __init__(self, config: GraderConfig, assignment: str, output: Path, device: str,
                 seed: int | None, force: bool = False):
        self.config, self.name, self.output = config, assignment, output
        self.spec = config.assignment(assignment)
        self.device, self.force = device, force
        self.seed = assignment_seed(assignment, seed if seed is not None else config.seed)
        source_path = REPO_ROOT / "assignments" / assignment / self.spec.notebook
        self.source = nbformat.read(source_path, as_version=4)
        self.helpers = REPO_ROOT / "student_template" / assignment
        self.book_source = (REPO_ROOT / "reference" / "book.py").read_text(encoding="utf-8")
        self.autograded = [t for t, spec in self.spec.tasks.items() if not isinstance(spec, ManualTask)]
        fixed = [source_path.read_bytes(), (REPO_ROOT / "grader.yml").read_bytes(),
                 str(self.seed).encode(), grader_version().encode(), device.encode()]
        self.fingerprint_base = hashlib.sha256(b"\0".join(fixed)).hexdigest()
        s = config.sandbox
        self.limits = Limits(cell_timeout_s=s.cell_timeout_s, call_timeout_s=s.call_timeout_s,
                             submission_timeout_s=s.submission_timeout_s, memory_mb=s.memory_mb,
                             max_processes=s.max_processes, max_file_mb=s.max_file_mb,
                             max_output_kb=s.max_output_kb)

    def fingerprint(self, submission: Submission) -> str:
        content = submission.path.read_bytes() if submission.path.is_file() else b"<missing>"
        return hashlib.sha256(self.fingerprint_base.encode() + content).hexdigest()

    def cached(self, submission: Submission) -> dict | None:
        path = self.output / f"{submission.student_id}.json"
        if self.force or not path.exists():
            return None
        try:
            result = json.loads(path.read_text(encoding="utf-8"))
        except ValueError:
            return None
        return result if result.get("fingerprint") == self.fingerprint(submission) else None


class Session:
    """A submission's worker: re-created, with its good cells re-run, after a crash or timeout."""

    def __init__(self, sandbox: Sandbox, batch: Batch, cells: list[tuple[str, str]], result: dict):
        self.sandbox, self.batch, self.cells, self.result = sandbox, batch, cells, result
        self.bad: set[str] = set()
        self.worker = None
        self.student = None

    def start(self) -> None:
        if self.worker is not None:
            self.worker.close()
        self.worker = self.sandbox.spawn(self.batch.book_source)
        self.student = Student(self.worker.transport, self.batch.device)
        for label, source in self.cells:
            if label in self.bad:
                continue
            try:
                reply = self.worker.transport({"op": "exec", "args": {"label": label, "source": source}})
            except WorkerLost as lost:
                self.bad.add(label)
                self.result["errors"].append(issue("cell_crashed", f"cell {label}: {lost.reason}; "
                                                   f"it was skipped and the others re-run", _task(label)))
                return self.start()
            if "error" in reply:
                error = reply["error"]
                self.result["warnings"].append(issue("cell_error", f"cell {label} raised {error['type']}: "
                                                     f"{error['message']}", _task(label)))

    def close(self) -> None:
        if self.worker is not None:
            self.worker.close()


def _task(label: str) -> str | None:
    return label if label in TASKS else None


def grade_submission(sandbox: Sandbox, batch: Batch, submission: Submission) -> dict:
    result = {"student_id": submission.student_id, "assignment": batch.name, "score": 0.0,
              "max_score": sum(batch.spec.points(t) for t in batch.spec.tasks), "tasks": [],
              "warnings": [], "errors": [], "seed": batch.seed, "fingerprint": batch.fingerprint(submission)}
    program = Program()
    notebook = read_notebook(submission.path, program) if submission.path.is_file() else None
    if notebook is None and not program.errors:
        program.errors.append(issue("missing", f"{submission.path}: no notebook found"))
    if notebook is not None:
        program = assemble(notebook, batch.source, batch.autograded)
    result["warnings"] += program.warnings
    result["errors"] += program.errors
    scores = _grade_tasks(sandbox, batch, program, result) if notebook is not None else {}
    for task_id, spec in batch.spec.tasks.items():
        if isinstance(spec, ManualTask):
            result["tasks"].append({"id": task_id, "score": None, "max_score": spec.manual, "checks": []})
        else:
            result["tasks"].append(scores.get(task_id) or {"id": task_id, "score": 0.0,
                                   "max_score": batch.spec.points(task_id), "checks": []})
    result["score"] = round(sum(t["score"] or 0.0 for t in result["tasks"]), 6)
    return result


def _grade_tasks(sandbox: Sandbox, batch: Batch, program: Program, result: dict) -> dict:
    session = Session(sandbox, batch, program.cells, result)
    scores = {}
    try:
        session.start()
        for task_id in batch.autograded:
            task = grade_task(session.student, batch.name, batch.spec, task_id, batch.seed,
                              batch.device, batch.config.language)
            scores[task_id] = task.to_json()
            result["warnings"] += task.warnings
            result["errors"] += task.errors
            if task.lost_worker:
                session.start()
        printed = "".join(session.student.printed)[: batch.limits.max_output_kb * 1024]
        if printed:
            result["output"] = printed
    except WorkerLost as lost:  # even the cells could not run to the end
        result["errors"].append(issue("worker_lost", lost.reason))
    finally:
        session.close()
    return scores


def write_atomically(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, path)


def save(batch: Batch, result: dict) -> None:
    write_atomically(batch.output / "feedback" / f"{result['student_id']}.md",
                     feedback_markdown(result, batch.config.language))
    write_atomically(batch.output / f"{result['student_id']}.json", json.dumps(result, indent=1, ensure_ascii=False))


_SLOT: dict = {}  # in each grading process: its batch and its sandbox


def _start_slot(batch: Batch, counter) -> None:
    """Runs once in each grading process: one thread, one sandbox slot of its own number."""
    import torch
    torch.set_num_threads(1)  # tiny ops are much slower with a thread pool on these machines
    with counter.get_lock():
        slot, counter.value = counter.value, counter.value + 1
    _SLOT["batch"] = batch
    _SLOT["sandbox"] = Sandbox(slot, batch.helpers, batch.limits, batch.device)
    _SLOT["sandbox"].start()


def _grade_in_slot(submission: Submission) -> dict:
    result = grade_submission(_SLOT["sandbox"], _SLOT["batch"], submission)
    save(_SLOT["batch"], result)
    return result


def run_batch(batch: Batch, submissions: list[Submission], jobs: int, on_done=None) -> list[dict]:
    """Grade every submission with ``jobs`` processes, each with its own sandbox slot.

    Processes, not threads: the checks keep global state (hypothesis, torch's RNG), and
    each process has its own. On the CPU they are forked from this process, which has
    imported everything and runs torch with one thread; with CUDA they are spawned, since a
    CUDA context does not survive a fork.
    """
    for leftover in [*batch.output.glob(".*.tmp"), *(batch.output / "feedback").glob(".*.tmp")]:
        leftover.unlink()  # a write cut short by a killed run
    results, pending, failures = [], [], []
    for submission in submissions:
        cached = batch.cached(submission)
        (results.append(cached) if cached else pending.append(submission))
        if cached and on_done:
            on_done(cached, True)
    if pending:
        context = multiprocessing.get_context("fork" if batch.device == "cpu" else "spawn")
        with ProcessPoolExecutor(max_workers=max(1, min(jobs, len(pending))), mp_context=context,
                                 initializer=_start_slot, initargs=(batch, context.Value("i", 0))) as pool:
            futures = {pool.submit(_grade_in_slot, s): s for s in pending}
            for future in as_completed(futures):
                try:
                    results.append(future.result())
                except Exception as error:  # the grader's own failure: the rest of the batch goes on
                    failures.append(f"{futures[future].student_id}: {type(error).__name__}: {error}")
                    continue
                if on_done:
                    on_done(results[-1], False)
    write_atomically(batch.output / "grades.csv", grades_csv(_all_results(batch), list(batch.spec.tasks)))
    if failures:  # not saved, so a rerun grades them again
        raise GraderFailure(failures)
    return results


class GraderFailure(Exception):
    """The grader itself failed on some submissions (exit status 1); the others are written."""

    def __init__(self, failures: list[str]):
        super().__init__(f"{len(failures)} submission(s) not graded: " + "; ".join(failures))


def _all_results(batch: Batch) -> list[dict]:
    results = []
    for path in batch.output.glob("*.json"):
        try:
            result = json.loads(path.read_text(encoding="utf-8"))
        except ValueError:
            continue
        if result.get("assignment") == batch.name:
            results.append(result)
    return results

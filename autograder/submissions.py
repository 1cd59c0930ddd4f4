"""Finding the submissions under the PATHs of ``autograder grade`` (SPEC §3).

A PATH is a notebook, a folder of notebooks, nbgrader's ``submitted/`` folder
(``submitted/<student_id>/<assignment>/<notebook>.ipynb``), one student's folder of it
(``submitted/<id>`` or ``submitted/<id>/<assignment>``), or a course root that contains
``submitted/``. A PATH the TA typed may be a symbolic link; inside it, links and other
non-regular files are refused: the student gets an error and nothing is read through them.

Student ids come from file names, decoded as the file system gives them; ``store`` turns
undecodable bytes into ``\\xNN`` by its one rule.
"""
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from .config import ConfigError
from .results import Text, text
from .store import clean_text


@dataclass(frozen=True)
class Submission:
    student_id: str
    path: Path
    problem: Text | None = None   # why it is not read (a link, a non-regular file)


def find_submissions(paths: list[Path], assignment: str, notebook: str,
                     students: list[str] | None = None) -> list[Submission]:
    """Every submission under ``paths`` (only ``students``' when given); usage errors
    (a PATH that does not exist, the same student twice, an unknown ``--student``) raise
    ``ConfigError`` before anything is graded."""
    found: list[Submission] = []
    for path in paths:
        if not path.exists():
            raise ConfigError(f"{path}: no such file or folder")
        found += _under(path.resolve(), assignment, notebook)
    if students:
        unknown = [s for s in students if s not in {f.student_id for f in found}]
        if unknown:
            raise ConfigError(f"--student {', '.join(unknown)}: no submission of "
                              f"{'this student' if len(unknown) == 1 else 'these students'} under "
                              f"{', '.join(map(str, paths))}")
        found = [f for f in found if f.student_id in students]
    _refuse_duplicates(found)
    return found


def _under(path: Path, assignment: str, notebook: str) -> list[Submission]:
    if path.is_file():
        return [Submission(_bare_id(path, assignment), path)]
    if path.name == assignment and path.parent.parent.name == "submitted":   # submitted/<id>/<a>
        return [_in_assignment_folder(path.parent.name, path, notebook)]
    if (path / assignment).is_dir() and path.parent.name == "submitted":     # submitted/<id>
        return [_in_assignment_folder(path.name, path / assignment, notebook)]
    root = path / "submitted" if (path / "submitted").is_dir() else path
    found = (_entry(entry, assignment, notebook) for entry in sorted(os.scandir(root), key=lambda e: e.name))
    return [submission for submission in found if submission is not None]


def _entry(entry: os.DirEntry, assignment: str, notebook: str) -> Submission | None:
    """A folder's entry as a submission: a notebook, or a student's folder holding the
    assignment; links are refused; anything else is not a submission."""
    name = clean_text(entry.name)
    if entry.name.endswith(".ipynb"):
        problem = None if _regular(entry) else text("issue.not_regular", path=name)
        return Submission(name[: -len(".ipynb")], Path(entry.path), problem)
    folder = Path(entry.path) / assignment
    if entry.is_symlink() and folder.exists():
        return Submission(name, Path(entry.path), text("issue.not_regular", path=name))
    if not entry.is_dir(follow_symlinks=False):
        return None
    if folder.is_symlink():
        return Submission(name, folder, text("issue.not_regular", path=f"{name}/{assignment}"))
    return _in_assignment_folder(name, folder, notebook) if folder.is_dir() else None


def _bare_id(path: Path, assignment: str) -> str:
    """A notebook's student id: nbgrader's folder name when it sits at
    ``submitted/<id>/<assignment>/``, else the file's stem."""
    if path.parent.name == assignment and path.parent.parent.parent.name == "submitted":
        return clean_text(path.parent.parent.name)
    return clean_text(path.stem)


def _in_assignment_folder(student_id: str, folder: Path, notebook: str) -> Submission:
    candidates = [folder / notebook] if os.path.lexists(folder / notebook) else sorted(folder.glob("*.ipynb"))
    chosen = candidates[0] if candidates else folder / notebook
    if os.path.lexists(chosen) and not _regular(chosen):
        where = f"{student_id}/{folder.name}/{chosen.name}"
        return Submission(student_id, chosen, text("issue.not_regular", path=where))
    return Submission(student_id, chosen)


def _regular(entry) -> bool:
    """A regular file, not reached through a symbolic link."""
    mode = entry.stat(follow_symlinks=False).st_mode if isinstance(entry, os.DirEntry) else os.lstat(entry).st_mode
    return stat.S_ISREG(mode)


def _refuse_duplicates(found: list[Submission]) -> None:
    by_id: dict[str, list[Path]] = {}
    for submission in found:
        by_id.setdefault(submission.student_id, []).append(submission.path)
    twice = {sid: paths for sid, paths in by_id.items() if len(paths) > 1}
    if twice:
        lines = [f"student {sid!r} has {len(paths)} submissions: {', '.join(map(str, paths))}"
                 for sid, paths in sorted(twice.items())]
        raise ConfigError("\n".join(lines) + "\n(one submission per student: rename or remove the others)")

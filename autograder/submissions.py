"""Finding the submissions under the PATHs of ``autograder grade`` (SPEC §3).

A PATH is a notebook, a folder of notebooks (read at any depth: every ``.ipynb`` is a
submission, its stem the student id), nbgrader's ``submitted/`` folder
(``submitted/<student_id>/<assignment>/<notebook>.ipynb``), one student's folder of it
(``submitted/<id>`` or ``submitted/<id>/<assignment>``), or a course root that contains
``submitted/``. In a folder of notebooks, a folder that holds ``<assignment>/`` is a student's
folder as in ``submitted/``, and so is one that holds the assignment's notebook itself
(``kim/attention_scoring.ipynb``, as LMSs export a folder per student). Hidden entries
(Jupyter's ``.ipynb_checkpoints``) are not read.

In a student's assignment folder the notebook graded is the assignment's (``notebook`` of
grader.yml); where it is missing and exactly one other ``.ipynb`` is there, that one is graded
with a warning naming it; several candidates are an error naming them: nothing is guessed.
Whatever ``.ipynb`` was found and not graded is listed in ``Found.not_graded`` for the summary.

A PATH the TA typed may be a symbolic link; inside it, links and other non-regular files are
refused: the student gets an error and nothing is read through them. Student ids come from
file names by ``ids.student_id``'s one rule.
"""
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from .config import ConfigError
from .ids import student_id
from .results import Issue, Text, text

MAX_DEPTH = 12  # folders nested deeper than this in a folder of notebooks are not read


@dataclass(frozen=True)
class Submission:
    student_id: str
    path: Path
    problem: Issue | None = None  # why it is not read (a link, a non-regular file, several notebooks)
    notice: Text | None = None    # a warning for the result (another notebook than the assignment's)
    shown: str = ""               # the notebook as the TA knows it: its path under the PATH given


@dataclass
class Found:
    """What ``find_submissions`` found: the submissions, and the notebooks it did not grade
    (path as shown, why)."""
    submissions: list[Submission] = field(default_factory=list)
    not_graded: list[tuple[str, str]] = field(default_factory=list)


def find_submissions(paths: list[Path], assignment: str, notebook: str) -> Found:
    """Every submission under ``paths``; usage errors (a PATH that does not exist, the same
    student twice) raise ``ConfigError`` before anything is graded."""
    found = Found()
    for path in paths:
        if not path.exists():
            raise ConfigError(f"{path}: no such file or folder")
        _Walk(path.resolve(), assignment, notebook, found).start()
    _refuse_duplicates(found.submissions)
    return found


def select(submissions: list[Submission], students: list[str], paths: list[Path]) -> list[Submission]:
    """The submissions of ``students`` (``--student``); an id with none is a usage error."""
    ids = {s.student_id for s in submissions}
    unknown = [s for s in students if s not in ids]
    if unknown:
        raise ConfigError(f"--student {', '.join(unknown)}: no submission of "
                          f"{'this student' if len(unknown) == 1 else 'these students'} under "
                          f"{', '.join(map(str, paths))}")
    return [s for s in submissions if s.student_id in students]


@dataclass
class _Walk:
    root: Path
    assignment: str
    notebook: str
    found: Found

    def start(self) -> None:
        path = self.root
        if path.is_file():
            self._add(_bare_id(path, self.assignment), path)
        elif path.name == self.assignment and path.parent.parent.name == "submitted":  # submitted/<id>/<a>
            self._student(path.parent.name, path)
        elif (path / self.assignment).is_dir() and path.parent.name == "submitted":    # submitted/<id>
            self._student(path.name, path / self.assignment)
        elif (path / "submitted").is_dir():                                           # a course root
            self._folder(path / "submitted", depth=0, nbgrader=True)
        else:
            self._folder(path, depth=0, nbgrader=path.name == "submitted")

    def _shown(self, path: Path) -> str:
        base = self.root if self.root.is_dir() else self.root.parent
        try:
            return student_id(str(path.relative_to(base)))
        except ValueError:
            return student_id(path.name)

    def _add(self, sid: str, path: Path, problem: Issue | None = None, notice: Text | None = None) -> None:
        self.found.submissions.append(Submission(sid, path, problem, notice, self._shown(path)))

    def _skip(self, path: Path, why: str) -> None:
        self.found.not_graded.append((self._shown(path), why))

    def _folder(self, folder: Path, depth: int, nbgrader: bool) -> None:
        """A folder's entries: notebooks, students' folders, and (outside ``submitted/``) folders
        of notebooks, read in turn."""
        for entry in sorted(os.scandir(folder), key=lambda e: e.name):
            path = Path(entry.path)
            if entry.name.startswith("."):
                if entry.name.endswith(".ipynb") or entry.is_dir(follow_symlinks=False):
                    self._skip(path, "hidden (Jupyter's checkpoints and other hidden entries are not read)")
            elif entry.name.endswith(".ipynb") and not entry.is_dir(follow_symlinks=False):
                self._add(student_id(entry.name[: -len(".ipynb")]), path,
                          None if _regular(entry) else _refused(self._shown(path)))
            elif entry.is_symlink():
                self._linked_folder(entry, path)
            elif entry.is_dir():
                self._subfolder(entry, path, depth, nbgrader)

    def _linked_folder(self, entry: os.DirEntry, path: Path) -> None:
        if (path / self.assignment).exists():
            self._add(student_id(entry.name), path, _refused(self._shown(path)))
        elif entry.is_dir():
            self._skip(path, "a symbolic link to a folder (not followed)")

    def _subfolder(self, entry: os.DirEntry, path: Path, depth: int, nbgrader: bool) -> None:
        held = path / self.assignment
        if held.is_symlink():
            self._add(student_id(entry.name), held, _refused(self._shown(held)))
        elif held.is_dir():
            self._student(entry.name, held)
        elif not nbgrader and os.path.lexists(path / self.notebook):
            self._student(entry.name, path)  # an LMS's folder per student: kim/attention_scoring.ipynb
        elif nbgrader:
            return  # a student of the course who has not handed in this assignment
        elif depth < MAX_DEPTH:
            self._folder(path, depth + 1, nbgrader=False)
        else:
            self._skip(path, f"nested deeper than {MAX_DEPTH} folders")

    def _student(self, name: str, folder: Path) -> None:
        """A student's assignment folder: the assignment's notebook, or the one other (warned),
        or an error naming the candidates."""
        sid = student_id(name)
        named = folder / self.notebook
        others = sorted(p for p in folder.iterdir() if p.name.endswith(".ipynb") and p.name != self.notebook
                        and not p.name.startswith("."))
        if os.path.lexists(named) or not others:
            for other in others:
                self._skip(other, f"beside {self.notebook}, which is graded")
            self._add(sid, named, None if not os.path.lexists(named) or _regular(named)
                      else _refused(self._shown(named)))
        elif len(others) == 1:
            chosen = others[0]
            self._add(sid, chosen, None if _regular(chosen) else _refused(self._shown(chosen)),
                      notice=text("issue.other_notebook", name=chosen.name, expected=self.notebook))
        else:
            self._add(sid, named, Issue(code="several_notebooks", text=text(
                "issue.several_notebooks", names=", ".join(p.name for p in others), expected=self.notebook)))


def _refused(shown: str) -> Issue:
    return Issue(code="not_regular_file", text=text("issue.not_regular", path=shown))


def _bare_id(path: Path, assignment: str) -> str:
    """A notebook's student id: nbgrader's folder name when it sits at
    ``submitted/<id>/<assignment>/``, else the file's stem."""
    if path.parent.name == assignment and path.parent.parent.parent.name == "submitted":
        return student_id(path.parent.parent.name)
    return student_id(path.stem)


def _regular(entry) -> bool:
    """A regular file, not reached through a symbolic link."""
    mode = entry.stat(follow_symlinks=False).st_mode if isinstance(entry, os.DirEntry) else os.lstat(entry).st_mode
    return stat.S_ISREG(mode)


def _refuse_duplicates(found: list[Submission]) -> None:
    by_id: dict[str, list[Submission]] = {}
    for submission in found:
        by_id.setdefault(submission.student_id, []).append(submission)
    twice = {sid: subs for sid, subs in by_id.items() if len(subs) > 1}
    if twice:
        lines = [f"student {sid!r} has {len(subs)} submissions: {', '.join(s.shown or str(s.path) for s in subs)}"
                 for sid, subs in sorted(twice.items())]
        raise ConfigError("\n".join(lines) + "\n(one submission per student: rename or remove the others)")

"""Finding the submissions under the PATHs of ``autograder grade`` (SPEC §3; docs: Grading a folder, "Which notebooks
are graded"): nothing is guessed, and whatever is found and not graded is named.

A PATH is a notebook, a folder of notebooks (every notebook at any depth a submission, its stem
the student id), nbgrader's ``submitted/`` (``submitted/<id>/<assignment>/<notebook>``), one
student's folder of it (``submitted/<id>`` or ``submitted/<id>/<assignment>``), or a course root.
A notebook is a file named ``*.ipynb`` in any case. Every folder in ``submitted/`` is a student's,
and so is a folder elsewhere that holds ``<assignment>/`` or the assignment's notebook, or only one
notebook at any depth (an LMS's folder per student, the file named by the student: the folder
names it, never the file). An id that notebooks in folders claim twice is not a usage error: each
is graded under its path, with a warning (a file's or folder's name never stops the batch or
takes a row another submission claims). A student's folder is read at any depth: the notebook graded is the one where
it belongs, else the only candidate (in the assignment's folder, in a folder named like the
assignment, or named like its notebook), with a warning; several candidates are an error naming
them. ``Found.not_graded`` names the rest, with why; a folder of another assignment is one line
for the class, and the course's own helper package as released (``d2l_attention.zip``, which
nbgrader hands every student beside the notebook) is not named at all. Hidden entries
(``.ipynb_checkpoints``) are named, not read; inside a PATH, links and other non-regular files
are refused: an error for the student, nothing read through them.
"""
import dataclasses
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from ..config import ConfigError
from .folder_tree import (ARCHIVE, DEEP, HIDDEN, LINKED, MAX_DEPTH, SUFFIX, is_archive, is_notebook, listing,
                          regular, scan, unreadable)
from .ids import given, student_id
from ..results import Issue, Text, text

NBGRADER_FOLDERS = frozenset({"submitted", "source", "release", "autograded", "feedback"})


@dataclass(frozen=True)
class Submission:
    student_id: str
    path: Path
    problem: Issue | None = None  # why it is not read (a link, a non-regular file, several notebooks)
    notice: Text | None = None    # a warning for the result (another notebook than the assignment's)
    shown: str = ""               # the notebook as the TA knows it: its path under the PATH given
    by_stem: bool = False         # its id is its file's stem, in a folder of notebooks


@dataclass
class Found:
    """What ``find_submissions`` found: the submissions, and the notebooks it did not grade
    (path as shown, why); a folder stands for what is under it, ``*`` for every student."""
    submissions: list[Submission] = field(default_factory=list)
    not_graded: list[tuple[str, str]] = field(default_factory=list)


def find_submissions(paths: list[Path], assignment: str, notebook: str, released: Path | None = None) -> Found:
    """Every submission under ``paths``; usage errors (a PATH that does not exist, the same
    student twice) raise ``ConfigError`` before anything is graded. ``released``: the course's
    helper archive, whose copies as released are the course's own files, not a student's."""
    found = Found()
    helpers = _Released.of(released)
    for path in paths:
        if not path.exists():
            raise ConfigError(f"{path}: no such file or folder")
        if path.is_file() and is_archive(path.name):
            raise ConfigError(f"{path}: an archive, not a notebook; unpack it and give the folder (or its notebooks)")
        _Walk(path.resolve(), assignment, notebook, found, helpers).start()
    found.submissions = _distinguish_duplicates(found.submissions)
    _refuse_duplicates(found.submissions)
    return found


def select(submissions: list[Submission], students: list[str], paths: list[Path]) -> list[Submission]:
    """The submissions of ``students`` (``--student``), each read as grades.csv writes it
    (``ids.given``: ``'-dash`` is ``-dash``); an id with none is a usage error."""
    ids = {s.student_id for s in submissions}
    students = [given(s) for s in students]
    unknown = [s for s in students if s not in ids]
    if unknown:
        raise ConfigError(f"--student {', '.join(unknown)}: no submission of "
                          f"{'this student' if len(unknown) == 1 else 'these students'} under "
                          f"{', '.join(map(str, paths))}")
    return [s for s in submissions if s.student_id in students]


@dataclass(frozen=True)
class _Released:
    """The course's helper archive as it was released (its name and bytes)."""
    name: str
    content: bytes

    @classmethod
    def of(cls, path: Path | None) -> "_Released | None":
        try:
            return cls(path.name, path.read_bytes()) if path is not None else None
        except OSError:
            return None

    def copied_to(self, path: Path) -> bool:
        """Whether ``path`` is a regular file (no link followed) holding exactly the released archive."""
        if path.name != self.name:
            return False
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except OSError:
            return False
        with os.fdopen(fd, "rb") as handle:
            size = os.fstat(handle.fileno())
            return stat.S_ISREG(size.st_mode) and size.st_size == len(self.content) and \
                handle.read(len(self.content) + 1) == self.content


@dataclass
class _Walk:
    root: Path
    assignment: str
    notebook: str
    found: Found
    released: _Released | None = None   # the course's helper archive: a copy as released is not the student's
    # Students' folders that hold no notebook of this assignment, by (where the students' folders
    # are, the folder's name): listed once for the class at the end, with their notebooks' count.
    elsewhere: dict[tuple[Path, str], list[tuple[Path, int]]] = field(default_factory=dict)

    def start(self) -> None:
        path = self.root
        if path.is_file():
            self._add(self._bare_id(path), path)
        elif path.name == self.assignment and path.parent.parent.name == "submitted":  # submitted/<id>/<a>
            self._student(path.parent.name, path, path / self.notebook, depth=0)
        elif path.parent.name == "submitted":                                         # submitted/<id>
            self._student(path.name, path, path / self.assignment / self.notebook, depth=0)
        elif (path / "submitted").is_dir():                                           # a course root
            self._folder(path / "submitted", depth=0, nbgrader=True)
            self._course_root(path)
        else:
            self._folder(path, depth=0, nbgrader=path.name == "submitted")
        self._list_elsewhere()

    def _shown(self, path: Path) -> str:
        base = self.root if self.root.is_dir() else self.root.parent
        try:
            return student_id(str(path.relative_to(base)))
        except ValueError:
            return student_id(path.name)

    def _add(self, sid: str, path: Path, problem: Issue | None = None, notice: Text | None = None) -> None:
        self.found.submissions.append(Submission(sid, path, problem, notice, self._shown(path)))

    def _skip(self, path: Path, why: str) -> None:
        if why == ARCHIVE and self.released is not None and self.released.copied_to(path):
            return  # the helper package nbgrader released beside the notebook: the course's own
        self.found.not_graded.append((self._shown(path), why))

    def _folder(self, folder: Path, depth: int, nbgrader: bool) -> None:
        """A folder's entries: notebooks, students' folders, and (outside ``submitted/``) folders
        of notebooks, read in turn."""
        try:
            entries = listing(folder)
        except OSError as error:
            self._skip(folder, unreadable(error))
            return
        for entry in entries:
            path = Path(entry.path)
            if entry.name.startswith("."):
                if is_notebook(entry) or entry.is_dir(follow_symlinks=False):
                    self._skip(path, HIDDEN)
            elif is_notebook(entry):
                self._notebook_in_folder(entry, path)
            elif entry.is_dir(follow_symlinks=False):
                self._subfolder(entry, path, depth, nbgrader)
            else:
                self._other_entry(entry, path)

    def _other_entry(self, entry: os.DirEntry, path: Path) -> None:
        """A link (refused or named) or an archive (named); any other file is not a submission."""
        if entry.is_symlink():
            self._linked_folder(entry, path)
        elif is_archive(entry.name):
            self._skip(path, ARCHIVE)

    def _notebook_in_folder(self, entry: os.DirEntry, path: Path) -> None:
        """A notebook of a folder of notebooks (the PATH, or a folder of several): its stem is the id."""
        self.found.submissions.append(Submission(
            student_id(entry.name[: -len(SUFFIX)]), path, None if regular(entry) else _refused(self._shown(path)),
            shown=self._shown(path), by_stem=True))

    def _linked_folder(self, entry: os.DirEntry, path: Path) -> None:
        if (path / self.assignment).exists():
            self._add(student_id(entry.name), path, _refused(self._shown(path)))
        elif entry.is_dir():
            self._skip(path, LINKED)

    def _subfolder(self, entry: os.DirEntry, path: Path, depth: int, nbgrader: bool) -> None:
        """In ``submitted/`` every folder is a student's; elsewhere, one that holds ``<assignment>/``
        or the assignment's notebook (an LMS's folder per student: kim/attention_scoring.ipynb), or
        only one notebook at any depth (kim/homework.ipynb, kim/x/ivanov.ipynb: the folder names
        the student, not the file, which the student named)."""
        held = path / self.assignment
        if nbgrader or held.is_dir() or held.is_symlink():
            self._student(entry.name, path, held / self.notebook, depth + 1)
        elif self._holds_notebook(path):
            self._student(entry.name, path, path / self.notebook, depth + 1)
        elif not self._lone_notebook(entry.name, path, depth + 1):
            if depth < MAX_DEPTH:
                self._folder(path, depth + 1, nbgrader=False)
            else:
                self._skip(path, DEEP)

    def _lone_notebook(self, name: str, folder: Path, depth: int) -> bool:
        """Whether ``folder`` holds one notebook at any depth: then it is that student's submission,
        named by the folder, with a warning naming the file."""
        notebooks, unread = scan(folder, depth)
        if len(notebooks) != 1:
            return False
        [notebook] = notebooks
        named_so = student_id(notebook.name[: -len(SUFFIX)]) == student_id(name)  # ivanov/ivanov.ipynb
        self._add(student_id(name), notebook, None if regular(notebook) else _refused(self._shown(notebook)),
                  notice=None if named_so else text("issue.id_from_folder", id=student_id(name),
                                                    file=str(notebook.relative_to(folder))))
        for path, why in unread:
            self._skip(path, why)
        return True

    def _holds_notebook(self, folder: Path) -> bool:
        """Whether ``folder`` holds the assignment's notebook or a copy of it by its name (an
        LMS's folder per student: ``boris/attention_scoring-Copy1.ipynb``, Moodle's
        ``attention_scoring (1).ipynb``): then the folder's name is the student's id."""
        try:
            entries = listing(folder)
        except OSError:
            return False  # read as a folder of notebooks next, which names it
        return any(self._named_ours(entry.name) and not entry.is_dir(follow_symlinks=False) for entry in entries)

    def _named_ours(self, name: str) -> bool:
        """The assignment's notebook's name, or a copy's: its stem and more (``-Copy1``, `` (1)``)."""
        stem = self.notebook[: -len(SUFFIX)] if self.notebook.lower().endswith(SUFFIX) else self.notebook
        return name.lower().endswith(SUFFIX) and name.casefold().startswith(stem.casefold())

    def _student(self, name: str, root: Path, canonical: Path, depth: int) -> None:
        """A student's folder ``root``, read at any depth: ``canonical`` (where the notebook
        belongs), or the one candidate elsewhere (warned), or an error naming the candidates;
        every other notebook in it is listed as not graded."""
        sid = student_id(name)
        if canonical.parent.is_symlink():  # the assignment's folder is a link: nothing is read through it
            self._add(sid, canonical.parent, _refused(self._shown(canonical.parent)))
            return
        notebooks, unread = scan(root, depth)
        candidates = [p for p in notebooks if p != canonical and self._candidate(p, root, canonical)]
        if os.path.lexists(canonical):
            self._add(sid, canonical, None if regular(canonical) else _refused(self._shown(canonical)))
            self._skip_all(candidates, f"{sid}'s {_names([canonical], root, canonical, candidates)} is graded instead")
        elif len(candidates) == 1:
            [chosen] = candidates
            self._add(sid, chosen, None if regular(chosen) else _refused(self._shown(chosen)),
                      notice=text("issue.other_notebook", name=_names(candidates, root, canonical),
                                  expected=_names([canonical], root, canonical, candidates)))
        elif candidates:
            self._add(sid, canonical, Issue(code="several_notebooks", text=text(
                "issue.several_notebooks", names=_names(candidates, root, canonical),
                expected=_names([canonical], root, canonical, candidates))))
            self._skip_all(candidates, f"one of {len(candidates)} candidates, so none is graded (see {sid}'s errors)")
        elif canonical.parent.is_dir():
            self._add(sid, canonical)  # the assignment's folder without a notebook: "no notebook found"
        kept = {canonical, *candidates}
        self._others(root, [p for p in notebooks if p not in kept], unread, kept)

    def _candidate(self, path: Path, root: Path, canonical: Path) -> bool:
        """Could ``path`` be this student's notebook of this assignment?"""
        folders = path.relative_to(root).parts[:-1]
        return (path.is_relative_to(canonical.parent) or self._named_ours(path.name)
                or self.assignment.casefold() in (part.casefold() for part in folders))

    def _skip_all(self, paths: list[Path], why: str) -> None:
        for path in paths:
            self._skip(path, why)

    def _others(self, root: Path, others: list[Path], unread: list[tuple[Path, str]], kept: set[Path]) -> None:
        """A student's notebooks that are not this assignment's: a folder that holds none of this
        assignment's is set aside for one line per class (``_list_elsewhere``); the rest are named."""
        mine = {p.relative_to(root).parts[0] for p in kept}
        folders: dict[str, int] = {}
        for path in others:
            top, *below = path.relative_to(root).parts
            if below and top not in mine:
                folders[top] = folders.get(top, 0) + 1
            else:
                self._skip(path, f"not named {self.notebook} and not in a folder {self.assignment}/")
        for top, count in folders.items():
            self.elsewhere.setdefault((root.parent, top), []).append((root / top, count))
        for path, why in unread:  # a folder set aside stands for what is in it
            if not set(path.relative_to(root).parts[:1]) & folders.keys():
                self._skip(path, why)

    def _list_elsewhere(self) -> None:
        for (parent, top), folders in sorted(self.elsewhere.items()):
            count = sum(n for _, n in folders)
            what = (f"{_count(count)}, none named {self.notebook} or in a folder {self.assignment}/ "
                    f"(another assignment's?)")
            if len(folders) == 1:
                self._skip(folders[0][0], what)
            else:
                self._skip(parent / "*" / top, f"in {len(folders)} students' folders: {what}")

    def _course_root(self, course: Path) -> None:
        """What a course root holds besides nbgrader's folders and hidden entries: named where it
        is or holds a notebook."""
        try:
            entries = listing(course)
        except OSError as error:
            self._skip(course, unreadable(error))
            return
        for entry in entries:
            path = Path(entry.path)
            if entry.name.startswith(".") or entry.name in NBGRADER_FOLDERS:
                continue
            if is_notebook(entry):
                self._skip(path, "in the course root, outside submitted/")
            elif entry.is_symlink() and entry.is_dir():
                self._skip(path, LINKED)
            elif entry.is_dir(follow_symlinks=False):
                self._course_folder(path)

    def _course_folder(self, folder: Path) -> None:
        notebooks, unread = scan(folder, 1)
        if notebooks:
            self._skip(folder, f"{_count(len(notebooks))} in the course root, outside submitted/")
        elif unread[:1] and unread[0][0] == folder:  # the folder itself could not be listed
            self._skip(*unread[0])

    def _bare_id(self, path: Path) -> str:
        """A notebook's student id: its student's folder's name where it lies in ``submitted/<id>/``
        and is a candidate there (as when the folder is read), else the file's stem."""
        for folder in path.parents:
            if folder.parent.name == "submitted":
                if self._candidate(path, folder, folder / self.assignment / self.notebook):
                    return student_id(folder.name)
                break
        return student_id(path.stem)


def _names(paths: list[Path], root: Path, canonical: Path, beside: list[Path] = ()) -> str:
    """``paths`` as a student reads them: from the assignment's folder where ``paths`` and ``beside``
    all lie in it, else from the student's folder."""
    inside = all(p.is_relative_to(canonical.parent) for p in [*paths, *beside])
    base = canonical.parent if inside else root
    return ", ".join(str(p.relative_to(base)) for p in sorted(paths))


def _count(notebooks: int) -> str:
    return f"{notebooks} notebook{'s' * (notebooks != 1)}"


def _refused(shown: str) -> Issue:
    return Issue(code="not_regular_file", text=text("issue.not_regular", path=shown))


def _distinguish_duplicates(found: list[Submission]) -> list[Submission]:
    """Where submissions found in folders claim one id, the one that takes it from its own
    folder (a student's folder, ``ivanov/``), if it is the only such claimant, keeps it; every
    other claimant (a file's stem, ``group1/ivanov.ipynb``, or a second folder of that name) is
    graded under its path as the TA was shown it, with a warning saying why: a name never stops
    the batch or takes a row another submission claims. Claimants shown by the same path (a
    notebook given twice) stay a duplicate: a usage error."""
    by_id: dict[str, list[Submission]] = {}
    for submission in found:
        by_id.setdefault(submission.student_id, []).append(submission)
    keeper = {sid: _keeper(claimants) for sid, claimants in by_id.items()}
    twice = {sid for sid, claimants in by_id.items() if len({s.shown for s in claimants}) < len(claimants)}
    return [s if keeper[s.student_id] is s or s.student_id in twice or not s.shown else dataclasses.replace(
        s, student_id=s.shown, by_stem=False, notice=text("issue.id_claimed_twice", id=s.student_id, path=s.shown))
        for s in found]


def _keeper(claimants: list[Submission]) -> Submission | None:
    """Who keeps an id: its only claimant, or its only claimant by a folder's name."""
    owners = [s for s in claimants if not s.by_stem]
    return claimants[0] if len(claimants) == 1 else owners[0] if len(owners) == 1 else None


def _refuse_duplicates(found: list[Submission]) -> None:
    by_id: dict[str, list[Submission]] = {}
    for submission in found:
        by_id.setdefault(submission.student_id, []).append(submission)
    twice = {sid: subs for sid, subs in by_id.items() if len(subs) > 1}
    if twice:
        lines = [f"student {sid!r} has {len(subs)} submissions: {', '.join(s.shown or str(s.path) for s in subs)}"
                 for sid, subs in sorted(twice.items())]
        raise ConfigError("\n".join(lines) + "\n(one submission per student: rename or remove the others)")

"""Reading a folder of submissions at any depth without following a link: the notebooks found,
and what was not read, with why (hidden entries, links to folders, folders nested too deep,
folders that could not be listed). A notebook is a file named ``*.ipynb`` in any case
(``.IPYNB`` too, as Windows and some LMSs write it). ``submissions`` decides what each is.
"""
import os
import stat
from pathlib import Path

MAX_DEPTH = 12  # folders nested deeper than this are not read
SUFFIX = ".ipynb"  # compared case-insensitively
HIDDEN = "hidden (Jupyter's checkpoints and other hidden entries are not read)"
LINKED = "a symbolic link to a folder (not followed)"
DEEP = f"nested deeper than {MAX_DEPTH} folders"
ARCHIVES = (".zip", ".tar", ".tar.gz", ".tgz", ".tar.xz", ".7z", ".rar")
ARCHIVE = "an archive, not read: unpack it where it lies and grade again"


def is_archive(name: str) -> bool:
    """A file an LMS or a student packed notebooks into (``.zip`` in any case, ``.tar.gz``, ...)."""
    return name.lower().endswith(ARCHIVES)


def listing(folder: Path) -> list[os.DirEntry]:
    """A folder's entries, by name (``OSError`` where it cannot be listed)."""
    with os.scandir(folder) as found:
        return sorted(found, key=lambda e: e.name)


def is_notebook(entry: os.DirEntry) -> bool:
    """A notebook's name (``.ipynb`` in any case) on anything but a folder (a link to one included:
    it is refused, not followed)."""
    return entry.name[-len(SUFFIX):].lower() == SUFFIX and not entry.is_dir(follow_symlinks=False)


def scan(folder: Path, depth: int) -> tuple[list[Path], list[tuple[Path, str]]]:
    """The notebooks under ``folder`` at any depth (links among them, never followed), and what was
    not read, with why: hidden entries, links to folders, folders nested too deep or not listable."""
    notebooks: list[Path] = []
    unread: list[tuple[Path, str]] = []
    try:
        entries = listing(folder)
    except OSError as error:
        return [], [(folder, unreadable(error))]
    for entry in entries:
        path = Path(entry.path)
        why = _unread(entry, depth)
        if why:
            unread.append((path, why))
        elif not entry.name.startswith(".") and is_notebook(entry):
            notebooks.append(path)
        elif not entry.name.startswith(".") and entry.is_dir(follow_symlinks=False):
            more, more_unread = scan(path, depth + 1)
            notebooks += more
            unread += more_unread
    return notebooks, unread


def _unread(entry: os.DirEntry, depth: int) -> str | None:
    """Why an entry of a folder being read is not read, or None."""
    if entry.name.startswith("."):
        return HIDDEN if is_notebook(entry) or entry.is_dir(follow_symlinks=False) else None
    if entry.is_symlink() and entry.is_dir():
        return LINKED
    if is_archive(entry.name) and not entry.is_dir(follow_symlinks=False):
        return ARCHIVE
    if entry.is_dir(follow_symlinks=False) and depth >= MAX_DEPTH:
        return DEEP
    return None


def unreadable(error: OSError) -> str:
    return f"could not be read ({error.strerror or error})"


def regular(entry) -> bool:
    """A regular file, not reached through a symbolic link."""
    mode = entry.stat(follow_symlinks=False).st_mode if isinstance(entry, os.DirEntry) else os.lstat(entry).st_mode
    return stat.S_ISREG(mode)

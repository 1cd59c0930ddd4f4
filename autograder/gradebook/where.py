"""Whether the PATHs of a run lie in an nbgrader course, found without importing nbgrader
(most runs grade a plain folder and need none of it), and the errors of recording."""
import os
from collections.abc import Iterable
from pathlib import Path

from ..config import ConfigError


class CourseError(ConfigError):
    """The course cannot take the autograder's results (found before grading: exit 2)."""


class RecordError(Exception):
    """nbgrader could not record one submission; the message names it and says why."""


def course_root(paths: Iterable[Path]) -> Path | None:
    """The root of the course every PATH lies in (a course root, its ``submitted/`` or anything
    under it), or None when none does; paths in and out of one course are a usage error."""
    roots = {Path(path): _root_of(Path(path)) for path in paths}
    found = {root for root in roots.values() if root is not None}
    if not found:
        return None
    root = min(found)
    stray = next((path for path, other in roots.items() if other != root), None)
    if stray is not None:
        raise CourseError(f"{stray}: not in the nbgrader course {root}; grade it in a separate run "
                          "(one run records into one course's gradebook)")
    return root


def _root_of(path: Path) -> Path | None:
    """The course root of ``path``: the path itself, or the parent of a ``submitted`` above it."""
    path = Path(os.path.abspath(path))
    if _is_course(path) and (path / "submitted").is_dir():
        return path
    return next((folder.parent for folder in [path, *path.parents]
                 if folder.name == "submitted" and _is_course(folder.parent)), None)


def _is_course(folder: Path) -> bool:
    return (folder / "nbgrader_config.py").is_file() or (folder / "gradebook.db").is_file()

"""Recorded hypothesis runs kept on disk, shared by every grading process of a results folder.

``core.search`` records each full hypothesis run it makes (the examples in order and the
outcome after each) and replays it to students whose outcomes follow it. In memory that
helps only the process that recorded it; here each recorded run is appended to a file per
search, which the run's other grading processes (and later runs, and the service) read
before they search. So a class pays one full run per new way of failing, not one per
process and per run.

Files live under ``<results>/.recorded-runs/<grader version>/``: a changed check, torch or
hypothesis starts afresh. The reference solutions' runs are recorded once more at install
time (``make``: the bundled correct notebooks graded into ``SHIPPED``), and read before the
results folder's own: so even a run's first correct notebook replays, without hypothesis's
search (the examples and the verdicts are the same as a full run's; only the engine's own
time goes). One record is the examples' values and the outcomes' names in the sandbox's
wire format (protocol.py: JSON and the tensors' raw bytes; tensors, numbers and strings only,
nothing in these files is code; read ten times faster than ``torch.load(weights_only=True)``,
which took 0.2 s of a run's first notebook). Only the grader writes them; a file that does not
read back whole stops being read at that point, and the search runs in full.
"""
import fcntl
import hashlib
import shutil
import struct
import sys
from pathlib import Path

import hypothesis
import torch

from ..sandbox import protocol
from .inputs import Case

HEADER = struct.Struct("<Q")  # each record's length, before it
FOLDER = ".recorded-runs"
MAX_FILE_BYTES = 8 << 20  # per search: beyond it, new ways of failing are kept in memory only
SHIPPED = Path(sys.prefix) / "share" / "attention-autograder" / "reference-runs"  # written by `make`


class RunFiles:
    """The recorded runs of one results folder, for one grader version."""

    def __init__(self, results: Path, grader_version: str, shipped: Path = SHIPPED):
        version = f"{grader_version}-torch{torch.__version__}-hypothesis{hypothesis.__version__}"
        self.folder = results / FOLDER / version.replace("/", "_")
        self.shipped = shipped / version.replace("/", "_")  # read only: never appended to
        self.read_to: dict[Path, int] = {}  # file -> bytes of it this process has read

    def append(self, key: tuple, calls: list[tuple], end: str) -> None:
        """One recorded run: ``calls`` as (case, outcome) in hypothesis's order, then ``end``."""
        if not all(isinstance(case, Case) for case, _ in calls):
            return  # only cases of known shape travel
        record = protocol.dumps({"calls": [[_plain(case), outcome] for case, outcome in calls], "end": end})
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            with open(self.folder / _file_name(key), "ab") as file:
                fcntl.flock(file, fcntl.LOCK_EX)
                if file.tell() + len(record) > MAX_FILE_BYTES:
                    return
                file.write(HEADER.pack(len(record)) + record)
        except OSError:
            return  # a folder we cannot write keeps its runs in memory only

    def new_runs(self, key: tuple) -> list[tuple[list[tuple], str]]:
        """The runs shipped for ``key`` and those appended to its file since this process last
        read them."""
        name = _file_name(key)
        return [*self._read(self.shipped / name), *self._read(self.folder / name)]

    def _read(self, path: Path) -> list[tuple[list[tuple], str]]:
        start = self.read_to.get(path, 0)
        try:
            if path.stat().st_size <= start:
                return []
            with open(path, "rb") as file:
                fcntl.flock(file, fcntl.LOCK_SH)
                file.seek(start)
                data = file.read()
        except OSError:
            return []
        runs, offset = [], 0
        while offset + HEADER.size <= len(data):
            (length,) = HEADER.unpack_from(data, offset)
            body = data[offset + HEADER.size:offset + HEADER.size + length]
            if len(body) < length:
                break
            try:
                record = protocol.loads(body)
                runs.append(([(_case(fields), _outcome(outcome)) for fields, outcome in record["calls"]],
                             _outcome(record["end"])))
            except Exception:  # noqa: BLE001 - not ours as written: read no further
                self.read_to[path] = path.stat().st_size
                return runs
            offset += HEADER.size + length
        self.read_to[path] = start + offset
        return runs


def _file_name(key: tuple) -> str:
    return hashlib.sha256(repr(key).encode()).hexdigest()[:32]


def _plain(case: Case) -> dict:
    """The case as the wire format carries it: a dtype among its options goes by name."""
    dtypes = {name: protocol.NAMES[value] for name, value in case.options.items() if isinstance(value, torch.dtype)}
    return {"tensors": dict(case.tensors), "recipes": dict(case.recipes), "dtypes": dtypes,
            "options": {name: value for name, value in case.options.items() if name not in dtypes}}


def _case(fields: dict) -> Case:
    """``_plain``'s case back, or an error for anything else."""
    tensors, recipes, dtypes, options = fields["tensors"], fields["recipes"], fields["dtypes"], fields["options"]
    if not all(isinstance(t, torch.Tensor) or t is None for t in tensors.values()):
        raise ValueError("a case's tensor is not a tensor")
    if not all(isinstance(r, str) for r in recipes.values()):
        raise ValueError("a case's recipe is not code")
    return Case(dict(tensors), {**options, **{name: protocol.DTYPES[d] for name, d in dtypes.items()}}, dict(recipes))


def _outcome(value) -> str | None:
    if value is not None and not isinstance(value, str):
        raise ValueError("an outcome is not a name")
    return value


_FILES: RunFiles | None = None


def forget_other_versions(results: Path, grader_version: str) -> None:
    """Remove ``results``'s recorded runs of other grader versions: this version never reads
    them, and one folder per version would pile up (a TA's trial)."""
    keep = RunFiles(results, grader_version).folder
    for folder in (results / FOLDER).glob("*"):
        if folder != keep and folder.is_dir() and not folder.is_symlink():
            shutil.rmtree(folder, ignore_errors=True)


def keep_runs_in(results: Path | None, grader_version: str = "", shipped: Path = SHIPPED) -> None:
    """This process's recorded runs go to (and come from) ``results``'s files, after those
    ``shipped`` with the grader; None: memory only."""
    global _FILES
    _FILES = RunFiles(results, grader_version, shipped) if results is not None else None


def files() -> RunFiles | None:
    return _FILES


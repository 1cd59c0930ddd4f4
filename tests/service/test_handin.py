"""Reading one hand-in folder of nbgrader's exchange (``service/handin.py``) when the student made
it hostile: links, a FIFO, a device that never ends, a huge or growing file, thousands of
folders, a secret that is not one, a folder named for another student. Each is refused with
one line naming what is wrong (or read within its bounds), and nothing is read through a link.
The cost test: the same content at 1x, 10x and 100x costs time and memory in proportion."""
import contextlib
import json
import os
import secrets
import stat
import threading
import time
import tracemalloc
from pathlib import Path

import pytest

from autograder.config import load_config
from autograder.grading.task import RunSettings
from autograder.grading.pipeline import Batch
from autograder.service.exchange import handin
from autograder.service.assignments import Assignments
from autograder.service.exchange.handin import Name, Refused

from .server import notebook

ASSIGNMENT, NOTEBOOK = "attention_scoring", "attention_scoring.ipynb"
LIMIT = 1 << 20
STAMP = "2026-03-01 20:00:00.000000 UTC"


@pytest.fixture(scope="module")
def assignments() -> Assignments:
    config = load_config()
    return Assignments.of(Batch(RunSettings.resolve(config, ASSIGNMENT, None, "cpu"), config, b""))


def hand_in(inbound: Path, student: str = "root", data: bytes | None = None, secret: str | None = None,
            random: str = "abcdefghijkl") -> Name:
    """A folder as ``nbgrader submit`` leaves it (the notebook, then timestamp.txt, then the secret)."""
    folder = inbound / f"{student}+{ASSIGNMENT}+{STAMP}+{random}"
    folder.mkdir(parents=True)
    (folder / NOTEBOOK).write_bytes(notebook("correct") if data is None else data)
    (folder / "timestamp.txt").write_text(STAMP)
    (folder / handin.SECRET).write_text(secrets.token_hex(64) if secret is None else secret)
    return Name.parse(folder.name, ASSIGNMENT)


def read(inbound: Path, name: Name, copy: Path, check_owner: bool = True, limit: int = LIMIT) -> handin.HandIn:
    fd = os.open(inbound, os.O_RDONLY | os.O_DIRECTORY)
    try:
        return handin.read(fd, name, NOTEBOOK, copy, limit, check_owner)
    finally:
        os.close(fd)


def refused(inbound: Path, name: Name, copy: Path, **options) -> Refused:
    with pytest.raises(Refused) as raised:
        read(inbound, name, copy, **options)
    assert "\n" not in raised.value.why
    return raised.value


def test_names_are_parsed_as_nbgrader_collect_parses_them():
    assert Name.parse(f"s1+{ASSIGNMENT}+{STAMP}+abc", ASSIGNMENT).user == "s1"
    assert Name.parse(f"a+b+{ASSIGNMENT}+{STAMP}+abc", ASSIGNMENT).user == "a+b"
    assert Name.parse(f"s1+{ASSIGNMENT}+{STAMP}", ASSIGNMENT).user == "s1"   # add_random_string = False
    for other in (f"s1+bahdanau+{STAMP}+abc", f"+{ASSIGNMENT}+{STAMP}+abc", f"s1+{ASSIGNMENT}++abc", "s1", ASSIGNMENT):
        assert Name.parse(other, ASSIGNMENT) is None


def test_a_hand_in_is_copied_with_its_secret_and_time(tmp_path):
    name = hand_in(tmp_path / "inbound")
    got = read(tmp_path / "inbound", name, tmp_path / "copy.ipynb")
    folder = tmp_path / "inbound" / name.folder
    assert got.secret == (folder / handin.SECRET).read_text() and got.notebook == NOTEBOOK and got.notice is None
    assert (tmp_path / "copy.ipynb").read_bytes() == (folder / NOTEBOOK).read_bytes()
    assert got.handed_in >= os.stat(folder / handin.SECRET).st_ctime
    # nbgrader's notebook_hash: md5 of the secret, then the notebook's name without .ipynb
    from nbgrader.utils import notebook_hash
    assert got.feedback == notebook_hash(secret=got.secret, notebook_id="attention_scoring") + ".html"


def test_the_time_is_the_file_systems_never_the_students_timestamp(tmp_path):
    """Does a ``timestamp.txt`` (or folder name) from long ago change nothing, while a notebook
    rewritten after its secret makes the hand-in that much later?"""
    name = hand_in(tmp_path / "inbound")
    folder = tmp_path / "inbound" / name.folder
    (folder / "timestamp.txt").write_text("2000-01-01 00:00:00.000000 UTC")
    first = read(tmp_path / "inbound", name, tmp_path / "copy.ipynb").handed_in
    time.sleep(0.05)
    (folder / NOTEBOOK).write_bytes(notebook("buggy"))
    assert read(tmp_path / "inbound", name, tmp_path / "copy.ipynb").handed_in > first + 0.04
    assert first > time.time() - 60


def test_a_folder_named_for_another_user_is_refused(tmp_path):
    """``nbgrader submit --student nobody`` run by root: the folder is root's, named for nobody."""
    inbound = tmp_path / "inbound"
    why = refused(inbound, hand_in(inbound, "nobody"), tmp_path / "copy").why
    assert "names 'nobody' but its folder belongs to root" in why and "--student" in why
    why = refused(inbound, hand_in(inbound, "no-such-user-here"), tmp_path / "copy").why
    assert "no Unix user" in why
    assert not (tmp_path / "copy").exists()
    assert read(inbound, hand_in(inbound, "nobody", random="x" * 12), tmp_path / "copy", check_owner=False)


@pytest.mark.parametrize("secret", ["", "short", "g" * 128, "0" * 2000, "ab\n" * 40, "é" * 64])
def test_a_secret_nbgrader_never_writes_is_refused(tmp_path, secret):
    name = hand_in(tmp_path / "inbound", secret=secret)
    assert "submission_secret.txt is not a secret nbgrader writes" in refused(tmp_path / "inbound", name,
                                                                             tmp_path / "copy").why


def test_links_fifos_and_devices_are_refused_without_being_read(tmp_path):
    """Is a secret that links to a root-only file, a FIFO (which would block a reader for ever),
    a character device that never ends, a linked notebook or a linked folder refused, quickly?"""
    inbound = tmp_path / "inbound"
    started = time.monotonic()
    cases = []
    name = hand_in(inbound, random="secretlink00")
    (inbound / name.folder / handin.SECRET).unlink()
    (inbound / name.folder / handin.SECRET).symlink_to("/etc/shadow")
    cases.append((name, "submission_secret.txt cannot be opened (a link)", False))
    name = hand_in(inbound, random="secretfifo00")
    (inbound / name.folder / handin.SECRET).unlink()
    os.mkfifo(inbound / name.folder / handin.SECRET)
    cases.append((name, "submission_secret.txt is not a plain file", False))
    name = hand_in(inbound, random="notebookfifo")
    (inbound / name.folder / NOTEBOOK).unlink()
    os.mkfifo(inbound / name.folder / NOTEBOOK)
    cases.append((name, f"{NOTEBOOK} is not a plain file", True))
    name = hand_in(inbound, random="devicezero00")
    (inbound / name.folder / NOTEBOOK).unlink()
    os.mknod(inbound / name.folder / NOTEBOOK, stat.S_IFCHR | 0o644, os.makedev(1, 5))   # /dev/zero
    cases.append((name, f"{NOTEBOOK} is not a plain file", True))
    name = hand_in(inbound, random="notebooklink")
    (inbound / name.folder / NOTEBOOK).unlink()
    (inbound / name.folder / NOTEBOOK).symlink_to("/etc/shadow")
    cases.append((name, f"{NOTEBOOK} cannot be opened (a link)", True))
    real = hand_in(tmp_path / "elsewhere", random="foldertarget")
    (inbound / f"root+{ASSIGNMENT}+{STAMP}+folderlink00").symlink_to(tmp_path / "elsewhere" / real.folder)
    cases.append((Name.parse(f"root+{ASSIGNMENT}+{STAMP}+folderlink00", ASSIGNMENT), "not a folder", False))
    for name, said, told in cases:
        why = refused(inbound, name, tmp_path / "copy.ipynb")
        assert said in why.why, (name.folder, why.why)
        assert (why.told is not None) == told and (why.secret is not None) == told
    assert time.monotonic() - started < 10
    assert not (tmp_path / "copy.ipynb").exists() or (tmp_path / "copy.ipynb").stat().st_size == 0


def test_a_huge_or_growing_notebook_is_read_no_further_than_the_limit(tmp_path):
    inbound = tmp_path / "inbound"
    name = hand_in(inbound, data=b" " * (LIMIT + 1))
    why = refused(inbound, name, tmp_path / "copy.ipynb")
    assert "larger than 1 MB" in why.why and why.told.id == "exchange.reason.too_large"
    name = hand_in(inbound, data=b"{", random="growing00000")
    path, stop = inbound / name.folder / NOTEBOOK, threading.Event()

    def grow():
        with path.open("ab") as out:
            while not stop.is_set():
                out.write(b" " * 65536)
                out.flush()
    writer = threading.Thread(target=grow)
    writer.start()
    try:
        while path.stat().st_size <= LIMIT:   # still being written when it is read
            time.sleep(0.01)
        assert "larger than 1 MB" in refused(inbound, name, tmp_path / "copy.ipynb").why
    finally:
        stop.set()
        writer.join()
    assert (tmp_path / "copy.ipynb").stat().st_size <= LIMIT


def test_thousands_of_folders_are_never_entered(tmp_path):
    """With 3,000 folders beside the notebook, is it read as quickly as alone; without the
    notebook, is the listing cut at ``MAX_ENTRIES`` and the hand-in refused, saying so?"""
    inbound = tmp_path / "inbound"
    name = hand_in(inbound)
    for i in range(3000):
        (inbound / name.folder / f"d{i}" / "deeper").mkdir(parents=True)
    assert read(inbound, name, tmp_path / "copy.ipynb").notebook == NOTEBOOK
    (inbound / name.folder / NOTEBOOK).unlink()
    why = refused(inbound, name, tmp_path / "copy.ipynb")
    assert f"more than {handin.MAX_ENTRIES} entries" in why.why and why.told is not None


def test_another_single_notebook_is_graded_with_a_warning_and_several_are_refused(tmp_path):
    inbound = tmp_path / "inbound"
    name = hand_in(inbound)
    (inbound / name.folder / NOTEBOOK).rename(inbound / name.folder / "attention_scoring (1).ipynb")
    got = read(inbound, name, tmp_path / "copy.ipynb")
    assert got.notebook == "attention_scoring (1).ipynb" and got.notice.id == "issue.other_notebook"
    assert got.feedback == handin.feedback_name(got.secret, "attention_scoring (1)")
    (inbound / name.folder / "draft.ipynb").write_bytes(notebook("buggy"))
    why = refused(inbound, name, tmp_path / "copy.ipynb")
    assert why.told.id == "exchange.reason.several" and why.notebooks == ("attention_scoring (1).ipynb", "draft.ipynb")


@pytest.mark.parametrize(("data", "said"), [
    (b"\xff\xfe not json", "service.error.not_json"),
    (b'{"cells": "none"}', "service.error.not_notebook"),
    (None, "service.error.wrong_assignment"),
])
def test_a_copy_that_is_no_notebook_of_this_assignment_is_refused_as_an_upload_is(tmp_path, assignments, data, said):
    path = tmp_path / "copy.ipynb"
    path.write_bytes(notebook("correct", "bahdanau") if data is None else data)
    told = handin.HandIn(Name("f", "s", "s"), "0" * 128, NOTEBOOK, 0.0, 0)
    with pytest.raises(Refused) as raised:
        handin.check_copy(path, LIMIT, assignments, told)
    assert raised.value.told.id == said and raised.value.secret == "0" * 128
    path.write_bytes(notebook("correct"))
    handin.check_copy(path, LIMIT, assignments, told)


def tiny_cells(count: int) -> bytes:
    """A notebook of ``count`` tiny cells, each with nested metadata: many small containers."""
    cells = [{"cell_type": "code", "metadata": {"nbgrader": {"grade_id": f"c{i}"}, "x": [[{}]]}, "outputs": [],
              "execution_count": None, "source": "x = 1"} for i in range(count)]
    return json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": cells}).encode()


def cost(tmp_path: Path, scale: int, assignments: Assignments) -> tuple[float, int, int]:
    """Seconds and peak traced bytes to read and check a hand-in of ``scale`` units (20 folders,
    each with a file in it, 20 tiny files and 300 tiny cells of its notebook per unit), and the
    notebook's bytes."""
    inbound = tmp_path / f"x{scale}"
    name = hand_in(inbound, data=tiny_cells(300 * scale))
    folder = inbound / name.folder
    for i in range(20 * scale):
        (folder / f"d{i}").mkdir()
        (folder / f"d{i}" / "inside.txt").write_bytes(b"x")
        (folder / f"f{i}.txt").write_bytes(b"x")
    tracemalloc.start()
    started = time.perf_counter()
    got = read(inbound, name, tmp_path / f"copy{scale}.ipynb", limit=64 << 20)
    with contextlib.suppress(Refused):   # 30,000 cells hold more values than a notebook may: refused, bounded
        handin.check_copy(tmp_path / f"copy{scale}.ipynb", 64 << 20, assignments, got)
    seconds = time.perf_counter() - started
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return seconds, peak, (folder / NOTEBOOK).stat().st_size


def test_time_and_memory_grow_no_faster_than_the_hand_in(tmp_path, assignments):
    """The same content at 1x, 10x and 100x: does reading and checking it take at most about
    proportionally more time, and memory beyond a fixed part (the reader's buffer) within a
    fixed multiple of the notebook's bytes?"""
    measured = {scale: min(cost(tmp_path / f"run{run}", scale, assignments) for run in range(runs))
                for scale, runs in ((1, 3), (10, 2), (100, 1))}
    base_s, base_bytes, base_size = measured[1]
    for scale in (10, 100):
        seconds, peak, size = measured[scale]
        assert seconds <= 3 * scale * base_s + 0.1, measured
        assert peak - base_bytes <= 40 * (size - base_size), measured

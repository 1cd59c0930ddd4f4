"""Reading a submission keeps what grading uses and nothing else (SPEC §3: "A limit that protects
the grader costs the submission only what it bounds"), and no number in its metadata is needed."""
import io
import json
import subprocess
import sys
import time
from pathlib import Path

import ijson
import nbformat
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from autograder.grading.assemble import CellPlan, assemble, read_notebook
from autograder.submissions.reading import MAX_DEPTH, STREAM_FACTOR, NotJSON, TooLarge, _Namer, read_kept

REPO = Path(__file__).resolve().parents[2]
NOTEBOOKS = [*sorted((REPO / "examples").glob("*/*.ipynb")), *sorted((REPO / "assignments").glob("*/*.ipynb"))]
SOURCE = nbformat.read(REPO / "assignments" / "attention_scoring" / "attention_scoring.ipynb", as_version=4)
MB = 1 << 20


def plan_of(data: bytes, tasks=("masked_softmax", "dot_product_attention")) -> CellPlan:
    plan = CellPlan()
    notebook = read_notebook(Path("s.ipynb"), data, plan)
    if notebook is not None:
        assemble(notebook, SOURCE, list(tasks), plan)
    return plan


def kept(notebook: dict, limit: int = 20 * MB) -> bytes:
    return read_kept(io.BytesIO(json.dumps(notebook).encode()), limit)


def correct() -> dict:
    return json.loads((REPO / "examples" / "attention_scoring" / "correct.ipynb").read_text(encoding="utf-8"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_what_is_kept_runs_the_same_cells_as_the_whole_notebook(path):
    data = path.read_bytes()
    whole = CellPlan()
    assemble(nbformat.reads(data.decode(), as_version=4), SOURCE, ["masked_softmax"], whole)
    reduced = plan_of(read_kept(io.BytesIO(data), 20 * MB), ["masked_softmax"])
    assert reduced.cells == whole.cells
    assert [w.code for w in reduced.warnings] == [w.code for w in whole.warnings]


def test_attachments_outputs_and_metadata_do_not_count_against_the_limit():
    """A 30 MB image attachment, 5 MB of widget state and a 10 MB output: still read, small."""
    notebook = correct()
    markdown = next(c for c in notebook["cells"] if c["cell_type"] == "markdown")
    markdown["attachments"] = {"plot.png": {"image/png": "A" * (30 * MB)}}
    notebook["metadata"]["widgets"] = {"state": "B" * (5 * MB)}
    code = next(c for c in notebook["cells"] if c["cell_type"] == "code")
    code["outputs"] = [{"output_type": "stream", "name": "stdout", "text": "C" * (10 * MB)}]
    data = kept(notebook)
    assert len(data) < 100_000
    assert plan_of(data).cells == plan_of(kept(correct())).cells


def test_code_above_the_limit_is_too_large_and_a_huge_file_is_not_read():
    notebook = correct()
    notebook["cells"].append({"cell_type": "code", "source": "#" + "x" * (2 * MB), "metadata": {},
                              "outputs": [], "execution_count": None})
    with pytest.raises(TooLarge) as large:
        kept(notebook, limit=MB)
    assert large.value.what == "kept"
    stream = io.BytesIO(b'{"cells": [], "pad": "' + b"x" * (STREAM_FACTOR * MB + 10) + b'"}')
    with pytest.raises(TooLarge) as huge:
        read_kept(stream, MB)
    assert huge.value.what == "read" and stream.tell() <= (STREAM_FACTOR + 17) * MB


@pytest.mark.parametrize("points", ["10" * 200, '"ten"', "1e999", "-1", "NaN", "[1, 2]", "null"])
def test_points_in_the_submissions_metadata_are_never_needed_as_numbers(points):
    """10**400, "ten", 1e999 in a test cell's points: the same cells run, with a warning."""
    text = json.dumps(correct())
    tests = next(c for c in correct()["cells"] if c["metadata"].get("nbgrader", {}).get("grade_id")
                 == "masked_softmax_tests")
    old = json.dumps(tests["metadata"]["nbgrader"])
    forged = old.replace(f'"points": {tests["metadata"]["nbgrader"]["points"]}', f'"points": {points}')
    assert forged != old
    data = text.replace(old, forged).encode()
    if points == "NaN":  # not JSON: the notebook is invalid, said so, and nothing crashes
        with pytest.raises(NotJSON):
            read_kept(io.BytesIO(data), 20 * MB)
        return
    plan = plan_of(read_kept(io.BytesIO(data), 20 * MB))
    assert plan.cells == plan_of(kept(correct())).cells and not plan.errors
    assert "points_changed" in [w.code for w in plan.warnings]


def test_a_number_of_thousands_of_digits_is_an_invalid_notebook_not_a_crash():
    data = b'{"nbformat": 4, "cells": [{"cell_type": "code", "source": "", "metadata": {"nbgrader": {"points": ' \
           + b"9" * 5000 + b"}}}]}"
    with pytest.raises(NotJSON):
        read_kept(io.BytesIO(data), MB)


@pytest.mark.parametrize("data", [b'{"cells": [', b"\xff\xfe{}", b"", b"not json"])
def test_what_is_not_json_says_so(data):
    with pytest.raises(NotJSON):
        read_kept(io.BytesIO(data), MB)


def test_an_nbformat_3_notebook_keeps_its_cells():
    v4 = nbformat.reads(json.dumps(correct()), as_version=4)
    v3 = nbformat.convert(v4, 3)
    data = read_kept(io.BytesIO(nbformat.writes(v3, version=3).encode()), 20 * MB)
    plan = plan_of(data)
    assert [label for label, _ in plan.cells] == [label for label, _ in plan_of(kept(correct())).cells]
    assert "old_nbformat" in [w.code for w in plan.warnings]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_our_checksum_is_nbgraders_own(path):
    """Is a released cell's stored checksum the one assemble computes (nbgrader's rule), so that
    an untouched locked cell of an older release is not called edited?"""
    from nbgrader.utils import compute_checksum

    from autograder.grading.assemble import nbgrader_checksum, nbgrader_meta
    cells = [c for c in nbformat.read(path, as_version=4).cells if nbgrader_meta(c).get("grade_id")]
    assert cells
    for cell in cells:
        assert nbgrader_checksum(cell) == compute_checksum(cell)


JSON_VALUES = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=4),
                           lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner,
                                                                                        max_size=3), max_leaves=25)


@settings(max_examples=300, deadline=None)
@given(JSON_VALUES)
def test_events_are_named_as_ijsons_own_parse_names_them(value):
    data = json.dumps(value).encode()
    named = []
    namer = _Namer(lambda *event: named.append(event))
    for event in ijson.basic_parse(io.BytesIO(data)):
        namer.send(event)
    assert named == list(ijson.parse(io.BytesIO(data)))


def _with_metadata(nested: str) -> bytes:
    """The correct notebook with ``nested`` (JSON text) as its metadata's "x"."""
    notebook = correct()
    notebook["metadata"]["x"] = "NESTED"
    return json.dumps(notebook).replace('"NESTED"', nested, 1).encode()


def _nested_notebook(depth: int, key: str = "") -> bytes:
    """The correct notebook with metadata nested ``depth`` deep (arrays, or maps under ``key``)."""
    return _with_metadata(f'{{"{key}": ' * depth + "1" + "}" * depth if key else "[" * depth + "]" * depth)


@pytest.mark.parametrize("depth, key", [(200_000, ""), (900, "k" * 20_000)])
def test_a_deeply_nested_notebook_is_invalid_in_bounded_memory_and_time(depth, key):
    """476 kB nested 200,000 deep took the grader 24 GB (the parser named every event by its
    whole path), 18 MB of 20 kB keys 900 deep 15 GB: now one line, at once, in a process
    allowed 1.5 GB."""
    code = ("import io, resource, sys\n"
            "resource.setrlimit(resource.RLIMIT_AS, (1536 << 20, 1536 << 20))\n"
            "from autograder.submissions.reading import NotJSON, read_kept\n"
            "try:\n"
            "    read_kept(io.BytesIO(sys.stdin.buffer.read()), 20 << 20)\n"
            "except NotJSON as why:\n"
            "    print(why.reason)\n")
    done = subprocess.run([sys.executable, "-c", code], input=_nested_notebook(depth, key), capture_output=True,
                          timeout=60, cwd=REPO)
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    assert done.stdout.decode().strip() == f"values nested more than {MAX_DEPTH} deep (a notebook needs about 6)"


def test_long_keys_at_the_deepest_allowed_level_cost_no_more_than_their_bytes():
    """Paths beyond LONG_PREFIX characters are not spelled out: a million values under a
    path of megabytes are read in a moment, and the notebook's cells are still found."""
    deep = '{"' + "k" * 20_000 + '": '
    data = _with_metadata(deep * (MAX_DEPTH - 3) + "[" + "1," * 1_000_000 + "1]" + "}" * (MAX_DEPTH - 3))
    started = time.monotonic()
    reduced = read_kept(io.BytesIO(data), 20 * MB)
    assert time.monotonic() - started < 20
    assert plan_of(reduced).cells == plan_of(json.dumps(correct()).encode()).cells


def _with_keys_twice(first: list, second: list, metadata_twice: bool) -> bytes:
    """A notebook whose JSON gives ``cells`` twice (and, with ``metadata_twice``, each cell's
    ``metadata`` twice, the second without nbgrader's part), written by hand: json.dumps cannot."""
    def cell_text(cell: dict) -> str:
        body = ",".join(f"{json.dumps(k)}:{json.dumps(v)}" for k, v in cell.items())
        return "{" + body + (',"metadata":{}' if metadata_twice else "") + "}"
    cells = ",".join(cell_text(c) for c in first), ",".join(cell_text(c) for c in second)
    return ('{"cells":[%s],"metadata":{},"nbformat":4,"nbformat_minor":5,"cells":[%s]}' % cells).encode()


@pytest.mark.parametrize("metadata_twice", [False, True])
def test_a_key_given_twice_is_read_as_jupyter_and_nbgrader_read_it(metadata_twice):
    """Red team 11: with "cells" twice, Jupyter showed the untouched template (the last list) while
    the grader ran both lists, first cells first, and gave 13/13. Is what is graded what
    nbformat reads, the last of each key?"""
    solved, template = correct()["cells"], json.loads(
        (REPO / "student_template" / "attention_scoring" / "attention_scoring.ipynb").read_text(encoding="utf-8"))["cells"]
    for first, second in ((solved, template), (template, solved)):
        data = _with_keys_twice(first, second, metadata_twice)
        read_by_nbformat = nbformat.reads(data.decode(), as_version=4)
        whole = CellPlan()
        assemble(read_by_nbformat, SOURCE, ["masked_softmax"], whole)
        reduced = plan_of(read_kept(io.BytesIO(data), 20 * MB), ["masked_softmax"])
        assert reduced.cells == whole.cells


def _with_tiny_containers_in_nbgrader(count: int) -> bytes:
    """The correct notebook with a cell's nbgrader metadata holding ``count`` tiny containers."""
    notebook = correct()
    cell = next(c for c in notebook["cells"] if c["metadata"].get("nbgrader", {}).get("grade_id"))
    cell["metadata"]["nbgrader"]["x"] = "TINY"
    return json.dumps(notebook).replace('"TINY"', "[" + ",".join(["[{}]"] * count) + "]", 1).encode()


def test_nbgrader_metadata_of_many_tiny_containers_is_refused_early_in_bounded_memory():
    """Red team 13: the size cap counted serialised bytes after a value was built, so 15.5 MB of
    tiny containers in nbgrader metadata took the grader to 2.4 GB and 22-65 s. Is what is kept
    counted as it is built, and the notebook refused within a fixed memory, with a reason that
    names the file and the fix?"""
    import tracemalloc

    from autograder.grading.pipeline import _unread
    from autograder.texts import render
    data = _with_tiny_containers_in_nbgrader(1_000_000)   # 5 MB
    tracemalloc.start()
    started = time.monotonic()
    with pytest.raises(TooLarge) as refused:
        read_kept(io.BytesIO(data), 20 * MB)
    seconds, peak = time.monotonic() - started, tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert refused.value.what == "values"
    assert peak < 40 * MB and seconds < 10, f"{peak:,} bytes at the peak, {seconds:.1f} s"
    said = render(_unread("hw.ipynb", refused.value).text, "en")
    assert said.startswith("hw.ipynb:") and "new copy of the released notebook" in said


def test_a_cells_source_given_line_by_line_costs_its_characters_only():
    """A code cell's source as a list of 200,000 short lines (as Jupyter writes lines) is kept
    joined: it counts its characters, not a value per line, and runs as the same code."""
    notebook = correct()
    cell = next(c for c in notebook["cells"] if c["cell_type"] == "code")
    cell["source"] = ["x = 1\n"] * 200_000
    kept = json.loads(read_kept(io.BytesIO(json.dumps(notebook).encode()), 20 * MB))
    assert any(c.get("source") == "x = 1\n" * 200_000 for c in kept["cells"])

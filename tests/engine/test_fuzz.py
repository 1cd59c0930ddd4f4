"""Malformed input from a student is the student's error, never the grader's crash:
hypothesis over notebook JSON (what ``assemble`` reads) and over protocol frames (what a
worker can send back)."""
import contextlib
import json
import socket
import struct
from pathlib import Path

import nbformat
from hypothesis import given, settings
from hypothesis import strategies as st

from autograder.grading.assemble import CellPlan, assemble, read_notebook
from autograder.sandbox import protocol

REPO = Path(__file__).resolve().parents[2]
SOURCE = nbformat.read(REPO / "assignments" / "attention_scoring" / "attention_scoring.ipynb", as_version=4)
TASKS = ["masked_softmax", "dot_product_attention"]

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=20)
grade_ids = st.sampled_from(["masked_softmax", "masked_softmax_tests", "imports", "cost_analysis",
                             "x" * 500, ""]) | json_values
metadata = st.one_of(json_values, st.fixed_dictionaries(
    {"nbgrader": st.one_of(json_values, st.fixed_dictionaries(
        {"grade_id": grade_ids, "solution": json_values, "grade": json_values, "locked": json_values,
         "points": json_values, "checksum": json_values}))}))
cells = st.fixed_dictionaries({"cell_type": st.sampled_from(["code", "markdown", "raw"]) | json_values,
                               "metadata": metadata,
                               "source": st.text(max_size=40) | st.lists(st.text(max_size=10)) | json_values})
notebooks = st.fixed_dictionaries({"cells": st.lists(cells, max_size=6) | json_values,
                                   "metadata": json_values | st.just({}),
                                   "nbformat": st.sampled_from([4, 3, 5]) | json_values,
                                   "nbformat_minor": st.integers(0, 5) | json_values})


@settings(max_examples=300)
@given(notebook=notebooks)
def test_any_notebook_json_is_read_or_refused_with_a_reason(notebook):
    """Does every notebook-shaped JSON end as cells to run or as a named error, never an exception?"""
    plan = CellPlan()
    data = json.dumps(notebook).encode()
    parsed = read_notebook(Path("student.ipynb"), data, plan)
    if parsed is None:
        assert plan.errors and plan.errors[0].code in ("invalid_notebook", "unreadable")
        return
    assemble(parsed, SOURCE, TASKS, plan)
    assert all(isinstance(label, str) and isinstance(source, str) for label, source in plan.cells)


@settings(max_examples=300)
@given(body=json_values | st.fixed_dictionaries(
    {"__tensor__": json_values, "dtype": st.sampled_from(["float32", "uint8", "nope"]) | json_values,
     "shape": json_values, "device": json_values}) | st.fixed_dictionaries({"__handle__": json_values}),
    sizes=st.lists(st.integers(0, 64), max_size=3) | json_values, tail=st.binary(max_size=64))
def test_any_frame_decodes_or_is_a_protocol_error(body, sizes, tail):
    """Does every frame a worker could send decode to plain values or raise ProtocolError/EOFError?"""
    header = json.dumps({"body": body, "sizes": sizes}).encode()
    grader, worker = socket.socketpair()
    with grader, worker:
        worker.sendall(struct.pack(">Q", len(header)) + header + tail)
        worker.shutdown(socket.SHUT_WR)
        with contextlib.suppress(protocol.ProtocolError, EOFError):
            protocol.recv(grader)


def test_infinity_where_a_handle_is_expected_is_a_protocol_error():
    """Is a reply holding Infinity as a handle refused as malformed (it was an OverflowError)?"""
    header = b'{"body": {"__dict__": [["value", {"__handle__": Infinity}]]}, "sizes": []}'
    grader, worker = socket.socketpair()
    with grader, worker:
        worker.sendall(struct.pack(">Q", len(header)) + header)
        try:
            protocol.recv(grader)
        except protocol.ProtocolError as error:
            assert "handle" in str(error)
        else:
            raise AssertionError("accepted Infinity as a handle")

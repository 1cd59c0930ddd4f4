"""Caps on the trusted side of the socket (issue 9, item 3b): whatever a worker does to its
own caps, the grader reads at most ``max_reply_mb`` per reply and keeps at most
``max_printed_kb`` of printed output per submission."""
import contextlib
import resource
import time

import pytest

from autograder.sandbox.client import MAX_MESSAGE, MAX_TYPE_NAME, Student, WorkerLost

from .helpers import LIMITS, run

pytestmark = pytest.mark.timeout(60)
FORGE = ("import json, os, struct\n"
         "fd = next(int(f) for f in os.listdir('/proc/self/fd')\n"
         "          if int(f) > 2 and os.readlink(f'/proc/self/fd/{f}').startswith('socket:'))\n"
         "def frame(body, sizes=()):\n"
         "    header = json.dumps({'body': body, 'sizes': list(sizes)}).encode()\n"
         "    return struct.pack('>Q', len(header)) + header\n")
UNCAP_STDOUT = "import sys\nsys.stdout.limit = 10 ** 9  # the worker's own cap, patched away\n"


def test_a_reply_over_the_cap_ends_the_worker(worker):
    """Does a function that returns a 12 MB tensor (over the 8 MB cap) end the worker with
    a reason naming the cap?"""
    run(worker, "import torch\ndef big():\n    return torch.zeros(3 << 20)")
    with pytest.raises(WorkerLost, match=r"^it sent a reply larger than 8 MB$"):
        Student(worker.transport).call("big")


def test_a_forged_frame_claiming_a_gigabyte_is_cut_at_the_cap(worker):
    """Does a frame that announces a 1 GB tensor and streams zeros stop being read at the
    cap, with the grader's memory nowhere near a gigabyte?"""
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    source = FORGE + ("os.write(fd, frame({'__tensor__': 0, 'dtype': 'uint8', 'shape': [1 << 30]}, [1 << 30]))\n"
                      "chunk = bytes(1 << 20)\nfor _ in range(1024):\n    os.write(fd, chunk)\n")
    with pytest.raises(WorkerLost, match="larger than 8 MB"):
        run(worker, source)
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss_before < 200 << 10  # KB


def test_printed_output_is_capped_per_submission_by_the_grader(sandbox):
    """When a cell removes the worker's own output cap and every request prints 100 KB,
    does the grader keep no more than max_printed_kb over the whole submission, across
    two workers, and say that it dropped the rest?"""
    deadline, printed = time.monotonic() + 60, []
    for _ in range(2):
        with contextlib.closing(sandbox.spawn(deadline=deadline)) as worker:
            run(worker, UNCAP_STDOUT)
            for _ in range(4):
                printed.append(run(worker, "print('x' * 100_000)")["stdout"])
    body, _, note = "".join(printed).partition("\n[... printed output beyond")
    assert len(body) == LIMITS.max_printed_kb * 1024 and set(body) == {"x", "\n"}
    assert note.endswith("characters per submission not kept]")  # said once


def test_a_new_submission_gets_a_new_output_budget(sandbox):
    """Does the next submission (another deadline) print again?"""
    for _ in range(2):
        with contextlib.closing(sandbox.spawn()) as worker:
            run(worker, UNCAP_STDOUT)
            assert len(run(worker, "print('y' * 100_000)")["stdout"]) == 100_001


def test_forged_error_texts_are_capped(worker):
    """Does an error reply with a megabyte of message and type name reach the checks cut short?"""
    reply = run(worker, FORGE + "os.write(fd, frame({'__dict__': [['error', {'__dict__': [\n"
                                "    ['type', 'T' * 10**6], ['message', 'm' * 10**6]]}]]}))\n")
    assert len(reply["error"]["type"]) == MAX_TYPE_NAME and len(reply["error"]["message"]) == MAX_MESSAGE

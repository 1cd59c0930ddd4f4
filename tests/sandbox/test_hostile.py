"""Student cells that attack the grader or the machine. Each is bounded by the small limits
of conftest.LIMITS (3 s a cell, 1 GiB a process, 16 processes), and after each the
``worker`` fixture checks that no process of the submission is left."""
import contextlib
import os
import signal
import socket
import time
from pathlib import Path

import pytest

from autograder.sandbox.client import Student, WorkerLost

from .helpers import LIMITS, cut_at_its_limit, processes_of, run

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.timeout(60)


def lost(worker, source: str) -> tuple[str, float]:
    """The reason a cell lost its worker, and how long that took."""
    started = time.monotonic()
    with pytest.raises(WorkerLost) as caught:
        run(worker, source)
    assert not worker.alive
    return caught.value.reason, time.monotonic() - started


# --- ending the process -------------------------------------------------------------------
def test_sys_exit_is_an_error_and_the_worker_goes_on(worker):
    """Does ``sys.exit()`` in a cell come back as an error, with the worker still answering?"""
    assert run(worker, "import sys\nsys.exit(3)")["error"]["type"] == "SystemExit"
    assert run(worker, "print('still here')")["stdout"] == "still here\n"


def test_os_exit_loses_the_worker_and_the_next_spawn_works(sandbox, worker):
    """Does ``os._exit`` end in WorkerLost naming the exit status, with a fresh worker next?"""
    reason, _ = lost(worker, "import os\nos._exit(3)")
    assert reason == "the process exited (os._exit or a crash): exit status 3"
    with contextlib.closing(sandbox.spawn()) as fresh:
        assert run(fresh, "print(1)")["stdout"] == "1\n"


def test_a_segfault_loses_the_worker_naming_the_signal(worker):
    """Does a crash in C end in WorkerLost that says SIGSEGV?"""
    reason, _ = lost(worker, "import ctypes\nctypes.string_at(0)")
    assert reason.endswith("killed by SIGSEGV")


def test_an_infinite_loop_is_cut_at_the_cell_timeout(worker):
    """Is ``while True: pass`` stopped at the cell's CPU-time limit (or, on a machine too
    loaded to give it that, at the wall-clock backstop)?"""
    reason, took = lost(worker, "while True:\n    pass")
    assert cut_at_its_limit(reason, LIMITS.cell_timeout_s)
    assert took < LIMITS.cell_timeout_s * LIMITS.wall_factor + 5


def test_one_deadline_bounds_the_submission_across_workers(sandbox):
    """Do cells that each fit the cell timeout, run in two workers one after the other
    (as after a crash), still stop at the submission's one deadline?"""
    deadline = time.monotonic() + 6
    first = sandbox.spawn(deadline=deadline)
    run(first, "import time\ntime.sleep(2.5)")
    first.close()
    second = sandbox.spawn(deadline=deadline)  # a re-spawned worker gets no fresh time
    run(second, "import time\ntime.sleep(2.5)")
    reason, _ = lost(second, "time.sleep(2.5)")
    assert reason == "the submission used up its 6 s"
    assert time.monotonic() - deadline < 1


FORGE = ("import json, os, struct\n"
         "fd = next(int(f) for f in os.listdir('/proc/self/fd')\n"
         "          if int(f) > 2 and os.readlink(f'/proc/self/fd/{f}').startswith('socket:'))\n")


@pytest.mark.parametrize("frame, reason", [
    ("struct.pack('>Q', 1 << 40)", "it sent an unreadable reply (header of 1099511627776 bytes)"),
    ("(lambda h: struct.pack('>Q', len(h)) + h)(json.dumps({'body': [1], 'sizes': []}).encode())",
     "it sent a reply that is not a dict"),
])
def test_a_forged_reply_loses_the_worker(worker, frame, reason):
    """Does a cell that writes its own frame onto the grader's socket lose its worker?"""
    assert lost(worker, FORGE + f"os.write(fd, {frame})")[0] == reason


# --- memory, output, processes, disk ------------------------------------------------------
@pytest.mark.parametrize("source", [
    "x = bytearray()\nwhile True:\n    x += bytes(10**7)",
    "import torch\nx = torch.empty(10**11)",
])
def test_a_memory_bomb_fails_quickly(worker, source):
    """Does allocating without end stop at memory_mb with an error (or a lost worker), quickly?"""
    started = time.monotonic()
    try:
        reply = run(worker, source)
    except WorkerLost:
        reply = {"error": {"type": "WorkerLost"}}
    assert reply["error"]["type"] in ("MemoryError", "RuntimeError", "WorkerLost")
    assert time.monotonic() - started < LIMITS.cell_timeout_s + 2


def test_a_cell_that_keeps_its_memory_loses_the_worker(worker):
    """Does a cell whose names hold memory_mb when MemoryError hits end its worker, so that
    the rest of the notebook can be re-run without it?"""
    reason, _ = lost(worker, "blocks = []\nwhile True:\n    blocks.append(bytearray(10**8))")
    assert reason == "ran out of memory (1024 MB)"


def test_printed_output_is_capped(worker):
    """Does a print flood come back cut to max_output_kb, with a count of the rest?"""
    stdout = run(worker, "for i in range(300_000):\n    print(i)")["stdout"]
    assert len(stdout) < LIMITS.max_output_kb * 1024 + 100 and "more characters not kept" in stdout


def test_an_endless_print_flood_is_bounded_in_time(worker):
    """Does printing 10**8 lines end by the cell timeout, not fill the grader's memory?"""
    reason, took = lost(worker, "for i in range(10**8):\n    print(i)")
    assert cut_at_its_limit(reason, LIMITS.cell_timeout_s) and took < LIMITS.cell_timeout_s * LIMITS.wall_factor + 5


def test_c_level_output_goes_nowhere(worker):
    """Does writing 1 GiB to file descriptors 1 and 2 finish and leave the reply small?"""
    reply = run(worker, "import os\nchunk = b'x' * (1 << 20)\n"
                        "for _ in range(512):\n    os.write(1, chunk)\n    os.write(2, chunk)")
    assert "error" not in reply and reply["stdout"] == ""


def test_forking_is_capped_at_max_processes(worker):
    """Can a cell start no more than max_processes processes?"""
    run(worker, "import os, time\nforked = 0\nfor _ in range(200):\n    try:\n"
                "        pid = os.fork()\n    except OSError:\n        break\n"
                "    if pid == 0:\n        time.sleep(600)\n        os._exit(0)\n    forked += 1")
    assert 0 < int(run(worker, "print(forked)")["stdout"]) < LIMITS.max_processes


def test_forked_copies_of_the_worker_do_not_answer(worker):
    """When a cell forks and every copy returns, does the grader get one reply per request?"""
    assert run(worker, "import os\nfor _ in range(3):\n    os.fork()")["value"] is None
    assert run(worker, "print('next')")["stdout"] == "next\n"
    assert run(worker, "print('and the next')")["stdout"] == "and the next\n"


def test_a_fork_bomb_is_cut_and_cleaned_up(worker):
    """Does a classic fork bomb end at the cell's limit (its processes' CPU time counts), and
    leave no process behind?"""
    reason, _ = lost(worker, "import os\nwhile True:\n    try:\n        os.fork()\n"
                             "    except OSError:\n        pass")
    assert cut_at_its_limit(reason, LIMITS.cell_timeout_s)


@pytest.mark.parametrize("source, error", [
    ("with open('/tmp/big', 'wb') as f:\n    for _ in range(1024):\n        f.write(bytes(1 << 20))",
     "File too large"),
    ("for n in range(8):\n    with open(f'/tmp/part{n}', 'wb') as f:\n"
     "        for _ in range(15):\n            f.write(bytes(1 << 20))", "No space left on device"),
])
def test_filling_the_disk_stops_at_the_limits(worker, source, error):
    """Does a 1 GiB file stop at max_file_mb, and many files at the size of /tmp?"""
    assert error in run(worker, source)["error"]["message"]


def test_tmp_is_emptied_between_submissions(sandbox, worker):
    """Does a file left in /tmp by one submission vanish before the next one starts?"""
    run(worker, "import os\nos.makedirs('/tmp/a/b')\nopen('/tmp/a/b/answers', 'w').write('42')\n"
                "os.chmod('/tmp/a', 0)")
    worker.close()
    with contextlib.closing(sandbox.spawn()) as fresh:
        assert run(fresh, "import os\nprint(os.listdir('/tmp'))")["stdout"] == "[]\n"


# --- what it can see ----------------------------------------------------------------------
@pytest.mark.parametrize("source, error", [
    (f"open({str(REPO / 'reference' / 'attention.py')!r})", "FileNotFoundError"),
    (f"import os\nos.listdir({str(REPO)!r})", "FileNotFoundError"),
    (f"open({str(REPO / 'grader.yml')!r})", "FileNotFoundError"),
    ("import reference", "ModuleNotFoundError"),
    ("import autograder.checks", "ModuleNotFoundError"),
    ("open('/etc/shadow')", "PermissionError"),
])
def test_the_repository_is_out_of_reach(worker, source, error):
    """Do the reference solutions, the repository and root's files stay unreadable?"""
    assert (REPO / "reference" / "attention.py").exists()  # they are there, on the host
    assert run(worker, source)["error"]["type"] == error


def test_the_output_folder_cannot_be_written(worker, tmp_path):
    """Can a cell neither see the grader's output folder nor plant a result in it?"""
    (tmp_path / "s2.json").write_text("{}")
    reply = run(worker, f"import os\nprint(os.path.exists({str(tmp_path / 's2.json')!r}))\n"
                        f"os.makedirs({str(tmp_path)!r}, exist_ok=True)\n"
                        f"open({str(tmp_path / 's1.json')!r}, 'w').write('{{\"score\": 10}}')")
    assert reply["stdout"] == "False\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s2.json"]


def test_no_grader_object_is_in_memory(worker):
    """Do the worker's modules, objects and call stack hold nothing of the reference or checks?"""
    run(worker, "import gc, sys\nSECRET = ('reference', 'autograder.checks')\ndef secrets():\n"
                "    modules = [m for m in sys.modules if m.startswith(SECRET)]\n"
                "    owners = (getattr(type(o), '__module__', None) for o in gc.get_objects())\n"
                "    objects = [m for m in owners if isinstance(m, str) and m.startswith(SECRET)]\n"
                "    frame, stack = sys._getframe(), []\n"
                "    while frame:\n"
                "        stack.append(frame.f_globals.get('__name__'))\n"
                "        frame = frame.f_back\n"
                "    return modules, len(objects), stack")
    modules, objects, stack = Student(worker.transport).call("secrets")
    assert modules == [] and objects == 0
    assert set(stack) <= {"__main__", "autograder.sandbox.child", "autograder.sandbox.runner",
                          "runpy"}  # the zygote runs as __main__


def test_only_its_own_slot_is_visible(worker):
    """Does /proc show just the namespace's init, the zygote and the worker?"""
    reply = run(worker, "import os\nprint(sorted(int(p) for p in os.listdir('/proc') if p.isdigit()))")
    assert len(eval(reply["stdout"])) <= 3


@pytest.mark.parametrize("source", [
    "open(f'/proc/{os.getppid()}/mem', 'rb').read(1)",
    "open('/proc/1/mem', 'rb').read(1)",
    "os.listdir(f'/proc/{os.getppid()}/fd')",
    "assert libc.ptrace(16, os.getppid(), 0, 0) == 0, ctypes.get_errno()",  # PTRACE_ATTACH
    "assert libc.unshare(0x10000000) == 0, ctypes.get_errno()",  # CLONE_NEWUSER
    "os.setuid(0)",
])
def test_the_zygote_and_privileges_are_out_of_reach(worker, source):
    """Can a cell neither read nor trace the zygote, nor gain privileges?"""
    prelude = "import ctypes, os\nlibc = ctypes.CDLL(None, use_errno=True)\n"
    # setuid(0): EINVAL, root is not even mapped in the worker's user namespace
    assert run(worker, prelude + source)["error"]["type"] in ("PermissionError", "AssertionError", "OSError")


# --- network ------------------------------------------------------------------------------
def test_the_hosts_loopback_is_unreachable(worker):
    """Does a connection to a port listening on the host's 127.0.0.1 fail?"""
    with socket.create_server(("127.0.0.1", 0)) as server:
        port = server.getsockname()[1]
        reply = run(worker, f"import socket\nsocket.create_connection(('127.0.0.1', {port}), timeout=1)")
    assert reply["error"]["type"] == "ConnectionRefusedError"


def test_the_outside_network_is_unreachable(worker):
    """Does a connection to a TEST-NET address fail at once (no route), not time out?"""
    reply = run(worker, "import socket\nsocket.create_connection(('192.0.2.1', 80), timeout=1)")
    assert reply["error"]["type"] == "OSError" and "unreachable" in reply["error"]["message"]


# --- processes that try to outlive the submission -----------------------------------------
@pytest.mark.parametrize("source", [
    "import os, signal, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
    "if os.fork() == 0:\n    os.setsid()\n    time.sleep(600)",
    "import threading, time\ndef spin():\n    while True:\n        pass\n"
    "threading.Thread(target=time.sleep, args=(600,)).start()\nthreading.Thread(target=spin).start()",
])
def test_nothing_outlives_close(sandbox, worker, source):
    """Are a SIGTERM-proof daemon and running threads gone once the submission closes?"""
    assert "error" not in run(worker, source)
    assert processes_of(sandbox.uid) != []
    worker.close()
    assert processes_of(sandbox.uid) == []


@pytest.mark.parametrize("source", [
    "import os\nos.kill(os.getppid(), 9)",
    "import os, signal\nos.kill(os.getppid(), signal.SIGSTOP)",
    "import os\nos.kill(-1, 9)\nprint('still here')",
])
def test_a_cell_cannot_kill_or_stop_the_zygote(sandbox, worker, source):
    """Is the zygote (another uid) out of a cell's reach, so that the slot goes on unreplaced?"""
    starts = sandbox.starts
    reply = run(worker, source)
    assert reply.get("error", {}).get("type") == "PermissionError" or reply["stdout"] == "still here\n"
    worker.close()
    assert processes_of(sandbox.uid) == []
    with contextlib.closing(sandbox.spawn()) as fresh:
        assert run(fresh, "print('fresh')")["stdout"] == "fresh\n"
    assert sandbox.starts == starts


@pytest.mark.parametrize("signal_number", [signal.SIGKILL, signal.SIGSTOP])
def test_a_zygote_killed_or_stopped_from_outside_is_replaced(sandbox, worker, signal_number):
    """When something outside the slot kills or stops its zygote, is everything of the
    slot gone at close and the slot replaced at the next spawn?"""
    starts = sandbox.starts
    os.kill(sandbox.zygote_pid, signal_number)
    worker.close()
    assert processes_of(sandbox.uid) == []
    with contextlib.closing(sandbox.spawn()) as fresh:
        assert run(fresh, "print('fresh')")["stdout"] == "fresh\n"
    assert sandbox.starts == starts + 1

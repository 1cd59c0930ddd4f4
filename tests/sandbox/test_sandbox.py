"""The sandbox doing its ordinary job: cells run, calls come back, slots start and fail clearly."""
import ast
import pickle
import time
from pathlib import Path

import pytest
import torch

from autograder.sandbox import confine, preflight, sandbox as sandbox_module
from autograder.sandbox.client import Student, WorkerLost
from autograder.sandbox.errors import ZygoteGone
from autograder.sandbox.sandbox import Limits, Sandbox, SandboxError, SandboxUnavailable

from .helpers import CAN_SANDBOX, SKIP_REASON, make_helper_package, run

PACKAGE = Path(sandbox_module.__file__).parent
pytestmark = pytest.mark.timeout(60)
BOOK = "import torch\n\ndef masked_softmax(X, valid_lens):\n    return torch.full_like(X, 0.5)\n"


def test_a_student_function_is_called_and_its_tensor_comes_back(worker):
    """Does a cell's torch function run in the worker and return the right tensor?"""
    run(worker, "import torch\n\ndef scale(x, k):\n    return torch.as_tensor(x) * k\n")
    student = Student(worker.transport)
    assert torch.equal(student.call("scale", torch.arange(3.0), 2), torch.tensor([0.0, 2.0, 4.0]))
    assert student.kind("scale") == "function"


def test_a_student_error_is_reported_and_the_worker_goes_on(worker):
    """Does an exception come back as the student's error, with the worker still serving?"""
    reply = run(worker, "1 / 0")
    assert reply["error"]["type"] == "ZeroDivisionError" and reply["error"]["where"] == "x, line 1: 1 / 0"
    assert run(worker, "y = 2")["value"] is None


def test_a_cell_can_start_threads_and_programs(worker):
    """Do threads and subprocesses still work under the seccomp filter and rlimits?"""
    reply = run(worker, "import subprocess, threading\nt = threading.Thread(target=print, args=('thread',))\n"
                        "t.start(); t.join()\nprint(subprocess.run(['echo', 'program'], capture_output=True,"
                        " text=True).stdout.strip())")
    assert reply["stdout"] == "thread\nprogram\n"


def test_a_worker_starts_with_the_zygotes_objects_out_of_garbage_collection(worker):
    """Are torch's objects, imported by the zygote, frozen in the worker (so that collections
    set off by a submission's modules do not walk them), while its own cycles are collected?"""
    run(worker, "import gc\nfrozen = gc.get_freeze_count()\n"
                "class Node:\n    pass\n"
                "a, b = Node(), Node()\na.other, b.other = b, a\ndel a, b\nfreed = gc.collect()\n")
    reply = run(worker, "print(frozen, freed)")
    frozen, freed = map(int, reply["stdout"].split())
    assert frozen > 100_000 and freed >= 2


def test_the_helper_package_is_importable_from_course(worker):
    """Can a cell import the assignment's helper package, bound at /course/d2l_attention,
    and see nothing else of the assignment's folder (the TA's notebook is beside it)?"""
    reply = run(worker, "import d2l_attention, os\nprint(d2l_attention.GREETING, d2l_attention.__file__)\n"
                        "print(os.listdir('/course'), os.listdir('/course/d2l_attention'))")
    assert reply["stdout"].splitlines() == ["hello from /course /course/d2l_attention/__init__.py",
                                            "['d2l_attention'] ['__init__.py']"]


def test_the_book_is_bound_while_another_task_is_checked(sandbox):
    """Does ``bind`` swap the student's name for the book's, privately, and ``unbind`` restore it?"""
    worker = sandbox.spawn()
    try:
        run(worker, "import torch\ndef masked_softmax(X, valid_lens):\n    return X * 0\n")
        student = Student(worker.transport)
        student.bind_book_versions(["masked_softmax"], BOOK)
        assert student.call("masked_softmax", torch.ones(2), None).tolist() == [0.5, 0.5]
        student.unbind()
        assert student.call("masked_softmax", torch.ones(2), None).tolist() == [0.0, 0.0]
        assert run(worker, "import sys\nprint('book' in sys.modules)")["stdout"].strip() == "False"
    finally:
        worker.close()


def test_a_closed_worker_says_so(sandbox):
    """Does a request to a closed worker raise WorkerLost instead of hanging?"""
    worker = sandbox.spawn()
    worker.close()
    with pytest.raises(WorkerLost, match="the worker was closed"):
        run(worker, "1")


def test_latency(sandbox, capsys):
    """How long do a spawn, a trivial call and a small tensor call take? (printed, not asserted)"""
    started = time.perf_counter()
    worker = sandbox.spawn()
    spawn_s = time.perf_counter() - started
    run(worker, "def same(x):\n    return x\n")
    student = Student(worker.transport)
    timings = {}
    for label, argument in (("int", 1), ("tensor 64x64", torch.ones(64, 64))):
        started = time.perf_counter()
        for _ in range(200):
            student.call("same", argument)
        timings[label] = (time.perf_counter() - started) / 200
    worker.close()
    with capsys.disabled():
        print(f"\n[sandbox] zygote starts so far: {sandbox.starts}; spawn {spawn_s * 1e3:.1f} ms; "
              + "; ".join(f"call({k}) {v * 1e6:.0f} us" for k, v in timings.items()))


def test_missing_bubblewrap_says_how_to_install_it(monkeypatch, tmp_path):
    """Without bwrap, does start() say to run `make sandbox-deps`?"""
    monkeypatch.setattr(sandbox_module.shutil, "which", lambda name: None)
    assert sandbox_module.check_available() == (
        "bubblewrap is not installed: install it: apt-get install bubblewrap (make sandbox-deps)")
    with pytest.raises(SandboxUnavailable, match=r"apt-get install bubblewrap \(make sandbox-deps\)"):
        Sandbox(0, tmp_path).start()


@pytest.mark.skipif(not CAN_SANDBOX, reason=SKIP_REASON)
def test_a_missing_helper_folder_is_named(tmp_path):
    """Does a helper package that does not exist fail before bubblewrap starts, naming it?"""
    with pytest.raises(SandboxError, match="helper package .*nowhere does not exist"):
        Sandbox(0, tmp_path / "nowhere").start()


@pytest.mark.skipif(not CAN_SANDBOX, reason=SKIP_REASON)
def test_an_unreadable_helper_package_says_how_to_fix_it(tmp_path):
    """Does a 0700 helper package (the slot's uid could not read it) fail with the chmod to run?"""
    tmp_path.chmod(0o700)
    with pytest.raises(SandboxError, match=r"cannot read the helper package .*chmod -R o\+rX"):
        Sandbox(0, tmp_path).start()


@pytest.mark.skipif(not CAN_SANDBOX, reason=SKIP_REASON)
def test_a_helper_package_holding_a_notebook_is_refused(tmp_path):
    """Is a folder with a notebook in it (the TA's assignment folder, say) never mounted?"""
    package = make_helper_package(tmp_path)
    (package / "sub").mkdir()
    (package / "sub" / "bahdanau.ipynb").write_text("{}")
    with pytest.raises(SandboxError, match=r"holds a notebook \(bahdanau.ipynb\).*never mounts a notebook"):
        Sandbox(0, package).start()


@pytest.mark.skipif(not CAN_SANDBOX, reason=SKIP_REASON)
def test_a_sandbox_that_cannot_start_shows_bubblewraps_message(monkeypatch, tmp_path):
    """When bubblewrap refuses its command line, does the error carry its message?"""
    package = make_helper_package(tmp_path)
    monkeypatch.setattr(sandbox_module, "bwrap_command", lambda bwrap, *rest: [bwrap, "--bogus"])
    slot = Sandbox(0, package)
    with pytest.raises(SandboxError, match="did not start: .*--bogus"):
        slot.start()
    assert slot.uid is None and slot.groups.version is None  # nothing kept: uid, cgroups


@pytest.mark.skipif(not CAN_SANDBOX, reason=SKIP_REASON)
def test_without_root_it_warns_and_still_runs(monkeypatch, helper_package):
    """Not root: does the slot warn about its weaker guarantees and still run a cell?"""
    monkeypatch.setattr(sandbox_module.os, "geteuid", lambda: 1000)
    with pytest.warns(RuntimeWarning, match="not running as root"):
        slot = Sandbox(91, helper_package, Limits(cell_timeout_s=5))
        slot.start()
    try:
        worker = slot.spawn()
        assert run(worker, "print(6 * 7)")["stdout"].strip() == "42"
        worker.close()
    finally:
        slot.close()


def test_the_command_mounts_no_repository_folder(tmp_path):
    """Does the bwrap command bind only system, Python, the sandbox package and the helper
    package (at /course/d2l_attention), with /tmp a tmpfs capped in bytes and files?"""
    repo = PACKAGE.parents[1]
    helpers = repo / "assignments" / "bahdanau" / "d2l_attention"
    plan = confine.Plan(uid=61000, helper_package=helpers, tmp_mb=64, tmp_files=4096,
                        tmp_mount=tmp_path, gpu=None, zygote_args="{}")
    command = confine.bwrap_command("bwrap", plan)
    sources = [command[i + 1] for i, arg in enumerate(command) if arg == "--ro-bind"]
    inside_repo = [s for s in sources if Path(s) == repo or repo in Path(s).parents]
    assert set(inside_repo) <= {str(PACKAGE.parent / "__init__.py"), str(PACKAGE), str(repo / ".venv"),
                                str(helpers)}
    assert command[command.index(str(helpers)) + 1] == "/course/d2l_attention"
    assert not any(Path(s).name in ("reference", "tests", "grader.yml") for s in sources)
    assert command[-1] == "{}" and "--unshare-user" not in command
    assert f"size={64 << 20},nr_inodes=4096,mode=1777,nosuid,nodev" in command
    assert command[command.index("--bind") + 1: command.index("--bind") + 3] == [str(tmp_path), "/tmp"]


def test_the_sandbox_package_never_imports_the_reference_or_the_checks():
    """Does no module the worker loads import ``reference`` or ``autograder.checks``?"""
    for path in PACKAGE.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            assert not [n for n in names if n.startswith(("reference", "autograder.checks"))], path


@pytest.mark.skipif(not CAN_SANDBOX, reason=SKIP_REASON)
def test_this_machine_can_run_the_sandbox():
    """Does the start-up check find nothing missing on a machine that runs these tests?"""
    assert sandbox_module.check_available() is None


def test_another_system_is_named(monkeypatch):
    """Off Linux, does the start-up check say so in one line?"""
    monkeypatch.setattr(preflight.sys, "platform", "darwin")
    assert preflight.check_available() == (
        "the sandbox needs Linux (bubblewrap and namespaces); this is darwin")


@pytest.mark.parametrize("error", [SandboxError("the sandbox did not start: x"),
                                   SandboxUnavailable("bubblewrap is not installed"),
                                   ZygoteGone("no reply"), WorkerLost("timed out after 3 s")])
def test_sandbox_exceptions_survive_pickling(error):
    """Does each exception a grading process may hand to its parent come back equal?"""
    back = pickle.loads(pickle.dumps(error))
    assert type(back) is type(error) and back.args == error.args and str(back) == str(error)


def test_gpu_slots_is_one_per_gpu_on_cuda(monkeypatch):
    """Is the number of parallel slots capped at the number of GPUs on CUDA, and not on the CPU?"""
    monkeypatch.setattr(preflight, "gpu_nodes", lambda: ["/dev/nvidia0", "/dev/nvidia1"])
    assert sandbox_module.gpu_slots("cuda") == 2 and sandbox_module.gpu_slots("cpu") is None

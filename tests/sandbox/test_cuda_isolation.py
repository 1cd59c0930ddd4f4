"""GPU memory between slots (issue 18, item 6), on a CUDA runner (``make gpu-check``).

Each slot gets a GPU of its own: ``gpu_slots("cuda")`` is the number of GPUs, the pipeline
caps ``--jobs`` at it, and only the slot's own ``/dev/nvidiaN`` is inside its sandbox, so a
cell that takes every free byte of its GPU cannot reach another slot's; what it took is
freed when its submission's processes are killed. Skipped without a CUDA device."""
import contextlib
import dataclasses

import pytest

from autograder.sandbox.sandbox import Sandbox, SandboxError, gpu_slots

from .helpers import CAN_SANDBOX, LIMITS, SKIP_REASON, make_helper_package, run

pytestmark = [pytest.mark.cuda, pytest.mark.timeout(300),
              pytest.mark.skipif(not CAN_SANDBOX, reason=SKIP_REASON)]
CUDA_LIMITS = dataclasses.replace(LIMITS, memory_mb=8192, cell_timeout_s=60, call_timeout_s=60)
HOG = ("import torch\nfree, _ = torch.cuda.mem_get_info()\n"
       "hog = torch.empty(int(free * 0.98), dtype=torch.uint8, device='cuda')\n"
       "print(free >> 20)")
WORK = ("import torch\ndef work():\n    generator = torch.Generator().manual_seed(0)\n"
        "    x = torch.randn(4096, 4096, generator=generator).cuda()\n"
        "    big = torch.ones(256, 1024, 1024, device='cuda')  # 1 GiB, as a real check might need\n"
        "    return float((x @ x).abs().mean() + big.mean())\n")


@pytest.fixture(scope="module")
def package(tmp_path_factory):
    return make_helper_package(tmp_path_factory.mktemp("cuda-helpers"))


@contextlib.contextmanager
def cuda_slot(slot: int, package):
    with Sandbox(slot, package, CUDA_LIMITS, device="cuda") as sandbox:
        yield sandbox


def _work(sandbox) -> float:
    with contextlib.closing(sandbox.spawn()) as worker:
        run(worker, WORK)
        reply = run(worker, "print(work())")
        assert "error" not in reply, reply
        return float(reply["stdout"])


def test_a_slot_sees_only_its_own_gpu(package):
    """Does a cell see one GPU, even after it sets CUDA_VISIBLE_DEVICES to every GPU?"""
    every = ",".join(str(i) for i in range(gpu_slots("cuda")))
    with cuda_slot(0, package) as sandbox, contextlib.closing(sandbox.spawn()) as worker:
        reply = run(worker, f"import os, torch\nos.environ['CUDA_VISIBLE_DEVICES'] = '{every}'\n"
                            "print(torch.cuda.device_count())")
    assert reply["stdout"] == "1\n"


def test_a_hogs_gpu_memory_is_freed_for_the_next_submission(package):
    """After a submission took every free byte of its GPU, does the next one in the slot
    compute what it computed before?"""
    with cuda_slot(0, package) as sandbox:
        before = _work(sandbox)
        with contextlib.closing(sandbox.spawn()) as hog:
            assert int(run(hog, HOG)["stdout"]) > 1024
        assert _work(sandbox) == before


def test_a_hog_in_one_slot_leaves_the_other_slot_unchanged(package):
    """While a cell in slot 0 holds every free byte of its GPU, does slot 1 compute what it
    computes alone?"""
    if gpu_slots("cuda") < 2:
        pytest.skip("needs two GPUs: with one, a second slot is refused (next test)")
    with cuda_slot(0, package) as first, cuda_slot(1, package) as second:
        alone = _work(second)
        with contextlib.closing(first.spawn()) as hog:
            run(hog, HOG)
            assert _work(second) == alone


def test_more_slots_than_gpus_are_refused(package):
    """Is a slot beyond the number of GPUs refused, naming the --jobs to use, rather than
    sharing a GPU?"""
    count = gpu_slots("cuda")
    with pytest.raises(SandboxError, match=f"has no GPU of its own.*--jobs {count}"):
        Sandbox(count, package, CUDA_LIMITS, device="cuda").start()

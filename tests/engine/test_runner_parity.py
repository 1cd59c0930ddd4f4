"""The same score on CPU and CUDA (SPEC §3): on a GPU runner, a check that fails is judged
again on the CPU and the CPU's verdict stands, so code that works on the CPU only is charged by
"runs on any device" alone (which emulates the other device on every runner), and a check
that the GPU alone breaks (cuDNN's RNNs refuse a backward pass in eval mode) costs nothing.
"""
import pytest
import torch

from autograder.checks.core import Check, CheckBlocked, Context, fail, run_check
from autograder.results import text
from autograder.sandbox import set_up_torch
from autograder.sandbox.client import WorkerLost

WHAT = text("check.message", message="a property")


def on_gpu(run) -> Check:
    return Check("a property", WHAT, run)


def ctx(device: str) -> Context:
    return Context("attention_scoring", "masked_softmax", 0, device=device)


def test_a_check_failing_on_the_gpu_only_keeps_its_points():
    """Does a check that fails on CUDA and holds on the CPU pass, judged on the CPU?"""
    seen = []

    def run(student, context):
        seen.append((context.device, context.check))
        if context.device != "cpu":
            raise fail(text("check.message", message="Expected all tensors to be on the same device"))
    outcome = run_check(on_gpu(run), None, ctx("cuda"), points=0.5)
    assert (outcome.result.passed, outcome.result.score) == (True, 0.5)
    assert outcome.result.again_on_cpu
    assert seen == [("cuda", "a property"), ("cpu", "a property")]


def test_a_check_failing_everywhere_reports_the_cpus_finding():
    """Does a failure on both devices score 0 with the CPU run's finding, not the GPU's?"""
    def run(student, context):
        raise fail(text("check.message", message=f"wrong on {context.device}"))
    result = run_check(on_gpu(run), None, ctx("cuda")).result
    assert (result.passed, result.score) == (False, 0.0)
    assert result.finding.problem.params["message"] == "wrong on cpu"


def test_a_check_blocked_on_the_gpu_is_judged_on_the_cpu():
    """Is a check blocked on the GPU (its earlier property missing there) judged on the CPU?"""
    def run(student, context):
        if context.device != "cpu":
            raise CheckBlocked("matches the reference")
    assert run_check(on_gpu(run), None, ctx("cuda")).result.passed


def test_a_lost_worker_is_not_run_again():
    """Is a check that lost the worker (time used up, process dead) left lost, not run again?"""
    calls = []

    def run(student, context):
        calls.append(context.device)
        raise WorkerLost("timed out", "timeout")
    outcome = run_check(on_gpu(run), None, ctx("cuda"))
    assert outcome.worker_lost and calls == ["cuda"]
    assert not outcome.result.again_on_cpu


@pytest.mark.parametrize("passes", [True, False], ids=["passing", "failing"])
def test_on_the_cpu_a_check_runs_once(passes):
    """Does a CPU runner run each check once, whatever its verdict?"""
    calls = []

    def run(student, context):
        calls.append(context.device)
        if not passes:
            raise fail(text("check.message", message="wrong"))
    result = run_check(on_gpu(run), None, ctx("cpu")).result
    assert (result.passed, calls, result.again_on_cpu) == (passes, ["cpu"], False)


def test_grading_processes_run_rnns_without_cudnn():
    """Do the grading processes keep cuDNN off (its RNN backward refuses eval mode), and can an
    RNN in eval mode then be differentiated, as the decoders' gradient checks do?"""
    saved = torch.backends.cudnn.enabled
    try:
        set_up_torch()
        assert torch.backends.cudnn.enabled is False
        device = "cuda" if torch.cuda.is_available() else "cpu"  # on a GPU machine, where it matters
        rnn = torch.nn.GRU(2, 3).to(device, torch.float64).eval()
        x = torch.randn(4, 1, 2, dtype=torch.float64, device=device, requires_grad=True)
        assert torch.autograd.gradcheck(lambda x: rnn(x)[0], (x,))
    finally:
        torch.backends.cudnn.enabled = saved

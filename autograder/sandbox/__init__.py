"""Running untrusted student code: the wire protocol, the worker, and the sandbox around it.

Nothing in this package imports ``reference`` or ``autograder.checks``: the worker must
hold nothing secret (SPEC §3). A test parses the imports to keep it so.
"""


def set_up_torch() -> None:
    """How every process that runs torch ops for grading (the grader's and the worker) sets
    torch up. One thread: on small machines tiny ops are about a thousand times slower with
    a thread pool, and a parent that ran a multi-threaded op can hang the children it forks
    (FIELD_NOTES). No TF32 in matmuls or cuDNN's RNNs, on both sides of the comparison: the
    same score on CPU and CUDA (SPEC §3). Setting the flags does not initialise CUDA."""
    import torch
    torch.set_num_threads(1)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False


def warm_up_autograd() -> None:
    """Autograd's first ``grad`` with ``grad_outputs`` imports sympy (about 0.35 s): paid once by
    the process that forks those that compute gradients (the zygote its workers, the grader its
    grading processes), not by each of them at its first gradient check."""
    import torch
    leaf = torch.ones(2, dtype=torch.float64, requires_grad=True)
    output = leaf * 2
    torch.autograd.grad(output, [leaf], grad_outputs=torch.ones_like(output))

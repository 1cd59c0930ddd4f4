"""Running untrusted student code: the wire protocol, the worker, and the sandbox around it.

Nothing in this package imports ``reference`` or ``autograder.checks``: the worker must
hold nothing secret (SPEC §3). A test parses the imports to keep it so.
"""


def set_up_torch() -> None:
    """How every process that runs torch ops for grading (the grader's and the worker) sets
    torch up. One thread: on small machines tiny ops are about a thousand times slower with
    a thread pool, and a parent that ran a multi-threaded op can hang the children it forks
    (FIELD_NOTES). No TF32 in matmuls or cuDNN's RNNs, on both sides of the comparison: the
    same score on CPU and CUDA (SPEC §3). No cuDNN: its RNNs refuse a backward pass in eval
    mode (the decoders' gradient checks run in eval mode; measured on an H200: every decoder lost
    that check), where torch's own kernels, as on the CPU, do not. Setting the flags does not
    initialise CUDA."""
    import torch
    torch.set_num_threads(1)
    torch.backends.cudnn.enabled = False
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False


def vector_jacobian(output, wrt: list, cotangent) -> tuple:
    """The gradients of ``(output * cotangent).sum()`` with respect to ``wrt`` (None where none
    flows): the vector-Jacobian product for ``cotangent``, bit for bit what
    ``autograd.grad(output, wrt, grad_outputs=cotangent)`` gives (the product's backward
    hands ``1 * cotangent`` to ``output``), without that call's import of sympy on its first
    use (its shape check: 0.35 s in every process that would make one). A cotangent of
    another shape raises, as ``grad_outputs`` would: it is never broadcast."""
    import torch
    if output.shape != cotangent.shape:
        raise RuntimeError(f"Mismatch in shape: grad_output has a shape of {tuple(cotangent.shape)} "
                           f"and output has a shape of {tuple(output.shape)}")
    return torch.autograd.grad((output * cotangent).sum(), wrt, allow_unused=True)

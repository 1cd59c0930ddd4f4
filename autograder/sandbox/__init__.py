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

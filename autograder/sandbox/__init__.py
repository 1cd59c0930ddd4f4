"""Running untrusted student code: the wire protocol, the worker, and the sandbox around it.

Nothing in this package imports ``reference`` or ``autograder.checks``: the worker must
hold nothing secret (SPEC §3). A test parses the imports to keep it so.
"""


def use_one_torch_thread() -> None:
    """Every process that runs torch ops for grading uses one thread: on small machines tiny
    ops are about a thousand times slower with a thread pool, and a parent that ran a
    multi-threaded op can hang the children it forks (FIELD_NOTES)."""
    import torch
    torch.set_num_threads(1)

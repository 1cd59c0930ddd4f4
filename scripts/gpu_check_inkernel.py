"""One shard of the nbgrader-path comparison: grade variants in this process.

Each variant's source runs in the notebook's namespace (``tests/mutants/harness``), and
``autograder.in_kernel.grade`` (what a hidden test cell calls) scores its task. That path
runs on CUDA whenever torch sees a GPU (grader.yml ``device: auto``), so the CPU run hides
the GPU with ``CUDA_VISIBLE_DEVICES=""``. No sandbox is involved: this tells the checks'
own device behaviour apart from the sandbox's.

    python scripts/gpu_check_inkernel.py OUT.json MUTANT_ID...
"""
import contextlib
import io
import json
import os
import sys
import time
from pathlib import Path

import torch

from autograder import in_kernel
from tests.mutants.harness import notebook_namespace

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gpu_check_build import MUTANTS  # noqa: E402 - after the scripts folder is on the path


def grade(mutant) -> dict:
    """The variant's score on the nbgrader path, how long it took, how many CUDA
    allocations its checks made (None without CUDA: then nothing ran there), and the
    grader's own error if it had one (``in_kernel.grade`` prints it and scores 0)."""
    namespace = notebook_namespace()
    printed = io.StringIO()
    started, allocations = time.monotonic(), _cuda_allocations()
    with contextlib.redirect_stdout(printed):  # the feedback text a test cell prints
        exec(compile(mutant.source, f"<{mutant.id}>", "exec"), namespace)  # noqa: S102 - the suite's own variants
        score = in_kernel.grade(mutant.task_id, namespace)
    text = printed.getvalue()
    after = _cuda_allocations()
    return {"task": mutant.task_id, "score": score, "seconds": round(time.monotonic() - started, 3),
            "cuda_allocations": None if after is None else after - allocations,
            "grader_error": text.strip()[:300] if text.startswith("grader error") else None}


def _cuda_allocations() -> int | None:
    """CUDA allocations so far in this process (None: this process cannot use CUDA)."""
    if not torch.cuda.is_available():
        return None
    if not torch.cuda.is_initialized():
        return 0
    return torch.cuda.memory_stats().get("allocation.all.allocated", 0)


def main(out: Path, ids: list[str]) -> None:
    """Grade ``ids`` in order; ``out`` is rewritten after each, so a shard stopped at its
    time limit still leaves what it graded."""
    by_id = {mutant.id: mutant for mutant in MUTANTS}
    results = {}
    for mutant_id in ids:
        results[mutant_id] = grade(by_id[mutant_id])
        cuda_used = torch.cuda.is_available() and torch.cuda.is_initialized()
        partial = out.with_suffix(".tmp")
        partial.write_text(json.dumps({"cuda_used": cuda_used, "results": results}, indent=1))
        os.replace(partial, out)  # whole or not at all, if the shard is killed meanwhile


if __name__ == "__main__":
    main(Path(sys.argv[1]), sys.argv[2:])

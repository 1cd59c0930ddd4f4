"""What one submission may use: the one place where the sandbox's limits and their
defaults are defined (``grader.yml``'s ``sandbox`` section derives from it)."""
from dataclasses import dataclass

MB = 1 << 20


@dataclass(frozen=True)
class Limits:
    """What one submission may use. Times are seconds of the submission's CPU time,
    except where a field says wall-clock."""
    cell_timeout_s: float = 30.0    # CPU time of one notebook cell
    call_timeout_s: float = 20.0    # CPU time of one call from a check
    submission_timeout_s: float = 240.0  # wall-clock time of the whole submission, over all its workers
    own_cells_s: float = 60.0       # wall-clock time of the cells a student added, over all runs; then they are skipped
    wall_factor: float = 3.0        # a cell or call may take this many times its limit in wall-clock time
    memory_mb: int = 3072           # the submission's processes together (memory cgroup), and each one (RLIMIT_DATA)
    max_processes: int = 32         # processes and threads of the submission
    max_file_mb: int = 16           # largest file it may write
    max_output_kb: int = 64         # printed output the worker keeps per request
    max_printed_kb: int = 256       # printed output the grader keeps per submission, over all its workers
    max_reply_mb: int = 8           # largest reply the grader reads from the worker
    tmp_mb: int = 64                # size of its private /tmp
    tmp_files: int = 4096           # files and folders its /tmp may hold
    open_files: int = 256           # open file descriptors per process
    stack_mb: int = 8               # stack size per process (and per thread)
    cpus: float = 1.0               # CPU share of the slot, in cores (a cgroup quota)


# Kernel limits no submission has a use for: no core files, no message queues, no
# real-time scheduling, no raising its own priority, a few locked pages and pending signals.
FIXED_RLIMITS = {"core": 0, "msgqueue": 0, "nice": 0, "rtprio": 0, "rttime": 0,
                 "memlock": 8 * MB, "sigpending": 1024, "rss": -1, "as": -1, "locks": -1}


def rlimits(limits: Limits) -> dict[str, int]:
    """Every rlimit a worker sets (soft = hard; -1 is unlimited). RLIMIT_DATA rather than
    RLIMIT_AS bounds a process: torch reserves address space it never touches."""
    return {"cpu": int(limits.submission_timeout_s) + 1, "fsize": limits.max_file_mb * MB,
            "data": limits.memory_mb * MB, "stack": limits.stack_mb * MB,
            "nproc": limits.max_processes, "nofile": limits.open_files, **FIXED_RLIMITS}

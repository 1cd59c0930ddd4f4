"""A Ray cluster's side of grading: reaching it, sizing a run by its resources, and the slot
actors that grade on its nodes (``executors.ray`` drives them).

Each slot is a Ray actor that owns one ``Sandbox`` (the same zygote and limits as the local
pool) on whichever node Ray places it, with one CPU, and on CUDA one GPU of its own. This
process, the driver, keeps the queue: it reads each notebook itself and sends its bytes
(a node need not see the driver's files), and gets a ``SubmissionResult`` back, which it
alone writes. Nodes need the same autograder checkout installed (``pip install -e
'.[ray]'``); a slot refuses to start on a node whose grading code or helpers differ.

A node that dies loses the submissions in flight on it: they are graded again on another
slot, at most ``ATTEMPTS`` times, then get the ``grader_failed`` result. A lost slot is
replaced when the cluster has room. Ray is imported only here and in ``executors.ray``, and
only when ``--executor ray`` is asked for.
"""
import hashlib
import ipaddress
import logging
import socket
import tempfile
from dataclasses import replace
from pathlib import Path

from ..config import ConfigError, GraderConfig
from ..course import Course
from ..grading.pipeline import Batch, grade_submission, grader_version
from ..grading.task import RunSettings
from ..results import SubmissionResult
from ..submissions.find import Submission
from .base import failed_result

SLOT_START_TIMEOUT_S = 600.0  # a slot imports torch and starts a zygote; a busy node is slow
CONNECT_TIMEOUT_S = 5.0
INSTALL = "pip install 'attention-autograder[ray]' (or pip install -e '.[ray]' in the repository)"


def plan(config: GraderConfig, options, course: Course) -> tuple[RunSettings, int]:
    """Connect to the cluster at ``options.address`` and size the run by its resources:
    the device is the cluster's (the driver may have no GPU), ``--jobs`` defaults to its
    CPUs (GPUs on CUDA). Raises ``ConfigError`` when Ray or the cluster is missing."""
    if options.jobs is not None and options.jobs < 1:
        raise ConfigError(f"--jobs {options.jobs}: give at least 1 (or leave it out: one per CPU of the cluster)")
    ray = connect(options.address)
    resources = ray.cluster_resources()
    gpus, cpus = int(resources.get("GPU", 0)), int(resources.get("CPU", 0))
    wanted = options.device or config.device
    if wanted == "cuda" and gpus == 0:
        raise ConfigError(f"device cuda: the Ray cluster at {_where(options.address)} has no GPU; "
                          f"use --device cpu (or auto), or start its nodes with --num-gpus")
    device = "cuda" if wanted == "cuda" or (wanted == "auto" and gpus > 0) else "cpu"
    # resolved as cpu here, then set to the cluster's device: this machine's GPUs do not matter
    settings = RunSettings.resolve(config, options.assignment, options.seed, "cpu", course)
    settings = replace(settings, device=device)
    if device == "cuda":
        return settings, min(options.jobs or gpus, gpus)  # one slot per GPU
    return settings, options.jobs or max(cpus, 1)

def connect(address: str | None):
    try:
        import ray
    except ImportError:
        raise ConfigError(f"--executor ray needs Ray, which is not installed: {INSTALL}") from None
    if ray.is_initialized():
        return ray
    _check_reachable(address)
    try:
        ray.init(address=address or "auto", logging_level=logging.WARNING, log_to_driver=False,
                 namespace="autograder", _node_ip_address=_this_host(address))
    except (ConnectionError, RuntimeError, ValueError) as error:
        first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise ConfigError(f"--address {_where(address)}: cannot reach a Ray cluster ({first[:200]}); "
                          f"start one with `ray start --head` and pass its address") from None
    return ray


def _check_reachable(address: str | None) -> None:
    """A HOST:PORT that nothing answers on is said at once (Ray itself retries for minutes)."""
    host, _, port = (address or "").rpartition(":")
    if not host or not port.isdigit() or "://" in address:
        return  # auto, or a ray:// client address: Ray's own check
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=CONNECT_TIMEOUT_S).close()
    except OSError as error:
        raise ConfigError(f"--address {address}: no Ray cluster answers there ({error.strerror or error}); "
                          f"start one with `ray start --head --port {port}`, or check the address") from None


def _this_host(address: str | None) -> str | None:
    """The address's IP when it is this machine's own: the driver then attaches to the
    node at that IP (the head's, run on the head host), not to the one Ray guesses from
    the route to it (on loopback, 127.0.0.1, which no node has: Ray then picks any)."""
    host = (address or "").rpartition(":")[0].strip("[]")
    try:
        if ipaddress.ip_address(host) in (ipaddress.ip_address("127.0.0.1"), ipaddress.ip_address("::1")):
            return None  # Ray itself rewrites these to the host's outward address
        with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as probe:
            probe.bind((host, 0))
    except (ValueError, OSError):  # a name, or another machine's address
        return None
    return host


def _where(address: str | None) -> str:
    return address or "auto (this machine's running cluster)"


def code_digest(course: Course, assignment: str) -> str:
    """The grading code's version and the assignment's helper package: every node must
    grade with the same (a node with an older checkout would grade differently)."""
    digest = hashlib.sha256(grader_version(course).encode())
    package = course.helper_package(assignment)
    for path in sorted(p for p in package.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
        digest.update(str(path.relative_to(package)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


class Slot:
    """One grading slot on a Ray node (made a Ray actor by ``slot_class``): its own
    ``Sandbox``, started from the thread that runs every call (bubblewrap dies with it)."""

    def __init__(self, batch: Batch, digest: str):
        from ..course import COURSE
        from ..sandbox import set_up_torch
        from ..sandbox.sandbox import Sandbox
        set_up_torch()
        self.host = socket.gethostname()
        mine = code_digest(COURSE, batch.settings.assignment)
        if mine != digest:
            raise RuntimeError(f"node {self.host} has other grading code ({mine}, the driver {digest}): "
                               f"install the same autograder checkout on every node and run `make release`")
        self.batch = batch
        gpu = _ray_gpu() if batch.settings.device == "cuda" else 0
        self.sandbox = Sandbox(gpu, COURSE.helper_package(batch.settings.assignment),
                               batch.config.sandbox.limits(), batch.settings.device)
        self.sandbox.start()

    def ready(self) -> str:
        return self.host

    def grade(self, found: Submission, data: bytes) -> SubmissionResult:
        """Grade the notebook ``data`` (the driver read it) as the driver ``found`` it; the
        bytes lie in a folder of this call's own while it runs."""
        name = Path(found.path.name).name
        with tempfile.TemporaryDirectory(prefix="autograder-ray-") as scratch:
            path = Path(scratch) / (name if name not in ("", ".", "..") else "submission.ipynb")
            path.write_bytes(data)
            submission = replace(found, path=path)
            try:
                return grade_submission(self.sandbox, self.batch, submission)
            except Exception as error:  # our own failure: that student's error, the batch goes on
                return failed_result(self.batch, submission, f"{type(error).__name__}: {error}")


def _ray_gpu() -> int:
    """The GPU Ray gave this slot: its /dev/nvidiaN is the one the sandbox mounts."""
    import ray
    return int(ray.get_gpu_ids()[0])


def slot_class(batch: Batch):
    import ray
    gpus = 1 if batch.settings.device == "cuda" else 0
    # Ray's own restarts and retries are off: the driver regrades and replaces, with bounds
    return ray.remote(num_cpus=1, num_gpus=gpus, max_restarts=0, max_task_retries=0)(Slot)


def gist(error: BaseException) -> str:
    """The last line of a Ray error: the cause, after Ray's traceback."""
    lines = [line for line in str(error).splitlines() if line.strip()]
    return lines[-1].strip() if lines else type(error).__name__

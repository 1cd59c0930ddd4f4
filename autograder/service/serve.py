"""The ``serve`` verb (SPEC §5): every usage check first, then warm slots, then the server.

``prepare_service`` turns the command line into a ``Prepared`` service or raises ``ConfigError``
(exit 2): grader.yml, the tokens, the sandbox, the output folder (held by one service at a
time: ``DIR/.service/lock``), the address. ``run`` starts the grading processes (forked
before any thread starts), the grading loop and uvicorn, and returns once stopped.

The service's own state is ``DIR/.service/``: ``queue.sqlite3`` and ``uploads/`` (and, with
``--exchange``, ``exchange.sqlite3``, the hand-ins taken from nbgrader's exchange: ``exchange.py``).
SIGINT or SIGTERM: uvicorn stops taking connections and lets open requests finish for
``GRACE_S``; the submissions being graded get ``STOP_WITHIN_S`` to finish, the rest are
queued again for the next start; the grading processes (and their sandboxes) are ended.
"""
import contextlib
import fcntl
import ipaddress
import os
import signal
import socket
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import uvicorn
from starlette.concurrency import run_in_threadpool

from ..checks.kept_runs import forget_other_versions
from ..config import ConfigError, parse_config, read_config
from ..course import COURSE, Course
from ..gradebook.written_points import MARKER as RECORDED_INTO_COURSE
from ..grading.pipeline import Batch
from ..executors.base import Executor, Slots
from ..executors.choice import LOCAL, executor_named
from ..executors.runmarker import RUN_MARKER
from ..sandbox import set_up_torch
from ..outputs.store import OutputFolder
from . import log as logs
from .app import Service, make_app
from .assignments import Assignments
from .deadlines import Deadlines
from .exchange.poll import Exchange
from .exchange.outputs import ExchangeOutputs
from .exchange.paths import ExchangePaths
from .http import RequestsInTime
from .intake import FORM_OVERHEAD, Uploads
from .exchange.ledger import Ledger
from .log import log
from .loop import GradingLoop
from .outputs import Outputs
from .queue import Queue
from .tokens import Tokens

STOPPED_WITHIN_S = 30.0  # SPEC §5: finished or queued again, and no process left, within 30 s of the signal
STOP_WITHIN_S = 20.0   # the submissions being graded get this long to finish
EXIT_S = 2.0           # kept for the slots' and the process's own ending
GRACE_S = 3            # open requests (an upload under way) may finish this long after a signal
MAX_CONNECTIONS = 256  # more at once are answered 503 by uvicorn


@dataclass
class ServeOptions:
    assignment: str
    output: Path
    tokens: Path | None                 # None: no uploads (the hand-ins come through --exchange)
    host: str = "127.0.0.1"
    port: int = 8000
    jobs: int | None = None
    config: Path | None = None
    device: str | None = None
    seed: int | None = None
    executor: str = LOCAL               # local (this machine's processes) or ray (a Ray cluster)
    address: str | None = None          # the Ray cluster's address, for --executor ray
    exchange: Path | None = None        # nbgrader's Exchange.root: hand-ins from its inbound/ too
    course: str | None = None           # the course id in the exchange (--course)


@dataclass
class Prepared:
    batch: Batch
    folder: OutputFolder
    tokens: Tokens | None
    jobs: int
    listening: socket.socket
    lock: int               # the folder's lock, held (open) while this process lives
    executor: Executor
    deadlines: Deadlines = field(default_factory=Deadlines)
    exchange: ExchangePaths | None = None


def prepare_service(options: ServeOptions, course: Course = COURSE) -> Prepared:
    """Every check that can fail before the service starts; ``ConfigError`` says what to fix."""
    set_up_torch()
    os.environ.setdefault(RUN_MARKER, uuid.uuid4().hex)
    config_path = options.config or course.config_path
    config_bytes = read_config(config_path)
    config = parse_config(config_bytes, config_path, course)
    executor = executor_named(options.executor, options.address)
    tokens, exchange = _hand_ins(options, config)
    deadlines = Deadlines.of_config(config.service, config_path)
    settings, jobs = executor.plan(config, options, course)  # a cluster's devices and CPUs, not this machine's
    folder = OutputFolder(options.output, options.assignment, config.language)
    folder.check_usable()
    if (options.output / RECORDED_INTO_COURSE).is_file():
        raise ConfigError(f"--output {options.output}: its results are recorded into an nbgrader course's gradebook "
                          f"(`autograder grade` on the course), which the service does not write, so the two would "
                          f"disagree; serve into a folder of its own")
    lock = _lock(options.output / ".service")
    listening = _listen(options.host, options.port)
    batch = Batch(settings, config, config_bytes, course, force=True, results=folder.path)
    forget_other_versions(folder.path, batch.version)
    return Prepared(batch, folder, tokens, jobs, listening, lock, executor, deadlines, exchange)


def _hand_ins(options: ServeOptions, config) -> tuple[Tokens | None, ExchangePaths | None]:
    """Where students hand in: the HTTP API (``--tokens``), nbgrader's exchange, or both."""
    if options.tokens is None and options.exchange is None:
        raise ConfigError("give --tokens TOKENS.csv (students hand in on the service's page), or --exchange ROOT "
                          "--course ID (through nbgrader's exchange, Jupyter's Assignments tab), or both")
    if (options.exchange is None) != (options.course is None):
        raise ConfigError("--exchange ROOT and --course ID go together (nbgrader's Exchange.root and the "
                          "course's CourseDirectory.course_id)")
    tokens = Tokens.load(options.tokens) if options.tokens is not None else None
    if options.exchange is None:
        return tokens, None
    return tokens, ExchangePaths.check(options.exchange, options.course, config.service.exchange_shared_uid)


def _lock(state: Path) -> int:
    """One service per output folder: two would grade one queue twice."""
    state.mkdir(exist_ok=True)
    fd = os.open(state / "lock", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise ConfigError(f"--output {state.parent}: another `autograder serve` is serving from this folder; "
                          f"stop it first, or give another --output") from None
    return fd


def _listen(host: str, port: int) -> socket.socket:
    if not 0 <= port <= 65535:
        raise ConfigError(f"--port {port}: give a port from 1 to 65535 (0: any free port)")
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        return socket.create_server((host, port), family=family, backlog=128)
    except (OSError, OverflowError) as error:
        raise ConfigError(f"--host {host} --port {port}: cannot listen there "
                          f"({getattr(error, 'strerror', None) or error})") from None


def run(prepared: Prepared) -> None:
    """Serve until SIGINT or SIGTERM; returns after every grading process has ended."""
    logs.configure()
    service, slots = _open(prepared)
    app = make_app(service, _lifespan(service, slots, _address(prepared.listening)))
    config = uvicorn.Config(app, log_config=None, access_log=False, lifespan="on", timeout_graceful_shutdown=GRACE_S,
                            server_header=False, limit_concurrency=MAX_CONNECTIONS,
                            h11_max_incomplete_event_size=FORM_OVERHEAD, http=RequestsInTime)
    try:
        uvicorn.Server(config).run(sockets=[prepared.listening])
    finally:
        slots.close()  # already ended after a stop; here also after a failed start


def _open(prepared: Prepared) -> tuple[Service, Slots]:
    """The queue (what a stopped service was grading queued again), the slots, started, and
    everything the API works with."""
    batch, folder = prepared.batch, prepared.folder
    state = folder.path / ".service"
    queue = Queue(state / "queue.sqlite3")
    back = queue.recover()
    uploads = Uploads(state / "uploads", batch.settings.spec.notebook)
    uploads.prune(queue.known_ids())
    ledger = Ledger(state / "exchange.sqlite3", str(prepared.exchange.course)) if prepared.exchange else None
    slots = prepared.executor.slots(batch, prepared.jobs)
    slots.start()  # local: forks the grading processes while this process has one thread
    # Once uvicorn has stopped, it raises the signal again: SIGTERM then ends the process as a
    # signal does (status 143), not through a handler Ray's driver installed (status 15).
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    outputs = (ExchangeOutputs(folder, batch.settings, ledger, prepared.deadlines, state) if ledger
               else Outputs(folder, batch.settings))
    outputs.write_grades()
    loop = GradingLoop(batch, queue, slots, uploads, outputs)
    if back:
        log.info("%d submissions that a stopped service was grading are queued again", back)
    service = Service(batch.settings.assignment, batch.settings.spec.notebook, batch.language, prepared.jobs,
                      batch.config.service.submissions_per_hour, batch.config.max_notebook_mb << 20,
                      prepared.tokens, queue, uploads, outputs, loop, Assignments.of(batch), prepared.deadlines)
    if ledger is not None:
        service.exchange = outputs.exchange = Exchange(prepared.exchange, ledger, service)
        service.exchange.recover()
    return service, slots


def _lifespan(service: Service, slots: Slots, where: str):
    """Starts the grading loop once the server is up; on a stop, finishes or queues again what
    is being graded, ends the slots and draws a last class report if there is time left."""
    @contextlib.asynccontextmanager
    async def lifespan(app):
        service.loop.start()
        if service.exchange is not None:
            service.exchange.start()
        log.info("serving %s at %s with %d grading slots; %d queued", service.assignment, where, service.slots,
                 service.queue.queued())
        yield
        stopping = time.monotonic()
        requeued = await run_in_threadpool(service.loop.stop, STOP_WITHIN_S)
        if service.exchange is not None:
            await run_in_threadpool(service.exchange.stop)
        slots.close()
        # the last class report gets what is left of SPEC's 30 s, or is skipped with a note
        left = STOPPED_WITHIN_S - GRACE_S - EXIT_S - (time.monotonic() - stopping)
        await run_in_threadpool(service.outputs.close, left)
        log.info("stopped: %d submissions queued for the next start (%d of them were being graded)",
                 service.queue.queued(), requeued)
        service.queue.close()
    return lifespan


def _address(listening: socket.socket) -> str:
    host, port = listening.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    if not ipaddress.ip_address(host).is_loopback:
        log.warning("listening on %s, beyond this machine: put a reverse proxy with TLS in front "
                    "(docs: Behind a reverse proxy)", host)
    return f"http://{shown}:{port}/"

"""What a class's results add up to: the numbers behind the TA's report, as plain data.

Every share is over all the batch's submissions: a submission that could not be read, or in
which a check did not run, counts as not passing it (nothing is left out of a denominator).
A mistake counts each student once, however many checks named it for them. A written answer
counts as entered for a student once the TA's points for it are known (``autograder.outputs.totals``).
"""
from collections import defaultdict
from dataclasses import dataclass, field
from statistics import mean, median

from ..results import SubmissionResult
from .similarity import Pair
from ..outputs.totals import Total, total_of
from .unexplained import Group, left_as_released, unexplained_groups

SLOWEST_CHECKS = 10
MAX_BINS = 20
NICE_WIDTHS = (0.25, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0)  # points: checks are worth 0.25 and up


@dataclass(frozen=True)
class Rate:
    """How many of ``total`` submissions passed a check (for a task: got all its points)."""
    task: str
    check: str | None
    passed: int
    total: int
    mean_score: float | None = None    # a task's mean score, over all submissions
    max_score: float | None = None

    @property
    def share(self) -> float:
        return self.passed / self.total if self.total else 0.0


@dataclass
class MistakeCount:
    """A catalogued mistake, who made it and in which checks it was named."""
    mistake: str
    students: set[str] = field(default_factory=set)
    places: set[tuple[str, str]] = field(default_factory=set)   # (task, check)


@dataclass(frozen=True)
class Written:
    """A written task: for how many of ``total`` submissions its points are entered, their mean."""
    task: str
    entered: int
    total: int
    mean_score: float | None
    max_score: float


@dataclass(frozen=True)
class Timing:
    """A submission's wall time, what it went to, and what the checks cost besides."""
    student: str
    total: float | None                      # None: nothing was timed (an unreadable file)
    phases: dict[str, float]                 # phase -> seconds it took
    requests: int | None = None              # the checks' requests to the sandboxed worker
    worker_s: float | None = None            # seconds the checks waited on those requests
    peak_mb: float | None = None             # the grading process's peak memory, MB


@dataclass(frozen=True)
class SlowCheck:
    task: str
    check: str
    mean_s: float
    max_s: float
    slowest_student: str


@dataclass
class ClassStats:
    assignment: str
    students: int
    scores: list[float]                      # autograded score per submission
    autograded_max: float
    manual_max: float
    manual_tasks: list[str]
    task_rates: list[Rate]
    check_rates: list[Rate]
    mistakes: list[MistakeCount]             # most students first
    undiagnosed: int                         # failed checks that no known mistake explains (``unexplained``'s)
    with_errors: list[SubmissionResult]
    with_warnings: list[SubmissionResult]
    timings: list[Timing]                    # slowest submission first
    slow_checks: list[SlowCheck]             # slowest check first (by its slowest run)
    totals: list[Total] = field(default_factory=list)       # per submission (by id), autograded and written
    written: list[Written] = field(default_factory=list)    # per written task
    unexplained: list[Group] = field(default_factory=list)  # shared unknown mistakes
    not_attempted: int = 0                   # tasks left as the template has them, over every submission
    similar: list[Pair] = field(default_factory=list)       # similar solutions, most alike first per task
    not_compared: list[str] = field(default_factory=list)   # students without kept solution cells

    @property
    def mean(self) -> float | None:
        return mean(self.scores) if self.scores else None

    @property
    def median(self) -> float | None:
        return median(self.scores) if self.scores else None


def bin_width(maximum: float) -> float:
    """The score histogram's bin: the smallest round width that needs at most MAX_BINS bins
    (0.25 for a 4-point task set, 1 for 13 points), so each bar is a readable score range."""
    return next((w for w in NICE_WIDTHS if maximum / w <= MAX_BINS), NICE_WIDTHS[-1])


def by_task(places: set[tuple[str, str]]) -> dict[str, list[str]]:
    """(task, check) pairs as each task's checks, both sorted."""
    grouped: dict[str, list[str]] = defaultdict(list)
    for task, check in sorted(places):
        grouped[task].append(check)
    return dict(grouped)


def summarise(results: list[SubmissionResult], task_checks: dict[str, list[str]],
              entered: dict[str, dict[str, float]] | None = None,
              similar: tuple[list[Pair], list[str]] = ([], [])) -> ClassStats:
    """The class's numbers; ``task_checks`` (grader.yml's tasks and check names, in order)
    lists every check, including ones no submission reached. A task with no checks is manual;
    ``entered`` holds the written answers' points known (student -> task -> points);
    ``similar`` the similar pairs and the students whose cells could not be compared."""
    manual = [task for task, checks in task_checks.items() if not checks]
    auto_max, manual_max = _maxima(results, manual)
    unexplained = unexplained_groups(results, task_checks)
    entered = entered or {}
    totals = sorted((total_of(r, entered) for r in results), key=lambda t: t.student_id)
    return ClassStats(
        assignment=results[0].assignment if results else "",
        students=len(results),
        scores=[_autograded(r) for r in results],
        autograded_max=auto_max, manual_max=manual_max, manual_tasks=manual,
        task_rates=[_task_rate(results, task) for task in task_checks if task not in manual],
        check_rates=[_check_rate(results, task, check)
                     for task, checks in task_checks.items() for check in checks],
        mistakes=_mistakes(results), undiagnosed=sum(len(group.students) for group in unexplained),
        with_errors=sorted((r for r in results if r.errors), key=lambda r: r.student_id),
        with_warnings=sorted((r for r in results if r.warnings), key=lambda r: r.student_id),
        timings=sorted((_timing(r) for r in results), key=lambda t: (-(t.total or 0.0), t.student)),
        slow_checks=_slow_checks(results), totals=totals,
        written=[_written(results, totals, task) for task in manual],
        unexplained=unexplained, similar=similar[0], not_compared=similar[1],
        not_attempted=sum(left_as_released(task) for result in results for task in result.tasks))


def _autograded(result: SubmissionResult) -> float:
    return result.autograded_score if result.tasks else result.score


def _maxima(results: list[SubmissionResult], manual: list[str]) -> tuple[float, float]:
    """(autograded, manual) maximum, from a submission that was split into tasks."""
    full = next((r for r in results if r.tasks), None)
    if full is None:
        return (results[0].max_score if results else 0.0), 0.0
    return full.autograded_max, full.manual_max


def _task_rate(results: list[SubmissionResult], task_id: str) -> Rate:
    tasks = [r.task(task_id) for r in results]
    done = [t for t in tasks if t is not None]
    maximum = done[0].max_score if done else None
    passed = sum(1 for t in done if t.score is not None and t.score >= t.max_score)
    mean_score = sum(t.score or 0.0 for t in done) / len(results) if results else None
    return Rate(task_id, None, passed, len(results), mean_score, maximum)


def _check_rate(results: list[SubmissionResult], task_id: str, check_name: str) -> Rate:
    passed = 0
    for result in results:
        task = result.task(task_id)
        check = next((c for c in task.checks if c.name == check_name), None) if task else None
        passed += bool(check and check.passed)
    return Rate(task_id, check_name, passed, len(results))


def _mistakes(results: list[SubmissionResult]) -> list[MistakeCount]:
    """The catalogued mistakes named, most students first. The failed checks that name none are
    counted once, by the shared unknown mistakes (``unexplained``), which leave out what is no
    mistake (a task not attempted yet, a cell that did not run) or follows from a named one."""
    counts: dict[str, MistakeCount] = {}
    for result in results:
        for task in result.tasks:
            for check in task.checks:
                finding = check.finding
                if check.passed or finding is None or finding.mistake is None:
                    continue
                entry = counts.setdefault(finding.mistake, MistakeCount(finding.mistake))
                entry.students.add(result.student_id)
                entry.places.add((task.id, check.name))
    return sorted(counts.values(), key=lambda m: (-len(m.students), m.mistake))


NOT_PHASES = {"total", "worker_requests", "worker_s", "grader_peak_rss_mb"}   # the pipeline's other timings


def _written(results: list[SubmissionResult], totals: list[Total], task_id: str) -> Written:
    tasks = [r.task(task_id) for r in results]
    maximum = next((t.max_score for t in tasks if t is not None), 0.0)
    known = [t.manual for t in totals if t.manual is not None and task_id in t.manual_tasks]
    # one written task per assignment (SPEC §1): a total's manual points are that task's
    return Written(task_id, len(known), len(results), mean(known) if known else None, maximum)


def _timing(result: SubmissionResult) -> Timing:
    """A submission's wall time: its ``total`` if recorded, else the sum of its phases, else
    the sum of its checks' times (None when nothing ran)."""
    recorded = dict(result.timing)
    phases = _phases(recorded)
    checks = [c.seconds for t in result.tasks for c in t.checks]
    total = recorded.get("total", sum(phases.values()) if phases else (sum(checks) if checks else None))
    requests = recorded.get("worker_requests")
    return Timing(result.student_id, total, phases, None if requests is None else int(requests),
                  recorded.get("worker_s"), recorded.get("grader_peak_rss_mb"))


def _phases(recorded: dict[str, float]) -> dict[str, float]:
    """Seconds per phase. The pipeline records when each phase ended (``read``, ``cells``,
    ``total``: seconds since the start); each phase's own time is the difference."""
    if "read" not in recorded or "total" not in recorded:
        return {name: seconds for name, seconds in recorded.items() if name not in NOT_PHASES}
    marks = [("read", recorded["read"]), *([("cells", recorded["cells"])] if "cells" in recorded else []),
             ("checks", recorded["total"])]
    phases, previous = {}, 0.0
    for name, ended in marks:
        phases[name] = round(max(0.0, ended - previous), 4)
        previous = ended
    return phases


def _slow_checks(results: list[SubmissionResult]) -> list[SlowCheck]:
    runs: dict[tuple[str, str], list[tuple[float, str]]] = defaultdict(list)
    for result in results:
        for task in result.tasks:
            for check in task.checks:
                runs[(task.id, check.name)].append((check.seconds, result.student_id))
    slow = []
    for (task, check), times in runs.items():
        longest = max(times, key=lambda run: (run[0], run[1]))
        slow.append(SlowCheck(task, check, mean(s for s, _ in times), longest[0], longest[1]))
    slow.sort(key=lambda c: (-c.max_s, c.task, c.check))
    return slow[:SLOWEST_CHECKS]

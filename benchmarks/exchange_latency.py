"""Hand-in-to-fetchable-feedback latency through nbgrader's exchange under a burst: is feedback
in the Assignments tab seconds away?

Builds a temporary course and exchange (``tests/service/exchange_course.py``: the TA releases
the assignment; each student is a Unix user of their own where this runs as root, else all share
root's uid and grader.yml says so), starts ``autograder serve --exchange`` (``--jobs`` slots,
default one per core), warms it (two rounds of four students, so every slot has started and
recorded its hypothesis runs), then has BURST students run the real ``nbgrader submit`` within
``--spread`` seconds (evenly spread; each already fetched and solved the assignment: the example
notebooks and the released template in turn). For each it measures the time from the hand-in
complete in ``inbound/`` (the ctime of the ``submission_secret.txt`` that ``nbgrader submit``
writes last) to the page ``nbgrader fetch_feedback`` looks for (its ctime: renamed into place),
and also from the start of ``submit``. Prints each, p50 and p95, the service's grading time per
hand-in (from its log), and the machine's load (``uptime``) before and after: the numbers mean
little on a machine others are using. The students' ``nbgrader submit`` processes run at
``--nice`` (10): on a hub they run on the students' servers, not beside the grader. Not a test:
run it by hand, as root.

    .venv/bin/python benchmarks/exchange_latency.py [--burst 12] [--jobs N] [--spread 2] [--nice 10]
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.nbgrader_course.course import COURSE_ID, leave_untouched, solve, solve_with_bugs  # noqa: E402
from tests.service.exchange_course import ExchangeCourse  # noqa: E402
from tests.service.server import config_file, start  # noqa: E402

WARM_ROUNDS, WARM_STUDENTS = 2, 4
SOLUTIONS = {"correct": solve, "buggy": solve_with_bugs, "template": leave_untouched}


def hand_in(course: ExchangeCourse, role: str, latencies: dict) -> None:
    """One student's ``nbgrader submit``; (seconds from the hand-in complete in ``inbound/`` to
    its page in ``feedback/``, by the file system's clock; seconds from ``submit``'s start to the
    page, by this process's)."""
    started = time.time()
    course.submit(role)
    course.wait_for_page(role, 600)
    page = os.stat(course.page_path(role)).st_ctime
    handed_in = course.handed_in_at(role)
    latencies[role] = (page - handed_in, page - started, handed_in - started)


def burst(course: ExchangeCourse, roles: list[str], spread_s: float) -> dict[str, tuple[float, float, float]]:
    latencies: dict[str, tuple[float, float, float]] = {}
    threads = []
    for role in roles:
        thread = threading.Thread(target=hand_in, args=(course, role, latencies))
        thread.start()
        threads.append(thread)
        time.sleep(spread_s / max(1, len(roles) - 1))
    for thread in threads:
        thread.join()
    return latencies


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def start_service(course: ExchangeCourse, jobs: int):
    config = config_file(course.base, per_hour=100)
    config.write_text(config.read_text().replace(
        "  submissions_per_hour: 100 ",
        f"  exchange_shared_uid: {str(course.shared_uid).lower()}\n  submissions_per_hour: 100 "))
    return start(course.base, None, {}, config, jobs=jobs, output=course.base / "results", name="bench",
                 extra=("--exchange", str(course.course.exchange), "--course", COURSE_ID))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--burst", type=int, default=12)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--spread", type=float, default=2.0, help="seconds over which the burst's submits start")
    parser.add_argument("--nice", type=int, default=10, help="niceness of the students' nbgrader processes")
    args = parser.parse_args()
    warm = [f"w{i}" for i in range(WARM_STUDENTS)]
    students = [f"s{i:02d}" for i in range(args.burst)]
    course = ExchangeCourse(warm + students)
    course.nice = args.nice
    kinds = {role: list(SOLUTIONS)[i % len(SOLUTIONS)] for i, role in enumerate(warm + students)}
    try:
        for role in warm + students:
            course.fetch(role, SOLUTIONS[kinds[role]])
        server = start_service(course, args.jobs)
        try:
            for _ in range(WARM_ROUNDS):
                burst(course, warm, 0)
            before = uptime()
            latencies = burst(course, students, args.spread)
            after = uptime()
        finally:
            server.stop()
        log = server.log.read_text()
    finally:
        course.close()
    report(args, course, latencies, grading_times(log, course, students), kinds, before, after)


def grading_times(log: str, course: ExchangeCourse, roles: list[str]) -> dict[str, float]:
    by_name = {course.names[role]: role for role in roles}
    return {by_name[name]: float(seconds) for name, seconds in re.findall(r"graded \w+ of (\S+): .* in ([\d.]+) s", log)
            if name in by_name}


def uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def report(args, course: ExchangeCourse, latencies: dict, grading: dict, kinds: dict, before: str, after: str) -> None:
    after_submit = [each[0] for each in latencies.values()]
    whole = [each[1] for each in latencies.values()]
    submitting = [each[2] for each in latencies.values()]
    users = "one Unix user each" if not course.shared_uid else f"one shared uid ({course.why_shared})"
    print(f"exchange: {args.burst} students' `nbgrader submit` within {args.spread:g} s (nice {args.nice}), "
          f"{args.jobs} slots, warm service, students as {users}")
    for role, (done, total, _) in sorted(latencies.items()):
        print(f"  {role} ({kinds[role]}): {done:.2f} s from the hand-in to its page, {total:.2f} s from submit's "
              f"start, grading {grading.get(role, float('nan')):.2f} s")
    print(f"hand-in to page: p50 {percentile(after_submit, 0.5):.2f} s, "
          f"p95 {percentile(after_submit, 0.95):.2f} s, max {max(after_submit):.2f} s")
    print(f"nbgrader submit itself (start to the hand-in complete): p50 {percentile(submitting, 0.5):.2f} s, "
          f"max {max(submitting):.2f} s")
    print(f"submit's start to page: p50 {percentile(whole, 0.5):.2f} s, p95 {percentile(whole, 0.95):.2f} s, "
          f"max {max(whole):.2f} s")
    if grading:
        print(f"grading alone (the service's log): mean {statistics.mean(grading.values()):.2f} s, "
              f"max {max(grading.values()):.2f} s per hand-in")
    print(f"load before: {before}\nload after:  {after}")


if __name__ == "__main__":
    main()

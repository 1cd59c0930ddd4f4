"""Handing in from Jupyter (SPEC §5): ``autograder serve --exchange`` beside a real nbgrader
course, students fetching, submitting and fetching feedback with nbgrader's own commands, each
as their own Unix user where the tests can make users (else all as root, with grader.yml's
``service.exchange_shared_uid``; the owner check's refusal then is ``test_handin.py``'s; set
``AUTOGRADER_TEST_SHARED_UID=1`` to run it so anyway).

One module-scoped story, then the tests read what it kept:

1. the TA releases the assignment; the service starts (no tokens: the exchange only);
2. ann (the TA's solution) and ben (the buggy example) submit together; each waits for the
   page ``fetch_feedback`` will find, lists (the Assignments tab), fetches it;
3. mal submits as ann (``nbgrader submit --student ann``; not where every student is one uid);
4. ann resubmits, the buggy example's code now; cat submits the solution;
5. the service stops and starts again, now with cat's deadline passed (an extension file that
   changed) and the HTTP API too; cat submits again, late, and tries an upload; ann uploads;
6. the TA collects, grades with ``autograder grade`` and releases feedback as nbgrader does.
"""
import json
import os
import re
import signal
import threading
import time
from datetime import datetime, timedelta, timezone

import pytest

from ..nbgrader_course.course import ASSIGNMENT, COURSE_ID, leave_untouched, solve, solve_with_bugs
from .exchange_course import ExchangeCourse
from .server import config_file, make_tokens, notebook, start

pytestmark = pytest.mark.slow
PAGE_WITHIN_S = 120   # submit to page on a busy 2-core machine (measured: a few seconds; benchmarks/)
FAR = "2099-01-01T00:00:00Z"
SHARED_UID = "AUTOGRADER_TEST_SHARED_UID"   # set: the story runs as on a hub with one uid, even where users can be made


def extensions(course: ExchangeCourse, cat_until: str) -> None:
    (course.base / "extensions.csv").write_text(f"student_id,deadline\n{course.names['cat']},{cat_until}\n")


def start_service(course: ExchangeCourse, name: str, tokens=None):
    config = config_file(course.base)
    config.write_text(config.read_text().replace(
        "  submissions_per_hour: 20 ", f"  deadline: {FAR}\n  extensions: extensions.csv\n"
                                       f"  exchange_shared_uid: {str(course.shared_uid).lower()}\n"
                                       "  submissions_per_hour: 20 "))
    return start(course.base, *(tokens or (None, {})), config, jobs=2, output=course.base / "results", name=name,
                 extra=("--exchange", str(course.course.exchange), "--course", COURSE_ID))


def health(server) -> dict:
    return server.request("GET", "/api/health").json()


def submit_together(course: ExchangeCourse, roles: list[str]) -> dict[str, float]:
    """The students submit at once; seconds from each ``submit``'s end to their page."""
    latency: dict[str, float] = {}

    def one(role: str) -> None:
        course.submit(role)
        latency[role] = course.wait_for_page(role, PAGE_WITHIN_S)
    threads = [threading.Thread(target=one, args=(role,)) for role in roles]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(latency) == sorted(roles)
    return latency


@pytest.fixture(scope="module")
def story():
    course = ExchangeCourse(["ann", "ben", "cat", "mal"], users=not os.environ.get(SHARED_UID))
    kept: dict = {"course": course}
    try:
        _first_run(course, kept)
        _second_run(course, kept)
        _the_tas_path(course, kept)
        yield kept
    finally:
        course.close()


def _first_run(course: ExchangeCourse, kept: dict) -> None:
    extensions(course, FAR)
    server = start_service(course, "exchange-1")
    kept["output"] = server.output
    try:
        for role, solution in (("ann", solve), ("ben", solve_with_bugs), ("cat", solve), ("mal", leave_untouched)):
            course.fetch(role, solution)
        kept["latency"] = submit_together(course, ["ann", "ben"])
        kept["listed"] = course.listing("ann")
        kept["first_pages"] = {role: course.fetch_feedback(role) for role in ("ann", "ben")}
        kept["results"] = {role: _result(server.output, course.names[role]) for role in ("ann", "ben")}
        kept["feedback_files"] = sorted(p.name for p in course.feedback_folder.iterdir())
        if not course.shared_uid:   # with one uid for all, mal's hand-in would count as ann's (as in nbgrader)
            course.submit("mal", "--student", course.names["ann"])
            _wait(lambda: health(server).get("refused_handins") == 1, "mal's hand-in refused")
            kept["after_mal"] = {"result": _result(server.output, course.names["ann"]),
                                 "feedback_files": sorted(p.name for p in course.feedback_folder.iterdir()),
                                 "health": health(server)}
        course.work("ann", solve_with_bugs)
        course.submit("ann")
        course.wait_for_page("ann", PAGE_WITHIN_S)
        course.submit("cat")
        course.wait_for_page("cat", PAGE_WITHIN_S)
        kept["resubmitted"] = {"result": _result(server.output, course.names["ann"]),
                               "listed": course.listing("ann"), "pages": course.fetch_feedback("ann")}
        kept["cat_on_time"] = _result(server.output, course.names["cat"])
    finally:
        kept["first_stop"] = server.stop(signal.SIGTERM)
        kept["first_log"] = server.log.read_text()
        kept["first_left"] = server.left()


def _second_run(course: ExchangeCourse, kept: dict) -> None:
    """Restarted with the HTTP API too (tokens for ann and cat), cat's deadline now passed."""
    extensions(course, (datetime.now(timezone.utc) - timedelta(minutes=1)).isoformat())
    tokens = make_tokens(course.base, [course.names["ann"], course.names["cat"]])
    server = start_service(course, "exchange-2", tokens)
    try:
        time.sleep(3)   # three turns of the poller: nothing taken again
        kept["restarted"] = {"health": health(server), "log": server.log.read_text()}
        course.work("cat", solve_with_bugs)
        course.submit("cat")
        course.wait_for_page("cat", PAGE_WITHIN_S)
        kept["cat_late"] = {"result": _result(server.output, course.names["cat"]), "pages": course.fetch_feedback("cat"),
                            "history": sorted((server.output / "history" / course.names["cat"]).glob("*.json")),
                            "grades": (server.output / "grades.csv").read_text(),
                            "upload": server.submit(course.names["cat"], notebook("correct"))}
        uploaded = server.submit(course.names["ann"], notebook("correct"))
        kept["ann_upload"] = server.wait_done(course.names["ann"], uploaded.json()["id"])
    finally:
        server.stop(signal.SIGTERM)
        kept["second_log"] = server.log.read_text()


def _the_tas_path(course: ExchangeCourse, kept: dict) -> None:
    """The README's nbgrader walk-through after the hand-ins: collect, grade, release feedback."""
    ran = {}
    for command in (f"nbgrader collect {ASSIGNMENT}",
                    f"autograder grade . --assignment {ASSIGNMENT} --output grades/{ASSIGNMENT}",
                    f"nbgrader generate_feedback {ASSIGNMENT}", f"nbgrader release_feedback {ASSIGNMENT}"):
        ran[command] = course.course.run(command)
    kept["ta"] = ran
    kept["ta_grades"] = (course.course.root / "grades" / ASSIGNMENT / "grades.csv").read_text()


def _result(output, student: str) -> dict:
    return json.loads((output / f"{student}.json").read_text())


def _wait(condition, what: str, within_s: float = 60) -> None:
    deadline = time.monotonic() + within_s
    while not condition():
        assert time.monotonic() < deadline, f"not within {within_s} s: {what}"
        time.sleep(0.1)


def test_the_fetched_feedback_is_the_autograders_page_with_the_right_scores(story):
    """Does each student's ``fetch_feedback`` bring the autograder's page of their own hand-in
    (ann's full marks, ben's fewer), within seconds of ``submit``?"""
    course, results = story["course"], story["results"]
    assert results["ann"]["score"] == 13.0 and results["ann"]["max_score"] == 15.0   # 2 for the written answer
    assert 0 < results["ben"]["score"] < 13.0
    for role in ("ann", "ben"):
        [page] = story["first_pages"][role].values()
        kept = {path.read_text(encoding="utf-8") for path in (story["output"] / "history" / course.names[role]).glob("*.html")}
        assert page in kept   # the very page the service drew for that hand-in
        assert f"autograded {results[role]['score']:g} / 13" in page
        assert course.names[role] in page and "BEGIN HIDDEN TESTS" not in page
    assert max(story["latency"].values()) < PAGE_WITHIN_S


def test_the_assignments_tab_shows_feedback_ready(story):
    assert "(feedback ready to be fetched)" in story["listed"]
    assert "(feedback already fetched)" in story["resubmitted"]["listed"]


def test_submitting_as_another_student_grades_nothing_and_changes_nothing(story):
    """mal's ``nbgrader submit --student ann``: refused (logged, counted), ann's result and the
    feedback folder as they were? (With one shared uid nothing can tell them apart.)"""
    if story["course"].shared_uid:
        pytest.skip(f"no separate Unix users ({story['course'].why_shared}): test_handin.py checks the refusal")
    after = story["after_mal"]
    assert after["health"]["refused_handins"] == 1
    assert after["result"] == story["results"]["ann"]
    assert after["feedback_files"] == story["feedback_files"]
    names = story["course"].names
    assert re.search(rf"hand-in {names['ann']}\+{ASSIGNMENT}\+.* refused: names '{names['ann']}' but its folder "
                     rf"belongs to {names['mal']}", story["first_log"])


def test_a_resubmission_replaces_the_result_and_its_feedback(story):
    """ann hands in again, ben's bugs now: is her result now ben's score, and does she fetch two
    pages, the first hand-in's and the second's?"""
    resubmitted = story["resubmitted"]
    assert resubmitted["result"]["score"] == story["results"]["ben"]["score"] < 13.0
    first, second = (resubmitted["pages"][stamp] for stamp in sorted(resubmitted["pages"]))
    assert first == next(iter(story["first_pages"]["ann"].values())) and first != second


def test_a_restart_takes_no_hand_in_again(story):
    restarted = story["restarted"]
    assert story["first_stop"] == -signal.SIGTERM and story["first_left"] == {}
    assert "took hand-in" not in restarted["log"] and restarted["health"]["queued"] == 0
    assert restarted["health"]["refused_handins"] == (0 if story["course"].shared_uid else 1)


def test_a_late_hand_in_gets_feedback_and_leaves_the_grade(story):
    """cat's second hand-in after her (changed) deadline: graded into history/ with a page that
    says so, while cat.json and grades.csv keep her on-time 13?"""
    late = story["cat_late"]
    assert late["result"] == story["cat_on_time"] and late["result"]["score"] == 13.0
    assert len(late["history"]) == 2
    newest = sorted(late["pages"])[-1]
    assert "after your deadline" in late["pages"][newest]
    name = story["course"].names["cat"]
    assert re.search(rf"^{name},{ASSIGNMENT},13\.0,", late["grades"], re.M)
    assert "(after the deadline: feedback only)" in story["second_log"]


def test_the_tas_collect_grade_and_release_still_work(story):
    """On the same course: ``nbgrader collect``, ``autograder grade``, ``generate_feedback`` and
    ``release_feedback`` (which insists on owning the feedback folder the service writes into)."""
    names = story["course"].names
    for role in ("ann", "ben", "cat"):
        assert re.search(rf"^{names[role]},{ASSIGNMENT},", story["ta_grades"], re.M)
    assert "Feedback released" in story["ta"][f"nbgrader release_feedback {ASSIGNMENT}"]



def test_the_http_api_runs_beside_the_exchange(story):
    """In the same service: does ann's upload queue and grade as an exchange hand-in does, and is
    cat's upload after her deadline refused, 403 ``deadline_passed``?"""
    assert story["ann_upload"]["status"] == "done" and story["ann_upload"]["result"]["score"] == 13.0
    refused = story["cat_late"]["upload"]
    assert refused.status == 403 and refused.json()["error"] == "deadline_passed"

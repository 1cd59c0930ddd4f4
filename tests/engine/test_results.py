"""The result model and its store: SPEC §3's JSON, written and read back with validation,
text that cannot break a file name, a spreadsheet or the Markdown feedback."""
import csv
import json

import mistune
import pytest

from autograder.feedback import FeedbackView, Say
from autograder.feedback.markdown import feedback_markdown
from autograder.feedback.escape import fenced
from autograder.results import (CheckResult, Finding, Heatmap, Issue, SubmissionResult, TaskResult, message_text,
                                text)
from autograder.outputs.store import OutputFolder, clean_text, file_stem

SPEC_EXAMPLE = {"student_id": "s1", "assignment": "attention_scoring",
                "score": 7.0, "max_score": 10.0,
                "tasks": [{"id": "masked_softmax", "score": 2.0, "max_score": 2.0,
                           "checks": [{"name": "zero weight beyond valid length",
                                       "passed": True, "score": 0.5, "max_score": 0.5,
                                       "message": ""}]}],
                "warnings": [], "errors": []}


def a_result(student_id: str = "s1") -> SubmissionResult:
    finding = Finding(problem=text("compare.values_differ", what=text("tensor.attention_weights")),
                      case_code="X = torch.tensor([[[1.0, 0.38]]])", expected="[1, 0]", got="[0.73, 0.27]",
                      mistake="mask_value_zero", heatmap=Heatmap(got=[[0.73, 0.27]], expected=[[1.0, 0.0]]))
    checks = [CheckResult(name="zero weight beyond valid length", passed=False, score=0.0, max_score=0.5,
                          finding=finding, seconds=0.25),
              CheckResult(name="runs on any device", passed=True, score=0.25, max_score=0.25, seconds=0.5)]
    tasks = [TaskResult(id="masked_softmax", score=0.25, max_score=0.75, checks=checks, seconds=0.75),
             TaskResult(id="cost_analysis", score=None, max_score=2.0, manual=True)]
    return SubmissionResult(student_id=student_id, assignment="attention_scoring", score=0.25, max_score=2.75,
                            tasks=tasks, warnings=[Issue(code="cell_error", task="masked_softmax",
                                                         text=text("issue.cell_error", cell="#3", type="ValueError",
                                                                   message=message_text("bad")))],
                            seed=5, fingerprint="abc", timing={"total": 1.5})


def test_spec_example_is_a_valid_result_and_round_trips():
    """Does SPEC §3's example validate as a result, and dump back to the same keys and values?"""
    result = SubmissionResult.model_validate(SPEC_EXAMPLE)
    dumped = result.model_dump(mode="json")
    for key, value in SPEC_EXAMPLE.items():
        if key != "tasks":
            assert dumped[key] == value, key
    check = dumped["tasks"][0]["checks"][0]
    assert {k: check[k] for k in SPEC_EXAMPLE["tasks"][0]["checks"][0]} == SPEC_EXAMPLE["tasks"][0]["checks"][0]


def test_schema_has_every_spec_field_with_its_type():
    """Does the model's JSON schema name every field of SPEC §3 with the type the example has?"""
    schema = SubmissionResult.model_json_schema()
    defs = schema["$defs"]
    assert set(SPEC_EXAMPLE) <= set(schema["properties"])
    assert {"code", "task", "message"} <= set(defs["Issue"]["properties"])
    assert {"id", "score", "max_score", "checks"} <= set(defs["TaskResult"]["properties"])
    assert {"name", "passed", "score", "max_score", "message"} <= set(defs["CheckResult"]["properties"])
    manual = TaskResult(id="cost_analysis", score=None, max_score=2.0, manual=True)
    assert manual.model_dump(mode="json")["score"] is None  # SPEC: manual tasks have "score": null


def test_store_reads_back_what_it_wrote(tmp_path):
    """Is a saved result read back equal, with its timings, and its messages rendered?"""
    folder = OutputFolder(tmp_path / "out", "attention_scoring", "ru")
    folder.check_usable()
    result = a_result()
    folder.save(result)
    loaded = folder.load("s1")
    assert loaded is not None
    assert loaded.tasks[0].checks[0].seconds == 0.25 and loaded.timing == {"total": 1.5}
    assert loaded.tasks[0].checks[0].finding == result.tasks[0].checks[0].finding
    stored = json.loads((tmp_path / "out" / "s1.json").read_text(encoding="utf-8"))
    assert "значения отличаются" in stored["tasks"][0]["checks"][0]["message"]
    assert "timing" not in stored and "seconds" not in stored["tasks"][0]  # results stay byte-stable


@pytest.mark.parametrize("content", ["{not json", '{"student_id": "s1"}', "[]",
                                     '{"student_id": "s1", "assignment": "attention_scoring", "score": "x"}'])
def test_malformed_result_is_noted_not_a_crash(tmp_path, content):
    """Does a stray or broken JSON in the output folder give a note and a regrade, never a KeyError?"""
    folder = OutputFolder(tmp_path, "attention_scoring", "en")
    (tmp_path / "s1.json").write_text(content)
    assert folder.load("s1") is None
    assert folder.notes and "s1.json" in folder.notes[0]


def test_grades_csv_never_starts_a_formula(tmp_path):
    """Is a student id like =HYPERLINK(...) written so a spreadsheet shows it as text?"""
    folder = OutputFolder(tmp_path, "attention_scoring", "en")
    ids = ['=HYPERLINK("http://x","y")', "+1", "-2", "@SUM(A1)", "plain"]
    folder.write_grades([a_result(i) for i in ids], ["masked_softmax", "cost_analysis"])
    rows = list(csv.DictReader((tmp_path / "grades.csv").open(encoding="utf-8")))
    assert all(not row["student_id"].startswith(("=", "+", "-", "@")) for row in rows)
    assert {row["student_id"].lstrip("'") for row in rows} == set(ids)
    assert rows[0]["cost_analysis"] == ""


def test_grades_csv_score_is_the_total_so_far_and_the_json_keeps_the_autograded_sum(tmp_path):
    """The issue: with 2 written points entered, grades.csv read ``13.0,15.0``: score/max_score gave
    13/15 for a student with 15/15. Is ``score`` the autograded points plus the points entered
    (SPEC §3), each task's column its points, and the JSON's score still the autograded sum?"""
    folder = OutputFolder(tmp_path, "attention_scoring", "en")
    folder.check_usable()
    entered, waiting = a_result("ivanov"), a_result("petrova")
    folder.save(entered)
    folder.write_grades([entered, waiting], ["masked_softmax", "cost_analysis"], {"ivanov": {"cost_analysis": 2.0}})
    rows = {row["student_id"]: row for row in csv.DictReader((tmp_path / "grades.csv").open(encoding="utf-8"))}
    assert (rows["ivanov"]["score"], rows["ivanov"]["max_score"], rows["ivanov"]["cost_analysis"]) == \
        ("2.25", "2.75", "2.0")
    assert (rows["petrova"]["score"], rows["petrova"]["cost_analysis"]) == ("0.25", "")   # not entered yet
    assert json.loads((tmp_path / "ivanov.json").read_text(encoding="utf-8"))["score"] == 0.25


def test_feedback_pages_follow_the_written_points_entered(tmp_path):
    """Points entered for a written answer reach the student's feedback at the next run, though
    the result is reused: is the page rewritten once they change (and only then), in both files,
    with the written answer's points and the total, and back to "by hand" when they are removed?"""
    folder = OutputFolder(tmp_path, "attention_scoring", "ru")
    folder.check_usable()
    result = folder.save(a_result("ivanov"))
    page, markdown = tmp_path / "feedback" / "ivanov.html", tmp_path / "feedback" / "ivanov.md"
    assert "оценит ассистент" in markdown.read_text(encoding="utf-8")
    assert folder.refresh_feedback(result, {"ivanov": {"cost_analysis": 1.5}})
    for written in (markdown, page):
        text_now = written.read_text(encoding="utf-8")
        assert "письменные ответы 1,5 / 2 (оценил ассистент)" in text_now and "итого 1,75 / 2,75" in text_now
    assert "1,5 / 2" in page.read_text(encoding="utf-8").split("cost_analysis", 2)[1]   # the overview's row
    assert not folder.refresh_feedback(result, {"ivanov": {"cost_analysis": 1.5}})   # unchanged: not rewritten
    assert folder.refresh_feedback(result, {})
    assert "оценит ассистент" in markdown.read_text(encoding="utf-8")


def test_undecodable_and_surrogate_text_is_written_by_one_rule(tmp_path):
    """Do a cp1251 file name (surrogate escapes) and a lone surrogate in a message become \\xNN
    escapes, and does the result still save and load?"""
    cp1251_name = b"\xc8\xe2\xe0\xed\xee\xe2".decode("utf-8", "surrogateescape")  # "Иванов" in cp1251
    assert clean_text(cp1251_name) == "\\xc8\\xe2\\xe0\\xed\\xee\\xe2"
    assert clean_text("a\ud800b") == "a\\xed\\xa0\\x80b"
    result = a_result(cp1251_name)
    result.errors.append(Issue(code="cell_error", message="lone \udcff surrogate"))
    folder = OutputFolder(tmp_path, "attention_scoring", "en")
    folder.save(result)
    saved = json.loads((tmp_path / f"{file_stem(cp1251_name)}.json").read_text(encoding="utf-8"))
    assert saved["errors"][0]["message"] == "lone \\xff surrogate"


def test_long_cyrillic_id_fits_the_file_system_and_stays_whole_inside(tmp_path):
    """Does a 246-byte Cyrillic student id get a legal file name, with the full id in the JSON?"""
    long_id = "Иванова-Петрова_" * 8 + "Ива"  # 246 bytes: legal as a name, not with a temp prefix
    assert len(long_id.encode()) == 256 - 10
    stem = file_stem(long_id)
    assert len(f".{stem}.json.abcdefgh.tmp".encode()) <= 255
    folder = OutputFolder(tmp_path, "attention_scoring", "en")
    folder.save(a_result(long_id))
    assert json.loads((tmp_path / f"{stem}.json").read_text(encoding="utf-8"))["student_id"] == long_id
    assert file_stem(".hidden") != ".hidden" and "/" not in file_stem("a/b")


def test_fenced_text_cannot_close_its_fence_or_forge_a_score():
    """Can an exception type name holding a code fence forge a 'score: 15 / 15' block? No."""
    forged = "Boom```\n\n**score: 15 / 15**\n\n```text"
    block = fenced(forged)
    assert block[0].startswith("````") and block[-1] == block[0][: len(block[-1])]
    result = a_result()
    result.warnings = [Issue(code="cell_error", message=forged)]
    rendered = mistune.html(feedback_markdown(FeedbackView.of(result, Say("en"))))
    assert "<strong>score: 15 / 15</strong>" not in rendered

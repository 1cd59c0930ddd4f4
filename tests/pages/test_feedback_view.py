"""The feedback view's decisions (issue 27), as each writer shows them: numbers in the language's
format that add up, a repeated failure said once, one heatmap pair per distinct weights, one
fallback for a name the catalogue lacks, no stray punctuation for an empty message, a clean
error line for a broken notebook, and a check that could not judge never marked passed."""
import re

import mistune
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from autograder.feedback import FeedbackView, Say, TaskView
from autograder.feedback.markdown import feedback_markdown
from autograder.feedback.plain import check_message, task_text
from autograder.gradebook.report import task_report
from autograder.pages.student import student_page
from autograder.results import (CheckResult, Finding, Heatmap, Issue, SubmissionResult, TaskResult,
                                message_text, text)
from autograder.texts import render

from . import samples
from .prose import shown_text


def writers(result: SubmissionResult, language: str) -> dict[str, str]:
    """What each writer shows of ``result``: the page's and the Markdown's text as a reader sees
    it, and every task's test cell output."""
    view = FeedbackView.of(result, Say(language))
    cells = "\n".join(task_text(task) for task in view.tasks)
    return {"html": shown_text(student_page(view)), "markdown": shown_text(mistune.html(feedback_markdown(view))),
            "plain": " ".join(cells.split())}


def task(task_id: str, checks: list[CheckResult]) -> TaskResult:
    return TaskResult(id=task_id, score=sum(c.score for c in checks), max_score=sum(c.max_score for c in checks),
                      checks=checks)


def result_of(*tasks: TaskResult, errors: list[Issue] = ()) -> SubmissionResult:
    score = sum(t.score or 0.0 for t in tasks)
    return SubmissionResult(student_id="s1", assignment="attention_scoring", score=score,
                            max_score=sum(t.max_score for t in tasks), tasks=list(tasks), errors=list(errors))


def passed(name: str, points: float, **fields) -> CheckResult:
    return CheckResult(name=name, passed=True, score=points, max_score=points, **fields)


def failed(name: str, points: float, finding: Finding | None = None, **fields) -> CheckResult:
    return CheckResult(name=name, passed=False, score=0.0, max_score=points, finding=finding, **fields)


def test_russian_numbers_have_a_decimal_comma_in_every_writer():
    """Are a task's points "1,5 / 2,5" in Russian in the page, the Markdown and the test cell,
    and so is a number inside a finding's sentence (the largest difference)?"""
    where = text("compare.difference", size=0.19794, index="(0, 0, 0)", expected=-0.588872, got=-0.786816, tol=1.7e-05)
    finding = Finding(problem=text("compare.values_differ", what=text("tensor.attention_output")), difference=where)
    result = result_of(task("dot_product_attention", [passed("output shape", 1.5), failed("matches the reference", 1.0, finding)]))
    for writer, shown in writers(result, "ru").items():
        assert "1,5 / 2,5" in shown and "0 / 1" in shown, writer
        assert "наибольшее расхождение 0,198" in shown and "-0,588872" in shown and "1,7e-05" in shown, writer
        assert not re.search(r"\d\.\d", shown), (writer, shown)
    assert all("1.5 / 2.5" in shown and "0.198" in shown for shown in writers(result, "en").values())


def test_total_and_task_scores_agree():
    """Is a total of 11.625 shown as 11,625, so that the tasks' shown scores add up to it
    (not rounded to 11,62 beside tasks adding up to 11,63)?"""
    tasks = [task(f"t{i}", [passed("output shape", s), failed("matches the reference", 3 - s)])
             for i, s in enumerate([2.875, 2.75, 2.625, 1.875, 1.5])]
    view = FeedbackView.of(result_of(*tasks), Say("ru"))
    assert "11,625 / 15" in str(view.score)
    assert [str(t.score) for t in view.tasks] == ["2,875 / 3", "2,75 / 3", "2,625 / 3", "1,875 / 3", "1,5 / 3"]


@settings(max_examples=60, derandomize=True, deadline=None)
@given(eighths=st.lists(st.integers(0, 80), min_size=1, max_size=6))
def test_shown_task_scores_add_up_to_the_shown_total(eighths):
    """For any scores in grader.yml's eighths of a point, do the shown task scores add up to
    the shown total, in both languages?"""
    tasks = [task(f"t{i}", [passed("output shape", n / 8), failed("matches the reference", 1.0)])
             for i, n in enumerate(eighths)]
    for language in ("en", "ru"):
        view = FeedbackView.of(result_of(*tasks), Say(language))
        def number(points): return float(str(points).split(" / ")[0].replace(",", "."))
        total = re.search(r"(\d+(?:[.,]\d+)?) /", str(view.score)).group(1)
        assert sum(number(t.score) for t in view.tasks) == float(total.replace(",", "."))


def test_a_failure_repeated_across_a_tasks_checks_is_said_once_everywhere():
    """Does a task whose every check raised NotImplementedError (each on its own input, not the
    template's stub: the task was attempted) say the error once in each writer, listing every
    check under it?"""
    checks = [failed(name, 0.5, samples.not_implemented(f"X = torch.zeros(1, 1, {i + 2})"))
              for i, name in enumerate(samples.TASK_CHECKS["masked_softmax"])]
    result = result_of(task("masked_softmax", checks))
    problem = render(samples.not_implemented().problem, "en")
    for writer, shown in writers(result, "en").items():
        assert shown.count(problem) == 1, writer
        for name in samples.TASK_CHECKS["masked_softmax"]:
            assert shown.count(render(text(f"title.{name}"), "en")) == 1, (writer, name)


def test_the_same_heatmap_pair_is_drawn_once():
    """When two failed checks recorded the same weights, is the pair drawn once and the second
    check told the weights are those above?"""
    same = samples.dot_product_no_sqrt()
    other = same.model_copy(update={"problem": text("compare.values_differ", what=text("tensor.stored_weights"))})
    result = result_of(task("dot_product_attention", [failed("matches the reference", 0.5, same),
                                                      failed("attention_weights match the reference", 0.5, other)]))
    page = student_page(FeedbackView.of(result, Say("en")))
    assert page.count("<img ") == 2
    assert render(text("page.heatmap.same_above"), "en") in page
    assert page.count(render(text("mistake.no_sqrt"), "en")) == 1   # named once, at the first failure


def test_a_likely_mistake_is_named_once_per_task():
    """Issue 47: two checks of one task that failed for one mistake (the output and the weights of
    code without 1/√d) both named it, in full, one under the other. Is it named once per task, at
    its first failure, in every writer, while each failure keeps its own values?"""
    weights = samples.dot_product_no_sqrt()
    output = weights.model_copy(update={"problem": text("compare.values_differ", what=text("tensor.attention_output")),
                                        "expected": "[-0.5889]", "got": "[-0.7868]", "heatmap": None})
    result = result_of(task("dot_product_attention", [failed("matches the reference", 0.5, output),
                                                      failed("attention_weights match the reference", 0.5, weights)]))
    for language in ("en", "ru"):
        for writer, shown in writers(result, language).items():
            assert shown.count(render(text("mistake.no_sqrt"), language)) == 1, (writer, language)
            assert output.got in shown and weights.got in shown, (writer, language)  # values are code


def test_the_same_finding_on_other_inputs_is_said_once():
    """Issue 47: an LSTM decoder written for the GRU's state failed four checks with the same
    problem, expected, got and mistake, each on its own input, and was told so four times. Is it
    said once, under every check's title, with the first check's input?"""
    def lstm(case: str) -> Finding:
        return Finding(problem=text("decoder.lstm_state"), case_code=case, mistake="lstm_state_for_gru",
                       expected="enc_outputs = (outputs, (h, c))", got="enc_outputs = (outputs, h)")
    names = ["state and output shapes", "matches the reference", "gradients match the reference"]
    result = result_of(task("lstm_attention_decoder", [failed(name, 0.5, lstm(f"src = torch.tensor([[{i}]])"))
                                                       for i, name in enumerate(names)]))
    for writer, shown in writers(result, "en").items():
        assert shown.count(render(text("decoder.lstm_state"), "en")) == 1, writer
        assert "src = torch.tensor([[0]])" in shown and "src = torch.tensor([[1]])" not in shown, writer
        assert all(render(text(f"title.{name}"), "en") in shown for name in names), writer


@pytest.mark.parametrize("language", ["en", "ru"])
def test_a_name_the_catalogue_lacks_falls_back_to_itself(language):
    """Does a check, a mistake and a text the catalogue does not hold (a result of an older
    grader) show its name in every writer, never raising KeyError?"""
    finding = Finding(problem=text("check.gone_since"), mistake="forgot_the_mask")
    result = result_of(task("masked_softmax", [failed("a check renamed since", 0.5, finding),
                                               passed("another renamed check", 0.5)]))
    for writer, shown in writers(result, language).items():
        for name in ("a check renamed since", "another renamed check", "forgot_the_mask", "check.gone_since"):
            assert name in shown, (writer, name)
    assert "forgot_the_mask" in task_report(result.tasks[0], result)


def untouched() -> SubmissionResult:
    """masked_softmax left as the stub: an empty message, raised in every check."""
    where = text("check.where_line", cell="masked_softmax", line=8, code="raise NotImplementedError()")
    raised = Finding(problem=text("check.raised", type="NotImplementedError", message=message_text(""), where=where),
                     case_code="X = torch.tensor([[[1.0]]])")
    nowhere = Finding(problem=text("devices.runs_nowhere", type="NotImplementedError",
                                   message=message_text("", "check.aside")), case_code="X = torch.zeros(1, 1, 2)")
    return result_of(task("masked_softmax", [failed("output shape, dtype and device", 0.25, raised),
                                             failed("runs on any device", 0.25, nowhere)]))


@pytest.mark.parametrize("language", ["en", "ru"])
def test_an_unsolved_cell_leaves_no_stray_brackets_or_double_spaces(language):
    """Does an empty error message (``raise NotImplementedError()``) read without "()", ":  ("
    or a double space, in every writer and in the JSON's message?"""
    result = untouched()
    outputs = {**writers(result, language), "markdown source": feedback_markdown(FeedbackView.of(result, Say(language))),
               "message": " ".join(check_message(c, Say(language)) for c in result.tasks[0].checks)}
    for writer, shown in outputs.items():
        assert "()" not in shown.replace("NotImplementedError()", ""), writer
        assert ":  " not in shown and ": (" not in shown and "  (" not in shown, writer
    assert "NotImplementedError (" in outputs["plain"]


def test_a_message_is_kept_with_its_colon():
    """Is a non-empty message still said after a colon?"""
    raised = text("check.raised", type="ValueError", message=message_text("bad shape"), where="")
    assert render(raised, "en") == "your code raised ValueError: bad shape"


def broken() -> SubmissionResult:
    """A notebook that is not JSON: every task 0 with no check run, one error."""
    reason = "Notebook does not appear to be JSON: '{\"cells\": [\\n'"
    error = Issue(code="invalid_notebook", text=text("issue.invalid_notebook", name="broken.ipynb", reason=reason))
    tasks = [TaskResult(id=t, score=0.0, max_score=3.0) for t in ("masked_softmax", "dot_product_attention")]
    tasks.append(TaskResult(id="cost_analysis", score=None, max_score=2.0, manual=True))
    return result_of(*tasks, errors=[error])


def test_a_broken_notebooks_markdown_error_line_is_clean_with_no_empty_task_headings():
    """Is the Markdown error line of an unreadable notebook its message with the notebook's own
    words as code (not a backslash before every bracket), and is no task heading left empty?"""
    markdown = feedback_markdown(FeedbackView.of(broken(), Say("en")))
    [line] = [line for line in markdown.splitlines() if line.startswith("- `invalid_notebook`")]
    assert "\\(" not in line and "\\{" not in line and "\\." not in line
    assert "`broken.ipynb`: not a valid notebook (`Notebook does not appear to be JSON" in line
    assert "Notebook does not appear to be JSON: '{\"cells\": [\\n'" in shown_text(mistune.html(markdown))
    headings = [i for i, line in enumerate(markdown.splitlines()) if line.startswith("## ")]
    lines = markdown.splitlines() + [""]
    assert all(lines[i + 1] == "" and lines[i + 2] and not lines[i + 2].startswith("#") for i in headings)
    assert "## `masked_softmax`" not in markdown and "| `masked_softmax` | 0 / 3 |" in markdown
    assert render(text("feedback.not_graded"), "en") in markdown


def test_a_broken_notebooks_test_cell_says_no_check_ran():
    """Does a task's test cell output say that no check ran, rather than just 0 / 3?"""
    assert task_text(TaskView.of(broken().tasks[0], Say("en"))) == (
        "masked_softmax: 0 / 3\n    " + render(text("feedback.not_graded"), "en"))


@pytest.mark.parametrize("language", ["en", "ru"])
def test_a_check_that_could_not_judge_is_never_marked_passed(language):
    """When the forward values are wrong, is "gradients match the reference" shown as not
    judged (naming the check that failed first) instead of ✔, in every writer?"""
    wrong = Finding(problem=text("compare.values_differ", what=text("tensor.attention_output")))
    gradients = passed("gradients match the reference", 0.5, blocked_by="matches the reference")
    result = result_of(task("dot_product_attention", [failed("matches the reference", 0.5, wrong), gradients]))
    say = Say(language)
    title, verdict = render(text("title.gradients match the reference"), language), str(say.text("feedback.not_judged"))
    view = FeedbackView.of(result, say)
    page, markdown = student_page(view), feedback_markdown(view)
    assert re.search(rf'<span class="none">–</span> {re.escape(title)}', page) and f"✔</span> {title}" not in page
    assert f"- – {title}" in markdown and f"✔ {title}" not in markdown
    assert f"{verdict} {title}" in task_text(view.task("dot_product_attention"))
    note = render(text("feedback.blocked_by", check=text("title.matches the reference")), language)
    assert all(" ".join(note.split()) in shown for shown in writers(result, language).values())
    assert check_message(gradients, say) == note


def test_the_language_is_chosen_once():
    """Is an unknown language refused when the view's ``Say`` is made, before anything is written?"""
    with pytest.raises(ValueError, match="expected one of en, ru"):
        Say("de")


def test_extreme_weights_are_not_drawn_and_the_page_says_why():
    """Does a failure whose weights span ±1.8e308 get a page with a short note instead of
    pictures (matplotlib's colour scale overflows there), its likely mistake still named?"""
    big = 1.7976931348623157e308
    finding = samples.dot_product_no_sqrt().model_copy(
        update={"heatmap": Heatmap(got=[[big, -big]], expected=[[1.0, 0.0]])})
    page = student_page(FeedbackView.of(result_of(task("dot_product_attention", [failed("matches the reference", 1.0, finding)])),
                                        Say("ru")))
    assert "<img " not in page and render(text("page.heatmap.undrawable"), "ru") in page
    assert render(text("mistake.no_sqrt"), "ru") in page

"""A task left as released is "not attempted yet" (issue 47), decided by the grading process from
what it read itself (the cell handed in, the released template), never from the worker's word
alone; its checks are still each recorded, failed, with the one line."""
from autograder.course import COURSE
from autograder.grading.task import not_attempted
from autograder.results import CheckResult, Finding, TaskResult, message_text, text

TEMPLATE = COURSE.released_cells("attention_scoring")["masked_softmax"]
STUB_LINE = next(i for i, line in enumerate(TEMPLATE.splitlines(), 1) if "raise NotImplementedError()" in line)


def raised(line: int = STUB_LINE, code: str = "raise NotImplementedError()", message: str = "",
           type_name: str = "NotImplementedError") -> Finding:
    """A check's failure as the worker reports the error: its type, message, cell and line."""
    where = text("check.where_line", cell="masked_softmax", line=str(line), code=code)
    return Finding(problem=text("check.raised", type=type_name, message=message_text(message), where=where),
                   case_code="X = torch.tensor([[[1.0]]])\nvalid_lens = torch.tensor([1])")


def task(*findings: Finding | None) -> TaskResult:
    checks = [CheckResult(name=f"check {i}", passed=f is None, score=0.5 if f is None else 0.0, max_score=0.5,
                          finding=f) for i, f in enumerate(findings)]
    return TaskResult(id="masked_softmax", score=sum(c.score for c in checks), max_score=0.5 * len(checks),
                      checks=checks)


def test_the_released_cell_handed_in_is_not_attempted():
    """Is the template's cell, with a blank line and a comment of the student's added, not attempted?"""
    cell = TEMPLATE.replace("    # YOUR CODE HERE\n", "    # I will do this later\n\n")
    assert not_attempted(task(raised(), raised()), cell, TEMPLATE) == text("task.not_attempted")


def test_the_stub_still_raising_is_not_attempted_at_its_line():
    """Is a cell that differs from the template (one method written) but whose every check raised
    the template's stub, at a line that is the stub in the cell as read, not attempted at that line?"""
    cell = "import math\n\n" + TEMPLATE
    finding = raised(line=STUB_LINE + 2)
    device = Finding(problem=text("devices.runs_nowhere", type="NotImplementedError", message=""))
    assert not_attempted(task(finding, finding, device), cell, TEMPLATE) == text(
        "task.not_attempted_line", line=STUB_LINE + 2)


def test_the_workers_word_alone_does_not_decide():
    """Is a task attempted when the worker names the stub at a line of the cell that is no stub, when
    the student's own NotImplementedError has a message, when another error is among the checks' or
    when a check passed?"""
    cell = TEMPLATE.replace("raise NotImplementedError()", "return X.softmax(-1)  # a first try")
    assert not_attempted(task(raised(), raised()), cell, TEMPLATE) is None
    assert not_attempted(task(raised(message="2-D lengths"), raised()), "x = 1\n" + TEMPLATE, TEMPLATE) is None
    other = raised(type_name="ValueError", code="raise ValueError()")
    assert not_attempted(task(raised(), other), TEMPLATE + "\n# mine\nx = 1", TEMPLATE) is None
    assert not_attempted(task(raised(), None), TEMPLATE, TEMPLATE) is None

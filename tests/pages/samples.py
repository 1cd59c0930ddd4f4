"""Results as the grader builds them, for the page tests: real model objects, with the
catalogue's own text ids, a heatmap computed the way a check records one, and student text
that tries to break out of the page (markup, backticks, a script)."""
import numpy as np

from autograder.results import (CheckResult, Finding, Heatmap, Issue, SubmissionResult,
                                TaskResult, message_text, text)

HOSTILE = "<script>document.title='pwned'</script> ``` | **bold** <img src=x onerror=alert(1)>"


def _softmax(scores: np.ndarray) -> np.ndarray:
    shifted = np.exp(scores - scores.max(axis=-1, keepdims=True))  # (Q, K)
    return shifted / shifted.sum(axis=-1, keepdims=True)


QUERIES = np.round(np.random.default_rng(0).normal(size=(3, 4)), 2)  # (Q, d): one example
KEYS = np.round(np.random.default_rng(1).normal(size=(5, 4)), 2)     # (K, d)


def no_sqrt_heatmap() -> Heatmap:
    """Dot-product weights on QUERIES and KEYS: the reference divides by √d, the student not."""
    scores = QUERIES @ KEYS.T                                           # (Q, K)
    return Heatmap(got=_softmax(scores).tolist(), expected=_softmax(scores / np.sqrt(4)).tolist())


def check(name: str, points: float, finding: Finding | None = None, seconds: float = 0.05) -> CheckResult:
    passed = finding is None
    return CheckResult(name=name, passed=passed, score=points if passed else 0.0, max_score=points,
                       finding=finding, seconds=seconds)


def dot_product_no_sqrt() -> Finding:
    """The failing example as a check reports it: its code, the first row of weights, the heatmap."""
    heatmap = no_sqrt_heatmap()
    case = (f"queries = torch.tensor([{QUERIES.tolist()}])\nkeys = torch.tensor([{KEYS.tolist()}])\n"
            "values = torch.eye(5).unsqueeze(0)\nvalid_lens = None")
    return Finding(problem=text("compare.values_differ", what=text("tensor.attention_weights")),
                   checked=text("what.attention.matches the reference"), case_code=case,
                   expected=str([round(w, 4) for w in heatmap.expected[0]]),
                   got=str([round(w, 4) for w in heatmap.got[0]]), mistake="no_sqrt", heatmap=heatmap)


def not_attempted() -> Finding:
    """A check of a task left as released, as grading records it (grading/task.py)."""
    return Finding(problem=text("task.not_attempted"))


def not_implemented(case: str = "X = torch.zeros(1, 1, 3)") -> Finding:
    return Finding(problem=text("check.raised", type="NotImplementedError", message="",
                                where=text("check.where", where="line 3")), case_code=case)


def tasks(student: str, *, sqrt_bug: bool, softmax_untouched: bool, mistake: str = "no_sqrt") -> list[TaskResult]:
    """attention_scoring's shape: masked_softmax, dot_product_attention and the manual task."""
    names = ["output shape, dtype and device", "rows sum to one over valid keys",
             "zero weight beyond valid length", "matches the reference with 1-D valid_lens"]
    softmax_checks = [check(n, 0.5, not_attempted() if softmax_untouched else None) for n in names]
    finding = dot_product_no_sqrt() if sqrt_bug else None
    if finding is not None and mistake != "no_sqrt":
        finding = finding.model_copy(update={"mistake": mistake})
    dot_checks = [check("output and attention_weights shapes", 0.5),
                  check("matches the reference", 1.0, finding, seconds=0.4),
                  check("dropout only in train mode", 0.5, seconds=0.2)]
    return [TaskResult(id="masked_softmax", score=sum(c.score for c in softmax_checks), max_score=2.0,
                       checks=softmax_checks),
            TaskResult(id="dot_product_attention", score=sum(c.score for c in dot_checks), max_score=2.0,
                       checks=dot_checks),
            TaskResult(id="cost_analysis", score=None, max_score=2.0, manual=True)]


def submission(student: str = "s1", *, sqrt_bug: bool = True, softmax_untouched: bool = True,
               crashed: bool = True, mistake: str = "no_sqrt", seconds: float = 4.0) -> SubmissionResult:
    task_results = tasks(student, sqrt_bug=sqrt_bug, softmax_untouched=softmax_untouched, mistake=mistake)
    score = sum(t.score or 0.0 for t in task_results)
    crash = Issue(code="cell_crashed", task="masked_softmax",
                  text=text("issue.cell_crashed", cell=7, reason="the process exited (status 0)"),
                  detail=f"# cell 7\nimport os\nos._exit(0)  # {HOSTILE}\n\nTraceback: WorkerLost")
    errors = [crash] if crashed else []
    warnings = [Issue(code="cell_error", task=None,
                      text=text("issue.cell_error", cell=3, type="ValueError", message=message_text(HOSTILE)))]
    return SubmissionResult(student_id=student, assignment="attention_scoring", score=score, max_score=6.0,
                            tasks=task_results, warnings=warnings, errors=errors,
                            timing={"read": 0.25, "cells": 1.5, "total": seconds, "worker_requests": 740,
                                    "worker_s": round(seconds / 3, 2), "grader_peak_rss_mb": 351.5})


TASK_CHECKS = {
    "masked_softmax": ["output shape, dtype and device", "rows sum to one over valid keys",
                       "zero weight beyond valid length", "matches the reference with 1-D valid_lens"],
    "dot_product_attention": ["output and attention_weights shapes", "matches the reference",
                              "dropout only in train mode"],
    "cost_analysis": [],
}


def batch() -> list[SubmissionResult]:
    """A class of six: two correct, two without √d, one that masks with 0, one untouched
    that crashed, one unreadable, and one whose id is hostile."""
    return [submission("alice", sqrt_bug=False, softmax_untouched=False, crashed=False, seconds=3.5),
            submission("bob", sqrt_bug=True, softmax_untouched=False, crashed=False, seconds=4.25),
            submission("carol", sqrt_bug=True, softmax_untouched=False, crashed=False, seconds=3.75),
            submission("dave", sqrt_bug=True, softmax_untouched=False, crashed=False, mistake="scale_by_d",
                       seconds=4.0),
            submission("erin", sqrt_bug=False, softmax_untouched=True, crashed=True, seconds=21.5),
            SubmissionResult(student_id="frank", assignment="attention_scoring", score=0.0, max_score=6.0,
                             errors=[Issue(code="not_utf8", text=text("issue.not_utf8", name="frank.ipynb",
                                                                      position=12))]),
            submission(HOSTILE, sqrt_bug=False, softmax_untouched=False, crashed=False, seconds=3.0)]


def readable() -> SubmissionResult:
    """The sample student without hostile text (for the README's screenshot and the Russian
    prose test): one task not attempted yet, one mistake with its heatmap, a removed magic."""
    result = submission("s042", crashed=False)
    result.warnings = [Issue(code="magic_removed", text=text("issue.magic_removed", cell=4))]
    return result

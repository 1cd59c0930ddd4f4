"""Golden files: the feedback a student reads for a few known bugs, in English and Russian.

Regenerate after a deliberate change with `UPDATE_GOLDENS=1 make test` and review the diff.
"""
import os
from pathlib import Path

import pytest

from autograder.config import load_config
from autograder.grading.task import RunSettings, grade_task
from autograder.feedback import Say, TaskView
from autograder.feedback.plain import task_text
from autograder.sandbox.client import local_student
from autograder.sandbox.runner import Runner

GOLDEN = Path(__file__).resolve().parents[1] / "golden"
PRELUDE = "import math\nimport torch\nfrom torch import nn\nfrom reference.book import masked_softmax\n"
BUGS = {
    "masked_softmax_mask_value_zero": ("masked_softmax", '''
def masked_softmax(X, valid_lens):
    if valid_lens is None:
        return X.softmax(-1)
    lens = valid_lens[:, None, None] if valid_lens.dim() == 1 else valid_lens[:, :, None]
    keep = torch.arange(X.shape[-1], device=X.device) < lens
    return X.masked_fill(~keep, 0.0).softmax(-1)
'''),
    "dot_product_attention_no_sqrt": ("dot_product_attention", '''
class DotProductAttention(nn.Module):
    def __init__(self, dropout):
        super().__init__()
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, valid_lens=None):
        scores = queries @ keys.transpose(1, 2)
        self.attention_weights = masked_softmax(scores, valid_lens)
        return self.dropout(self.attention_weights) @ values
'''),
    "masked_softmax_cpu_only": ("masked_softmax", '''
def masked_softmax(X, valid_lens):
    if valid_lens is None:
        return X.softmax(-1)
    lens = valid_lens[:, None, None] if valid_lens.dim() == 1 else valid_lens[:, :, None]
    keep = torch.arange(X.shape[-1]) < lens
    return X.masked_fill(~keep, -1e9).softmax(-1)
'''),
}


@pytest.mark.parametrize("language", ["en", "ru"])
@pytest.mark.parametrize("bug", sorted(BUGS))
def test_feedback_matches_golden(bug, language):
    """Is the feedback for this bug exactly the reviewed text?"""
    task_id, source = BUGS[bug]
    runner = Runner()
    runner.op_exec("prelude", PRELUDE)
    runner.op_exec(task_id, source)
    settings = RunSettings.resolve(load_config(), "attention_scoring", device="cpu")
    result = grade_task(local_student(runner), settings, task_id).result
    text = task_text(TaskView.of(result, Say(language))) + "\n"
    golden = GOLDEN / f"{bug}.{language}.txt"
    if os.environ.get("UPDATE_GOLDENS"):
        golden.write_text(text, encoding="utf-8")
    assert text == golden.read_text(encoding="utf-8")

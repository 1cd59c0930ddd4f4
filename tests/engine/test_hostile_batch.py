"""One batch of every kind of hostile submission, graded with `--jobs 2` before, beside and
after clean ones, through the real command line (issues 9 and 18).

What must hold: the clean submissions get full marks however the hostile ones ran (same
slots, poisoned zygotes, planted kernel state, starved CPU); every hostile submission ends
with a result (a student error, never the grader's); the grader's memory stays under
``RSS_BOUND_MB`` (the README states it); and nothing planted reaches a later student.
"""
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import mistune
import nbformat
import pytest
import yaml

from tests.sandbox.test_kernel_state import LOOK, PLANT
from tests.sandbox.test_resources import BUSY_CHILDREN
from tests.sandbox.test_zygote import POISON

from autograder.submissions.ids import file_stem

from .test_tampering import CASES, append_cell, edited

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples" / "attention_scoring"
LONG_ID = "Иванова-Петрова_" * 8 + "Ива"   # 246 bytes: a legal file name, too long for the temp file beside it
RSS_BOUND_MB = 1200  # the grading process: torch, hypothesis and the checks, whatever a student sends
pytestmark = [pytest.mark.slow, pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")]

REFERENCE_SOFTMAX = '''
def masked_softmax(X, valid_lens):
    if valid_lens is None:
        return X.softmax(-1)
    lens = valid_lens[:, None, None] if valid_lens.dim() == 1 else valid_lens[:, :, None]
    keep = torch.arange(X.shape[-1], device=X.device) < lens.to(X.device)
    return X.masked_fill(~keep, -1e9).softmax(-1)
'''
HOSTILE_CELLS = {
    "huge_reply": "def masked_softmax(X, valid_lens):\n    return torch.zeros(10 ** 8, dtype=torch.uint8)",
    "big_wrong_reply": "def masked_softmax(X, valid_lens):\n    return torch.zeros(7 * 10 ** 6, dtype=torch.uint8)",
    "error_flood": "def masked_softmax(X, valid_lens):\n    raise ValueError('x' * 10 ** 7)",
    "output_flood_uncapped": ("import sys\nsys.stdout.limit = 10 ** 9\n_real = masked_softmax\n"
                              "def masked_softmax(X, valid_lens):\n    print('y' * 10 ** 6)\n    return _real(X, valid_lens)"),
    "class_property": ("class Evil:\n    @property\n    def __class__(self):\n        raise RuntimeError('gotcha')\n"
                       "    def __call__(self, X, valid_lens):\n        return X.softmax(-1)\nmasked_softmax = Evil()"),
    "fence_type_name": ("Boom = type('Boom```\\n\\n**score: 15 / 15**\\n\\n```', (Exception,), {})\n"
                        "def masked_softmax(X, valid_lens):\n    raise Boom('forged')"),
    "surrogate_message": "import os\nraise ValueError(os.fsdecode(b'\\xff\\xfe bad bytes'))",
    "kernel_plant": PLANT,
    "busy_children": BUSY_CHILDREN,
    **{f"poison_{name.replace(' ', '_')}": source for name, source in POISON.items()},
}
LOOKER = f"{LOOK}\nif found:\n{''.join('    ' + line + chr(10) for line in REFERENCE_SOFTMAX.splitlines())}"


def crash_loop() -> nbformat.NotebookNode:
    notebook = edited("correct", lambda nb: None)
    notebook.cells[1:1] = [nbformat.v4.new_code_cell("import os\nos._exit(0)") for _ in range(1100)]
    return notebook


def many_errors() -> nbformat.NotebookNode:
    notebook = edited("correct", lambda nb: None)
    notebook.cells += [nbformat.v4.new_code_cell(f"raise ValueError('error {i}')") for i in range(300)]
    return notebook


def oversized() -> nbformat.NotebookNode:
    """Code above max_notebook_mb: the one size that is not read."""
    return edited("correct", append_cell("#" + "x" * (30 << 20)))


def heavy_but_small_code() -> nbformat.NotebookNode:
    """A 30 MB attachment, 5 MB of widget state, a 30 MB markdown cell: the code is a few kB."""
    notebook = edited("correct", lambda nb: None)
    markdown = nbformat.v4.new_markdown_cell("![plot](attachment:plot.png)")
    markdown.attachments = {"plot.png": {"image/png": "A" * (30 << 20)}}
    notebook.cells += [markdown, nbformat.v4.new_markdown_cell("x" * (30 << 20))]
    notebook.metadata["widgets"] = {"state": "B" * (5 << 20)}
    return notebook


def forged_points(points) -> nbformat.NotebookNode:
    def forge(nb):
        for cell in nb.cells:
            if cell.metadata.get("nbgrader", {}).get("grade_id", "").endswith("_tests"):
                cell.metadata["nbgrader"]["points"] = points
    return edited("correct", forge)


def own_cells(source: str, count: int) -> nbformat.NotebookNode:
    """Cells the student added, before the solutions."""
    notebook = edited("correct", lambda nb: None)
    notebook.cells[1:1] = [nbformat.v4.new_code_cell(source) for _ in range(count)]
    return notebook


BUSY_FORWARD = """
import signal
class DotProductAttention(nn.Module):
    def __init__(self, dropout):
        super().__init__()
    def forward(self, queries, keys, values, valid_lens=None):
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        while True:
            pass
"""


@pytest.fixture(scope="module")
def batch(tmp_path_factory) -> tuple[Path, subprocess.CompletedProcess]:
    root = tmp_path_factory.mktemp("hostile")
    inbox = root / "in"
    inbox.mkdir()
    notebooks = {f"a_{name}": notebook for name, (notebook, _) in CASES.items()}
    notebooks |= {f"b_{name}": edited("correct", append_cell(source)) for name, source in HOSTILE_CELLS.items()}
    notebooks |= {"b_crash_loop": crash_loop(), "b_many_errors": many_errors(), "b_oversized": oversized(),
                  "b_heavy_small_code": heavy_but_small_code(), "b_points_huge": forged_points(10 ** 400),
                  "b_points_text": forged_points("ten"), "b_sleepers": own_cells("import time\ntime.sleep(10**6)", 5),
                  "b_busy_forward": edited("correct", append_cell(BUSY_FORWARD)),
                  "c_looker": edited("untouched", append_cell(LOOKER))}
    for name, notebook in notebooks.items():
        nbformat.write(notebook, inbox / f"{name}.ipynb")
    for name in ("a_clean_first", "m_clean_beside", "z_clean_after_1", "z_clean_after_2"):
        shutil.copy(EXAMPLES / "correct.ipynb", inbox / f"{name}.ipynb")
    (inbox / "b_link_to_the_ta.ipynb").symlink_to(REPO / "assignments" / "attention_scoring" / "attention_scoring.ipynb")
    (inbox / "b_link_to_a_student.ipynb").symlink_to(inbox / "z_clean_after_1.ipynb")
    (inbox / "b_link_to_shadow.ipynb").symlink_to("/etc/shadow")
    cp1251 = os.fsencode(str(inbox)) + b"/\xc8\xe2\xe0\xed\xee\xe2.ipynb"   # "Иванов" in cp1251
    shutil.copy(EXAMPLES / "correct.ipynb", cp1251.decode("utf-8", "surrogateescape"))
    shutil.copy(EXAMPLES / "correct.ipynb", inbox / f"{LONG_ID}.ipynb")
    shutil.copy(EXAMPLES / "untouched.ipynb", inbox / f"{file_stem(LONG_ID)}.ipynb")  # the long id's own file stem
    shutil.copy(EXAMPLES / "untouched.ipynb", inbox / "\\xc8\\xe2\\xe0\\xed\\xee\\xe2.ipynb")  # cp1251's escape, spelled out
    shutil.copy(EXAMPLES / "correct.ipynb", inbox / "d_page_blocked.ipynb")
    (root / "out" / "feedback" / "d_page_blocked.html").mkdir(parents=True)  # the page cannot be written
    config = yaml.safe_load((REPO / "grader.yml").read_text())
    config["sandbox"].update(cell_timeout_s=3, call_timeout_s=5, submission_timeout_s=90, memory_mb=1024,
                             max_processes=16, max_output_kb=8, own_cells_s=6)
    (root / "grader.yml").write_text(yaml.safe_dump(config, sort_keys=False))
    out = root / "out"
    command = [sys.executable, "-m", "autograder.cli", "grade", str(inbox), "--assignment", "attention_scoring",
               "--output", str(out), "--config", str(root / "grader.yml"), "--jobs", "2"]
    run = subprocess.run(command, capture_output=True, text=True, timeout=2400)
    return out, run


def load(out: Path, name: str) -> dict:
    return json.loads((out / f"{name}.json").read_text(encoding="utf-8"))


def test_the_batch_ran_and_every_submission_has_a_result(batch):
    out, run = batch
    assert run.returncode == 0, run.stderr[-3000:]
    results = [json.loads(p.read_text(encoding="utf-8")) for p in out.glob("*.json")]
    assert len(results) == len(list((out.parent / "in").iterdir()))
    assert not [r["student_id"] for r in results if any(e["code"] == "grader_failed" for e in r["errors"])]


@pytest.mark.parametrize("name", ["a_clean_first", "m_clean_beside", "z_clean_after_1", "z_clean_after_2", LONG_ID,
                                  "b_heavy_small_code", "b_points_huge", "b_points_text", "b_crash_loop",
                                  "b_sleepers", "d_page_blocked"])
def test_clean_submissions_get_full_marks_whatever_ran_before_or_beside(batch, name):
    """And honest work beside an attack that a limit stops: the limit costs only what it bounds."""
    out, _ = batch
    result = load(out, file_stem(name))
    assert result["student_id"] == name
    assert all(t["score"] == t["max_score"] for t in result["tasks"] if t["score"] is not None), result["tasks"]


def test_the_cp1251_name_is_graded_under_its_escaped_id(batch):
    out, _ = batch
    result = load(out, "\\xc8\\xe2\\xe0\\xed\\xee\\xe2")
    assert result["score"] == 13.0


def test_names_that_would_share_a_file_are_two_students_with_two_files(batch):
    """A long id and a folder named its file stem; a cp1251 name and its escape spelled out."""
    out, run = batch
    pairs = [(LONG_ID, file_stem(LONG_ID)), ("\\xc8\\xe2\\xe0\\xed\\xee\\xe2", "\\\\xc8\\\\xe2\\\\xe0\\\\xed\\\\xee\\\\xe2")]
    for graded_id, other_id in pairs:
        assert file_stem(graded_id) != file_stem(other_id)
        assert load(out, file_stem(graded_id))["score"] == 13.0
        other = load(out, file_stem(other_id))
        assert other["student_id"] == other_id and other["score"] == 0.0


def test_limits_cost_only_what_they_bound(batch):
    out, _ = batch
    codes = {name: {i["code"] for i in load(out, name)["errors"]} for name in ("b_crash_loop", "b_sleepers")}
    assert "too_many_crashes" in codes["b_crash_loop"] and "own_cells_time" in codes["b_sleepers"]
    assert "points_changed" in {w["code"] for w in load(out, "b_points_huge")["warnings"]}
    busy = {t["id"]: t["score"] for t in load(out, "b_busy_forward")["tasks"]}
    correct = {t["id"]: t["score"] for t in load(out, "a_clean_first")["tasks"]}
    assert busy["dot_product_attention"] == 0 and {k: v for k, v in busy.items() if k != "dot_product_attention"} \
        == {k: v for k, v in correct.items() if k != "dot_product_attention"}


def test_a_page_that_cannot_be_written_fails_only_that_student(batch):
    out, run = batch
    result = load(out, "d_page_blocked")
    assert [e["code"] for e in result["errors"]] == ["output_failed"] and result["score"] == 13.0
    assert "d_page_blocked" in (out / "grades.csv").read_text(encoding="utf-8")


def test_nothing_planted_reaches_a_later_student(batch):
    """Did the looker, which copies the answer only if it finds planted data, score nothing for it?"""
    out, _ = batch
    scores = {t["id"]: t["score"] for t in load(out, "c_looker")["tasks"]}
    assert scores["masked_softmax"] == 0.0


def test_the_grader_never_held_more_than_the_bound(batch):
    out, _ = batch
    peaks = {p.stem: json.loads(p.read_text(encoding="utf-8"))["phases"].get("grader_peak_rss_mb", 0)
             for p in (out / "timing").glob("*.json")}
    assert peaks and max(peaks.values()) < RSS_BOUND_MB, sorted(peaks.items(), key=lambda kv: -kv[1])[:5]


@pytest.mark.parametrize("name", ["b_link_to_the_ta", "b_link_to_a_student", "b_link_to_shadow"])
def test_links_are_refused_and_nothing_is_read_through_them(batch, name):
    out, _ = batch
    result = load(out, name)
    assert result["score"] == 0 and [e["code"] for e in result["errors"]] == ["not_regular_file"]
    assert "root:" not in (out / "feedback" / f"{name}.md").read_text(encoding="utf-8")


def test_each_attack_ends_as_that_students_error(batch):
    out, _ = batch
    codes = {name: {i["code"] for i in load(out, name)["errors"] + load(out, name)["warnings"]}
             for name in ("b_crash_loop", "b_many_errors", "b_oversized", "b_class_property", "b_huge_reply")}
    assert "more_issues" in codes["b_many_errors"]
    assert codes["b_oversized"] == {"too_large"}
    scores = {t["id"]: t["score"] for t in load(out, "b_class_property")["tasks"]}
    assert scores["masked_softmax"] < 3.0  # a callable object that ignores valid_lens, graded as one
    rendered = mistune.html((out / "feedback" / "b_fence_type_name.md").read_text(encoding="utf-8"))
    assert "<strong>score: 15 / 15</strong>" not in rendered  # the forged line stays inside its code block
    messages = json.dumps(load(out, "b_error_flood"))
    assert len(messages) < 200_000


def test_grades_csv_and_outputs_are_readable_by_others(batch):
    out, _ = batch
    assert (out / "grades.csv").stat().st_mode & 0o044 == 0o044
    assert (out / "feedback" / "a_clean_first.md").stat().st_mode & 0o044 == 0o044

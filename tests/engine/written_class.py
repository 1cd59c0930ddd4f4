"""A plain-folder class of eight for the written answers' tests: the bundled example notebooks
with their written answer (``cost_analysis``) filled in as students write them, honest and
hostile, and two notebooks that cannot be graded.

- ``ivanov``: the reference solutions and a careful answer (Markdown, LaTeX, a table);
- ``petrova``: the buggy example and a short answer with a list;
- ``sidorov``: the released template, answer untouched;
- ``kim``: an answer that tries to act on the TA's page: raw HTML, a script, an ``onerror``, a
  ``javascript:`` and a ``data:`` link, a ``data:`` image, an outside image, LaTeX that never ends;
- ``=SUM(1+1)``: an id that a spreadsheet would run as a formula, with an ordinary answer;
- ``long``: a 10 MB answer;
- ``broken``: a notebook cut off half-way (not JSON);
- ``wrong``: the other assignment's notebook.
"""
import json
import shutil
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"
ASSIGNMENT, TASK = "attention_scoring", "cost_analysis"
FORMULA_ID = "=SUM(1+1)"
LONG = 10 * 2**20  # characters of the long answer

CAREFUL = r"""Ваш ответ / Your answer:

**Scaled dot product.** The scores $\mathbf{Q}\mathbf{K}^\top$ cost $O(B\,Q\,K\,d)$, the softmax
$O(BQK)$ and the weighted sum $O(BQKv)$, so in all

$$O\big(BQK(d+v)\big),$$

quadratic in the length when $Q \approx K$.

| scoring | time | intermediate |
|---|---|---|
| dot product | $O(BQK(d+v))$ | $B \times Q \times K$ |
| additive | $O(BQKh)$ | $B \times Q \times K \times h$ |

*Memory:* the weights are written and read again, so it is bandwidth-bound; FlashAttention
never materialises the $Q \times K$ matrix.
"""

SHORT = """Ваш ответ / Your answer:

- additive attention is slower: a `tanh` over every (query, key) pair
- both are quadratic in the number of keys
"""

HOSTILE = """Ваш ответ / Your answer:

<script>document.title = 'pwned'</script>
<img src=x onerror="document.title='pwned'"> <b>bold?</b> <style>body{display:none}</style>

[click me](javascript:document.title='pwned') and [data](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)

![tracking pixel](http://evil.example/pixel.png) ![inline](data:image/png;base64,iVBORw0KGgo=)

<iframe src="http://evil.example"></iframe> \u202e reversed

$$\\frac{1}{\\sqrt{d}} \\sum_{i=1}^{K} unclosed ... """ + "x" * 3000

FORMULA_ANSWER = """Ваш ответ / Your answer:

The cost is $O(n^2)$ in the sequence length; memory too.
"""

ANSWERS = {"ivanov": ("correct", CAREFUL), "petrova": ("buggy", SHORT), "sidorov": ("untouched", None),
           "kim": ("untouched", HOSTILE), FORMULA_ID: ("correct", FORMULA_ANSWER),
           "long": ("untouched", "Ваш ответ / Your answer:\n\n" + "word " * (LONG // 5))}
GRADED = [*ANSWERS]
NOT_GRADED = ["broken", "wrong"]


def with_answer(example: str, answer: str | None, path: Path) -> Path:
    """The example notebook ``example`` with ``answer`` in its written answer's cell (None: as released)."""
    notebook = json.loads((EXAMPLES / ASSIGNMENT / f"{example}.ipynb").read_text(encoding="utf-8"))
    if answer is not None:
        [cell] = [c for c in notebook["cells"] if c["metadata"].get("nbgrader", {}).get("grade_id") == TASK]
        cell["source"] = answer
    path.write_text(json.dumps(notebook, ensure_ascii=False), encoding="utf-8")
    return path


def class_folder(folder: Path) -> Path:
    """The eight notebooks, each named by its student's id."""
    folder.mkdir(parents=True)
    for student, (example, answer) in ANSWERS.items():
        with_answer(example, answer, folder / f"{student}.ipynb")
    whole = (EXAMPLES / ASSIGNMENT / "correct.ipynb").read_bytes()
    (folder / "broken.ipynb").write_bytes(whole[: len(whole) // 2])
    shutil.copy(EXAMPLES / "bahdanau" / "buggy.ipynb", folder / "wrong.ipynb")
    return folder

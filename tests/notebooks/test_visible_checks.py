"""Do the released notebooks' visible checks catch what they promise, and tell the student so?

One kernel per assignment runs the notebook's imports and helpers and the TA's solutions,
then, case by case, a solution cell as a student could write it, followed by the task's
visible check cell, then the TA's solution again (so the next case starts from correct
code). Cases: code that creates a tensor on the CPU (on each path the check promises:
lengths or none, train or eval mode), dropout that acts in eval mode or not at all, an LSTM
decoder that hands on a GRU-style state, a masked_softmax over the wrong axis (named in the
hidden checks' words, and named as the likely cause when a correct attention class fails its
visible check because of it), and correct code that the checks must let through with a note
(the book's in-place ``masked_softmax``, code that reads values with ``int()``).
"""
import shutil
from dataclasses import dataclass

import nbformat
import pytest
from nbclient import NotebookClient

from autograder.results import text
from autograder.texts import render

from .cells import nbgrader, read, source_path, without_delimiters

pytestmark = pytest.mark.slow
MIXES = "mixes devices: a tensor was created on the CPU"
LSTM_STATE = "init_state receives the LSTM encoder's (outputs, (h, c)) and must return (h, c)"
WRONG_AXIS = [render(text("mistake.wrong_axis"), language) for language in ("en", "ru")]  # as the hidden checks say it
SOFTMAX_FIRST = "the likely cause is your masked_softmax of task 1"


@dataclass(frozen=True)
class Case:
    """A solution cell's source made from the TA's by replacing ``old`` with ``new``."""
    name: str
    task: str
    old: str
    new: str
    says: str | list[str]   # in the visible cell's output (an error's text when ``fails``)
    fails: bool = True
    visible: str = ""       # whose visible cell runs after it (the task's own by default)
    never: str = ""         # not in the output


DROPOUT_RETURN = "        return torch.bmm(self.dropout(self.attention_weights), values)     # (B, Q, K) @ (B, K, v) -> (B, Q, v)"
CASES = {
    "attention_scoring": [
        Case("arange_without_device", "masked_softmax",
             "positions = torch.arange(X.shape[-1], device=X.device)", "positions = torch.arange(X.shape[-1])",
             f"masked_softmax {MIXES}"),
        Case("lengths_read_with_int", "masked_softmax", "    lens = valid_lens.to(X.device)\n",
             "    lens = torch.tensor([int(n) for n in valid_lens.flatten()], device=X.device)"
             ".reshape(valid_lens.shape)\n",
             "Note: the device check for masked_softmax was skipped: the code reads tensor values", fails=False),
        Case("writes_into_X_like_the_book", "masked_softmax",
             "    scores = X.masked_fill(~attend, torch.finfo(X.dtype).min)     # new tensor: X is left untouched\n",
             "    X.masked_fill_(~attend, -1e6)\n    scores = X\n",
             "Warning: masked_softmax wrote into its input X (the book's code does too)", fails=False),
        Case("softmax_over_queries", "masked_softmax", "return torch.softmax(scores, dim=-1)",
             "return torch.softmax(scores, dim=1)", WRONG_AXIS),
        Case("correct_class_with_softmax_over_queries", "masked_softmax", "return torch.softmax(scores, dim=-1)",
             "return torch.softmax(scores, dim=1)", [SOFTMAX_FIRST, *WRONG_AXIS], visible="dot_product_attention"),
        Case("correct_additive_with_softmax_over_queries", "masked_softmax", "return torch.softmax(scores, dim=-1)",
             "return torch.softmax(scores, dim=1)", [SOFTMAX_FIRST, *WRONG_AXIS], visible="additive_attention"),
        Case("correct_class_with_softmax_stub", "masked_softmax", "    if valid_lens is None:\n",
             "    raise NotImplementedError()\n    if valid_lens is None:\n",
             "implement masked_softmax (task 1) first: DotProductAttention calls it", visible="dot_product_attention",
             never=SOFTMAX_FIRST),
        Case("class_without_sqrt", "dot_product_attention", " / math.sqrt(d)", "", "forgot 1/√d",
             never=SOFTMAX_FIRST),
        Case("dropout_in_eval_mode", "distance_attention",
             "        return torch.bmm(self.dropout(self.attention_weights), values)  # (B, Q, v)",
             "        return torch.bmm(nn.functional.dropout(self.attention_weights, self.dropout.p), values)",
             "DistanceAttention(dropout=0.5) changed its output in eval mode"),
        Case("no_dropout", "dot_product_attention", DROPOUT_RETURN,
             "        return torch.bmm(self.attention_weights, values)",
             "DotProductAttention(dropout=0.5) in train mode gave the eval-mode output"),
        # Dropout written by hand as SPEC defines it, for p in [0, 1): 1 / (1 - p) has no value at
        # p = 1, which the visible checks therefore never use (blind corpus 11, c08).
        Case("dropout_by_hand", "dot_product_attention", DROPOUT_RETURN,
             "        weights = self.attention_weights\n"
             "        if self.training:\n"
             "            keep = torch.rand(weights.shape, device=weights.device) >= self.dropout.p\n"
             "            weights = weights * keep / (1 - self.dropout.p)\n"
             "        return torch.bmm(weights, values)", [], fails=False),
        Case("train_mode_mask_on_the_cpu", "additive_attention",
             "        return torch.bmm(self.dropout(self.attention_weights), values)",
             "        weights = self.attention_weights\n"
             "        if self.training:   # the book's dropout_layer: a mask made without device=\n"
             "            keep = (torch.rand(weights.shape) >= self.dropout.p).float()\n"
             "            weights = weights * keep / max(1 - self.dropout.p, 1e-9)\n"
             "        return torch.bmm(weights, values)",
             f"AdditiveAttention {MIXES}"),
    ],
    "bahdanau": [
        Case("gru_style_state_h_h", "lstm_attention_decoder",
             "return keys_and_values, (h, c), enc_valid_lens", "return keys_and_values, (h, h), enc_valid_lens",
             LSTM_STATE),
        Case("gru_style_state_zero_cell", "lstm_attention_decoder",
             "return keys_and_values, (h, c), enc_valid_lens",
             "return keys_and_values, (h, torch.zeros_like(h)), enc_valid_lens", LSTM_STATE),
        Case("cpu_lengths_when_none", "seq2seq_attention_decoder",
             "        enc_outputs, hidden_state, enc_valid_lens = state   # (B, T, H), (L, B, H)\n",
             "        enc_outputs, hidden_state, enc_valid_lens = state   # (B, T, H), (L, B, H)\n"
             "        if enc_valid_lens is None:   # every source step is valid, on the CPU\n"
             "            enc_valid_lens = torch.full((X.shape[0],), enc_outputs.shape[1])\n",
             f"Seq2SeqAttentionDecoder {MIXES}"),
        Case("train_mode_noise_on_the_cpu", "dot_attention_decoder",
             "        for emb in embs:                                    # emb: (B, E)\n",
             "        if self.training:   # word dropout with a mask made without device=\n"
             "            embs = embs * (torch.rand(embs.shape[:2]) > 0.1).unsqueeze(-1)\n"
             "        for emb in embs:                                    # emb: (B, E)\n",
             f"DotAttentionDecoder {MIXES}"),
        Case("context_dropout_in_eval_mode", "seq2seq_attention_decoder",
             "            rnn_input = torch.cat((context, emb.unsqueeze(1)), dim=-1)",
             "            context = nn.functional.dropout(context, self.attention.dropout.p)   # training=True\n"
             "            rnn_input = torch.cat((context, emb.unsqueeze(1)), dim=-1)",
             "with dropout=0.5 the eval-mode output changed"),
    ],
}


def solutions(assignment: str) -> dict[str, str]:
    """task -> the TA's solution cell without the BEGIN/END SOLUTION lines."""
    return {nbgrader(cell)["grade_id"]: without_delimiters(cell.source) for cell in read(source_path(assignment)).cells
            if cell.cell_type == "code" and nbgrader(cell).get("solution")}


def case_notebook(released: nbformat.NotebookNode, assignment: str) -> tuple[nbformat.NotebookNode, dict]:
    """The released set-up cells, then per case: its cell, the visible cell, the TA's cell."""
    solved = solutions(assignment)
    by_id = {nbgrader(cell).get("grade_id"): cell for cell in released.cells}
    setup = [by_id["imports"], by_id["visible_helpers"]]
    setup += [nbformat.v4.new_code_cell(solved[task]) for task in solved]
    cells, visible_index = list(setup), {}
    for case in CASES[assignment]:
        assert solved[case.task].count(case.old) == 1, (case.name, case.old)
        cells.append(nbformat.v4.new_code_cell(solved[case.task].replace(case.old, case.new)))
        visible_index[case.name] = len(cells)
        cells.append(nbformat.v4.new_code_cell(by_id[f"{case.visible or case.task}_visible"].source))
        cells.append(nbformat.v4.new_code_cell(solved[case.task]))
    return nbformat.v4.new_notebook(cells=cells, metadata=released.metadata), visible_index


@pytest.fixture(scope="module")
def visible_outputs(release_dir, tmp_path_factory):
    """assignment -> case name -> (the visible cell's error text or None, its printed text)."""
    outputs = {}

    def run(assignment: str) -> dict:
        if assignment not in outputs:
            folder = tmp_path_factory.mktemp(f"visible-{assignment}") / assignment
            shutil.copytree(release_dir / assignment, folder)
            notebook, index = case_notebook(read(folder / f"{assignment}.ipynb"), assignment)
            NotebookClient(notebook, timeout=120, kernel_name="python3", allow_errors=True,
                           resources={"metadata": {"path": str(folder)}}).execute()
            outputs[assignment] = {name: _texts(notebook.cells[i]) for name, i in index.items()}
        return outputs[assignment]
    return run


def _texts(cell) -> tuple[str | None, str]:
    errors = [f"{output.ename}: {output.evalue}" for output in cell.outputs if output.output_type == "error"]
    printed = "".join(output.get("text", "") for output in cell.outputs if output.output_type == "stream")
    return (errors[0] if errors else None), printed


@pytest.mark.parametrize(("assignment", "case"), [pytest.param(a, c, id=f"{a}-{c.name}")
                                                  for a, cases in CASES.items() for c in cases])
def test_visible_check_says_what_it_saw(kernel_env, visible_outputs, assignment, case):
    """Does the task's visible check fail with its message on the bug, or pass with its note?"""
    error, printed = visible_outputs(assignment)[case.name]
    says = [case.says] if isinstance(case.says, str) else case.says
    if case.fails:
        assert error is not None and error.startswith("AssertionError"), (error, printed)
        assert all(part in error for part in says), (error, printed)
    else:
        assert error is None, error
        assert all(part in printed for part in says) and "passed" in printed, printed
    assert not case.never or case.never not in (error or "") + printed

"""Two builds of one student module, as the checks compare them (eval mode with and without
dropout, train mode against eval mode), hold the same parameters, the reference's twins and
the student's own extras alike; otherwise a right module whose extra parameter cancels (a
bias in M) differs from itself by rounding and loses points on some seeds."""
import torch

from autograder.checks.attention import MODULES, build, build_called, inputs
from autograder.checks.inputs import Case, values
from autograder.sandbox.client import RemoteModule, StudentError, local_student
from autograder.sandbox.runner import Runner

from .harness import notebook_namespace
from .report import ALL_MUTANTS


def test_a_parameter_without_a_reference_twin_is_the_same_in_every_build():
    source = next(m for m in ALL_MUTANTS if m.id == "bilinear_attention-bias_in_M_cancels_in_the_softmax").source
    runner = Runner()
    runner.use_namespace(notebook_namespace())
    runner.op_exec("bilinear_attention", source)
    student = local_student(runner)
    case = Case({"queries": values((2, 3, 4), 2.0, 1, torch.float32)[0],
                 "keys": values((2, 5, 6), 2.0, 2, torch.float32)[0],
                 "values": values((2, 5, 2), 2.0, 3, torch.float32)[0], "valid_lens": torch.tensor([2, 5])})
    task = MODULES["bilinear_attention"]
    torch.manual_seed(1)
    _, first = build(student, task, case)
    torch.rand(100)  # whatever ran in between
    _, second = build(student, task, case, dropout=0.5)
    biases = [RemoteModule(student, module.attr("M")).attr("bias") for module in (first, second)]
    assert biases[0] is not None and torch.equal(*biases)


FORWARD = '''
class DotProductAttention(nn.Module):
    def __init__(self, dropout):
        super().__init__()
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, valid_lens=None):
        {body}
        self._weights = torch.softmax(queries @ keys.transpose(1, 2), dim=-1)
        print("called")
        return self.dropout(self._weights) @ values

    @property
    def attention_weights(self):
        {read}
        return self._weights
'''


def _built_both_ways(source: str):
    """(build_called's output and weights) and (build, a call, a read: separate requests)."""
    runner = Runner()
    runner.use_namespace(notebook_namespace())
    runner.op_exec("dot_product_attention", source)
    student = local_student(runner)
    task, case = MODULES["dot_product_attention"], Case(
        {"queries": values((2, 3, 4), 2.0, 1, torch.float32)[0], "keys": values((2, 5, 4), 2.0, 2, torch.float32)[0],
         "values": values((2, 5, 2), 2.0, 3, torch.float32)[0], "valid_lens": torch.tensor([2, 5])})
    def step(do):
        try:
            return do()
        except StudentError as error:
            return error
    folded = step(lambda: build_called(student, task, case)[2:])
    output, weights = (folded, None) if isinstance(folded, StudentError) else folded
    _, module = build(student, task, case)
    separate = step(lambda: module(*inputs(case)))
    read = None if isinstance(separate, StudentError) else step(lambda: module.attr("attention_weights"))
    return (output, weights), (separate, read), student.output()


def _same(a, b) -> bool:
    if isinstance(a, StudentError) or isinstance(b, StudentError):
        return str(a) == str(b) and getattr(a, "where", None) == getattr(b, "where", None)
    return (a is None and b is None) or torch.equal(a, b)


def test_a_build_with_its_call_answers_as_separate_requests_do():
    """``build_called`` folds build, call and read into one round trip: the same values, the
    same errors (the call's, the read's) at the same lines, the same printed output."""
    for body, read in [("pass", "pass"), ("raise ValueError('no forward')", "pass"),
                       ("pass", "raise AttributeError('no weights kept')")]:
        folded, separate, printed = _built_both_ways(FORWARD.format(body=body, read=read))
        assert all(_same(a, b) for a, b in zip(folded, separate, strict=True)), (body, read, folded, separate)
        assert printed.count("called") == (0 if "raise" in body else 2)

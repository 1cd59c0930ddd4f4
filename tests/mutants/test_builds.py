"""Two builds of one student module, as the checks compare them (eval mode with and without
dropout, train mode against eval mode), hold the same parameters, the reference's twins and
the student's own extras alike; otherwise a right module whose extra parameter cancels (a
bias in M) differs from itself by rounding and loses points on some seeds."""
import torch

from autograder.checks.attention import MODULES, build
from autograder.checks.inputs import Case, values
from autograder.sandbox.proxy import RemoteModule, local_student
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

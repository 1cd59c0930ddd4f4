"""The checks of every autograded task, by task id (SPEC §1)."""
import ast
from collections.abc import Callable
from dataclasses import dataclass

from . import attention, attention_modes, contexts, decoder_modes, decoders, softmax
from .core import Check, Context


@dataclass(frozen=True)
class Task:
    """An autograded task: the name its cell defines, its checks, and what runs after them
    (non-scoring remarks, e.g. that masked_softmax writes into its input)."""
    id: str
    defines: str
    checks: list[Check]
    remarks: Callable[[object, Context], None] | None = None


TASKS = {task.id: task for task in [
    Task("masked_softmax", "masked_softmax", softmax.CHECKS, softmax.warn_if_writes_input),
    *(Task(task_id, module.name, contexts.with_contexts(attention.checks_for(task_id), module)
           + attention_modes.checks(module))
      for task_id, module in attention.MODULES.items()),
    *(Task(task_id, decoder.name, contexts.with_decoder_contexts(decoders.checks_for(task_id), decoder)
           + decoder_modes.checks_for(task_id))
      for task_id, decoder in decoders.DECODERS.items()),
]}

# Names with a published version in the book (reference/book.py): while one task is
# checked, other tasks' names are bound to these, so one mistake costs points once.
BOOK_NAMES = ["masked_softmax", "DotProductAttention", "AdditiveAttention", "Seq2SeqAttentionDecoder"]


def names_to_bind(task_id: str) -> list[str]:
    """The book names that the other tasks define (not this task's own name)."""
    return [name for name in BOOK_NAMES if name != TASKS[task_id].defines]


def book_without(source: str, name: str) -> str:
    """The book's source with the top-level definition of ``name`` cut out: what the worker
    may hold while the task that defines ``name`` is graded."""
    lines = source.splitlines(keepends=True)
    for node in reversed(ast.parse(source).body):
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name == name:
            start = min([node.lineno, *(d.lineno for d in node.decorator_list)]) - 1
            del lines[start:node.end_lineno]
    return "".join(lines)

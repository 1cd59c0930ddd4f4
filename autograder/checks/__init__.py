"""The checks of every autograded task, by task id (SPEC §1)."""
from dataclasses import dataclass

from . import attention, decoders, softmax
from .core import Check


@dataclass(frozen=True)
class Task:
    """An autograded task: the name its cell defines and its checks."""
    id: str
    defines: str
    checks: list[Check]


TASKS = {task.id: task for task in [
    Task("masked_softmax", "masked_softmax", softmax.CHECKS),
    *(Task(task_id, spec.name, attention.checks_for(task_id)) for task_id, spec in attention.TASKS.items()),
    *(Task(task_id, spec.name, decoders.checks_for(task_id)) for task_id, spec in decoders.TASKS.items()),
]}

# Names with a published version in the book (reference/book.py): while one task is
# checked, other tasks' names are bound to these, so one mistake costs points once.
BOOK_NAMES = ["masked_softmax", "DotProductAttention", "AdditiveAttention"]


def names_to_bind(task_id: str) -> list[str]:
    """The book names that the other tasks define (not this task's own name)."""
    return [name for name in BOOK_NAMES if name != TASKS[task_id].defines]

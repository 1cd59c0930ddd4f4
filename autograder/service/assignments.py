"""Which assignment a handed-in notebook is, from its cells' nbgrader grade ids (SPEC §5: an
upload of another assignment's notebook is refused, 400 ``wrong_assignment``, and replaces
nothing). The rule is the batch's (``pipeline``): a notebook is another assignment's when it
has none of this assignment's task cells and some of the other's. The grade ids come from the
bounded notebook check (``reading.check_notebook``), for an upload and a hand-in alike."""
from dataclasses import dataclass, field
from typing import TYPE_CHECKING


if TYPE_CHECKING:
    from ..grading.pipeline import Batch


@dataclass(frozen=True)
class Assignments:
    name: str = ""
    ours: frozenset[str] = frozenset()                                   # this assignment's task cells' grade ids
    others: dict[str, frozenset[str]] = field(default_factory=dict)      # every other assignment's

    @classmethod
    def of(cls, batch: "Batch") -> "Assignments":
        tasks = batch.settings.spec.tasks
        return cls(batch.settings.assignment, frozenset({*tasks, *(f"{task}_tests" for task in tasks)}),
                   {other: frozenset(ids) for other, ids in batch.others.items()})

    def other_of(self, grade_ids: set[str]) -> str | None:
        """The other assignment whose notebook this is, or None (ours, or nobody's)."""
        if grade_ids & self.ours:
            return None
        return next((other for other, ids in self.others.items() if grade_ids & ids), None)

"""Which assignment a handed-in notebook is, from its cells' nbgrader grade ids (SPEC §5: an
upload of another assignment's notebook is refused, 400 ``wrong_assignment``, and replaces
nothing). The rule is the batch's (``pipeline``): a notebook is another assignment's when it
has none of this assignment's task cells and some of the other's."""
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..grading.assemble import MAX_GRADE_ID

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


def grade_ids(cells: list) -> set[str]:
    """The grade ids of a notebook's cells, as JSON gives them (nothing else is trusted)."""
    found = set()
    for cell in cells:
        meta = cell.get("metadata") if type(cell) is dict else None
        nbgrader = meta.get("nbgrader") if type(meta) is dict else None
        gid = nbgrader.get("grade_id") if type(nbgrader) is dict else None
        if type(gid) is str and 0 < len(gid) <= MAX_GRADE_ID:
            found.add(gid)
    return found

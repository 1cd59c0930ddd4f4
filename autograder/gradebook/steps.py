"""The two steps the autograder adds to nbgrader's Autograde converter (nbconvert preprocessors).

``RestoreCellRoles`` runs before nbgrader's sanitizing steps; ``WriteAutograderOutputs`` takes
the place of nbgrader's ``Execute``. Both see the notebook as nbgrader's other steps do.
"""
from nbformat import from_dict
from nbformat.v4 import new_code_cell, new_output
from nbgrader import utils
from nbgrader.api import Gradebook
from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets import Dict, Unicode


def is_test_cell(cell) -> bool:
    """An autograded test cell: nbgrader scores it by its outputs (a graded, non-answer code cell)."""
    return cell.cell_type == "code" and utils.is_grade(cell) and not utils.is_solution(cell)


class RestoreCellRoles(NbGraderPreprocessor):
    """Every cell's nbgrader role (grade id, flags, points) comes from the gradebook.

    nbgrader's own steps trust the flags a submitted cell carries: a forged grade cell or a
    duplicated test cell makes them fail for that student (nothing recorded), and a test cell
    whose ``grade`` flag was cleared leaves its task to the TA. Here a cell with a grade id the
    source notebook lacks, or has already used above, becomes a plain cell (as the autograder
    runs it); a known cell gets the source's role; a deleted test cell is added back at the
    end (nbgrader's OverwriteCells then restores its source), so it receives its task's score.
    """

    def preprocess(self, nb, resources):
        info = resources["nbgrader"]
        with Gradebook(info["db_url"]) as gradebook:
            roles = _roles(gradebook.find_notebook(info["notebook"], info["assignment"]))
        seen = set()
        for cell in nb.cells:
            meta = cell.metadata.get("nbgrader")
            if meta is None:
                continue
            grade_id = meta.get("grade_id") if isinstance(meta, dict) else None
            if not isinstance(grade_id, str) or grade_id not in roles or grade_id in seen:
                del cell.metadata["nbgrader"]
                continue
            seen.add(grade_id)
            cell.metadata["nbgrader"] = from_dict(roles[grade_id])  # OverwriteCells adds the checksum
        for grade_id, role in roles.items():
            if grade_id not in seen and role["grade"] and not role["solution"] and role["cell_type"] == "code":
                nb.cells.append(new_code_cell("", metadata={"nbgrader": from_dict(role), "editable": False,
                                                                 "deletable": False}))
        return nb, resources


def _roles(notebook) -> dict[str, dict]:
    """grade id -> the nbgrader metadata ``generate_assignment`` gave that cell (gradebook rows)."""
    points = {cell.name: cell.max_score for cell in [*notebook.grade_cells, *notebook.task_cells]}
    grades = {cell.name for cell in notebook.grade_cells}
    answers = {cell.name for cell in notebook.solution_cells}
    tasks = {cell.name for cell in notebook.task_cells}
    roles = {}
    for cell in notebook.source_cells:
        role = {"grade_id": cell.name, "grade": cell.name in grades, "solution": cell.name in answers,
                "task": cell.name in tasks, "locked": cell.locked, "cell_type": cell.cell_type,
                "schema_version": 3}
        if cell.name in points:
            role["points"] = points[cell.name]
        roles[cell.name] = role
    return roles


class WriteAutograderOutputs(NbGraderPreprocessor):
    """Stands in for nbgrader's ``Execute``: writes the autograder's findings as cell outputs."""

    outputs = Dict(help="test cell grade id -> {'score': float, 'text': str}")
    notes = Unicode("", help="the autograder's notes on the whole notebook ('' for none)")
    hidden_note = Unicode(help="the one-line comment that replaces a test cell's source")

    def preprocess(self, nb, resources):
        for cell in nb.cells:
            if is_test_cell(cell):
                found = self.outputs[cell.metadata.nbgrader["grade_id"]]  # NbgraderCourse.check
                cell.source = self.hidden_note
                # The value is what nbgrader reads as partial credit (utils.determine_grade).
                cell.outputs = [new_output("stream", name="stdout", text=found["text"]),
                                new_output("execute_result", data={"text/plain": repr(found["score"])},
                                           execution_count=None)]
        first_code = next((c for c in nb.cells if c.cell_type == "code" and not is_test_cell(c)), None)
        if self.notes and first_code is not None:
            first_code.outputs = [new_output("stream", name="stdout", text=self.notes)]
        return nb, resources

"""Do the source and released notebooks follow SPEC §1 and agree with grader.yml?"""
import ast
import collections
import symtable

import pytest

from .cells import (ASSIGNMENTS, TASK_NAMES, grader_tasks, nbgrader, read, source_path,
                    task_points, without_delimiters)

IMPORTS = "import math\nimport torch\nfrom torch import nn\n"


def notebooks(release_dir, assignment):
    """The source notebook and its release: both must carry the same grading metadata."""
    return {"source": read(source_path(assignment)),
            "released": read(release_dir / assignment / f"{assignment}.ipynb")}


def flags(cell, *names: str) -> dict:
    return {name: nbgrader(cell).get(name) for name in names}


def graded_cells(notebook) -> dict[str, list]:
    cells = collections.defaultdict(list)
    for cell in notebook.cells:
        if nbgrader(cell):
            cells[nbgrader(cell)["grade_id"]].append(cell)
    return cells


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
@pytest.mark.parametrize("version", ["source", "released"])
def test_grade_ids_are_unique(release_dir, assignment, version):
    """Does every nbgrader cell have its own grade id (schema version 3)?"""
    cells = graded_cells(notebooks(release_dir, assignment)[version])
    assert {gid for gid, same in cells.items() if len(same) > 1} == set()
    assert {nbgrader(c[0])["schema_version"] for c in cells.values()} == {3}


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
@pytest.mark.parametrize("version", ["source", "released"])
def test_points_match_grader_yml(release_dir, assignment, version):
    """Does each task have one solution cell and one graded cell worth its grader.yml points?"""
    cells = graded_cells(notebooks(release_dir, assignment)[version])
    tasks = grader_tasks(assignment)
    for task, checks in tasks.items():
        [solution] = cells[task]
        if "manual" in checks:   # a written answer: the solution cell is the graded cell
            assert solution.cell_type == "markdown"
            assert flags(solution, "solution", "grade") == {"solution": True, "grade": True}
            assert nbgrader(solution)["points"] == checks["manual"]
            assert f"{task}_tests" not in cells
            continue
        [tests] = cells[f"{task}_tests"]
        assert solution.cell_type == "code" and nbgrader(solution)["solution"]
        assert not nbgrader(solution)["grade"]
        assert nbgrader(tests)["grade"] and nbgrader(tests)["locked"]
        assert not nbgrader(tests)["solution"]
        assert nbgrader(tests)["points"] == task_points(checks), task
    graded = {gid: nbgrader(c[0])["points"] for gid, c in cells.items() if nbgrader(c[0])["grade"]}
    assert sum(graded.values()) == sum(task_points(checks) for checks in tasks.values())
    solutions = {gid for gid, c in cells.items() if nbgrader(c[0])["solution"]}
    assert solutions == set(tasks)


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_each_solution_cell_defines_its_name(assignment):
    """Does each autograded task's cell define exactly the name SPEC §1 lists?"""
    for cell in read(source_path(assignment)).cells:
        task = nbgrader(cell).get("grade_id")
        if cell.cell_type != "code" or not nbgrader(cell).get("solution"):
            continue
        tree = ast.parse(without_delimiters(cell.source))
        defined = [node.name for node in tree.body
                   if isinstance(node, (ast.FunctionDef, ast.ClassDef))]
        assert defined == [TASK_NAMES[task]]
        assert all(isinstance(node, (ast.FunctionDef, ast.ClassDef)) for node in tree.body)


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_hidden_test_cells_call_the_grader(assignment):
    """Is each test cell's whole body hidden, and does it grade its own task?"""
    for cell in read(source_path(assignment)).cells:
        gid = nbgrader(cell).get("grade_id", "")
        if not gid.endswith("_tests"):
            continue
        task = gid.removesuffix("_tests")
        body = cell.source.split("### BEGIN HIDDEN TESTS\n", 1)[1]
        assert body == f'from autograder.in_kernel import grade\ngrade("{task}", globals())\n### END HIDDEN TESTS'


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_first_code_cell_imports_and_is_locked(assignment):
    """Does the notebook start with the locked imports SPEC §1 asks for?"""
    first = next(cell for cell in read(source_path(assignment)).cells if cell.cell_type == "code")
    assert first.source.startswith(IMPORTS)
    assert flags(first, "locked", "solution", "grade") == {"locked": True, "solution": False,
                                                           "grade": False}


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_visible_checks_and_demos_are_read_only(assignment):
    """Is every code cell other than a task's solution locked against editing?"""
    for cell in read(source_path(assignment)).cells:
        if cell.cell_type == "code" and not nbgrader(cell).get("solution"):
            assert nbgrader(cell).get("locked"), cell.id


def test_training_demos_are_skipped_while_grading():
    """Does every bahdanau cell that trains check NBGRADER_EXECUTION first?"""
    trains = [cell for cell in read(source_path("bahdanau")).cells
              if cell.cell_type == "code" and "train_seq2seq(" in cell.source]
    assert trains
    for cell in trains:
        assert 'if not os.environ.get("NBGRADER_EXECUTION"):' in cell.source, cell.id


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_grading_skips_only_cells_that_define_nothing_a_solution_uses(assignment):
    """Grading does not run the visible checks and demonstrations (assemble.for_the_student): is
    every locked cell below the first solution one of them, and does every one of them define no
    name that a later cell of the notebook (a solution's skeleton, a set-up cell) reads?"""
    from autograder.grading.assemble import for_the_student
    cells = [c for c in read(source_path(assignment)).cells if c.cell_type == "code"]
    first_solution = next(i for i, c in enumerate(cells) if nbgrader(c).get("solution"))
    skipped = [c for c in cells if for_the_student(nbgrader(c).get("grade_id", ""))]
    for cell in cells[first_solution:]:
        meta = nbgrader(cell)
        if not meta.get("solution") and not meta.get("grade"):
            assert cell in skipped, meta.get("grade_id")
    read_by_kept = set().union(*(free_names(without_delimiters(c.source)) for c in cells if c not in skipped))
    for cell in skipped:
        defined = {name for name in bound_names(cell.source)}
        assert not defined & read_by_kept, (nbgrader(cell)["grade_id"], defined & read_by_kept)


def _tables(source: str):
    tables = [symtable.symtable(source, "cell", "exec")]
    while tables:
        table = tables.pop()
        yield table
        tables += table.get_children()


def free_names(source: str) -> set[str]:
    """The module-level names a cell reads without binding them itself."""
    names = set()
    for table in _tables(source):
        for symbol in table.get_symbols():
            top = table.get_type() == "module"
            if (top and symbol.is_referenced() and not symbol.is_assigned() and not symbol.is_imported()) or (
                    not top and symbol.is_global()):
                names.add(symbol.get_name())
    return names


def bound_names(source: str) -> set[str]:
    """The module-level names a cell binds (assigns, defines, imports)."""
    module = symtable.symtable(source, "cell", "exec")
    return {s.get_name() for s in module.get_symbols() if s.is_assigned() or s.is_imported()}

"""The plain nbgrader path: a hidden test cell calls ``grade(task_id, globals())``.

The same checks run inside the student's kernel on the names the notebook defines.
The cell's value is the score as a plain float (nbgrader's partial credit); nothing
is raised and nothing reaches stderr (nbgrader zeroes a test cell with stderr output).
nbgrader's own weaknesses remain on this path (docs: An nbgrader course, "Plain `nbgrader autograde`").
"""
import contextlib
import io
import sys
import warnings

from .config import load_config
from .feedback import Say, TaskView
from .feedback.plain import task_text
from .grading.task import RunSettings, grade_task


@contextlib.contextmanager
def _quiet_single_threaded():
    """No stderr, no warnings, and one torch thread (restored afterwards: it is the student's kernel)."""
    import torch
    threads = torch.get_num_threads()
    saved_stderr = sys.stderr
    sys.stderr = io.StringIO()
    torch.set_num_threads(1)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    finally:
        torch.set_num_threads(threads)
        sys.stderr = saved_stderr


def grade(task_id: str, namespace: dict) -> float:
    """Run ``task_id``'s checks on ``namespace``; print the feedback; return the score."""
    try:
        with _quiet_single_threaded():
            result, say = _grade(task_id, namespace)
    except Exception as error:  # the grader's own failure: say so, never crash the cell
        print(f"grader error while checking {task_id}: {type(error).__name__}: {error}")
        return 0.0
    print(task_text(TaskView.of(result, say)))
    return float(min(result.score, result.max_score))


def _grade(task_id: str, namespace: dict):
    from .sandbox.client import local_student
    from .sandbox.runner import Runner

    config = load_config()
    name = next(a for a, spec in config.assignments.items() if task_id in spec.tasks)
    settings = RunSettings.resolve(config, name)
    runner = Runner()
    runner.use_namespace(namespace)
    return grade_task(local_student(runner, settings.device), settings, task_id).result, Say(config.language)

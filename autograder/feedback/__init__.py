"""One submission's feedback: the view that decides what it says, and its writers.

- ``FeedbackView.of(result, Say(language))`` (``view.py``): everything a student is told,
  decided once; ``TaskView.of(task, say)`` for one task (a test cell);
- ``markdown.feedback_markdown(view)``: ``DIR/feedback/<student_id>.md``;
- ``plain.task_text(task_view)``: a ``<task>_tests`` cell's output; ``plain.check_message``:
  the JSON's ``message`` of a check;
- ``pages.student.write_student_page(view, path)``: the HTML page (beside the class report,
  with which it shares its markup).

Torch-free (a test imports it and finds no torch).
"""
from ..texts.say import Say
from .view import FeedbackView, TaskView

__all__ = ["FeedbackView", "Say", "TaskView"]

"""Pages people look at: the student's HTML feedback and the TA's class report.

Torch-free (a test imports this package and finds no torch): everything here renders the
result model (``autograder.results``) with the text catalogue (``autograder.texts``) and
draws with matplotlib.

- ``write_student_page(view, path)``: ``DIR/feedback/<student_id>.html`` (from ``autograder.feedback``'s view);
- ``write_class_report(results, folder, language, task_checks, entered)``: ``DIR/report.html``,
  ``DIR/report.md``, ``DIR/similarity.csv`` and ``DIR/unexplained.csv``.
"""
from .class_report import write_class_report
from .student import write_student_page

__all__ = ["write_class_report", "write_student_page"]

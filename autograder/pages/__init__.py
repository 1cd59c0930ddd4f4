"""The student's HTML feedback page, and the HTML every page shares (``markup``: escaping,
the page's frame, its policy; ``figures``: heatmaps and bars drawn with matplotlib).

Torch-free (a test imports this package and finds no torch): everything here renders the
result model (``autograder.results``) with the text catalogue (``autograder.texts``).

- ``write_student_page(view, path)``: ``DIR/feedback/<student_id>.html`` (from ``autograder.feedback``'s view).
"""
from .student import write_student_page

__all__ = ["write_student_page"]

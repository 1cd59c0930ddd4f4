"""The class report: what the class did, task by task and check by check, which known
mistakes it made, the similar solutions (``similarity``) and the failures no known mistake
explains (``unexplained``), from the statistics of every result (``class_stats``).

- ``write_class_report(results, folder, language, task_checks, entered)``: ``DIR/report.html``
  (``class_report``, ``class_sections``), ``DIR/report.md`` (``class_markdown``),
  ``DIR/similarity.csv`` and ``DIR/unexplained.csv``.

Torch-free, as the pages it draws with (``autograder.pages``).
"""
from .class_report import write_class_report

__all__ = ["write_class_report"]

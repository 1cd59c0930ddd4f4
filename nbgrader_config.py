"""nbgrader's configuration for this course; run nbgrader from the repository root.

The TA's source notebooks (solutions and hidden tests) are
``assignments/<assignment>/<assignment>.ipynb``; beside each, ``d2l_attention/`` (and its
zip for Colab) is the course library the notebook imports, generated from ``reference/`` by
``autograder release`` (autograder/release.py). That command then runs ``nbgrader
generate_assignment`` with this file, which writes the student versions, helpers included,
to ``student_template/<assignment>/``. Because the helpers live in the source folder, a TA's
own ``nbgrader generate_assignment <a> --force`` releases them too, and ``nbgrader
autograde`` copies them beside every submission: students hand in only the notebook.
"""
from pathlib import Path

c = get_config()  # noqa: F821 -- traitlets provides get_config() when it loads this file

REPO = Path(__file__).resolve().parent

c.CourseDirectory.source_directory = "assignments"
c.CourseDirectory.release_directory = "student_template"

# The gradebook is course state, not source: keep it in the git-ignored build/ folder.
GRADEBOOK = REPO / "build" / "nbgrader" / "gradebook.db"
GRADEBOOK.parent.mkdir(parents=True, exist_ok=True)  # sqlite creates the file, not its folder
c.CourseDirectory.db_url = f"sqlite:///{GRADEBOOK}"

# A hidden test cell runs all of its task's checks, and the bahdanau checks train a small
# model: nbgrader's default of 30 s per cell is too short on a laptop CPU.
c.Execute.timeout = 300

"""Sphinx configuration of the docs site (``make docs``; tested in tests/docs/).

Offline by design: the theme (furo) and its fonts come from the installed package, and no
extension loads anything from the network, so the site builds and reads without one.
"""
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
sys.path.insert(0, str(DOCS / "_ext"))

project = "Attention-unit autograder"
author = "the course's TAs"
copyright = "the course's TAs"  # noqa: A001 - Sphinx's name for it

extensions = [
    "myst_parser",
    "reference_from_code",  # docs/_ext: the CLI, grader.yml and the result's JSON, from the code
]
myst_enable_extensions = ["colon_fence", "deflist", "fieldlist"]
myst_heading_anchors = 3  # [text](page.md#a-heading) links, checked by the build

root_doc = "index"
exclude_patterns = ["_build", "_ext", "README.md"]
# Warnings are errors (make docs and the tests pass -W), and every reference must resolve.
nitpicky = True
suppress_warnings: list[str] = []

html_theme = "furo"
html_title = "Attention-unit autograder"
html_static_path: list[str] = []
html_show_sourcelink = False
html_copy_source = False
html_permalinks_icon = "#"
pygments_style = "friendly"

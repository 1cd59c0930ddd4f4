"""IPython syntax in a cell, made plain Python the way an IPython kernel makes it.

nbgrader runs a notebook in a kernel, which accepts ``obj?``, ``??obj``, ``%magic``, ``!cmd``,
``x = !cmd`` and ``%%magic`` cells; the worker runs plain Python. So that a grade does not
depend on the path (SPEC §3), each cell the worker runs goes through IPython's own input
transformer first, which turns that syntax into calls on ``get_ipython()``. ``STAND_INS``, run
before the cells, defines a ``get_ipython()`` whose magics, shell commands and help do nothing,
and IPython's builtin ``display``, which shows nothing. Code that a kernel runs under a magic
stays code: the statement of ``%time statement`` and the body of a ``%%time``, ``%%timeit``,
``%%capture`` or ``%%prun`` cell (``%timeit statement`` does nothing, as the old stripping did).

IPython's transformer reads the whole cell again for each piece of syntax it rewrites, and its
help pattern is quadratic in a long dotted name (8 kB of one name: 3 s). It runs on the grader's
side, so it is bounded: a cell with nothing that could be IPython syntax is left as it is; past
``WORK_BUDGET`` in one submission (far beyond an honest notebook's), or with a name longer than
``LONGEST_NAME``, a cell only has its ``%`` and ``!`` lines blanked (grading's rule before this one).
"""
import functools
import itertools
import re
import tokenize

# A line that may hold IPython syntax (superset: inside a string or brackets IPython leaves it):
# an escape at its start, help at its end (not in a comment), an assignment from a magic or a
# command, or a pasted prompt. A cell whose first line is indented is dedented by IPython.
MIGHT_BE_IPYTHON = re.compile(r"^[ \t]*(?:[%!?/,;]|>>>|\.\.\.+:|In \[)|^[^#\n]*\?[ \t]*\r?$|=[ \t]*[%!]", re.MULTILINE)
FIRST_CODE = re.compile(r"\S")
NAME_RUN = re.compile(r"[\w*.\[\]%-]+")
OLD_MAGIC = re.compile(r"^[^\S\n]*[%!].*$", re.MULTILINE)

WORK_BUDGET = 120_000  # characters IPython reads in one submission: 1 s of the densest code (a token a character),
                       # 15 cells of 2 kB with 3 pieces of IPython syntax each
LONGEST_NAME = 256     # a name (with dots) this long is no help request a person types
RUNS_ITS_BODY = frozenset({"time", "timeit", "capture", "prun"})  # cell magics whose body a kernel runs as Python
STATEMENT_ENDS = (tokenize.NEWLINE, tokenize.COMMENT)  # ``%time`` with no statement after it
LABEL = "(ipython)"    # the stand-ins' cell; no grade id has parentheses (nbgrader allows [A-Za-z0-9_-])

STAND_INS = '''\
def _ipython_stand_ins():
    class Shell:
        """get_ipython() while grading: magics, shell commands and help do nothing."""
        def getoutput(self, *args, **kwargs):  # x = !cmd
            return []
        def __getattr__(self, name):  # run_line_magic, run_cell_magic, system, show_usage, events, ...
            return self
        def __call__(self, *args, **kwargs):
            return None
        def __repr__(self):
            return "<IPython stand-in: magics, shell commands and help do nothing while grading>"
    shell = Shell()
    def get_ipython():
        return shell
    def display(*objects, **options):
        return None
    return get_ipython, display
get_ipython, display = _ipython_stand_ins()
del _ipython_stand_ins
'''


class PlainPython:
    """Makes one submission's cells plain Python, within the submission's ``WORK_BUDGET``."""

    def __init__(self, budget: int = WORK_BUDGET):
        self.left = budget

    def __call__(self, source: str) -> tuple[str, bool]:
        """The cell as the worker runs it, and whether IPython syntax in it was made a call that
        does nothing (or blanked): the student is told that it did not run."""
        indented = _indented_start(source)
        if not indented and MIGHT_BE_IPYTHON.search(source) is None:
            return source, False
        rewrites = self.left // max(len(source), 1) - 1  # readings of the cell the budget allows, less the last
        hits = indented + sum(1 for _ in itertools.islice(MIGHT_BE_IPYTHON.finditer(source), max(rewrites + 1, 0)))
        if hits <= rewrites and _longest_name(source) <= LONGEST_NAME:
            self.left -= len(source) * (hits + 1)  # IPython reads the cell once per rewrite, and once more
            try:
                return transformed(source)
            except Exception:  # IPython's own error (IndentationError, ...): no kernel could run the cell either
                pass
        return _blanked(source)


def transformed(source: str) -> tuple[str, bool]:
    """IPython's ``TransformerManager.transform_cell``, but with the leading blank lines kept (line
    numbers stay the student's) and the code under ``%time`` and ``%%time`` kept as code."""
    from IPython.core.inputtransformer2 import leading_empty_lines

    manager = _manager()
    lines = (source if source.endswith("\n") else source + "\n").splitlines(keepends=True)
    blank = len(lines) - len(leading_empty_lines(lines))
    for step in manager.cleanup_transforms:
        lines = step(lines)
    cleaned = lines
    lines = manager.do_token_transforms(_cell_magic(lines))
    return "\n" * blank + "".join(lines), lines != cleaned


def _cell_magic(lines: list[str]) -> list[str]:
    """A ``%%time`` (``%%timeit``, ``%%capture``, ``%%prun``) cell runs its body, its first line
    left blank; any other cell magic becomes IPython's ``run_cell_magic`` call."""
    from IPython.core.inputtransformer2 import cell_magic

    if lines and lines[0].startswith("%%") and lines[0][2:].rstrip().partition(" ")[0] in RUNS_ITS_BODY:
        return ["\n", *lines[1:]]
    return cell_magic(lines)


@functools.cache
def _manager():
    """IPython's transformer (imported on first use: 0.1 s that most runs never need), with
    ``%time statement`` kept as the statement."""
    from IPython.core.inputtransformer2 import (EscapedCommand, TransformerManager, assemble_continued_line,
                                                find_end_of_continued_line)

    class TimedStatement(EscapedCommand):
        """``%time statement``: a kernel runs the statement (and says how long it took)."""
        priority = 7  # before EscapedCommand's 10, after HelpEnd's 5: ``%time?`` asks for help

        @classmethod
        def find(cls, tokens_by_line):
            for line in tokens_by_line:
                tokens = [t for t in line if t.type not in (tokenize.INDENT, tokenize.DEDENT)]
                if len(tokens) > 2 and tokens[0].string == "%" and tokens[1].string == "time" \
                        and tokens[1].start == tokens[0].end and tokens[2].type not in STATEMENT_ENDS:
                    return cls(tokens[0].start)
            return None

        def transform(self, lines):
            end = find_end_of_continued_line(lines, self.start_line)
            line = assemble_continued_line(lines, (self.start_line, self.start_col), end)
            statement = lines[self.start_line][:self.start_col] + line[len("%time"):].strip() + "\n"
            return [*lines[:self.start_line], statement, *lines[end + 1:]]

    manager = TransformerManager()
    manager.token_transformers.append(TimedStatement)
    return manager


def _indented_start(source: str) -> bool:
    """Whether the cell's first line with code is indented (IPython dedents the cell)."""
    first = FIRST_CODE.search(source)
    return first is not None and first.start() > 0 and source[first.start() - 1] in " \t"


def _longest_name(source: str) -> int:
    return max((match.end() - match.start() for match in NAME_RUN.finditer(source)), default=0)


def _blanked(source: str) -> tuple[str, bool]:
    """The ``%`` and ``!`` lines made blank: what grading did before it used IPython's transformer."""
    blanked, count = OLD_MAGIC.subn("", source)
    return blanked, count > 0

"""What a student wrote never acts on the TA's terminal: an id, a file name or a message with
escape sequences or line breaks is printed with them written out (red team: an id set the
terminal's title and cleared lines in the `grade` log, an exception message cleared the
screen in `autograder show`)."""
import io

from rich.console import Console

from autograder.console import shown
from autograder.results import Issue, SubmissionResult, TaskResult
from autograder.show import show_result
from autograder.outputs.store import OutputFolder

HOSTILE = "eve\x1b[2K\x1b]0;pwned\x07\rfake\nalice: autograded 13/13\x9b"


def test_control_characters_are_written_out():
    assert shown(HOSTILE) == "eve\\x1b[2K\\x1b]0;pwned\\x07\\rfake\\nalice: autograded 13/13\\x9b"
    assert shown("Петрова [bold] ✔\t") == "Петрова [bold] ✔\\t"


def test_show_prints_no_control_character_of_the_result(tmp_path):
    folder = OutputFolder(tmp_path, "attention_scoring", "en")
    folder.check_usable()
    result = SubmissionResult(student_id=HOSTILE, assignment="attention_scoring", score=0.0, max_score=3.0,
                              tasks=[TaskResult(id="masked_softmax", score=0.0, max_score=3.0)],
                              errors=[Issue(code="cell_error", text=None, message="\x1b[2J\x1b[H[green]passed")],
                              seed=0, fingerprint="", notebook=HOSTILE + ".ipynb")
    folder.save(result, pages=False)
    console = Console(file=io.StringIO(), force_terminal=True, width=200, color_system=None)
    show_result(HOSTILE, tmp_path, console)
    printed = console.file.getvalue()
    assert "\x1b]" not in printed and "\x1b[2J" not in printed and "\x07" not in printed
    assert "\\x1b[2J" in printed and "eve\\x1b[2K" in printed


def test_markdown_written_for_the_student_and_the_ta_holds_no_control_character():
    from autograder.feedback.escape import fenced, inline_code, md, words
    for text in (md(HOSTILE), words(HOSTILE), inline_code(HOSTILE), *fenced(HOSTILE)):
        assert not any(ord(c) < 32 or 0x7f <= ord(c) <= 0x9f for c in text), repr(text)


REORDERING = "ok \u2066\u202e evil \u200b\u200f\u061c\ufeff"  # red team 10: U+202E reversed the grader's words after it


def test_direction_and_zero_width_characters_are_written_out_too():
    """Does a message's direction override or zero-width character reach a terminal, a Markdown
    file or an HTML page only written out?"""
    from autograder.feedback.escape import fenced, md
    from autograder.pages.markup import esc
    written = "ok \\u2066\\u202e evil \\u200b\\u200f\\u061c\\ufeff"
    assert shown(REORDERING) == written == esc(REORDERING)
    assert written in "".join(fenced(REORDERING))
    assert not set("\u2066\u202e\u200b\u200f\u061c\ufeff") & set(md(REORDERING))


def test_an_html_page_holds_no_control_character_but_line_breaks():
    """Does the HTML escaping write a message's NUL and ESC out (red team 10: raw in the page)
    while keeping the line breaks and tabs of code?"""
    from autograder.pages.markup import esc
    assert esc("a \x00 b \x1b[2J <c>\n\td") == "a \\x00 b \\x1b[2J &lt;c&gt;\n\td"

"""The Quick start page's commands and the output it shows, read from docs/quickstart.md.

A ```console block holds commands (lines starting with ``$ ``), each followed by the output the
page shows for it. In shown output a line ``...`` stands for any lines, and ``...`` inside a
line for any text on that line; every other line must appear as shown, in that order.
"""
import re
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PAGE = REPO / "docs" / "quickstart.md"
PROMPT = "$ "


@dataclass(frozen=True)
class Step:
    command: str
    shown: tuple[str, ...]      # the output lines the page shows under it

    def pattern(self) -> re.Pattern:
        """What the shown output promises, as a regular expression over the real output."""
        parts = []
        for line in self.shown:
            if line.strip() == "...":
                parts.append(r"(?:[^\n]*\n)*?")
            else:
                parts.append(r"[^\n]*?".join(re.escape(piece) for piece in line.rstrip().split("...")) + r"[ \t]*\n")
        return re.compile("^" + "".join(parts), re.MULTILINE)

    def matches(self, output: str) -> bool:
        return not self.shown or self.pattern().search(output.rstrip("\n") + "\n") is not None


def steps(page: Path = PAGE) -> list[Step]:
    """Every command of the page's console blocks, in order, with the output shown for it."""
    found: list[Step] = []
    for block in re.findall(r"^```console\n(.*?)^```", page.read_text(encoding="utf-8"), re.S | re.M):
        command, shown = None, []
        for line in block.splitlines():
            if line.startswith(PROMPT):
                if command is not None:
                    found.append(Step(command, tuple(shown)))
                command, shown = line[len(PROMPT):], []
            else:
                shown.append(line)
        if command is not None:
            found.append(Step(command, tuple(shown)))
    return found


def setup_commands(page: Path = PAGE) -> list[str]:
    """The commands of the page's ```sh blocks (set-up, run by hand once; comments dropped)."""
    commands = []
    for block in re.findall(r"^```sh\n(.*?)^```", page.read_text(encoding="utf-8"), re.S | re.M):
        commands += [line.split("#")[0].strip() for line in block.splitlines() if line.split("#")[0].strip()]
    return commands

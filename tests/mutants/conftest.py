"""Prints the mutation report after a run that graded mutants (tests/mutants/report.py)."""
import sys


def pytest_terminal_summary(terminalreporter) -> None:
    harness = sys.modules.get("tests.mutants.harness")
    if harness is None or not harness.OUTCOMES:
        return
    from .report import table

    terminalreporter.section("mutation report (n/m: of the m mutants graded in this run)")
    terminalreporter.write_line(table())

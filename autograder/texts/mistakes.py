"""Texts: mistakes (see autograder/texts/__init__.py)."""

TEXTS: dict[str, tuple[str, str]] = {
}

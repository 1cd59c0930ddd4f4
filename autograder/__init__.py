"""Autograder for the D2L attention unit (SPEC §3)."""
import sys

__version__ = "0.1.0"

# jsonschema (which nbformat validates notebooks with) imports rfc3987_syntax, when it is
# installed, only to offer the "iri" format checks, and that import compiles 38 lark grammars:
# 1.3 s at the start of every run, before any grading. Nothing here checks "iri" formats (the
# notebook schema has none), so the import is answered with ImportError, which jsonschema
# expects for an optional dependency.
sys.modules.setdefault("rfc3987_syntax", None)

"""Autograder for the D2L attention unit (SPEC §3)."""
__version__ = "0.1.0"

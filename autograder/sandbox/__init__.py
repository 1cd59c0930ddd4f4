"""Running untrusted student code: the wire protocol, the worker, and the sandbox around it.

Nothing in this package imports ``reference`` or ``autograder.checks``: the worker must
hold nothing secret (SPEC §3). A test parses the imports to keep it so.
"""

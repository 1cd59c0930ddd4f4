"""Grading one submission: plan its cells against the TA's source (``assemble``, with
``ipython_syntax``), run them in a sandbox worker (``session``), judge each task with its
checks (``task``), and put the result together (``pipeline``)."""

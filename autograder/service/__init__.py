"""``autograder serve`` and ``autograder tokens`` (SPEC §5): feedback seconds after handing in.

- ``tokens``: the students' tokens (made, read, checked as digests);
- ``serve``: the verb: usage checks, then slots, the grading loop and the server;
- ``app``: the HTTP API (Starlette), ``page`` (and ``page.js``): the students' page;
- ``intake``: the upload, bounded while it is read, and where notebooks lie;
- ``queue``: the queue and the submissions' records in SQLite;
- ``loop``: the grading loop, from the queue to warm slots (``pool.Slots``) and back;
- ``outputs``: results into the output folder, as the batch writes them, plus the history;
- ``log``: what the service logs.

The service process never runs student code: the sandboxed workers of the grading
processes do, exactly as for ``autograder grade``.
"""

"""Handing in from Jupyter: ``autograder serve --exchange ROOT --course ID`` takes hand-ins from
nbgrader's exchange and releases the feedback where ``nbgrader fetch_feedback`` finds it.

``poll`` lists ``inbound/`` and queues each complete hand-in once, ``handin`` reads one without
trusting anything in it (bounded, no link followed, the owner checked), ``ledger`` records every
hand-in taken (so a restart takes none again), ``paths`` is the exchange's folders and the
feedback folder, and ``outputs`` writes each result's page under its own secret's hash.
"""

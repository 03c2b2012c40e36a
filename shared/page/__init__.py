"""The chapters' steps, run in the page and in a terminal, in one simulated world.

A reader who cannot open a terminal beside the page (a phone, a tablet, a
locked-down machine) can still run each step of stages 1 and 2 where it
is shown: the docs site carries its own Python (Pyodide, in a Web Worker),
and a browser has the one thing the steps lack there, nothing to connect
to.  So a step runs in the world of ``shared.sim``: the test site served
on an in-memory network, a virtual clock, a seed.

The step's code runs unchanged: its ``import socket``, ``import
selectors`` and ``import time`` get this package's modules of the same
names (``world.py``), which hand out the world's sockets and selector and
read its clock.  ``run.py`` runs a step in a fresh world and prints what
it prints; ``python -m shared.page MODULE`` does the same in a terminal,
on CPython, and the docs build compares the two.  ``session.py`` replays
the generators chapter's ``>>>`` sessions as a terminal shows them.

Nothing here is part of a lesson, and no stage imports it: it is the
docs' plumbing, as ``shared.bench`` is the measurements'.
"""

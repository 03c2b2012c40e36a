"""Stage 2 step by step: a tiny asyncio on generators, grown in five programs.

Each module is a complete program, the one before plus one idea, and runs
against the local test site (``python -m shared.site`` serves it on
http://127.0.0.1:8000/, the default URL of every step):

1. ``future``: a ten-line ``Future``, a generator ``fetch`` that yields
   futures, and a ``Task`` that drives it.
2. ``yield_from``: ``read`` and ``read_all`` as sub-coroutines, joined
   with ``yield from``; ``Future.__iter__``.
3. ``queues``: a ``Queue`` for coroutines and a pool of worker coroutines.
4. ``crawl``: the queue crawler.
5. ``tasks``: a ``Task`` that is itself a ``Future``, ending with what its
   coroutine returns or raises.

Run one with ``python -m stage2_generators.steps.future [URL]``.  Each
prints every page with the seconds since it started and the fetches in
flight.  They reuse stage 1's selector loop and non-blocking connect (the
lesson: the loop is stage 1's, unchanged) and take the rest from
``shared/steps.py``.
"""

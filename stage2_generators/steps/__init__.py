"""Stage 2 step by step: a tiny asyncio on generators, in eight programs.

Each module is a complete program, the one before plus one idea, and runs
against the local test site (``python -m shared.testsite`` serves it on
http://127.0.0.1:8000/, the default URL of every step):

1. ``future``: a ten-line ``Future``, a generator ``fetch`` that yields
   futures, and a ``Task`` that drives it.
2. ``yield_from``: ``read`` and ``read_all`` as sub-coroutines, joined
   with ``yield from``; ``Future.__iter__``.
3. ``queues``: a ``Queue`` for coroutines and a pool of worker coroutines.
4. ``crawl``: the queue crawler.
5. ``tasks``: a ``Task`` that is itself a ``Future``, ending with what its
   coroutine returns or raises.
6. ``async_crawl``: step 4's crawler in ``async def`` and ``await``, on
   step 1's Task unchanged.
7. ``taskgroup``: a first ``TaskGroup``, on the finished stage's tasks
   (which can be cancelled).
8. ``timeout``: a first ``timeout``, a deadline for a block.

Run one with ``python -m stage2_generators.steps.future [URL]``.  Each
prints every page with the seconds since it started and the fetches in
flight.  Steps 1 to 6 reuse stage 1's selector loop and non-blocking
connect (the lesson: the loop is stage 1's, unchanged); steps 7 and 8
come after the chapter's part on cancellation and build on the finished
stage.  All take the rest from ``shared/steps.py``.
"""

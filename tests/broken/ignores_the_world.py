"""Ignores the simulated world: a ``run()`` that makes its loop as if ``crawler.world`` were None.

Each is the run() a skeleton of ``crawl-new`` had before it learnt of the
world: the crawler's sockets are the world's (``simulate`` set
``make_socket``, and stage 3 hands aiohttp ``world.aiohttp_socket``), but
its loop's selector and clock are the machine's.  Every simulated test would
fail it, each in its own words; the grader must say once, at level 1,
what is wrong.
"""

import asyncio
import types

import stage1_callbacks
import stage2_generators
import stage3_asyncio
from stage1_callbacks.crawler import Crawler as CallbacksCrawler
from stage1_callbacks.loop import EventLoop
from stage2_generators import loop as event_loop
from stage2_generators.crawler import Crawler as GeneratorsCrawler
from stage3_asyncio.crawler import Crawler as AsyncioCrawler
from tests.acceptance import AcceptanceTests
from tests.broken import broken_stage

LEVEL = 1
ONE_FAILURE = True
RULE = "test_a_crawl_runs_in_the_simulated_world: rule docs/contract.md#simulation"
HINT = f"{RULE}; read docs/build-your-own.md#a-crawl-in-the-simulated-world"
HINTS = {"callbacks": HINT, "generators": HINT, "asyncio": HINT}


def run_callbacks(crawler: CallbacksCrawler) -> CallbacksCrawler:
    crawler.loop = loop = EventLoop(crawler.recorder)  # The bug: not the world's loop.
    try:
        loop.call_soon(crawler.crawl)
        loop.run()
    finally:
        crawler.close()
        loop.close()
        crawler.stopped()
    return crawler


def run_generators(crawler: GeneratorsCrawler) -> GeneratorsCrawler:
    try:
        event_loop.run(crawler.crawl(), recorder=crawler.recorder)  # The bug: the same.
    finally:
        crawler.stopped()
    return crawler


def run_asyncio(crawler: AsyncioCrawler) -> AsyncioCrawler:
    try:
        asyncio.run(crawler.crawl())  # The bug: asyncio's own loop, not the world's.
    finally:
        crawler.stopped()
    return crawler


def with_run(stage: types.ModuleType, run: object) -> types.ModuleType:
    """Return ``stage`` with its Crawler, and ``run`` in place of its own."""
    module = broken_stage(stage, stage.Crawler)
    module.run = run  # type: ignore[attr-defined]
    module.crawl = lambda roots, **options: run(stage.Crawler(roots, **options))  # type: ignore[attr-defined, operator]
    return module


class TestCallbacks(AcceptanceTests):
    stage = with_run(stage1_callbacks, run_callbacks)
    shape = "callbacks"


class TestGenerators(AcceptanceTests):
    stage = with_run(stage2_generators, run_generators)
    shape = "generators"


class TestAsyncio(AcceptanceTests):
    stage = with_run(stage3_asyncio, run_asyncio)
    shape = "asyncio"

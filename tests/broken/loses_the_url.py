"""Loses a URL: a worker that swallows a bug without recording the URL."""

import stage2_generators
import stage3_asyncio
from stage2_generators.crawler import Coroutine
from tests.acceptance import AcceptanceTests
from tests.broken import broken_stage

LEVEL = 4
RULE = (
    "test_a_bug_on_one_url_neither_hangs_the_crawl_nor_loses_the_url:"
    " rule docs/contract.md#the-whole-crawl"
)
HINTS = {
    "generators": f"{RULE}; read docs/coroutines.md#a-worker-that-survives-a-bad-item",
    "asyncio": f"{RULE}; read docs/real-asyncio.md#the-queue-and-the-workers",
}


class LosesTheUrlGenerators(stage2_generators.Crawler):
    def work(self) -> Coroutine:
        while True:
            url, max_redirect = yield from self.q.get()
            try:
                yield from self.fetch(url, max_redirect)
            except Exception:
                pass  # The bug: the URL is neither recorded nor logged.
            finally:
                self.q.task_done()


class LosesTheUrlAsyncio(stage3_asyncio.Crawler):
    async def work(self) -> None:
        while True:
            url, max_redirect = await self.q.get()
            try:
                await self.fetch(url, max_redirect)
            except Exception:
                pass  # The bug: the URL is neither recorded nor logged.
            finally:
                self.q.task_done()


class TestGenerators(AcceptanceTests):
    stage = broken_stage(stage2_generators, LosesTheUrlGenerators)
    shape = "generators"


class TestAsyncio(AcceptanceTests):
    stage = broken_stage(stage3_asyncio, LosesTheUrlAsyncio)
    shape = "asyncio"

"""Fetches one at a time: a crawler starting one worker (or Fetcher), whatever max_tasks says."""

import time
from typing import Any

import stage1_callbacks
import stage2_generators
import stage3_asyncio
from stage1_callbacks.crawler import Job
from stage2_generators.crawler import Coroutine
from tests.acceptance import AcceptanceTests
from tests.broken import broken_stage

LEVEL = 3
RULE = "test_many_fetches_at_once [seed0]: rule docs/contract.md#the-whole-crawl"
HINTS = {
    "callbacks": f"{RULE}; read docs/side-by-side.md#the-crawl-loop",
    "generators": f"{RULE}; read docs/coroutines.md#a-queue-and-workers",
    "asyncio": f"{RULE}; read docs/real-asyncio.md#the-queue-and-the-workers",
}


class OneAtATimeCallbacks(stage1_callbacks.Crawler):
    def work(self) -> None:
        assert self.loop is not None
        while self.q and self.in_flight < 1:  # The bug: 1, not max_tasks.
            url, max_redirect = self.q.popleft()
            self.in_flight += 1
            self.begin(Job(url, max_redirect))
        if self.in_flight == 0:
            self.t1 = time.time()
            self.loop.stop()


class OneAtATimeGenerators(stage2_generators.Crawler):
    def crawl_in(self, group: Any) -> Coroutine:
        worker = group.create_task(self.work())  # The bug: one worker, not max_tasks.
        self.add_roots()
        yield from self.q.join()
        worker.cancel()


class OneAtATimeAsyncio(stage3_asyncio.Crawler):
    async def crawl_in(self, group: Any) -> None:
        worker = group.create_task(self.work())  # The bug: one worker, not max_tasks.
        self.add_roots()
        await self.q.join()
        worker.cancel()


class TestCallbacks(AcceptanceTests):
    stage = broken_stage(stage1_callbacks, OneAtATimeCallbacks)
    shape = "callbacks"


class TestGenerators(AcceptanceTests):
    stage = broken_stage(stage2_generators, OneAtATimeGenerators)
    shape = "generators"


class TestAsyncio(AcceptanceTests):
    stage = broken_stage(stage3_asyncio, OneAtATimeAsyncio)
    shape = "asyncio"

"""Records a URL twice: a crawler marking a URL seen when it is fetched, not when queued."""

from typing import Any

import stage1_callbacks
import stage2_generators
import stage3_asyncio
from stage1_callbacks.crawler import Job
from stage2_generators.crawler import Coroutine
from tests.acceptance import AcceptanceTests
from tests.broken import broken_stage

LEVEL = 2
RULE = "test_many_roots: rule docs/contract.md#the-whole-crawl"
HINTS = {
    "callbacks": f"{RULE}; read docs/callbacks.md#crawling-the-site",
    "generators": f"{RULE}; read docs/coroutines.md#the-queue-crawler",
    "asyncio": f"{RULE}; read docs/asyncio.md#the-step-the-queue-crawler-on-asyncio",
}


# --8<-- [start:bug]
class SeenWhenFetchedGenerators(stage2_generators.Crawler):
    def add_url(self, url: str, max_redirect: int | None = None) -> None:
        if max_redirect is None:
            max_redirect = self.max_redirect
        # The bug: queued, but not seen yet, so it may be queued again.
        self.q.put_nowait((url, max_redirect))

    def fetch(self, url: str, max_redirect: int) -> Coroutine:
        self.seen_urls.add(url)
        yield from super().fetch(url, max_redirect)


# --8<-- [end:bug]


class SeenWhenFetchedCallbacks(stage1_callbacks.Crawler):
    def add_url(self, url: str, max_redirect: int | None = None) -> None:
        if max_redirect is None:
            max_redirect = self.max_redirect
        self.q.append((url, max_redirect))  # The bug: not seen yet.

    def begin(self, job: Job) -> None:
        self.seen_urls.add(job.url)
        super().begin(job)


class SeenWhenFetchedAsyncio(stage3_asyncio.Crawler):
    def add_url(self, url: str, max_redirect: int | None = None) -> None:
        if max_redirect is None:
            max_redirect = self.max_redirect
        self.q.put_nowait((url, max_redirect))  # The bug: not seen yet.

    async def fetch(self, url: str, max_redirect: int) -> Any:
        self.seen_urls.add(url)
        await super().fetch(url, max_redirect)


class TestCallbacks(AcceptanceTests):
    stage = broken_stage(stage1_callbacks, SeenWhenFetchedCallbacks)
    shape = "callbacks"


class TestGenerators(AcceptanceTests):
    stage = broken_stage(stage2_generators, SeenWhenFetchedGenerators)
    shape = "generators"


class TestAsyncio(AcceptanceTests):
    stage = broken_stage(stage3_asyncio, SeenWhenFetchedAsyncio)
    shape = "asyncio"

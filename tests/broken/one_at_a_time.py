"""Fetches one at a time: stage 3 starting one worker, whatever max_tasks says."""

from typing import Any

import stage3_asyncio
from tests.acceptance import AcceptanceTests
from tests.broken import broken_stage

LEVEL = 3
HINT = (
    "test_many_fetches_at_once: rule docs/contract.md#the-whole-crawl;"
    " read docs/asyncio.md#the-queue-and-the-workers"
)


class OneAtATimeCrawler(stage3_asyncio.Crawler):
    async def crawl_in(self, group: Any) -> None:
        worker = group.create_task(self.work())  # The bug: one worker, not max_tasks.
        self.add_roots()
        await self.q.join()
        worker.cancel()


class TestAcceptance(AcceptanceTests):
    stage = broken_stage(stage3_asyncio, OneAtATimeCrawler)
    shape = "asyncio"

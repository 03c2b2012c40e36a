"""Hangs on a bug: stage 3 whose worker skips task_done() when handling a URL raises."""

import stage3_asyncio
from tests.acceptance import AcceptanceTests
from tests.broken import broken_stage

LEVEL = 4
HINT = (
    "test_a_bug_on_one_url_neither_hangs_the_crawl_nor_loses_the_url:"
    " rule docs/contract.md#the-whole-crawl; read docs/asyncio.md#the-queue-and-the-workers"
)


class NoTaskDoneCrawler(stage3_asyncio.Crawler):
    async def work(self) -> None:
        while True:
            url, max_redirect = await self.q.get()
            try:
                await self.fetch(url, max_redirect)
                self.q.task_done()  # The bug: not in a finally, so join() waits for ever.
            except Exception as error:
                self.record_crash(url, error)


class TestAcceptance(AcceptanceTests):
    stage = broken_stage(stage3_asyncio, NoTaskDoneCrawler)
    shape = "asyncio"

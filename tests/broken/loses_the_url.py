"""Loses a URL: stage 3 whose worker swallows a bug without recording the URL."""

import stage3_asyncio
from tests.acceptance import AcceptanceTests
from tests.broken import broken_stage

LEVEL = 4
HINT = (
    "test_a_bug_on_one_url_neither_hangs_the_crawl_nor_loses_the_url:"
    " rule docs/contract.md#the-whole-crawl; read docs/asyncio.md#the-queue-and-the-workers"
)


class LosesTheUrlCrawler(stage3_asyncio.Crawler):
    async def work(self) -> None:
        while True:
            url, max_redirect = await self.q.get()
            try:
                await self.fetch(url, max_redirect)
            except Exception:
                pass  # The bug: the URL is neither recorded nor logged.
            finally:
                self.q.task_done()


class TestAcceptance(AcceptanceTests):
    stage = broken_stage(stage3_asyncio, LosesTheUrlCrawler)
    shape = "asyncio"

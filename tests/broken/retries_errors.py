"""Retries what is no failure: stage 3 asking again after a server error (500, 502)."""

from typing import Any

import stage3_asyncio
from tests.acceptance import AcceptanceTests
from tests.broken import broken_stage

LEVEL = 4
HINT = (
    "test_error_statuses_are_recorded_not_retried [500, 502]:"
    " rule docs/contract.md#fetching-one-url; read docs/asyncio.md#fetching-with-retries"
)


class RetriesErrorsCrawler(stage3_asyncio.Crawler):
    async def fetch_response(self, url: str, max_size: int, come_back: bool = True) -> Any:
        for _ in range(self.max_tries - 1):  # The bug: a 5xx is an answer, not a failure.
            response = await super().fetch_response(url, max_size, come_back)
            if response.status < 500:
                return response
        return await super().fetch_response(url, max_size, come_back)


class TestAcceptance(AcceptanceTests):
    stage = broken_stage(stage3_asyncio, RetriesErrorsCrawler)
    shape = "asyncio"

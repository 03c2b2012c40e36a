"""Retries what is no failure: a crawler asking again after a server error (500, 502)."""

from typing import Any

import stage2_generators
import stage3_asyncio
from stage2_generators.crawler import Coroutine
from tests.acceptance import AcceptanceTests
from tests.broken import broken_stage

LEVEL = 4
RULE = (
    "test_error_statuses_are_recorded_not_retried [500, 502]:"
    " rule docs/contract.md#fetching-one-url"
)
HINTS = {
    "generators": f"{RULE}; read docs/real-coroutines.md#the-crawler",
    "asyncio": f"{RULE}; read docs/real-asyncio.md#fetching-with-retries",
}


class RetriesErrorsGenerators(stage2_generators.Crawler):
    def fetch_response(self, url: str, max_size: int, come_back: bool = True) -> Coroutine:
        for _ in range(self.max_tries - 1):  # The bug: a 5xx is an answer, not a failure.
            response = yield from super().fetch_response(url, max_size, come_back)
            if response.status < 500:
                return response
        return (yield from super().fetch_response(url, max_size, come_back))


class RetriesErrorsAsyncio(stage3_asyncio.Crawler):
    async def fetch_response(self, url: str, max_size: int, come_back: bool = True) -> Any:
        for _ in range(self.max_tries - 1):  # The bug: a 5xx is an answer, not a failure.
            response = await super().fetch_response(url, max_size, come_back)
            if response.status < 500:
                return response
        return await super().fetch_response(url, max_size, come_back)


class TestGenerators(AcceptanceTests):
    stage = broken_stage(stage2_generators, RetriesErrorsGenerators)
    shape = "generators"


class TestAsyncio(AcceptanceTests):
    stage = broken_stage(stage3_asyncio, RetriesErrorsAsyncio)
    shape = "asyncio"

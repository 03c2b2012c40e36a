"""Records a URL once per failed try: a failure recorded before the retry is decided.

The record of a URL that failed is made once, after its last try; this
crawler records one for every try that fails, so the URL is in ``done``
several times.
"""

from typing import Any

import stage1_callbacks
import stage2_generators
import stage3_asyncio
from shared.record.stats import failure
from stage1_callbacks.crawler import Job
from stage2_generators.crawler import NETWORK_ERRORS as GENERATOR_ERRORS
from stage2_generators.crawler import Coroutine
from stage3_asyncio.crawler import NETWORK_ERRORS as ASYNCIO_ERRORS
from tests.acceptance import AcceptanceTests
from tests.broken import broken_stage

LEVEL = 4
RULE = "test_refused_connection_is_a_recorded_failure: rule docs/contract.md#fetching-one-url"
HINTS = {
    "callbacks": (
        f"{RULE}; read docs/real-callbacks.md#the-crawler-a-retry-loop-that-cannot-be-a-loop"
    ),
    "generators": f"{RULE}; read docs/real-coroutines.md#the-crawler",
    "asyncio": f"{RULE}; read docs/real-asyncio.md#fetching-with-retries",
}


class RecordsEachTryCallbacks(stage1_callbacks.Crawler):
    def try_again(self, job: Job, exception: BaseException | None) -> bool:
        again = super().try_again(job, exception)
        if again:  # The bug: a try that will be made again is recorded too.
            self.record_statistic(failure(job.url, exception or TimeoutError()))
        return again


class RecordsEachTryGenerators(stage2_generators.Crawler):
    def polite_request(self, url: str, max_size: int) -> Coroutine:
        try:
            return (yield from super().polite_request(url, max_size))
        except GENERATOR_ERRORS as error:
            self.record_statistic(failure(url, error))  # The bug: every failed try.
            raise


class RecordsEachTryAsyncio(stage3_asyncio.Crawler):
    async def polite_request(self, url: str, max_size: int) -> Any:
        try:
            return await super().polite_request(url, max_size)
        except ASYNCIO_ERRORS as error:
            self.record_statistic(failure(url, error))  # The bug: every failed try.
            raise


class TestCallbacks(AcceptanceTests):
    stage = broken_stage(stage1_callbacks, RecordsEachTryCallbacks)
    shape = "callbacks"


class TestGenerators(AcceptanceTests):
    stage = broken_stage(stage2_generators, RecordsEachTryGenerators)
    shape = "generators"


class TestAsyncio(AcceptanceTests):
    stage = broken_stage(stage3_asyncio, RecordsEachTryAsyncio)
    shape = "asyncio"

"""Gives up while waiting in line: a timeout around the wait for the host's turn too.

The contract starts a request's timeout after its turn has come; with a
``delay`` longer than the ``timeout``, this crawler fails every page that
had to wait.
"""

import asyncio

import stage2_generators
import stage3_asyncio
from shared.web.http import Response
from stage2_generators import loop as event_loop
from stage2_generators.crawler import Coroutine
from stage2_generators.tasks import sleep, wait_for
from tests.acceptance import AcceptanceTests
from tests.broken import broken_stage

LEVEL = 5
RULE = (
    "test_the_timeout_starts_after_the_wait_for_the_turn [seed0]: rule docs/contract.md#politeness"
)
HINTS = {
    "generators": f"{RULE}; read docs/build-your-own.md#politeness-level-5",
    "asyncio": f"{RULE}; read docs/build-your-own.md#politeness-level-5",
}


class TimeoutCoversTheTurnGenerators(stage2_generators.Crawler):
    def polite_request(self, url: str, max_size: int) -> Coroutine:
        # The bug: wait_for wraps the turn as well as the request.
        return (yield from wait_for(self.turn_then_request(url, max_size), self.timeout))

    def turn_then_request(self, url: str, max_size: int) -> Coroutine:
        loop = event_loop.get_running_loop()
        slot = self.host_slot(url)
        yield from slot.acquire()
        try:
            while (wait := self.turn(url, loop.time())) > 0:
                yield from sleep(wait)
            return (yield from self.request(url, max_size))
        finally:
            slot.release()


class TimeoutCoversTheTurnAsyncio(stage3_asyncio.Crawler):
    async def polite_request(self, url: str, max_size: int) -> Response:
        # The bug: the timeout's block holds the turn as well as the request.
        async with asyncio.timeout(self.timeout):
            return await super().polite_request(url, max_size)


class TestGenerators(AcceptanceTests):
    stage = broken_stage(stage2_generators, TimeoutCoversTheTurnGenerators)
    shape = "generators"


class TestAsyncio(AcceptanceTests):
    stage = broken_stage(stage3_asyncio, TimeoutCoversTheTurnAsyncio)
    shape = "asyncio"

"""Crowds a host's delay: the host's turn taken before the wait for a free slot.

A reader swaps two waits: a request first waits for the host's turn (the
delay since the last request there), and only then for a free slot under
max_per_host.  The turn it took is stale by the time a slot frees: when
two slots free close together, two requests that both had their turn go
out less than the delay apart.  In callbacks the turn is asked for when
the job arrives, and the job then waits in the host's line.
"""

import asyncio
from collections.abc import Generator
from typing import Any

import stage1_callbacks
import stage2_generators
import stage3_asyncio
from shared.crawl.polite import origin_of
from shared.web.http import Response
from stage1_callbacks.crawler import HostLine, Job
from stage2_generators import loop as event_loop
from stage2_generators.tasks import sleep, wait_for
from tests.acceptance import AcceptanceTests
from tests.broken import READ_POLITENESS, Race, broken_stage, start_fetcher

LEVEL = 5
# What `pytest FILE::TestShape -k seed --seeds 100` found, per shape.
RACES = {
    "callbacks": Race("test_politeness_in_simulation_holds_at_the_servers", first=0, failing=100),
    "generators": Race("test_politeness_in_simulation_holds_at_the_servers", first=0, failing=100),
    "asyncio": Race("test_politeness_in_simulation_holds_at_the_servers", first=0, failing=100),
}
HINTS = {shape: race.hint("politeness", READ_POLITENESS[shape]) for shape, race in RACES.items()}


class TurnTakenBeforeTheSlotAsyncio(stage3_asyncio.Crawler):
    async def polite_request(self, url: str, max_size: int) -> Response:
        loop = asyncio.get_running_loop()
        while (wait := self.turn(url, loop.time())) > 0:  # The turn, taken first...
            await asyncio.sleep(wait)
        async with self.host_slot(url):  # The bug: ...and stale once a slot is free.
            return await self.request(url, max_size)


class TurnTakenBeforeTheSlotGenerators(stage2_generators.Crawler):
    def polite_request(self, url: str, max_size: int) -> Generator[Any, None, Response]:
        loop = event_loop.get_running_loop()
        while (wait := self.turn(url, loop.time())) > 0:  # The turn, taken first...
            yield from sleep(wait)
        slot = self.host_slot(url)
        yield from slot.acquire()  # The bug: ...and stale once a slot is free.
        try:
            return (yield from wait_for(self.request(url, max_size), self.timeout))
        finally:
            slot.release()


class TurnTakenBeforeTheSlotCallbacks(stage1_callbacks.Crawler):
    def fetch(self, job: Job) -> None:
        assert self.loop is not None
        wait = self.turn(job.url, self.loop.time())  # The turn, taken first...
        if wait > 0:
            self.loop.call_later(wait, self.fetch, job)
            return
        line = self.host_lines.setdefault(origin_of(job.url), HostLine())
        if line.in_flight >= (self.max_per_host or self.max_tasks):
            line.waiting.append(job)  # The bug: ...and stale once it leaves the line.
            return
        line.in_flight += 1
        self.start(job)

    def free_slot(self, url: str) -> None:
        line = self.host_lines[origin_of(url)]
        line.in_flight -= 1
        if line.waiting:  # Its turn was taken already: it goes at once.
            line.in_flight += 1
            self.start(line.waiting.popleft())

    def start(self, job: Job) -> None:
        start_fetcher(self, job)


class TestCallbacks(AcceptanceTests):
    stage = broken_stage(stage1_callbacks, TurnTakenBeforeTheSlotCallbacks)
    shape = "callbacks"
    seeds = RACES["callbacks"].seeds


class TestGenerators(AcceptanceTests):
    stage = broken_stage(stage2_generators, TurnTakenBeforeTheSlotGenerators)
    shape = "generators"
    seeds = RACES["generators"].seeds


class TestAsyncio(AcceptanceTests):
    stage = broken_stage(stage3_asyncio, TurnTakenBeforeTheSlotAsyncio)
    shape = "asyncio"
    seeds = RACES["asyncio"].seeds

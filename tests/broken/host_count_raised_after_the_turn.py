"""Crowds a host: its requests counted against max_per_host only once their turn has come.

A reader's own count of a host's requests in place of a semaphore: a
worker waits while the count is at max_per_host, then waits for the
host's turn (the delay), and only then raises the count.  Workers that
found the count low before their turn all go once it comes: with a delay
shorter than an answer, more than max_per_host requests are at the host
at once.  In callbacks the count is checked when the job arrives and
raised in the timer callback that starts its request.
"""

import asyncio
from collections import Counter
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
POLL = 0.01  # Seconds between two looks at a host's count.


class HostCountRaisedAfterTheTurnGenerators(stage2_generators.Crawler):
    def __init__(self, roots: Any, **options: Any) -> None:
        super().__init__(roots, **options)
        self.at_host: Counter[str] = Counter()

    def polite_request(self, url: str, max_size: int) -> Generator[Any, None, Response]:
        loop = event_loop.get_running_loop()
        origin = origin_of(url)
        while self.at_host[origin] >= (self.max_per_host or self.max_tasks):
            yield from sleep(POLL)  # The check...
        while (wait := self.turn(url, loop.time())) > 0:
            yield from sleep(wait)
        self.at_host[origin] += 1  # The bug: ...and the count raised after the turn's sleep.
        try:
            return (yield from wait_for(self.request(url, max_size), self.timeout))
        finally:
            self.at_host[origin] -= 1


class HostCountRaisedAfterTheTurnAsyncio(stage3_asyncio.Crawler):
    def __init__(self, roots: Any, **options: Any) -> None:
        super().__init__(roots, **options)
        self.at_host: Counter[str] = Counter()

    async def polite_request(self, url: str, max_size: int) -> Response:
        loop = asyncio.get_running_loop()
        origin = origin_of(url)
        while self.at_host[origin] >= (self.max_per_host or self.max_tasks):
            await asyncio.sleep(POLL)  # The check...
        while (wait := self.turn(url, loop.time())) > 0:
            await asyncio.sleep(wait)
        self.at_host[origin] += 1  # The bug: ...and the count raised after the turn's sleep.
        try:
            return await self.request(url, max_size)
        finally:
            self.at_host[origin] -= 1


class HostCountRaisedAfterTheTurnCallbacks(stage1_callbacks.Crawler):
    def fetch(self, job: Job) -> None:
        line = self.host_lines.setdefault(origin_of(job.url), HostLine())
        if line.in_flight >= (self.max_per_host or self.max_tasks):  # The check...
            line.waiting.append(job)
            return
        self.when_due(job)

    def when_due(self, job: Job) -> None:
        assert self.loop is not None
        wait = self.turn(job.url, self.loop.time())
        if wait > 0:
            self.loop.call_later(wait, self.when_due, job)
            return
        self.host_lines[origin_of(job.url)].in_flight += 1  # The bug: ...raised once due.
        start_fetcher(self, job)


class TestCallbacks(AcceptanceTests):
    stage = broken_stage(stage1_callbacks, HostCountRaisedAfterTheTurnCallbacks)
    shape = "callbacks"
    seeds = RACES["callbacks"].seeds


class TestGenerators(AcceptanceTests):
    stage = broken_stage(stage2_generators, HostCountRaisedAfterTheTurnGenerators)
    shape = "generators"
    seeds = RACES["generators"].seeds


class TestAsyncio(AcceptanceTests):
    stage = broken_stage(stage3_asyncio, HostCountRaisedAfterTheTurnAsyncio)
    shape = "asyncio"
    seeds = RACES["asyncio"].seeds

"""Asks a host for robots.txt twice: its rules checked before an await, and set after it.

A race of the simulation chapter (docs/simulation.md): a worker that finds
a host's rules unknown fetches them itself, and notes them once they are
in.  Another worker needing the same host meanwhile finds them still
unknown, and fetches them too.  In callbacks the same race has no
``await`` but a callback: every page parked for the rules sends its own
request for them, since nothing notes that one is on its way.
"""

from collections.abc import Generator
from typing import Any

import stage1_callbacks
import stage2_generators
import stage3_asyncio
from shared.crawl.polite import RobotsFetch, origin_of
from shared.web.http import Response
from stage1_callbacks.crawler import Job
from tests.acceptance import AcceptanceTests
from tests.broken import READ_POLITENESS, Race, broken_stage

LEVEL = 5
# What `pytest FILE::TestShape -k seed --seeds 100` found, per shape.
RACES = {
    "callbacks": Race("test_politeness_in_simulation_holds_at_the_servers", first=0, failing=100),
    "generators": Race("test_politeness_in_simulation_holds_at_the_servers", first=0, failing=100),
    "asyncio": Race("test_politeness_in_simulation_holds_at_the_servers", first=0, failing=100),
}
HINTS = {shape: race.hint("politeness", READ_POLITENESS[shape]) for shape, race in RACES.items()}


class RobotsCheckedThenFetchedAsyncio(stage3_asyncio.Crawler):
    async def robots_of(self, url: str) -> None:
        host = self.polite.host(url)
        if host.rules is None:  # The bug: checked here, before the await...
            host.rules = await self.fetch_robots(host)  # ...and set after it.


class RobotsCheckedThenFetchedGenerators(stage2_generators.Crawler):
    def robots_of(self, url: str) -> Generator[Any, None, None]:
        host = self.polite.host(url)
        if host.rules is None:  # The bug, as in stage 3's shape.
            host.rules = yield from self.fetch_robots(host)


class RobotsCheckedThenFetchedCallbacks(stage1_callbacks.Crawler):
    def wait_for_robots(self, job: Job) -> None:
        origin = origin_of(job.url)
        self.robots_waiting.setdefault(origin, []).append(job)
        # The bug: each page that finds the rules unknown asks for them; none
        # notes that a request for them is on its way already.
        robots = RobotsFetch(origin, self.user_agent)
        self.in_flight += 1
        self.fetch(Job(robots.url, 0, robots))

    def robots_answer(
        self, robots: RobotsFetch, response: Response | None, exception: BaseException | None
    ) -> None:
        if response is not None:
            robots.received(response)
        else:
            robots.failed(exception or TimeoutError())
        if robots.rules is None:
            self.in_flight += 1
            self.fetch(Job(robots.url, 0, robots))
            return
        self.rules_known(robots.origin, robots.rules)
        for job in self.robots_waiting.pop(robots.origin, []):  # The first answer lets all go.
            self.begin(job)


class TestCallbacks(AcceptanceTests):
    stage = broken_stage(stage1_callbacks, RobotsCheckedThenFetchedCallbacks)
    shape = "callbacks"
    seeds = RACES["callbacks"].seeds


class TestGenerators(AcceptanceTests):
    stage = broken_stage(stage2_generators, RobotsCheckedThenFetchedGenerators)
    shape = "generators"
    seeds = RACES["generators"].seeds


class TestAsyncio(AcceptanceTests):
    stage = broken_stage(stage3_asyncio, RobotsCheckedThenFetchedAsyncio)
    shape = "asyncio"
    seeds = RACES["asyncio"].seeds

"""Crowds a host: its last request noted once the answer is in, and the delay checked against it.

A reader keeps the time of a host's last request and waits out the delay
from it, but notes that time once the request has been answered, after
its ``await``.  Two workers that ask while a request to the host is still
on its way both find the host quiet, and both go at once.  In callbacks
the time is noted when the answer frees the host's slot, a callback
later.
"""

import asyncio
import math
from collections.abc import Generator
from typing import Any

import stage1_callbacks
import stage2_generators
import stage3_asyncio
from shared.crawl.polite import origin_of
from shared.web.http import Response
from stage2_generators import loop as event_loop
from tests.acceptance import AcceptanceTests
from tests.broken import READ_POLITENESS, Race, broken_stage

LEVEL = 5
# What `pytest FILE::TestShape -k seed --seeds 100` found, per shape.
RACES = dict.fromkeys(
    ("callbacks", "generators", "asyncio"),
    Race("test_politeness_in_simulation_holds_at_the_servers", first=0, failing=100),
)
HINTS = {shape: race.hint("politeness", READ_POLITENESS[shape]) for shape, race in RACES.items()}


class NotedWhenAnswered:
    """The check, the same in every shape: the delay since the last answer."""

    polite: Any
    on_request: Any

    def __init__(self, *args: Any, **options: Any) -> None:
        super().__init__(*args, **options)  # type: ignore[call-arg]
        self.answered: dict[str, float] = {}  # A host's origin: its last answer's time.

    def turn(self, url: str, now: float) -> float:
        host = self.polite.host(url)
        last = self.answered.get(host.origin, -math.inf)
        wait = last + self.polite.delay_of(host) - now  # The check: the host looks quiet...
        if wait <= 0 and self.on_request is not None:
            self.on_request(url, now)
        return max(wait, 0.0)


class TurnNotedWhenAnsweredAsyncio(NotedWhenAnswered, stage3_asyncio.Crawler):
    async def request(self, url: str, max_size: int) -> Response:
        try:
            return await super().request(url, max_size)
        finally:  # ...and the time noted after the await.
            self.answered[origin_of(url)] = asyncio.get_running_loop().time()


class TurnNotedWhenAnsweredGenerators(NotedWhenAnswered, stage2_generators.Crawler):
    def request(self, url: str, max_size: int) -> Generator[Any, None, Response]:
        try:
            return (yield from super().request(url, max_size))
        finally:  # ...and the time noted after it, as in stage 3's shape.
            self.answered[origin_of(url)] = event_loop.get_running_loop().time()


class TurnNotedWhenAnsweredCallbacks(NotedWhenAnswered, stage1_callbacks.Crawler):
    def free_slot(self, url: str) -> None:
        assert self.loop is not None
        self.answered[origin_of(url)] = self.loop.time()  # ...and the time noted a callback later.
        super().free_slot(url)


class TestCallbacks(AcceptanceTests):
    stage = broken_stage(stage1_callbacks, TurnNotedWhenAnsweredCallbacks)
    shape = "callbacks"
    seeds = RACES["callbacks"].seeds


class TestGenerators(AcceptanceTests):
    stage = broken_stage(stage2_generators, TurnNotedWhenAnsweredGenerators)
    shape = "generators"
    seeds = RACES["generators"].seeds


class TestAsyncio(AcceptanceTests):
    stage = broken_stage(stage3_asyncio, TurnNotedWhenAnsweredAsyncio)
    shape = "asyncio"
    seeds = RACES["asyncio"].seeds

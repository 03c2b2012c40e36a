"""Fetches more than max_pages: the count checked before a fetch, raised once it is answered.

A reader counts a page toward ``max_pages`` when its answer is in, and
checks the count before the fetch.  Every worker that decides on a page
while the others' answers are still on their way finds the count low and
goes ahead, so the crawl asks for more pages than it may.  In callbacks
the same race has no ``await`` but a callback: every page begun before the
first answer comes back passes the check.
"""

from typing import Any

import stage1_callbacks
import stage2_generators
import stage3_asyncio
from shared.record.stats import FetchStatistic, Skipped
from tests.acceptance import AcceptanceTests
from tests.broken import READ_POLITENESS, Race, broken_stage

LEVEL = 5
# What `pytest FILE::TestShape -k seed --seeds 100` found, per shape.
RACES = dict.fromkeys(
    ("callbacks", "generators", "asyncio"),
    Race("test_max_pages_in_simulation_holds_at_the_servers", first=0, failing=100),
)
HINTS = {shape: race.hint("politeness", READ_POLITENESS[shape]) for shape, race in RACES.items()}


class CountedWhenAnswered:
    """The bug, the same in every shape: ``admit`` checks, the record counts."""

    limit_reached: Any
    polite: Any
    pages_fetched: int

    def admit(self, url: str) -> Skipped | None:
        return self.limit_reached(url) or self.polite.refusal(url)  # The check, not counted...

    def record_statistic(self, fetch_statistic: FetchStatistic) -> None:
        super().record_statistic(fetch_statistic)  # type: ignore[misc]
        if not isinstance(fetch_statistic.exception, Skipped):
            self.pages_fetched += 1  # ...and the count, once the answer is in.


class CountedWhenAnsweredAsyncio(CountedWhenAnswered, stage3_asyncio.Crawler):
    pass


class CountedWhenAnsweredGenerators(CountedWhenAnswered, stage2_generators.Crawler):
    pass


class CountedWhenAnsweredCallbacks(CountedWhenAnswered, stage1_callbacks.Crawler):
    pass


class TestCallbacks(AcceptanceTests):
    stage = broken_stage(stage1_callbacks, CountedWhenAnsweredCallbacks)
    shape = "callbacks"
    seeds = RACES["callbacks"].seeds


class TestGenerators(AcceptanceTests):
    stage = broken_stage(stage2_generators, CountedWhenAnsweredGenerators)
    shape = "generators"
    seeds = RACES["generators"].seeds


class TestAsyncio(AcceptanceTests):
    stage = broken_stage(stage3_asyncio, CountedWhenAnsweredAsyncio)
    shape = "asyncio"
    seeds = RACES["asyncio"].seeds

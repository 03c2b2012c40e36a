"""Fetches pages before robots.txt is in: a host noted as asked, and its pages let go meanwhile.

A reader makes sure robots.txt is asked for once: the first page of a
host notes the host as asked and waits for the rules.  But a page that
finds the host asked already goes ahead without them, as if the rules
were bound to allow it: while the first page waits, the others reach the
host before its robots.txt is answered, disallowed pages among them.
The check, the host asked for, holds before the await; the rules come
after it.  In callbacks the first page is parked for the rules and the
others are not.
"""

from typing import Any

import stage1_callbacks
import stage2_generators
import stage3_asyncio
from shared.crawl.polite import origin_of
from shared.record.stats import Skipped
from tests.acceptance import AcceptanceTests
from tests.broken import READ_POLITENESS, Race, broken_stage

LEVEL = 5
# What `pytest FILE::TestShape -k seed --seeds 100` found, per shape.
RACES = dict.fromkeys(
    ("callbacks", "generators", "asyncio"),
    Race("test_politeness_in_simulation_holds_at_the_servers", first=0, failing=100),
)
HINTS = {shape: race.hint("politeness", READ_POLITENESS[shape]) for shape, race in RACES.items()}


class GoesAhead:
    """The bug, the same in every shape: only a host's first page waits for its rules."""

    polite: Any
    limit_reached: Any
    pages_fetched: int

    def __init__(self, *args: Any, **options: Any) -> None:
        super().__init__(*args, **options)  # type: ignore[call-arg]
        self.asked: set[str] = set()  # The origins whose robots.txt was asked for.

    def robots_needed(self, url: str) -> bool:
        if not super().robots_needed(url):  # type: ignore[misc]
            return False
        if origin_of(url) in self.asked:  # The check: asked for already...
            return False  # ...so this page goes on before the rules are in.
        self.asked.add(origin_of(url))
        return True

    def admit(self, url: str) -> Skipped | None:
        if self.polite.host(url).rules is not None:
            return super().admit(url)  # type: ignore[misc,no-any-return]
        reason = self.limit_reached(url)  # No rules yet: taken as allowing everything.
        if reason is None:
            self.pages_fetched += 1
        return reason


class GoesAheadAsyncio(GoesAhead, stage3_asyncio.Crawler):
    pass


class GoesAheadGenerators(GoesAhead, stage2_generators.Crawler):
    pass


class GoesAheadCallbacks(GoesAhead, stage1_callbacks.Crawler):
    pass


class TestCallbacks(AcceptanceTests):
    stage = broken_stage(stage1_callbacks, GoesAheadCallbacks)
    shape = "callbacks"
    seeds = RACES["callbacks"].seeds


class TestGenerators(AcceptanceTests):
    stage = broken_stage(stage2_generators, GoesAheadGenerators)
    shape = "generators"
    seeds = RACES["generators"].seeds


class TestAsyncio(AcceptanceTests):
    stage = broken_stage(stage3_asyncio, GoesAheadAsyncio)
    shape = "asyncio"
    seeds = RACES["asyncio"].seeds

"""Follows redirects for ever: an add_url that gives every URL the full redirect budget.

A URL reached through a redirect must be queued with one redirect less;
this crawler drops the budget it is given, so a chain of redirects is
never cut.
"""

import stage1_callbacks
import stage2_generators
import stage3_asyncio
from tests.acceptance import AcceptanceTests
from tests.broken import broken_stage

LEVEL = 4
RULE = "test_redirect_chain_and_limit: rule docs/contract.md#fetching-one-url"
HINTS = {
    "callbacks": (
        f"{RULE}; read docs/real-callbacks.md#the-crawler-a-retry-loop-that-cannot-be-a-loop"
    ),
    "generators": f"{RULE}; read docs/side-by-side.md#one-url-with-retries",
    "asyncio": f"{RULE}; read docs/real-asyncio.md#redirects",
}


class ResetsTheBudgetCallbacks(stage1_callbacks.Crawler):
    def add_url(self, url: str, max_redirect: int | None = None) -> None:
        self.q.append(self.seen(url))  # The bug: max_redirect is dropped.


class ResetsTheBudgetGenerators(stage2_generators.Crawler):
    def add_url(self, url: str, max_redirect: int | None = None) -> None:
        self.q.put_nowait(self.seen(url))  # The bug: max_redirect is dropped.


class ResetsTheBudgetAsyncio(stage3_asyncio.Crawler):
    def add_url(self, url: str, max_redirect: int | None = None) -> None:
        self.q.put_nowait(self.seen(url))  # The bug: max_redirect is dropped.


class TestCallbacks(AcceptanceTests):
    stage = broken_stage(stage1_callbacks, ResetsTheBudgetCallbacks)
    shape = "callbacks"


class TestGenerators(AcceptanceTests):
    stage = broken_stage(stage2_generators, ResetsTheBudgetGenerators)
    shape = "generators"


class TestAsyncio(AcceptanceTests):
    stage = broken_stage(stage3_asyncio, ResetsTheBudgetAsyncio)
    shape = "asyncio"

"""Fetches a page twice: a redirect's target followed at once, and marked seen once answered.

A reader's shortcut: the worker that meets a redirect fetches its target
itself, if the target is not seen yet, and marks it seen once the target's
answer is in.  While that answer is on its way, a link or another redirect
to the same target finds it unseen and queues it: the target is fetched,
and recorded, twice.  In callbacks the target's job is started at once,
and marked seen in the callback that takes its answer.
"""

from collections.abc import Generator
from typing import Any

import stage1_callbacks
import stage2_generators
import stage2_generators.crawler
import stage3_asyncio
from shared.crawl.crawling import REDIRECT_STATUSES, header_text
from shared.record.stats import failure, redirect
from shared.web.http import Response
from shared.web.urls import PrivateAddress, normalize_url
from stage1_callbacks.crawler import Job
from stage1_callbacks.fetcher import Fetcher
from stage3_asyncio.crawler import NETWORK_ERRORS
from tests.acceptance import AcceptanceTests
from tests.broken import READ_CRAWLING, Race, broken_stage

LEVEL = 4
# What `pytest FILE::TestShape -k seed --seeds 100` found, per shape.
RACES = {
    "callbacks": Race("test_full_crawl_in_simulation_matches_the_oracle", first=1, failing=85),
    "generators": Race("test_full_crawl_in_simulation_matches_the_oracle", first=1, failing=90),
    "asyncio": Race("test_full_crawl_in_simulation_matches_the_oracle", first=0, failing=92),
}
HINTS = {shape: race.hint("the-whole-crawl", READ_CRAWLING[shape]) for shape, race in RACES.items()}


def target_of(crawler: Any, url: str, max_redirect: int, response: Response) -> str | None:
    """Return the URL a redirect leads to, if it is to be followed, else None."""
    if response.status not in REDIRECT_STATUSES or "location" not in response.headers:
        return None
    try:
        target = normalize_url(header_text(response.headers["location"]), url)
    except ValueError:
        return None
    if max_redirect <= 0 or target in crawler.seen_urls or not crawler.url_allowed(target):
        return None  # The check: not seen yet...
    return target


class RedirectSeenWhenAnsweredAsyncio(stage3_asyncio.Crawler):
    async def fetch(self, url: str, max_redirect: int) -> None:
        if self.robots_needed(url):
            await self.robots_of(url)
        reason = self.admit(url)
        if reason is not None:
            self.record_skip(url, reason)
            return
        try:
            response = await self.fetch_response(url, self.max_size)
            while (target := target_of(self, url, max_redirect, response)) is not None:
                self.record_statistic(redirect(url, target, response.status))
                url, max_redirect = target, max_redirect - 1
                try:
                    response = await self.fetch_response(url, self.max_size)
                finally:
                    self.seen_urls.add(url)  # The bug: ...and seen only once answered.
        except (*NETWORK_ERRORS, PrivateAddress) as error:
            self.record_statistic(failure(url, error))
            return
        self.handle_response(url, max_redirect, response)


class RedirectSeenWhenAnsweredGenerators(stage2_generators.Crawler):
    def fetch(self, url: str, max_redirect: int) -> Generator[Any, None, None]:
        if self.robots_needed(url):
            yield from self.robots_of(url)
        reason = self.admit(url)
        if reason is not None:
            self.record_skip(url, reason)
            return
        try:
            response = yield from self.fetch_response(url, self.max_size)
            while (target := target_of(self, url, max_redirect, response)) is not None:
                self.record_statistic(redirect(url, target, response.status))
                url, max_redirect = target, max_redirect - 1
                try:
                    response = yield from self.fetch_response(url, self.max_size)
                finally:
                    self.seen_urls.add(url)  # The bug, as in stage 3's shape.
        except (*stage2_generators.crawler.NETWORK_ERRORS, PrivateAddress) as error:
            self.record_statistic(failure(url, error))
            return
        self.handle_response(url, max_redirect, response)


class RedirectSeenWhenAnsweredCallbacks(stage1_callbacks.Crawler):
    def follow_redirect(self, url: str, max_redirect: int, response: Response) -> None:
        target = target_of(self, url, max_redirect, response)
        if target is None:
            super().follow_redirect(url, max_redirect, response)  # Recorded, not followed.
            return
        self.record_statistic(redirect(url, target, response.status))
        self.in_flight += 1  # Started now, not queued: and not marked seen.
        self.begin(Job(target, max_redirect - 1))

    def on_response(self, fetcher: Fetcher) -> None:
        job = self.jobs[fetcher]
        if job.robots is None:
            self.seen_urls.add(job.url)  # The bug: seen only once answered.
        super().on_response(fetcher)


class TestCallbacks(AcceptanceTests):
    stage = broken_stage(stage1_callbacks, RedirectSeenWhenAnsweredCallbacks)
    shape = "callbacks"
    seeds = RACES["callbacks"].seeds


class TestGenerators(AcceptanceTests):
    stage = broken_stage(stage2_generators, RedirectSeenWhenAnsweredGenerators)
    shape = "generators"
    seeds = RACES["generators"].seeds


class TestAsyncio(AcceptanceTests):
    stage = broken_stage(stage3_asyncio, RedirectSeenWhenAnsweredAsyncio)
    shape = "asyncio"
    seeds = RACES["asyncio"].seeds

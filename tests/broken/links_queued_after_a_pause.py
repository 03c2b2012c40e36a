"""Fetches a page twice: a page's new links picked before an await, and queued after it.

A reader gives the other workers a turn between reading a page and
queueing its links (``await asyncio.sleep(0)``), with the new links
already picked out.  The pause takes no time at all, so it matters only
when two pages that link to the same new page are read in one turn of
the loop: both pick it as new, and both queue it.  Only a schedule in
which two answers are heard at once shows it.
"""

import asyncio
from collections.abc import Generator
from typing import Any

import stage1_callbacks
import stage2_generators
import stage2_generators.crawler
import stage3_asyncio
import stage3_asyncio.crawler
from shared.crawl.crawling import HTML_MEDIA_TYPES, REDIRECT_STATUSES
from shared.record.stats import failure
from shared.web.http import Response
from shared.web.urls import PrivateAddress
from stage2_generators.tasks import sleep
from tests.acceptance import AcceptanceTests
from tests.broken import READ_CRAWLING, Race, broken_stage

LEVEL = 4
# What `pytest FILE::TestShape -k seed --seeds 100` found, per shape.
RACES = {
    "callbacks": Race("test_hosts_and_roots_in_simulation_match_the_oracle", first=1, failing=91),
    "generators": Race("test_hosts_and_roots_in_simulation_match_the_oracle", first=1, failing=91),
    "asyncio": Race("test_full_crawl_in_simulation_matches_the_oracle", first=1, failing=89),
}
HINTS = {shape: race.hint("the-whole-crawl", READ_CRAWLING[shape]) for shape, race in RACES.items()}


def plain_page(crawler: Any, url: str, response: Response) -> bool:
    """Tell whether ``response`` is a page whose links a crawl queues (no redirect, no sitemap)."""
    moved = response.status in REDIRECT_STATUSES and "location" in response.headers
    return not moved and url not in crawler.sitemap_urls and url not in crawler.earlier


def new_links(crawler: Any, url: str, response: Response) -> list[str]:
    """Record a page and return its links that are not seen yet: the check."""
    stat, links = crawler.parse_links(url, response)
    complete_html = stat.exception is None and stat.content_type in HTML_MEDIA_TYPES
    if crawler.on_page is not None and stat.status == 200 and complete_html:
        crawler.on_page(url, response.body)
    crawler.record_statistic(stat)
    if links:
        crawler.page_links[url] = tuple(sorted(links))
    return sorted(links.difference(crawler.seen_urls))


def queue(crawler: Any, url: str, links: list[str]) -> None:
    """Queue the links picked out before the pause: the update."""
    for link in links:
        crawler.note_depth(link, url, 1)
        crawler.add_url(link)  # The bug: another page may have queued it meanwhile.


class LinksQueuedAfterAPauseAsyncio(stage3_asyncio.Crawler):
    async def fetch(self, url: str, max_redirect: int) -> None:
        if self.robots_needed(url):
            await self.robots_of(url)
        reason = self.admit(url)
        if reason is not None:
            self.record_skip(url, reason)
            return
        try:
            response = await self.fetch_response(url, self.max_size)
        except (*stage3_asyncio.crawler.NETWORK_ERRORS, PrivateAddress) as error:
            self.record_statistic(failure(url, error))
            return
        if not plain_page(self, url, response):
            self.handle_response(url, max_redirect, response)
            return
        links = new_links(self, url, response)  # The check: not seen yet...
        await asyncio.sleep(0)  # A turn for the other workers.
        queue(self, url, links)  # ...and the update, after the await.


class LinksQueuedAfterAPauseGenerators(stage2_generators.Crawler):
    def fetch(self, url: str, max_redirect: int) -> Generator[Any, None, None]:
        if self.robots_needed(url):
            yield from self.robots_of(url)
        reason = self.admit(url)
        if reason is not None:
            self.record_skip(url, reason)
            return
        try:
            response = yield from self.fetch_response(url, self.max_size)
        except (*stage2_generators.crawler.NETWORK_ERRORS, PrivateAddress) as error:
            self.record_statistic(failure(url, error))
            return
        if not plain_page(self, url, response):
            self.handle_response(url, max_redirect, response)
            return
        links = new_links(self, url, response)  # The check: not seen yet...
        yield from sleep(0)  # A turn for the other workers.
        queue(self, url, links)  # ...and the update, after it.


class LinksQueuedAfterAPauseCallbacks(stage1_callbacks.Crawler):
    def handle_response(self, url: str, max_redirect: int, response: Response) -> None:
        if not plain_page(self, url, response):
            super().handle_response(url, max_redirect, response)
            return
        assert self.loop is not None
        links = new_links(self, url, response)  # The check: not seen yet...
        # Queued in a callback of their own, the page still counted as in
        # flight until then, so that the crawl does not end without them.
        self.in_flight += 1
        self.loop.call_soon(self.queue_links, url, links)

    def queue_links(self, url: str, links: list[str]) -> None:
        queue(self, url, links)  # ...and the update, a callback later.
        self.in_flight -= 1
        self.work()


class TestCallbacks(AcceptanceTests):
    stage = broken_stage(stage1_callbacks, LinksQueuedAfterAPauseCallbacks)
    shape = "callbacks"
    seeds = RACES["callbacks"].seeds


class TestGenerators(AcceptanceTests):
    stage = broken_stage(stage2_generators, LinksQueuedAfterAPauseGenerators)
    shape = "generators"
    seeds = RACES["generators"].seeds


class TestAsyncio(AcceptanceTests):
    stage = broken_stage(stage3_asyncio, LinksQueuedAfterAPauseAsyncio)
    shape = "asyncio"
    seeds = RACES["asyncio"].seeds

"""A crawler of my own, in the shape of stage 3: asyncio and aiohttp.

Each method that raises NotImplementedError is mine to write; its message
names the section of the tutorial that teaches it.  ``pytest PACKAGE``
grades the package level by level (docs/build-your-own.md).  Level 1 (one
page) needs ``add_url``, ``crawl``, ``work``, ``fetch`` and ``request`` in
their simplest form; the later levels ask more of the same methods.

What every stage shares is already here, from ``CrawlerBase``
(shared/crawl/crawling.py): the options and their checks, ``url_allowed``,
``seen_urls``, ``done``, ``add_roots()``, ``record_statistic()``,
``record_crash()``, and ``handle_response()``, which records an answer and
queues the new links it holds.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable
from typing import Any

import aiohttp

from shared.crawl.crawling import CrawlerBase
from shared.web.http import Response

LOGGER = logging.getLogger(__name__.partition(".")[0])  # The package's name.


# --8<-- [start:skeleton]
class Crawler(CrawlerBase):
    """Crawl from ``roots`` with a queue and ``max_tasks`` worker tasks."""

    logger = LOGGER

    def __init__(self, roots: str | Iterable[str], **options: Any) -> None:
        super().__init__(roots, **options)
        self.q: asyncio.Queue[tuple[str, int]] = asyncio.Queue()
        self.session: aiohttp.ClientSession | None = None  # Set in crawl().

    def add_url(self, url: str, max_redirect: int | None = None) -> None:
        """Mark ``url`` seen; queue it with its redirect budget."""
        raise NotImplementedError(
            "add_url: see docs/real-asyncio.md#the-queue-and-the-workers",
        )

    async def crawl(self) -> None:
        """Open a session, start the workers, queue the roots, join."""
        raise NotImplementedError(
            "crawl: see docs/real-asyncio.md#the-queue-and-the-workers",
        )

    async def work(self) -> None:
        """Take URLs from the queue and fetch each, until cancelled."""
        raise NotImplementedError(
            "work: see docs/real-asyncio.md#the-queue-and-the-workers",
        )

    async def fetch(self, url: str, max_redirect: int) -> None:
        """Fetch ``url``, again after a network failure; record it.

        ``self.handle_response(url, max_redirect, response)`` records an
        answer and queues its links; ``shared.record.stats.failure(url, error)``
        is the record of a URL that failed.
        """
        raise NotImplementedError(
            "fetch: see docs/real-asyncio.md#fetching-with-retries",
        )

    async def request(self, url: str) -> Response:
        """GET ``url`` once, without following redirects.

        Returns ``shared.web.http.Response(status, headers, body, truncated)``,
        header names in lower case.  ``self.recorder.begin(url)``, then
        ``.phase(url, "read")`` and ``.end(url)`` trace it (trace=FILE).
        """
        raise NotImplementedError("request: see docs/real-asyncio.md#one-request")


# --8<-- [end:skeleton]


def run(crawler: Crawler) -> Crawler:
    """Run ``crawler`` to completion on a new asyncio event loop."""
    try:
        asyncio.run(crawler.crawl())
    finally:
        crawler.stopped()  # Notes the end; with trace=FILE, writes the trace.
    return crawler


def crawl(roots: str | Iterable[str], **options: Any) -> Crawler:
    """Crawl from ``roots`` to completion and return the finished Crawler."""
    return run(Crawler(roots, **options))

"""A crawler of my own, in the shape of stage 3: asyncio and aiohttp.

Each method that raises NotImplementedError is mine to write; its message
names the section of the tutorial that teaches it.  ``pytest PACKAGE``
grades the package level by level (docs/build-your-own.md).  Level 1 (one
page) needs ``add_url``, ``crawl``, ``work``, ``fetch`` and ``request`` in
their simplest form; the later levels ask more of the same methods.

``run()`` below already runs asyncio's loop in the simulated world when
the tests give one (``self.world``); keep it as it is, and give aiohttp's
connector the world's sockets then (see ``crawl``).  What every stage
shares is already here, from ``CrawlerBase``
(shared/crawl/crawling.py): the options and their checks, ``url_allowed``,
``seen_urls``, ``done``, ``add_roots()``, ``record_statistic()``,
``record_crash()``, and ``handle_response()``, which records an answer and
queues the new links it holds.  For politeness (level 5) it has
``robots_needed()``, ``admit()``, ``record_skip()`` and ``turn()``: see
``fetch`` below.
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
            "add_url: see docs/build-your-own.md#one-page-level-1",
        )

    async def crawl(self) -> None:
        """Open a session, start the workers, queue the roots, join.

        In a simulation the session's connector makes its sockets in the
        world when ``self.world`` is set:
        ``aiohttp.TCPConnector(socket_factory=self.world.aiohttp_socket)``.
        """
        raise NotImplementedError(
            "crawl: see docs/build-your-own.md#one-page-level-1",
        )

    async def work(self) -> None:
        """Take URLs from the queue and fetch each, until cancelled."""
        raise NotImplementedError(
            "work: see docs/build-your-own.md#one-page-level-1",
        )

    async def fetch(self, url: str, max_redirect: int) -> None:
        """Fetch ``url``, again after a network failure; record it.

        ``self.handle_response(url, max_redirect, response)`` records an
        answer and queues its links; ``shared.record.stats.failure(url, error)``
        is the record of a URL that failed.

        From level 5, before the request: if ``self.robots_needed(url)``,
        fetch the host's robots.txt first; then ``self.admit(url)`` returns
        why ``url`` is skipped (record it with ``self.record_skip(url,
        reason)``) or None; and ``self.turn(url, loop.time())`` returns how
        long to wait for the host's turn (0: send now; else
        ``asyncio.sleep`` that long and ask again).
        """
        raise NotImplementedError(
            "fetch: see docs/build-your-own.md#one-page-level-1;"
            " from level 5, docs/build-your-own.md#politeness-level-5"
        )

    async def request(self, url: str) -> Response:
        """GET ``url`` once, without following redirects.

        Returns ``shared.web.http.Response(status, headers, body, truncated)``,
        header names in lower case.  ``self.recorder.begin(url)``, then
        ``.phase(url, "read")`` and ``.end(url)`` trace it (trace=FILE).
        """
        raise NotImplementedError(
            "request: see docs/build-your-own.md#one-page-level-1",
        )


# --8<-- [end:skeleton]


# --8<-- [start:run]
def run(crawler: Crawler) -> Crawler:
    """Run ``crawler`` to completion on a new asyncio event loop.

    In a simulation (``crawler.world``, set by ``crawler.simulate(world)``)
    the loop is asyncio's own on the world's clock and selector.
    """
    new_loop = crawler.world.asyncio_loop if crawler.world else None
    try:
        with asyncio.Runner(loop_factory=new_loop) as runner:
            runner.run(crawler.crawl())
    finally:
        crawler.stopped()  # Notes the end; with trace=FILE, writes the trace.
    return crawler


# --8<-- [end:run]


def crawl(roots: str | Iterable[str], **options: Any) -> Crawler:
    """Crawl from ``roots`` to completion and return the finished Crawler."""
    return run(Crawler(roots, **options))

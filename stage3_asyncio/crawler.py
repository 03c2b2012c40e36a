"""Stage 3: the crawler on asyncio and aiohttp.

This is the crawler of the 500 Lines chapter on today's asyncio.  Compared
with stage 2 nothing new happens to the crawl itself: a queue of
``(url, max_redirect)`` pairs, ``max_tasks`` workers that take URLs from it,
and ``crawl()`` that waits until the queue is joined.  What changes is who
does the work underneath: asyncio supplies the loop, the tasks and the
queue, and aiohttp speaks HTTP (with keep-alive connections, which stages 1
and 2 leave out).  Redirects are still handled by hand, because the crawler
wants to see and count each hop.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Iterable
from typing import Any

import aiohttp

from shared.crawling import CrawlerBase
from shared.http import USER_AGENT, Response
from shared.stats import failure

LOGGER = logging.getLogger("stage3_asyncio")


# --8<-- [start:crawler]
class Crawler(CrawlerBase):
    """Crawl the web from ``roots`` with a queue and a pool of worker tasks."""

    logger = LOGGER

    def __init__(self, roots: str | Iterable[str], **options: Any) -> None:
        super().__init__(roots, **options)
        self.q: asyncio.Queue[tuple[str, int]] = asyncio.Queue()
        self.session: aiohttp.ClientSession | None = None

    def add_url(self, url: str, max_redirect: int | None = None) -> None:
        """Mark ``url`` seen and queue it with its redirect budget."""
        if max_redirect is None:
            max_redirect = self.max_redirect
        LOGGER.debug("adding %s %d", url, max_redirect)
        self.seen_urls.add(url)
        self.q.put_nowait((url, max_redirect))

    # --8<-- [end:crawler]

    # --8<-- [start:crawl]
    async def crawl(self) -> None:
        """Run the crawl until every queued URL is done."""
        connector = aiohttp.TCPConnector(limit=self.max_tasks)
        timeout = aiohttp.ClientTimeout(total=self.timeout)
        headers = {"User-Agent": USER_AGENT, "Accept-Encoding": "identity"}
        async with aiohttp.ClientSession(
            connector=connector, timeout=timeout, headers=headers
        ) as self.session:
            # aiohttp quietly sends a GET again when the connection drops; the
            # crawler counts its own tries, so turn that off (aiohttp's own
            # test client does the same).
            self.session._retry_connection = False
            workers = [asyncio.create_task(self.work()) for _ in range(self.max_tasks)]
            self.t0 = time.time()
            self.add_roots()
            try:
                await self.q.join()
            finally:
                self.t1 = time.time()
                for worker in workers:
                    worker.cancel()
                await asyncio.gather(*workers, return_exceptions=True)

    # --8<-- [end:crawl]

    # --8<-- [start:work]
    async def work(self) -> None:
        """Take URLs from the queue and fetch them, until cancelled."""
        while True:
            url, max_redirect = await self.q.get()
            try:
                await self.fetch(url, max_redirect)
            except Exception as error:  # A bug, not a network error: keep going.
                self.record_crash(url, error)
            finally:
                self.q.task_done()

    # --8<-- [end:work]

    # --8<-- [start:fetch]
    async def fetch(self, url: str, max_redirect: int) -> None:
        """Fetch one URL, retrying network failures, and record the outcome."""
        exception: BaseException | None = None
        for attempt in range(self.max_tries):
            try:
                response = await self.request(url)
            except (aiohttp.ClientError, TimeoutError) as error:
                LOGGER.info("try %d for %s raised %r", attempt, url, error)
                exception = error
                continue
            if attempt > 0:
                LOGGER.info("try %d for %s success", attempt, url)
            self.handle_response(url, max_redirect, response)
            return
        LOGGER.error("%s failed after %d tries", url, self.max_tries)
        self.record_statistic(failure(url, exception or TimeoutError()))

    # --8<-- [end:fetch]

    # --8<-- [start:request]
    async def request(self, url: str) -> Response:
        """GET ``url`` once, without following redirects.

        Reads at most ``max_size + 1`` bytes of the body: enough to tell that
        it is too long.  Raises aiohttp.ClientError or TimeoutError.
        """
        assert self.session is not None, "request() runs only inside crawl()"
        self.in_flight += 1
        try:
            async with self.session.get(url, allow_redirects=False) as response:
                body = await response.content.read(self.max_size + 1)
                while len(body) <= self.max_size and not response.content.at_eof():
                    body += await response.content.read(self.max_size + 1 - len(body))
                truncated = len(body) > self.max_size
                headers = {
                    name.lower(): value for name, value in reversed(response.headers.items())
                }
                return Response(response.status, headers, body[: self.max_size], truncated)
        finally:
            self.in_flight -= 1

    # --8<-- [end:request]


# --8<-- [start:entry]
def run(crawler: Crawler) -> Crawler:
    """Run ``crawler`` to completion on a new asyncio event loop."""
    try:
        asyncio.run(crawler.crawl())
    finally:
        crawler.t1 = crawler.t1 or time.time()
    return crawler


def crawl(roots: str | Iterable[str], **options: Any) -> Crawler:
    """Crawl from ``roots`` to completion and return the finished Crawler."""
    return run(Crawler(roots, **options))


# --8<-- [end:entry]

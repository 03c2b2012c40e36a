"""Stage 1: the crawler in callbacks, on a hand-made event loop.

A blocking crawler needs a thread per request it wants in flight.  This one
keeps ``max_tasks`` requests in flight from a single thread: it starts a
``Fetcher`` for each, and the event loop calls back whichever one's socket
is ready.  The crawl itself is the one every stage shares (``CrawlerBase``):
the queue ``q`` of ``(url, max_redirect)`` pairs, ``seen_urls``, ``done``.

The lesson of this stage is where the state goes.  Stage 3's ``fetch()`` is
one function whose loop over the tries keeps its place in local variables.
A callback cannot: it returns before the work is done, and the next
callback starts with an empty stack.  So every piece of state lives on an
object: the try count and redirect budget of a URL on its ``Job``, the
socket and the bytes read on its ``Fetcher``, the requests in flight on the
``Crawler``.  The retry loop is spread over ``fetch`` and ``on_response``.

Left out compared with asyncio (stage 3): futures, tasks and coroutines;
a queue with ``join()`` (the crawler counts what is in flight itself);
cancellation (only Ctrl-C, which closes every socket); keep-alive
connections; name lookups off the loop's thread.
"""

from __future__ import annotations

import logging
import ssl
import time
from collections import deque
from collections.abc import Iterable
from typing import Any

from shared.crawling import CrawlerBase
from shared.http import BadResponse
from shared.stats import failure
from stage1_callbacks.fetcher import Fetcher, Resolver
from stage1_callbacks.loop import EventLoop
from stage1_callbacks.tls import HttpsFetcher

LOGGER = logging.getLogger("stage1_callbacks")
# A Fetcher reports these for a network failure, which is worth another try.
# Anything else it reports is a bug, recorded at once with record_crash.
NETWORK_ERRORS = (OSError, BadResponse)


# --8<-- [start:job]
class Job:
    """One URL on its way through its tries: what stage 3 keeps in fetch()'s locals."""

    __slots__ = ("url", "max_redirect", "attempt")

    def __init__(self, url: str, max_redirect: int) -> None:
        self.url = url
        self.max_redirect = max_redirect
        self.attempt = 0  # Tries made so far, counted from 0 as in the log lines.


# --8<-- [end:job]


# --8<-- [start:crawler]
class Crawler(CrawlerBase):
    """Crawl the web from ``roots`` with at most ``max_tasks`` Fetchers at once."""

    logger = LOGGER

    def __init__(self, roots: str | Iterable[str], **options: Any) -> None:
        super().__init__(roots, **options)
        self.q: deque[tuple[str, int]] = deque()  # URLs waiting for a free slot.
        self.jobs: dict[Fetcher, Job] = {}  # The fetches in flight, and whose they are.
        self.loop: EventLoop | None = None  # Set by run().
        self.resolver = Resolver()  # Remembers each host's addresses for this crawl.
        self.ssl_context: ssl.SSLContext | None = None  # Made for the first https URL.

    def add_url(self, url: str, max_redirect: int | None = None) -> None:
        """Mark ``url`` seen and queue it with its redirect budget."""
        if max_redirect is None:
            max_redirect = self.max_redirect
        LOGGER.debug("adding %s %d", url, max_redirect)
        self.seen_urls.add(url)
        self.q.append((url, max_redirect))

    # --8<-- [end:crawler]

    # --8<-- [start:crawl]
    def crawl(self) -> None:
        """Queue the roots and start the first fetches; run() calls this on the loop."""
        self.t0 = time.time()
        self.add_roots()
        self.work()

    def work(self) -> None:
        """Start queued URLs while fewer than max_tasks are in flight; stop at the end."""
        assert self.loop is not None, "the crawler runs inside run()"
        while self.q and self.in_flight < self.max_tasks:
            url, max_redirect = self.q.popleft()
            self.in_flight += 1
            try:
                self.fetch(Job(url, max_redirect))
            except Exception as error:  # A bug, not a network error: keep going.
                self.in_flight -= 1
                self.record_crash(url, error)
        if self.in_flight == 0:  # Nothing queued and nothing in flight: done.
            self.t1 = time.time()
            self.loop.stop()

    # --8<-- [end:crawl]

    # --8<-- [start:fetch]
    def fetch(self, job: Job) -> None:
        """Start try number ``job.attempt`` at ``job.url``; ``on_response`` carries on.

        Returns at once.  The Fetcher calls back exactly once, if only
        because its timeout fires, and never before the next turn.
        """
        fetcher = self.make_fetcher(job.url)
        try:
            fetcher.start()
        except BaseException:  # A bug (or Ctrl-C): it must not call back later.
            fetcher.close()
            raise
        self.jobs[fetcher] = job

    def on_response(self, fetcher: Fetcher) -> None:
        """Carry on with a URL after one try: record it or try again, then refill."""
        job = self.jobs.pop(fetcher)
        try:
            if fetcher.response is not None:
                if job.attempt > 0:
                    LOGGER.info("try %d for %s success", job.attempt, job.url)
                self.handle_response(job.url, job.max_redirect, fetcher.response)
            elif self.try_again(job, fetcher.exception):
                self.fetch(job)
                return  # Still in flight.
        except Exception as error:  # A bug, not a network error: keep going.
            self.record_crash(job.url, error)
        self.in_flight -= 1
        self.work()

    # --8<-- [end:fetch]

    # --8<-- [start:retries]
    def try_again(self, job: Job, exception: BaseException | None) -> bool:
        """Log a failed try; return True to try again, else record the failure.

        Raises ``exception`` itself when it is not a network error.
        """
        if not isinstance(exception, NETWORK_ERRORS):
            raise exception or AssertionError("a Fetcher finished with no result")
        LOGGER.info("try %d for %s raised %r", job.attempt, job.url, exception)
        job.attempt += 1
        if job.attempt < self.max_tries:
            return True
        LOGGER.error("%s failed after %d tries", job.url, self.max_tries)
        self.record_statistic(failure(job.url, exception))
        return False

    # --8<-- [end:retries]

    def make_fetcher(self, url: str) -> Fetcher:
        """Return a Fetcher for ``url`` that calls back ``on_response``."""
        assert self.loop is not None, "the crawler runs inside run()"
        options = {"timeout": self.timeout, "max_size": self.max_size, "resolver": self.resolver}
        if not url.startswith("https:"):
            return Fetcher(url, self.loop, self.on_response, **options)
        if self.ssl_context is None:
            self.ssl_context = ssl.create_default_context()
        return HttpsFetcher(
            url, self.loop, self.on_response, ssl_context=self.ssl_context, **options
        )

    def close(self) -> None:
        """Close the socket of every fetch in flight, without recording them."""
        for fetcher in self.jobs:
            fetcher.close()
        self.jobs.clear()
        self.in_flight = 0


# --8<-- [start:entry]
def run(crawler: Crawler) -> Crawler:
    """Run ``crawler`` to completion on a new event loop and return it.

    On Ctrl-C every socket is closed and ``t1`` set, then KeyboardInterrupt
    goes on to the caller (the CLI prints the report of what was done).
    """
    crawler.loop = loop = EventLoop()
    try:
        loop.call_soon(crawler.crawl)
        loop.run()
    finally:
        crawler.close()
        crawler.t1 = crawler.t1 or time.time()
        loop.close()
    return crawler


def crawl(roots: str | Iterable[str], **options: Any) -> Crawler:
    """Crawl from ``roots`` to completion and return the finished Crawler."""
    return run(Crawler(roots, **options))


# --8<-- [end:entry]

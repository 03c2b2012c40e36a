"""A crawler of my own, in the shape of stage 1: callbacks on stage 1's event loop.

Each method that raises NotImplementedError is mine to write; its message
names the section of the tutorial that teaches it.  ``pytest PACKAGE``
grades the package level by level (docs/build-your-own.md).  Level 1 (one
page) needs ``add_url``, ``crawl``, ``work``, ``fetch`` and ``on_response``
in their simplest form; the later levels ask more of the same methods.

The loop is stage 1's (``stage1_callbacks.loop.EventLoop``: ``register``
a socket with a callback, ``call_later``, ``stop``), as the chapter builds
it.  What every stage shares is already here, from ``CrawlerBase``
(shared/crawl/crawling.py): the options, ``url_allowed``, ``seen_urls``,
``done``, ``add_roots()``, ``record_statistic()``, ``record_crash()``, and
``handle_response()``, which records an answer and queues its new links.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Iterable
from typing import Any

from shared.crawl.crawling import CrawlerBase
from shared.web.http import Response
from stage1_callbacks.loop import EventLoop

LOGGER = logging.getLogger(__name__.partition(".")[0])  # Named after the package.


class Crawler(CrawlerBase):
    """Crawl the web from ``roots`` with at most ``max_tasks`` fetches at once."""

    logger = LOGGER

    def __init__(self, roots: str | Iterable[str], **options: Any) -> None:
        super().__init__(roots, **options)
        self.q: deque[tuple[str, int]] = deque()  # URLs waiting for a free slot.
        self.loop: EventLoop | None = None  # Set by run().

    def add_url(self, url: str, max_redirect: int | None = None) -> None:
        """Mark ``url`` seen and queue it with its redirect budget (default: max_redirect)."""
        raise NotImplementedError("add_url: see docs/callbacks.md#crawling-the-site")

    def crawl(self) -> None:
        """Queue the roots and start the first fetches; run() calls this on the loop."""
        raise NotImplementedError("crawl: see docs/callbacks.md#crawling-the-site")

    def work(self) -> None:
        """Start queued URLs while fewer than max_tasks are in flight; stop at the end."""
        raise NotImplementedError("work: see docs/callbacks.md#crawling-the-site")

    def fetch(self, url: str, max_redirect: int) -> None:
        """Start a GET of ``url`` on a non-blocking socket; on_response gets its outcome.

        ``shared.web.http`` builds the request (``build_request``) and parses
        the answer (``ResponseParser``).
        """
        raise NotImplementedError("fetch: see docs/callbacks.md#a-fetcher-object")

    def on_response(self, url: str, max_redirect: int, outcome: Response | Exception) -> None:
        """Record an answer (handle_response) or, after max_tries failures, the failure.

        ``shared.record.stats.failure(url, error)`` is the record of a URL that
        failed.  Then start the next fetches (work).
        """
        raise NotImplementedError(
            "on_response: see docs/real-callbacks.md#the-crawler-a-retry-loop-that-cannot-be-a-loop"
        )


def run(crawler: Crawler) -> Crawler:
    """Run ``crawler`` to completion on a new event loop of stage 1."""
    crawler.loop = loop = EventLoop(crawler.recorder)
    try:
        loop.call_soon(crawler.crawl)
        loop.run()
    finally:
        loop.close()
        crawler.stopped()  # Notes the end; with trace=FILE, writes the trace.
    return crawler


def crawl(roots: str | Iterable[str], **options: Any) -> Crawler:
    """Crawl from ``roots`` to completion and return the finished Crawler."""
    return run(Crawler(roots, **options))

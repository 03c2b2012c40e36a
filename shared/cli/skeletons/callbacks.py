"""A crawler of my own, in the shape of stage 1: callbacks on stage 1's event loop.

Each method that raises NotImplementedError is mine to write; its message
names the section of the tutorial that teaches it.  ``pytest PACKAGE``
grades the package level by level (docs/build-your-own.md).  Level 1 (one
page) needs ``add_url``, ``crawl``, ``work``, ``fetch`` and ``on_response``
in their simplest form; the later levels ask more of the same methods.

The loop is stage 1's (``stage1_callbacks.loop.EventLoop``: ``register``,
``modify`` and ``unregister`` a socket with a callback, ``call_later``,
``stop``), as the chapter builds it.  ``run()`` below already puts it in
the simulated world when the tests give one (``self.world``); keep it as
it is, and make every socket with ``self.make_socket()``, which is the
world's socket then.  What every stage shares is already here, from
``CrawlerBase`` (shared/crawl/crawling.py): the options, ``url_allowed``,
``seen_urls``, ``done``, ``add_roots()``, ``record_statistic()``,
``record_crash()``, and ``handle_response()``, which records an answer and
queues its new links.  For politeness (level 5) it has ``robots_needed()``,
``admit()``, ``record_skip()`` and ``turn()``: see ``fetch`` below.
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
        raise NotImplementedError("add_url: see docs/build-your-own.md#one-page-level-1")

    def crawl(self) -> None:
        """Queue the roots and start the first fetches; run() calls this on the loop."""
        raise NotImplementedError("crawl: see docs/build-your-own.md#one-page-level-1")

    def work(self) -> None:
        """Start queued URLs while fewer than max_tasks are in flight; stop at the end."""
        raise NotImplementedError("work: see docs/build-your-own.md#one-page-level-1")

    def fetch(self, url: str, max_redirect: int) -> None:
        """Start a GET of ``url`` on a non-blocking socket; on_response gets its outcome.

        The socket comes from ``self.make_socket()`` (the simulated world's
        in a simulation); ``shared.web.http`` builds the request
        (``build_request``) and parses the answer (``ResponseParser``).

        From level 5, before the GET: if ``self.robots_needed(url)``, fetch
        the host's robots.txt first; then ``self.admit(url)`` returns why
        ``url`` is skipped (record it with ``self.record_skip(url, reason)``)
        or None; and ``self.turn(url, loop.time())`` returns how long to
        wait for the host's turn (0: send now; else wait and ask again).
        """
        raise NotImplementedError(
            "fetch: see docs/build-your-own.md#one-page-level-1;"
            " from level 5, docs/build-your-own.md#politeness-level-5"
        )

    def on_response(self, url: str, max_redirect: int, outcome: Response | Exception) -> None:
        """Record an answer (handle_response) or, after max_tries failures, the failure.

        ``shared.record.stats.failure(url, error)`` is the record of a URL that
        failed.  Then start the next fetches (work).
        """
        raise NotImplementedError("on_response: see docs/build-your-own.md#one-page-level-1")


# --8<-- [start:run]
def run(crawler: Crawler) -> Crawler:
    """Run ``crawler`` to completion on a new event loop of stage 1.

    In a simulation (``crawler.world``, set by ``crawler.simulate(world)``)
    the loop takes the world's clock and selector.
    """
    options = crawler.world.loop_options() if crawler.world else {}
    crawler.loop = loop = EventLoop(crawler.recorder, **options)
    try:
        loop.call_soon(crawler.crawl)
        loop.run()
    finally:
        loop.close()
        crawler.stopped()  # Notes the end; with trace=FILE, writes the trace.
    return crawler


# --8<-- [end:run]


def crawl(roots: str | Iterable[str], **options: Any) -> Crawler:
    """Crawl from ``roots`` to completion and return the finished Crawler."""
    return run(Crawler(roots, **options))

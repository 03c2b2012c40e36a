"""A crawler of my own, in the shape of stage 2: generator coroutines on stage 2's loop.

Each method that raises NotImplementedError is mine to write; its message
names the section of the tutorial that teaches it.  ``pytest PACKAGE``
grades the package level by level (docs/build-your-own.md).  Level 1 (one
page) needs ``add_url``, ``crawl``, ``work``, ``fetch`` and ``request`` in
their simplest form; the later levels ask more of the same methods.

The loop, tasks and queue are stage 2's (``stage2_generators``), as the
chapter builds them; a coroutine here is a generator that ``yield from``s
them.  ``run()`` below already puts the loop in the simulated world when
the tests give one (``self.world``); keep it as it is, and make every
socket with ``self.make_socket()``, which is the world's socket then.
What every stage shares is already here, from ``CrawlerBase``
(shared/crawl/crawling.py): the options, ``url_allowed``, ``seen_urls``,
``done``, ``add_roots()``, ``record_statistic()``, ``record_crash()``, and
``handle_response()``, which records an answer and queues its new links.
For politeness (level 5) it has ``robots_needed()``, ``admit()``,
``record_skip()`` and ``turn()``: see ``fetch`` below.
"""

from __future__ import annotations

import logging
from collections.abc import Generator, Iterable
from typing import Any

from shared.crawl.crawling import CrawlerBase
from stage2_generators import loop as event_loop
from stage2_generators.queues import Queue

LOGGER = logging.getLogger(__name__.partition(".")[0])  # Named after the package.
Coroutine = Generator[Any, None, Any]


class Crawler(CrawlerBase):
    """Crawl the web from ``roots`` with a queue and ``max_tasks`` worker tasks."""

    logger = LOGGER

    def __init__(self, roots: str | Iterable[str], **options: Any) -> None:
        super().__init__(roots, **options)
        self.q: Queue[tuple[str, int]] = Queue()

    def add_url(self, url: str, max_redirect: int | None = None) -> None:
        """Mark ``url`` seen and queue it with its redirect budget (default: max_redirect)."""
        raise NotImplementedError("add_url: see docs/build-your-own.md#one-page-level-1")

    def crawl(self) -> Coroutine:
        """Start the workers (create_task), queue the roots, wait for the queue (join)."""
        raise NotImplementedError("crawl: see docs/build-your-own.md#one-page-level-1")

    def work(self) -> Coroutine:
        """Take URLs from the queue and fetch each, until cancelled."""
        raise NotImplementedError("work: see docs/build-your-own.md#one-page-level-1")

    def fetch(self, url: str, max_redirect: int) -> Coroutine:
        """Fetch ``url``, trying again after a network failure; record what came of it.

        ``self.handle_response(url, max_redirect, response)`` records an
        answer and queues its links; ``shared.record.stats.failure(url, error)`` is
        the record of a URL that failed.

        From level 5, before the request: if ``self.robots_needed(url)``,
        fetch the host's robots.txt first; then ``self.admit(url)`` returns
        why ``url`` is skipped (record it with ``self.record_skip(url,
        reason)``) or None; and ``self.turn(url, loop.time())`` returns how
        long to wait for the host's turn (0: send now; else ``sleep`` that
        long and ask again).
        """
        raise NotImplementedError(
            "fetch: see docs/build-your-own.md#one-page-level-1;"
            " from level 5, docs/build-your-own.md#politeness-level-5"
        )

    def request(self, url: str) -> Coroutine:
        """GET ``url`` once over a non-blocking socket; return a ``shared.web.http.Response``.

        The socket comes from ``self.make_socket()`` (the simulated world's
        in a simulation); ``shared.web.http`` builds the request
        (``build_request``) and parses the answer (``ResponseParser``).
        """
        raise NotImplementedError("request: see docs/build-your-own.md#one-page-level-1")


# --8<-- [start:run]
def run(crawler: Crawler) -> Crawler:
    """Run ``crawler`` to completion on a new event loop of stage 2.

    In a simulation (``crawler.world``, set by ``crawler.simulate(world)``)
    the loop takes the world's clock and selector.
    """
    options = crawler.world.loop_options() if crawler.world else {}
    try:
        event_loop.run(crawler.crawl(), recorder=crawler.recorder, **options)
    finally:
        crawler.stopped()  # Notes the end; with trace=FILE, writes the trace.
    return crawler


# --8<-- [end:run]


def crawl(roots: str | Iterable[str], **options: Any) -> Crawler:
    """Crawl from ``roots`` to completion and return the finished Crawler."""
    return run(Crawler(roots, **options))

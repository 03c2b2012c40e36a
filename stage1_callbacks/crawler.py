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

Politeness (robots.txt, a delay and a limit per host) is decided in
``shared.crawl.polite``; this stage waits for it the callback way: a page whose
host's robots.txt is not known yet is parked in a list, a request whose
host is busy waits in the host's line, and a request that must wait for
the delay is a ``call_later`` timer.

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

from shared.crawl.crawling import CrawlerBase
from shared.crawl.polite import MAX_ROBOTS_SIZE, RobotsFetch, origin_of
from shared.record.stats import failure
from shared.web.http import BadResponse, Response
from shared.web.resolver import Resolver
from shared.web.urls import PrivateAddress
from stage1_callbacks.fetcher import Fetcher
from stage1_callbacks.loop import EventLoop
from stage1_callbacks.tls import HttpsFetcher

LOGGER = logging.getLogger("stage1_callbacks")
# A Fetcher reports these for a network failure, which is worth another try.
# Anything else it reports is a bug, recorded at once with record_crash.
NETWORK_ERRORS = (OSError, BadResponse)


# --8<-- [start:job]
class Job:
    """One URL on its way through its tries: stage 3 keeps this in locals."""

    __slots__ = ("url", "max_redirect", "attempt", "robots")

    def __init__(
        self,
        url: str,
        max_redirect: int,
        robots: RobotsFetch | None = None,
    ) -> None:
        self.url = url
        self.max_redirect = max_redirect
        self.attempt = 0  # Tries made so far, counted from 0 as the log counts.
        self.robots = robots  # Set when the job is a host's robots.txt.


# --8<-- [end:job]


# --8<-- [start:host_line]
class HostLine:
    """One host's requests: how many are in flight, and the jobs waiting."""

    __slots__ = ("in_flight", "waiting")

    def __init__(self) -> None:
        self.in_flight = 0
        self.waiting: deque[Job] = deque()  # Started in turn as requests end.


# --8<-- [end:host_line]


# --8<-- [start:crawler]
class Crawler(CrawlerBase):
    """Crawl the web from ``roots`` with at most ``max_tasks`` Fetchers at once."""

    logger = LOGGER

    def __init__(self, roots: str | Iterable[str], **options: Any) -> None:
        super().__init__(roots, **options)
        self.q: deque[tuple[str, int]] = deque()  # URLs waiting for a free slot.
        self.jobs: dict[Fetcher, Job] = {}  # The fetches in flight, and whose they are.
        self.loop: EventLoop | None = None  # Set by run().
        # Remembers each host's addresses for this crawl, and returns only
        # those the URL policy lets it connect to.
        self.resolver = Resolver(self.policy)
        self.ssl_context: ssl.SSLContext | None = None  # Made for the first https URL.
        self.host_lines: dict[str, HostLine] = {}  # max_per_host, per host.
        # Pages waiting for their host's robots.txt, by host; the first fetches it.
        self.robots_waiting: dict[str, list[Job]] = {}

    def add_url(self, url: str, max_redirect: int | None = None) -> None:
        """Mark ``url`` seen and queue it with its redirect budget."""
        self.q.append(self.seen(url, max_redirect))

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
            self.begin(Job(url, max_redirect))
        if self.in_flight == 0:  # Nothing queued and nothing in flight: done.
            self.t1 = time.time()
            self.loop.stop()

    # --8<-- [end:crawl]

    # --8<-- [start:begin]
    def begin(self, job: Job) -> None:
        """Decide on a page: wait for its host's robots.txt, skip it, or fetch it."""
        try:
            if self.robots_needed(job.url):
                self.wait_for_robots(job)
                return
            reason = self.admit(job.url)
            if reason is None:
                self.fetch(job)
                return
            self.record_skip(job.url, reason)
        except Exception as error:  # A bug, not a network error: keep going.
            self.record_crash(job.url, error)
        self.in_flight -= 1  # The job is over; work() starts the next one.

    # --8<-- [end:begin]

    # --8<-- [start:fetch]
    # --8<-- [start:turn]
    def fetch(self, job: Job) -> None:
        """Start try number ``job.attempt`` once its host has a free slot.

        Returns at once.  A job whose host has max_per_host requests in
        flight waits in the host's line; ``on_response`` starts it later.
        """
        origin = origin_of(job.url)
        line = self.host_lines.get(origin)
        if line is None:  # Not setdefault(), which would make a HostLine every time.
            line = self.host_lines[origin] = HostLine()
        if line.in_flight >= (self.max_per_host or self.max_tasks):
            line.waiting.append(job)
            return
        line.in_flight += 1
        self.when_due(job)

    def when_due(self, job: Job) -> None:
        """Start the try now if the host's delay has passed, else set a timer to ask again."""
        assert self.loop is not None, "the crawler runs inside run()"
        wait = self.turn(job.url, self.loop.time())
        if wait > 0:
            self.loop.call_later(wait, self.when_due, job)
            return
        fetcher = self.make_fetcher(job)
        try:
            fetcher.start()
        except Exception as error:  # A bug, not a network error: the job ends here.
            fetcher.close()  # It must not call back later.
            self.free_slot(job.url)
            self.end_with_crash(job, error)
            return
        except BaseException:  # Ctrl-C: run() closes everything.
            fetcher.close()
            raise
        self.jobs[fetcher] = job

    def free_slot(self, url: str) -> None:
        """End a request at ``url``'s host; the next job in its line takes the slot."""
        line = self.host_lines[origin_of(url)]
        line.in_flight -= 1
        if line.waiting:
            self.fetch(line.waiting.popleft())

    # --8<-- [end:turn]

    def end_with_crash(self, job: Job, error: Exception) -> None:
        """End a job whose try could not start through a bug; carry on."""
        assert self.loop is not None, "the crawler runs inside run()"
        self.record_job_crash(job, error)
        self.in_flight -= 1
        self.loop.call_soon(self.work)  # Not work() itself: this may run inside it.

    def record_job_crash(self, job: Job, error: Exception) -> None:
        """Record a job that failed through a bug; a robots.txt counts as unreachable."""
        if job.robots is not None:
            self.robots_answer(job.robots, None, error)  # robots.txt is no page.
        else:
            self.record_crash(job.url, error)

    # --8<-- [start:on_response]
    def on_response(self, fetcher: Fetcher) -> None:
        """Carry on after one try: record the URL or try again, then refill."""
        job = self.jobs.pop(fetcher)
        self.free_slot(job.url)
        response, exception = fetcher.response, fetcher.exception
        try:
            if response is None and self.try_again(job, exception):
                self.fetch(job)
                return  # Still in flight.
            if response is not None and self.come_back_later(job, response):
                self.fetch(job)  # when_due waits for the host's turn.
                return
            if response is not None and job.attempt > 0:
                LOGGER.info("try %d for %s success", job.attempt, job.url)
            if job.robots is not None:
                self.robots_answer(job.robots, response, exception)
            elif response is not None:
                self.handle_response(job.url, job.max_redirect, response)
            else:
                failed = failure(job.url, exception or TimeoutError())
                self.record_statistic(failed)
        except Exception as error:  # A bug, not a network error: keep going.
            self.record_job_crash(job, error)
        self.in_flight -= 1
        self.work()

    # --8<-- [end:on_response]
    # --8<-- [end:fetch]

    # --8<-- [start:retries]
    def try_again(self, job: Job, exception: BaseException | None) -> bool:
        """Log a failed try; return True to try again, False once tries run out.

        Raises ``exception`` itself when it is not a network error.
        """
        if isinstance(exception, PrivateAddress):
            return False  # A refusal of the policy's: another try changes nothing.
        if not isinstance(exception, NETWORK_ERRORS):
            raise exception or AssertionError("a Fetcher finished with no result")
        LOGGER.info("try %d for %s raised %r", job.attempt, job.url, exception)
        job.attempt += 1
        if job.attempt < self.max_tries:
            return True
        LOGGER.error("%s failed after %d tries", job.url, self.max_tries)
        return False

    def come_back_later(self, job: Job, response: Response) -> bool:
        """Return True to try a page again after a 429 or 503 (shared.web.retry)."""
        assert self.loop is not None, "the crawler runs inside run()"
        if job.robots is not None:  # A 429 or 503 robots.txt disallows everything.
            return False
        if not self.come_back(job.url, response, job.attempt, self.loop.time()):
            return False
        job.attempt += 1
        return True

    # --8<-- [end:retries]

    # --8<-- [start:robots]
    def wait_for_robots(self, job: Job) -> None:
        """Park a page until its host's robots.txt is known; the first page asks for it."""
        origin = origin_of(job.url)
        if origin in self.robots_waiting:
            self.robots_waiting[origin].append(job)
            return
        self.robots_waiting[origin] = [job]
        robots = RobotsFetch(origin, self.user_agent)
        self.in_flight += 1  # The robots.txt request is a job of its own.
        self.fetch(Job(robots.url, 0, robots))

    def robots_answer(
        self, robots: RobotsFetch, response: Response | None, exception: BaseException | None
    ) -> None:
        """Take the outcome of a robots.txt request: follow it, or let the pages go."""
        if response is not None:
            robots.received(response)
        else:
            robots.failed(exception or TimeoutError())
        if robots.rules is None:  # A redirect: fetch where it points.
            self.in_flight += 1
            self.fetch(Job(robots.url, 0, robots))
            return
        self.rules_known(robots.origin, robots.rules)  # Queues sitemaps if asked.
        for job in self.robots_waiting.pop(robots.origin):
            self.begin(job)

    # --8<-- [end:robots]

    def make_fetcher(self, job: Job) -> Fetcher:
        """Return a Fetcher for ``job``'s URL that calls back ``on_response``."""
        assert self.loop is not None, "the crawler runs inside run()"
        url = job.url
        options: dict[str, Any] = {
            "timeout": self.timeout,
            "max_size": MAX_ROBOTS_SIZE if job.robots else self.max_size,
            "resolver": self.resolver,
            "user_agent": self.user_agent,
            "trace": self.recorder,
            "headers": self.conditional_headers(url),  # Only in a recrawl.
            "make_socket": self.make_socket,  # Real, or simulated (shared/sim).
        }
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
    # In a simulation, the world's clock and selector (shared/sim).
    options = crawler.world.loop_options() if crawler.world else {}
    crawler.loop = loop = EventLoop(crawler.recorder, **options)
    try:
        loop.call_soon(crawler.crawl)
        loop.run()
    finally:
        crawler.close()
        loop.close()
        crawler.stopped()
    return crawler


def crawl(roots: str | Iterable[str], **options: Any) -> Crawler:
    """Crawl from ``roots`` to completion and return the finished Crawler."""
    return run(Crawler(roots, **options))


# --8<-- [end:entry]

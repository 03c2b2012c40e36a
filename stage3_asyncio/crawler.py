"""Stage 3: the crawler on asyncio and aiohttp.

This is the crawler of the 500 Lines chapter on today's asyncio.  Compared
with stage 2 nothing new happens to the crawl itself: a queue of
``(url, max_redirect)`` pairs, ``max_tasks`` workers that take URLs from it,
and ``crawl()`` that waits until the queue is joined.  The workers run in
an ``asyncio.TaskGroup``, as stage 2's run in its own.  What changes is who
does the work underneath: asyncio supplies the loop, the tasks and the
queue, and aiohttp speaks HTTP (with keep-alive connections, which stages 1
and 2 leave out).  Redirects are still handled by hand, because the crawler
wants to see and count each hop.  Politeness (robots.txt, a delay and a
limit per host, see ``shared.crawl.polite``) waits as stage 2 does, with
asyncio's own ``Semaphore``, ``sleep`` and a ``Task`` per host.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Iterable
from typing import Any

import aiohttp
import yarl

from shared.crawl.crawling import CrawlerBase
from shared.crawl.keepalive import STALE_ERRORS, CarefulConnector, new_attempt, phase_requests
from shared.crawl.polite import MAX_ROBOTS_SIZE, Host, RobotsFetch, RobotsRules, origin_of
from shared.record.stats import Skipped, failure
from shared.web.http import ACCEPT_ENCODING, UNASKED_UPGRADE, BadResponse, BodyDecoder, Response
from shared.web.urls import PrivateAddress

LOGGER = logging.getLogger("stage3_asyncio")
NETWORK_ERRORS = (aiohttp.ClientError, BadResponse, TimeoutError)  # Worth another try.


# --8<-- [start:crawler]
class Crawler(CrawlerBase):
    """Crawl the web from ``roots`` with a queue and a pool of worker tasks."""

    logger = LOGGER

    def __init__(self, roots: str | Iterable[str], **options: Any) -> None:
        super().__init__(roots, **options)
        self.q: asyncio.Queue[tuple[str, int]] = asyncio.Queue()
        self.session: aiohttp.ClientSession | None = None
        self.host_slots: dict[str, asyncio.Semaphore] = {}  # max_per_host, per host.
        self.robots_fetches: dict[str, asyncio.Task[RobotsRules]] = {}  # One per host.

    def add_url(self, url: str, max_redirect: int | None = None) -> None:
        """Mark ``url`` seen and queue it with its redirect budget."""
        self.q.put_nowait(self.seen(url, max_redirect))

    # --8<-- [end:crawler]

    # --8<-- [start:crawl]
    async def crawl(self) -> None:
        """Run the crawl until every queued URL is done.

        A robots.txt fetch that a stopped crawl leaves running is
        cancelled before the session closes.
        """
        # See shared/crawl/keepalive.py; it connects only where the URL policy allows.
        # In a simulation, the world's network makes the sockets (shared/sim).
        sockets = self.world.aiohttp_socket if self.world else None
        connector = CarefulConnector(self.policy, limit=self.max_tasks, socket_factory=sockets)
        timeout = aiohttp.ClientTimeout(total=self.timeout)
        headers = {"User-Agent": self.user_agent, "Accept-Encoding": ACCEPT_ENCODING}
        # auto_decompress=False: the body is decoded by shared.web.http.BodyDecoder,
        # as in stages 1 and 2, so max_size bounds the decoded bytes.  A jar
        # that keeps no cookies: stages 1 and 2 send none either.
        async with aiohttp.ClientSession(
            connector=connector,
            timeout=timeout,
            headers=headers,
            auto_decompress=False,
            cookie_jar=aiohttp.DummyCookieJar(),
            request_class=phase_requests(self.recorder),  # Notes phases in a trace.
        ) as self.session:
            # aiohttp quietly sends a GET again when the connection drops; the
            # crawler counts its own tries, so turn that off (aiohttp's own
            # test client does the same).
            self.session._retry_connection = False
            # No worker outlives the crawl, and one that dies of a bug ends
            # the crawl with its error instead of vanishing.
            try:
                async with asyncio.TaskGroup() as group:
                    await self.crawl_in(group)
            finally:
                for fetch in self.robots_fetches.values():
                    fetch.cancel()  # Shielded: left running if the crawl was stopped.

    # --8<-- [end:crawl]

    # --8<-- [start:crawl_in]
    async def crawl_in(self, group: asyncio.TaskGroup) -> None:
        """Start the workers in ``group``, wait for the queue, stop them."""
        names = [f"worker {n}" for n in range(1, self.max_tasks + 1)]  # Named in a trace.
        workers = [group.create_task(self.work(), name=name) for name in names]
        self.t0 = time.time()
        self.add_roots()
        try:
            await self.q.join()
        finally:
            self.t1 = time.time()
        for worker in workers:
            worker.cancel()  # Idle in q.get(); the group waits for each to end.

    # --8<-- [end:crawl_in]

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
        """Fetch one URL unless robots.txt or a limit forbids it; record the outcome."""
        if self.robots_needed(url):
            await self.robots_of(url)
        reason = self.admit(url) or await self.admit_everywhere()
        if reason is not None:
            self.record_skip(url, reason)
            return
        try:
            response = await self.fetch_response(url, self.max_size)
        except (*NETWORK_ERRORS, PrivateAddress) as error:  # The latter: never retried.
            self.record_statistic(failure(url, error))
            return
        self.handle_response(url, max_redirect, response)

    async def admit_everywhere(self) -> Skipped | None:
        """Return why no process of the crawl may fetch one more page, or None.

        One process has nothing to add to ``admit``; the shared frontier
        (``frontier.py``) counts max_pages across its processes here.
        """
        return None

    # --8<-- [end:fetch]

    # --8<-- [start:fetch_response]
    async def fetch_response(self, url: str, max_size: int, come_back: bool = True) -> Response:
        """GET ``url``, trying again after a network failure, up to max_tries times.

        With ``come_back``, a 429 or 503 answer is tried again too, once the
        wait it asks for (or a backoff) has passed: see ``shared.web.retry``.

        Raises the last failure (aiohttp.ClientError or TimeoutError).
        """
        loop = asyncio.get_running_loop()
        exception: BaseException | None = None
        for attempt in range(self.max_tries):
            try:
                response = await self.polite_request(url, max_size)
            except NETWORK_ERRORS as error:
                LOGGER.info("try %d for %s raised %r", attempt, url, error)
                exception = error
                continue
            if come_back and self.come_back(url, response, attempt, loop.time()):
                continue  # polite_request waits for the host's turn.
            if attempt > 0:
                LOGGER.info("try %d for %s success", attempt, url)
            return response
        LOGGER.error("%s failed after %d tries", url, self.max_tries)
        raise exception or TimeoutError()

    # --8<-- [end:fetch_response]

    # --8<-- [start:polite]
    async def polite_request(self, url: str, max_size: int) -> Response:
        """GET ``url`` once, when its host has a free slot and its delay has passed."""
        loop = asyncio.get_running_loop()
        async with self.host_slot(url):  # At most max_per_host requests at one host.
            while (wait := self.turn(url, loop.time())) > 0:
                await asyncio.sleep(wait)  # Then ask again: another may have gone first.
            return await self.request(url, max_size)

    def host_slot(self, url: str) -> asyncio.Semaphore:
        """Return the semaphore of ``url``'s host, made on first use."""
        origin = origin_of(url)
        if origin not in self.host_slots:
            # Without max_per_host, max_tasks is the only limit: a semaphore
            # that large never makes a worker wait.
            self.host_slots[origin] = asyncio.Semaphore(self.max_per_host or self.max_tasks)
        return self.host_slots[origin]

    # --8<-- [end:polite]

    # --8<-- [start:robots]
    # --8<-- [start:robots_of]
    async def robots_of(self, url: str) -> None:
        """Learn the robots.txt rules of ``url``'s host, fetching them only once.

        The first worker to need them starts a task that fetches them; every
        worker that needs them meanwhile waits for that same task, through
        ``shield``: a worker cancelled while it waits must not cancel the
        fetch that the others wait for too.
        """
        host = self.polite.host(url)
        if host.origin not in self.robots_fetches:
            name = f"robots.txt {host.origin}"
            fetch = asyncio.create_task(self.fetch_robots(host), name=name)
            self.robots_fetches[host.origin] = fetch
        host.rules = await asyncio.shield(self.robots_fetches[host.origin])

    # --8<-- [end:robots_of]

    async def fetch_robots(self, host: Host) -> RobotsRules:
        """Fetch a host's robots.txt (following redirects) and return its rules."""
        robots = RobotsFetch(host.origin, self.user_agent)
        while robots.rules is None:
            try:
                # A 429 or 503 robots.txt is not waited for: it disallows everything.
                answer = await self.fetch_response(robots.url, MAX_ROBOTS_SIZE, come_back=False)
                robots.received(answer)
            except (*NETWORK_ERRORS, PrivateAddress) as error:
                robots.failed(error)
        self.rules_known(host.origin, robots.rules)  # Queues sitemaps if asked.
        return robots.rules

    # --8<-- [end:robots]

    # --8<-- [start:request]
    async def request(self, url: str, max_size: int) -> Response:
        """GET ``url`` once, without following redirects.

        Reads at most ``max_size + 1`` bytes of the decoded body: enough to
        tell that it is too long.  Raises aiohttp.ClientError, BadResponse
        or TimeoutError.
        """
        self.in_flight += 1
        self.recorder.begin(url, asyncio.current_task())
        try:
            async with await self.send(url) as response:
                self.recorder.phase(url, "read")
                if response.status == 101:
                    raise BadResponse(UNASKED_UPGRADE)
                headers = {
                    name.lower(): value for name, value in reversed(list(response.headers.items()))
                }
                body = await read_body(response, headers.get("content-encoding"), max_size)
                truncated = len(body) > max_size
                return Response(response.status, headers, body[:max_size], truncated)
        finally:
            self.in_flight -= 1
            self.recorder.end(url)

    # --8<-- [end:request]

    # --8<-- [start:send]
    async def send(self, url: str) -> aiohttp.ClientResponse:
        """Send a GET for ``url``; return the response once its head has arrived.

        A kept connection that the server had closed costs no try: the
        request goes again on another connection (shared/crawl/keepalive.py says why).
        Raises aiohttp.ClientError or TimeoutError.
        """
        assert self.session is not None, "send() runs only inside crawl()"
        # encoded=True: yarl sends the URL exactly as stored, without quoting
        # or normalizing it again ('%7e' stays '%7e', '/a/../b' is not re-resolved).
        target = yarl.URL(url, encoded=True)
        while True:  # Ends: each stale connection is dropped, and the pool is finite.
            attempt = new_attempt(url)  # Marked if it goes on a kept connection.
            try:
                return await self.session.get(
                    target,
                    allow_redirects=False,
                    headers=self.conditional_headers(url),  # Only in a recrawl.
                )
            except STALE_ERRORS:
                if not attempt.reused:
                    raise
                LOGGER.debug("kept connection for %s was closed; sending again", url)

    # --8<-- [end:send]


async def read_body(response: aiohttp.ClientResponse, coding: str | None, max_size: int) -> bytes:
    """Read and decode a body, stopping once it is longer than ``max_size``.

    Bytes after the end of compressed data are not read (see BodyDecoder).
    Raises BadResponse for a body that is not in its content coding.
    """
    decoder = BodyDecoder(coding, max_size + 1)
    body = bytearray()
    while data := await response.content.readany():  # b"" at the end.
        body += decoder.decode(data)
        # Cut, or past the end of the compressed data: the connection
        # closes with the rest unread.
        if len(body) > max_size or decoder.ended:
            return bytes(body)
    body += decoder.finish()
    return bytes(body)


# --8<-- [start:entry]
def run(crawler: Crawler) -> Crawler:
    """Run ``crawler`` to completion on a new asyncio event loop."""
    # In a simulation, asyncio's loop on the world's clock (shared/sim).
    new_loop = crawler.world.asyncio_loop if crawler.world else None
    try:
        with asyncio.Runner(loop_factory=new_loop) as runner:
            runner.run(crawler.crawl())
    finally:
        crawler.stopped()
    return crawler


def crawl(roots: str | Iterable[str], **options: Any) -> Crawler:
    """Crawl from ``roots`` to completion and return the finished Crawler."""
    return run(Crawler(roots, **options))


# --8<-- [end:entry]

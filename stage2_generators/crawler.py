"""Stage 2: the crawler as generator coroutines on a loop of our own.

Stage 1 split every fetch into callbacks that handed state to each other.
Here each fetch is one generator function that reads top to bottom, as the
500 Lines chapter's second part does: ``fetch`` retries ``request``, which
connects, sends and reads with ``yield from`` wherever it must wait, and the
``Task`` that drives it resumes it when the socket is ready.  The crawl is
the one of stage 3: a queue of ``(url, max_redirect)`` pairs, ``max_tasks``
workers that take URLs from it, started in a ``TaskGroup`` so that none
outlives the crawl, and ``crawl()`` that waits until the queue is joined.
The loop, futures, tasks, task group, queue and ``wait_for`` are this
stage's own (``loop.py``, ``futures.py``, ``tasks.py``, ``taskgroups.py``,
``queues.py``), with asyncio's names, so that stage 3 only swaps them for
the real ones.
Politeness (robots.txt, a delay and a limit per host, see ``shared.crawl.polite``)
waits with the same primitives: a ``Semaphore`` per host, ``sleep`` for the
delay, and one ``Task`` per host that fetches its robots.txt.

What is left out compared with stage 3: keep-alive connections (each
request opens a connection and the server closes it, HTTP/1.0) and name
resolution in a thread (see ``shared.web.resolver``).  https is supported with
the standard ``ssl`` module over the same non-blocking sockets, in
``stage2_generators.tls``.
"""

from __future__ import annotations

import logging
import socket
import ssl
import time
from collections.abc import Generator, Iterable
from typing import Any

from shared.crawl.crawling import CrawlerBase
from shared.crawl.polite import MAX_ROBOTS_SIZE, Host, RobotsFetch, origin_of
from shared.record.journal import NO_JOURNAL, Journal
from shared.record.stats import failure
from shared.web.http import BadResponse, ResponseParser, build_request, request_target
from shared.web.resolver import Resolver
from shared.web.urls import PrivateAddress
from stage2_generators import loop as event_loop
from stage2_generators.locks import Semaphore
from stage2_generators.queues import Queue
from stage2_generators.taskgroups import TaskGroup, run_in_group
from stage2_generators.tasks import Task, create_task, current_task, shield, sleep, wait_for
from stage2_generators.tls import start_tls

LOGGER = logging.getLogger("stage2_generators")
RECV_SIZE = 64 * 1024  # Bytes asked of the socket at a time.
NETWORK_ERRORS = (OSError, BadResponse, TimeoutError)  # Worth another try.

Coroutine = Generator[Any, None, Any]


# --8<-- [start:crawler]
class Crawler(CrawlerBase):
    """Crawl the web from ``roots`` with a queue and a pool of worker tasks."""

    logger = LOGGER

    def __init__(self, roots: str | Iterable[str], **options: Any) -> None:
        super().__init__(roots, **options)
        self.q: Queue[tuple[str, int]] = Queue()
        # Blocking lookups, once per host (see shared.web.resolver), and only the
        # addresses the URL policy lets the crawl connect to.
        self.resolver = Resolver(self.policy)
        self.ssl_context: ssl.SSLContext | None = None  # Made on the first https URL.
        self.host_slots: dict[str, Semaphore] = {}  # max_per_host, per host.
        self.robots_fetches: dict[str, Task] = {}  # One robots.txt fetch per host.

    def add_url(self, url: str, max_redirect: int | None = None) -> None:
        """Mark ``url`` seen and queue it with its redirect budget."""
        self.q.put_nowait(self.seen(url, max_redirect))

    # --8<-- [end:crawler]

    # --8<-- [start:crawl]
    def crawl(self) -> Coroutine:
        """Run the crawl until every queued URL is done.

        The workers run in a task group, so none outlives the crawl, and
        a worker that dies of a bug ends the crawl with that error.  A
        robots.txt fetch that a stopped crawl leaves running is cancelled.
        """
        try:
            yield from run_in_group(self.crawl_in)
        finally:
            for fetch in self.robots_fetches.values():
                fetch.cancel()  # Shielded: left running if the crawl was stopped.

    def crawl_in(self, group: TaskGroup) -> Coroutine:
        """Start the workers in ``group``, wait for the queue, stop them."""
        # Named for the lanes of a trace.
        names = [f"worker {n}" for n in range(1, self.max_tasks + 1)]
        workers = [group.create_task(self.work(), name=name) for name in names]
        self.t0 = time.time()
        self.add_roots()
        try:
            yield from self.q.join()
        finally:
            self.t1 = time.time()
        for worker in workers:
            worker.cancel()  # Idle in q.get(); the group waits for each to end.

    # --8<-- [end:crawl]

    # --8<-- [start:work]
    def work(self) -> Coroutine:
        """Take URLs from the queue and fetch them, until cancelled."""
        while True:
            url, max_redirect = yield from self.q.get()
            try:
                yield from self.fetch(url, max_redirect)
            except Exception as error:  # A bug, not a network error: keep going.
                self.record_crash(url, error)
            finally:
                self.q.task_done()

    # --8<-- [end:work]

    # --8<-- [start:fetch]
    def fetch(self, url: str, max_redirect: int) -> Coroutine:
        """Fetch one URL unless robots.txt or a limit forbids it; record the outcome."""
        if self.robots_needed(url):
            yield from self.robots_of(url)
        reason = self.admit(url)
        if reason is not None:
            self.record_skip(url, reason)
            return
        try:
            response = yield from self.fetch_response(url, self.max_size)
        except (*NETWORK_ERRORS, PrivateAddress) as error:  # The latter: never retried.
            self.record_statistic(failure(url, error))
            return
        self.handle_response(url, max_redirect, response)

    def fetch_response(self, url: str, max_size: int, come_back: bool = True) -> Coroutine:
        """GET ``url``, trying again after a network failure, up to max_tries times.

        With ``come_back``, a 429 or 503 answer is tried again too, once the
        wait it asks for (or a backoff) has passed: see ``shared.web.retry``.

        Raises the last failure (OSError, BadResponse or TimeoutError).
        """
        loop = event_loop.get_running_loop()
        exception: BaseException | None = None
        for attempt in range(self.max_tries):
            try:
                response = yield from self.polite_request(url, max_size)
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

    # --8<-- [end:fetch]

    # --8<-- [start:polite]
    def polite_request(self, url: str, max_size: int) -> Coroutine:
        """GET ``url`` once, when its host has a free slot and its delay has passed.

        The timeout covers the request only, not the wait for its turn.
        """
        loop = event_loop.get_running_loop()
        slot = self.host_slot(url)
        yield from slot.acquire()  # At most max_per_host requests at one host.
        try:
            while (wait := self.turn(url, loop.time())) > 0:
                # Then ask again: another request may have gone first.
                yield from sleep(wait)
            return (yield from wait_for(self.request(url, max_size), self.timeout))
        finally:
            slot.release()

    def host_slot(self, url: str) -> Semaphore:
        """Return the semaphore of ``url``'s host, made on first use."""
        origin = origin_of(url)
        if origin not in self.host_slots:
            # Without max_per_host, max_tasks is the only limit: a semaphore
            # that large never makes a worker wait.
            self.host_slots[origin] = Semaphore(self.max_per_host or self.max_tasks)
        return self.host_slots[origin]

    # --8<-- [end:polite]

    # --8<-- [start:robots]
    def robots_of(self, url: str) -> Coroutine:
        """Learn the robots.txt rules of ``url``'s host, fetching them only once.

        The first worker to need them starts a task that fetches them; every
        worker that needs them meanwhile waits for that same task, through
        ``shield``: a worker cancelled while it waits must not cancel the
        fetch that the others wait for too.
        """
        host = self.polite.host(url)
        if host.origin not in self.robots_fetches:
            fetch = create_task(self.fetch_robots(host), name=f"robots.txt {host.origin}")
            self.robots_fetches[host.origin] = fetch
        host.rules = yield from shield(self.robots_fetches[host.origin])

    def fetch_robots(self, host: Host) -> Coroutine:
        """Fetch a host's robots.txt (following redirects) and return its rules."""
        robots = RobotsFetch(host.origin, self.user_agent)
        while robots.rules is None:
            try:
                # A 429 or 503 robots.txt is not waited for: it disallows everything.
                answer = yield from self.fetch_response(
                    robots.url, MAX_ROBOTS_SIZE, come_back=False
                )
                robots.received(answer)
            except (*NETWORK_ERRORS, PrivateAddress) as error:
                robots.failed(error)
        self.rules_known(host.origin, robots.rules)  # Queues sitemaps if asked.
        return robots.rules

    # --8<-- [end:robots]

    # --8<-- [start:request]
    def request(self, url: str, max_size: int) -> Coroutine:
        """GET ``url`` once over a new connection, without following redirects.

        Raises OSError (including ssl.SSLError) or BadResponse.
        """
        loop = event_loop.get_running_loop()
        host, port, _ = request_target(url)
        self.in_flight += 1
        self.recorder.begin(url, current_task())
        try:
            sock = yield from self.connect(host, port, url.startswith("https:"))
            with sock:
                self.recorder.phase(url, "send")
                headers = self.conditional_headers(url)  # Only in a recrawl.
                # The request is built in the call, not kept in a local: a local
                # would hold its bytes while the fetch waits for the answer.
                yield from loop.sock_sendall(sock, build_request(url, self.user_agent, headers))
                self.recorder.phase(url, "wait")
                return (yield from self.read_all(sock, max_size, url))
        finally:
            self.in_flight -= 1
            self.recorder.end(url)

    # --8<-- [end:request]

    # --8<-- [start:read_all]
    def read_all(self, sock: socket.socket, max_size: int, url: str) -> Coroutine:
        """Read one response to a request for ``url`` from ``sock`` until it is complete.

        Reads a body up to ``max_size`` bytes and stops there.  Raises
        OSError, or BadResponse when the server closes the connection early.
        """
        loop = event_loop.get_running_loop()
        chunk = yield from loop.sock_recv(sock, RECV_SIZE)
        self.recorder.phase(url, "read")
        # The parser is made once the server answers, not before: a fetch
        # spends most of its life waiting for that first chunk, and with
        # thousands waiting at once the empty parsers would add up.
        parser = ResponseParser(max_size)
        while True:
            if chunk:
                parser.feed_data(chunk)
            else:
                parser.feed_eof()
            if parser.done:
                return parser.response()
            chunk = yield from loop.sock_recv(sock, RECV_SIZE)

    # --8<-- [end:read_all]

    # --8<-- [start:connect]
    def connect(self, host: str, port: int, use_tls: bool) -> Coroutine:
        """Return a socket connected to ``host``, trying each of its addresses.

        Raises OSError (ssl.SSLError for a failed TLS handshake).
        """
        loop = event_loop.get_running_loop()
        error: OSError | None = None
        for family, proto, address in self.resolver.resolve(host, port):
            sock = self.make_socket(family, socket.SOCK_STREAM, proto)
            try:
                sock.setblocking(False)
                yield from loop.sock_connect(sock, address)
                if use_tls:
                    if self.ssl_context is None:
                        self.ssl_context = ssl.create_default_context()
                    sock = yield from start_tls(sock, host, self.ssl_context)
                return sock
            except OSError as exc:
                sock.close()
                error = exc
            except BaseException:  # Cancelled: leave no socket open.
                sock.close()
                raise
        raise error or OSError(f"no address for {host}")

    # --8<-- [end:connect]


# --8<-- [start:entry]
def run(crawler: Crawler, journal: Journal = NO_JOURNAL) -> Crawler:
    """Run ``crawler`` to completion on a new event loop, then close the loop.

    On Ctrl+C the crawl is cancelled, its sockets closed and the loop closed
    before KeyboardInterrupt goes on to the caller.  A ``journal`` notes
    every turn of the loop, for a replay (``crawl --journal``).
    """
    try:
        # In a simulation, the world's clock and selector (shared/sim).
        options = crawler.world.loop_options() if crawler.world else {}
        event_loop.run(crawler.crawl(), recorder=crawler.recorder, journal=journal, **options)
    finally:
        crawler.stopped()
    return crawler


def crawl(roots: str | Iterable[str], **options: Any) -> Crawler:
    """Crawl from ``roots`` to completion and return the finished Crawler."""
    return run(Crawler(roots, **options))


# --8<-- [end:entry]

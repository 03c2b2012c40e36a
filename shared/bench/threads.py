"""The "traditional way": a crawler with a pool of threads and blocking sockets.

This is the baseline the chapter argues against: each of ``max_tasks``
threads takes a URL from a ``queue.Queue``, connects, sends the request and
waits in ``recv`` until the answer is complete, while the operating system
switches between the threads.  It uses the same shared code as the stages
(the HTTP/1.0 request and response parser of stages 1 and 2, the link
parser, the URL policy and ``CrawlerBase``'s bookkeeping), so the only
difference the benchmark sees is threads against an event loop.

``CrawlerBase`` is not thread-safe, so a lock guards everything that reads
or writes the crawl's records (``handle_response``, ``record_statistic``).
"""

from __future__ import annotations

import logging
import queue
import socket
import ssl
import threading
import time
from collections.abc import Iterable
from typing import Any

from shared.crawl.crawling import CrawlerBase
from shared.record.stats import failure
from shared.web.http import BadResponse, Response, ResponseParser, build_request, request_target

LOGGER = logging.getLogger("shared.bench.threads")
STOP = None  # Put on the queue once per thread to end it.


class Crawler(CrawlerBase):
    """Crawl from ``roots`` with ``max_tasks`` threads, one blocking fetch each."""

    logger = LOGGER

    def __init__(self, roots: str | Iterable[str], **options: Any) -> None:
        super().__init__(roots, **options)
        self.q: queue.Queue[tuple[str, int] | None] = queue.Queue()
        self.lock = threading.Lock()  # Guards seen_urls, done and in_flight.
        self.threads_started = 0  # Fewer than max_tasks if the OS refused some.

    def add_url(self, url: str, max_redirect: int | None = None) -> None:
        """Mark ``url`` seen and queue it; the caller holds the lock."""
        if max_redirect is None:
            max_redirect = self.max_redirect
        self.seen_urls.add(url)
        self.q.put((url, max_redirect))

    def crawl(self) -> None:
        """Start the threads, crawl until the queue is done, then stop them.

        Raises RuntimeError if not even one thread can be started.
        """
        threads = self.start_threads()
        self.t0 = time.time()
        try:
            with self.lock:
                self.add_roots()
            self.q.join()
        finally:
            self.t1 = time.time()
            for _ in threads:
                self.q.put(STOP)
            for thread in threads:
                thread.join()

    def start_threads(self) -> list[threading.Thread]:
        """Start up to ``max_tasks`` worker threads; return those that started."""
        threads: list[threading.Thread] = []
        for n in range(1, self.max_tasks + 1):
            thread = threading.Thread(target=self.work, daemon=True, name=f"thread {n}")
            try:
                thread.start()
            except RuntimeError as error:  # "can't start new thread"
                LOGGER.error(
                    "started only %d of %d threads: %s", len(threads), self.max_tasks, error
                )
                if not threads:
                    raise
                break
            threads.append(thread)
        self.threads_started = len(threads)
        return threads

    def work(self) -> None:
        """Take URLs from the queue and fetch them, until STOP."""
        while (item := self.q.get()) is not STOP:
            url, max_redirect = item
            try:
                self.fetch(url, max_redirect)
            except Exception as error:  # A bug, not a network error: keep going.
                with self.lock:
                    self.record_crash(url, error)
            finally:
                self.q.task_done()
        self.q.task_done()

    def fetch(self, url: str, max_redirect: int) -> None:
        """Fetch one URL, retrying network failures, and record the outcome."""
        exception: Exception | None = None
        for attempt in range(self.max_tries):
            try:
                response = self.request(url)
            except (OSError, BadResponse) as error:
                LOGGER.info("try %d for %s raised %r", attempt, url, error)
                exception = error
                continue
            if attempt > 0:
                LOGGER.info("try %d for %s success", attempt, url)
            with self.lock:
                self.handle_response(url, max_redirect, response)
            return
        LOGGER.error("%s failed after %d tries", url, self.max_tries)
        with self.lock:
            self.record_statistic(failure(url, exception or TimeoutError()))

    def request(self, url: str) -> Response:
        """GET ``url`` once over a new connection, blocking until the answer is in.

        Raises OSError (TimeoutError after ``timeout`` seconds in all) or BadResponse.
        """
        self.recorder.begin(url, threading.current_thread())
        try:
            return self.blocking_request(url)
        finally:
            self.recorder.end(url)

    def blocking_request(self, url: str) -> Response:
        """Connect, send and read until the answer is complete; see ``request``."""
        host, port, _ = request_target(url)
        deadline = time.monotonic() + self.timeout
        parser = ResponseParser(self.max_size)
        with socket.create_connection((host, port), timeout=self.timeout) as raw:
            sock = raw
            if url.startswith("https:"):  # The SSL socket takes over raw's descriptor.
                sock = ssl.create_default_context().wrap_socket(raw, server_hostname=host)
            with sock:
                self.recorder.phase(url, "send")
                sock.sendall(build_request(url))
                self.recorder.phase(url, "wait")
                while not parser.done:
                    sock.settimeout(max(deadline - time.monotonic(), 0.001))
                    data = sock.recv(65536)
                    self.recorder.phase(url, "read")
                    if not data:
                        parser.feed_eof()
                        break
                    parser.feed_data(data)
        return parser.response()


def run(crawler: Crawler) -> Crawler:
    """Run ``crawler`` to completion in this thread and its pool."""
    try:
        crawler.crawl()
    finally:
        crawler.stopped()
    return crawler


def crawl(roots: str | Iterable[str], **options: Any) -> Crawler:
    """Crawl from ``roots`` to completion and return the finished Crawler."""
    return run(Crawler(roots, **options))

"""The stage 2 crawler beyond the shared contract: https, Ctrl+C, bugs in
the bookkeeping, the in-flight count, name resolution, and cleanup.

The acceptance suite (test_acceptance.py) checks the contract itself.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import http.server
import signal
import socket
import ssl
import subprocess
import sys
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from aiohttp import web

import stage2_generators
from stage2_generators.crawler import Crawler, run
from stage2_generators.futures import Future
from stage2_generators.tasks import Task
from stage2_generators.tests.libraries import STAGE2
from tests.acceptance import (
    SharedRobotsTests,
    TaskGroupTests,
    open_fds,
    run_with_deadline,
    wait_for_fds,
)
from tests.servers import PageServer
from tests.tls import client_tls, server_tls


class PageHandler(http.server.BaseHTTPRequestHandler):
    """Serve ``/`` linking to ``/a``, and ``/a``; 404 for anything else."""

    pages = {"/": b'<a href="/a">a</a>', "/a": b"<p>the end</p>"}

    def do_GET(self) -> None:
        body = self.pages.get(self.path)
        self.send_response(200 if body else 404)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body or b"")))
        self.end_headers()
        self.wfile.write(body or b"")

    def log_message(self, *args: Any) -> None:
        pass  # Keep the test output clean.


@contextlib.contextmanager
def https_server() -> Iterator[str]:
    """Yield the URL of a local https server with the test certificate."""
    context = server_tls()
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), PageHandler)
    server.daemon_threads = True
    server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"https://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def crawl(crawler: Crawler) -> Crawler:
    """Run ``crawler`` in a thread with a deadline, as the acceptance suite does."""
    return run_with_deadline(lambda: run(crawler), deadline=30)


# --- https --------------------------------------------------------------------


def test_https_crawl_with_a_trusted_certificate() -> None:
    with https_server() as root:
        crawler = Crawler([root])
        crawler.ssl_context = client_tls()
        crawl(crawler)
    assert {(s.url, s.status) for s in crawler.done} == {(root, 200), (root + "a", 200)}


def test_https_with_an_untrusted_certificate_is_a_recorded_failure() -> None:
    with https_server() as root:
        crawler = crawl(Crawler([root], max_tries=2))
    [stat] = crawler.done
    assert (stat.url, stat.status) == (root, None)
    assert isinstance(stat.exception, ssl.SSLCertVerificationError)


def test_https_to_a_plain_http_server_is_a_recorded_failure(pages: PageServer) -> None:
    pages.add_page("/", [])
    root = pages.url.replace("http:", "https:")
    crawler = crawl(Crawler([root], max_tries=1, timeout=5))
    [stat] = crawler.done
    assert stat.status is None
    assert isinstance(stat.exception, ssl.SSLError)


# --- Failures that are not the network's -------------------------------------------


class BuggyCrawler(Crawler):
    """A crawler whose link parser has a bug on one page."""

    def parse_links(self, url, response):
        if url.endswith("/bad"):
            raise ZeroDivisionError("a bug in the bookkeeping")
        return super().parse_links(url, response)


def test_a_bug_on_one_url_neither_hangs_nor_loses_it(pages: PageServer) -> None:
    root = pages.add_page("/", ["/bad", "/good"])
    pages.add_page("/bad", ["/after-bad"])
    pages.add_page("/good", [])
    crawler = crawl(BuggyCrawler([root], max_tasks=2))
    stats = {stat.url: stat for stat in crawler.done}
    assert set(stats) == crawler.seen_urls == {root, root + "bad", root + "good"}
    assert stats[root + "bad"].status is None
    assert isinstance(stats[root + "bad"].exception, ZeroDivisionError)
    assert stats[root + "good"].status == 200


class TestTaskGroup(TaskGroupTests):
    stage = stage2_generators


class TestSharedRobots(SharedRobotsTests):
    stage = stage2_generators
    lib = STAGE2


class InterruptedCrawler(Crawler):
    """A crawler whose user presses Ctrl+C while the second page is handled."""

    def handle_response(self, url, max_redirect, response):
        if self.done:
            raise KeyboardInterrupt
        super().handle_response(url, max_redirect, response)


def test_ctrl_c_closes_everything_and_is_passed_on(pages: PageServer) -> None:
    root = pages.add_page("/", [f"/{n}" for n in range(20)])
    for n in range(20):
        pages.add_page(f"/{n}", [])
    crawl(Crawler([root]))  # Warm up: imports and caches open what they keep.
    before = open_fds()
    crawler = InterruptedCrawler([root], max_tasks=5)
    with pytest.raises(KeyboardInterrupt):
        crawl(crawler)
    assert crawler.t1 is not None and crawler.t0 <= crawler.t1
    assert len(crawler.done) == 1
    assert crawler.in_flight == 0
    gc.collect()
    assert not [task for task in gc.get_objects() if isinstance(task, Task) and not task.done()]
    assert wait_for_fds(before) <= before, "a socket or the selector was left open"


@pytest.mark.slow
@pytest.mark.usefixtures("sigint")
def test_a_real_ctrl_c_while_waiting_for_the_network(pages: PageServer) -> None:
    arrived = threading.Event()

    async def stalls(request: web.Request) -> web.StreamResponse:
        arrived.set()
        await asyncio.sleep(60)
        return web.Response(body=b"")

    root = pages.add_handler("/", stalls)
    crawl(Crawler([pages.add_page("/warm", [])]))  # Imports and caches open what they keep.
    before = open_fds()
    main_thread = threading.get_ident()

    def press_ctrl_c() -> None:
        if arrived.wait(30):
            signal.pthread_kill(main_thread, signal.SIGINT)

    crawler = Crawler([root], timeout=50)
    threading.Thread(target=press_ctrl_c, daemon=True).start()
    with pytest.raises(KeyboardInterrupt):
        run(crawler)  # In the main thread, where Python delivers SIGINT.
    assert crawler.t1 is not None
    assert crawler.in_flight == 0
    assert wait_for_fds(before) <= before, "a socket or the selector was left open"


# --- Bookkeeping -------------------------------------------------------------------


class CountingCrawler(Crawler):
    """A crawler that notes how many requests are in flight as each one reads."""

    counts: list[int]

    def read_all(self, sock, max_size, url):
        self.counts.append(self.in_flight)
        return (yield from super().read_all(sock, max_size, url))


def test_in_flight_counts_requests_and_never_exceeds_max_tasks(pages: PageServer) -> None:
    root = pages.add_page("/", [f"/{n}" for n in range(30)])
    for n in range(30):
        pages.add_page(f"/{n}", [])
    crawler = CountingCrawler([root], max_tasks=4)
    crawler.counts = []
    crawl(crawler)
    assert min(crawler.counts) >= 1 and max(crawler.counts) <= 4
    assert crawler.in_flight == 0


def test_nothing_is_left_pending_after_a_crawl(pages: PageServer) -> None:
    root = pages.add_page("/", ["/a"])
    pages.add_page("/a", [])
    stage2_generators.crawl([root])
    gc.collect()
    pending = [f for f in gc.get_objects() if isinstance(f, Future) and not f.done()]
    assert pending == []


def test_name_resolution_is_cached_and_tries_every_address(pages: PageServer) -> None:
    pages.add_page("/", ["/a"])
    pages.add_page("/a", [])
    root = f"http://localhost:{pages.port}/"  # Maybe ::1 first, where nobody listens.
    crawler = crawl(Crawler([root]))
    assert {stat.status for stat in crawler.done} == {200}
    assert list(crawler.resolver.addresses) == [("localhost", pages.port)]


def test_a_non_ascii_host_name_that_does_not_resolve_is_a_lookup_failure() -> None:
    crawler = crawl(Crawler(["http://\u00e9mpty..label/"], max_tries=1))
    [stat] = crawler.done
    assert stat.url == "http://xn--mpty-9oa..label/"  # Normalized to ASCII before the lookup.
    assert isinstance(stat.exception, socket.gaierror)


def test_an_ascii_host_name_that_does_not_resolve_is_a_lookup_failure() -> None:
    crawler = crawl(Crawler(["http://empty..label/"], max_tries=1))
    [stat] = crawler.done
    assert isinstance(stat.exception, socket.gaierror)


@pytest.mark.slow
def test_command_line_help() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "stage2_generators", "--help"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0
    assert "python -m stage2_generators" in result.stdout

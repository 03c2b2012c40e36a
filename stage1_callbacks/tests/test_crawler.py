"""Stage 1's Crawler beyond the shared contract: Ctrl-C, bugs, https, its counters.

The acceptance suite (test_acceptance.py) checks what every stage must do;
these tests check how stage 1 does it.
"""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

import stage1_callbacks
from shared.testsite.server import ServerThread, make_app
from shared.web.http import ResponseParser
from stage1_callbacks.crawler import Crawler, run
from stage1_callbacks.fetcher import Fetcher
from tests.servers import DEADLINE, PageServer, ScriptedServer, http_response
from tests.tls import client_tls, server_tls

REPO = Path(__file__).resolve().parents[2]


async def never_answers(request: web.Request) -> web.StreamResponse:
    await asyncio.sleep(3600)  # The server cancels it when the test ends.
    raise AssertionError("unreachable")


# --- Ctrl-C ----------------------------------------------------------------------


def test_interrupt_closes_every_socket_and_sets_t1(pages: PageServer) -> None:
    root = pages.add_page("/", ["/fast"] + [f"/slow/{n}" for n in range(5)])
    pages.add_page("/fast", [])
    for n in range(5):
        pages.add_handler(f"/slow/{n}", never_answers)
    crawler = Crawler([root], max_tasks=10)
    open_sockets = []

    def interrupt(url: str, max_redirect: int, response: Any) -> None:
        if url.endswith("/fast"):  # The five slow fetches are in flight now.
            open_sockets.extend(fetcher.sock for fetcher in crawler.jobs)
            raise KeyboardInterrupt  # What Ctrl-C does, in the middle of a callback.
        Crawler.handle_response(crawler, url, max_redirect, response)

    crawler.handle_response = interrupt  # type: ignore[method-assign]
    with pytest.raises(KeyboardInterrupt):
        run(crawler)
    assert len(open_sockets) == 5
    assert all(sock is not None and sock.fileno() == -1 for sock in open_sockets)
    assert crawler.jobs == {} and crawler.t1 is not None and crawler.t1 >= crawler.t0
    assert crawler.loop is not None and crawler.loop.closed


def test_interrupt_before_a_new_socket_is_registered_closes_it() -> None:
    sockets = []

    def register(sock: Any, *args: Any) -> None:
        sockets.append(sock)  # The Fetcher holds it already; the loop never will.
        raise KeyboardInterrupt

    def crawl() -> None:
        assert crawler.loop is not None
        crawler.loop.register = register  # type: ignore[method-assign, assignment]
        Crawler.crawl(crawler)

    # A listening socket that never accepts: the kernel completes the
    # handshake, and no server object is left holding the other end.
    with socket.create_server(("127.0.0.1", 0)) as listener:
        crawler = Crawler([f"http://127.0.0.1:{listener.getsockname()[1]}/"])
        crawler.crawl = crawl  # type: ignore[method-assign]
        with pytest.raises(KeyboardInterrupt):  # Not a KeyError from closing it.
            run(crawler)
    assert len(sockets) == 1 and sockets[0].fileno() == -1
    assert crawler.jobs == {} and crawler.loop is not None and crawler.loop.closed


@pytest.mark.slow
@pytest.mark.usefixtures("sigint")
def test_ctrl_c_on_the_command_line_prints_the_report(pages: PageServer) -> None:
    arrived = threading.Event()

    async def slow(request: web.Request) -> web.StreamResponse:
        arrived.set()
        return await never_answers(request)

    root = pages.add_page("/", ["/slow"])
    pages.add_handler("/slow", slow)
    command = [sys.executable, "-m", "stage1_callbacks", root]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    with subprocess.Popen(command, cwd=REPO, env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True) as process:  # fmt: skip
        try:
            assert arrived.wait(DEADLINE), "the crawl never reached /slow"
            process.send_signal(signal.SIGINT)
            stdout, stderr = process.communicate(timeout=DEADLINE)
        finally:
            process.kill()
    assert process.returncode == 130, stderr
    assert "Traceback" not in stderr
    assert f"{root} 200" in stdout
    assert "Todo: 1" in stdout and "Done: 1" in stdout


# --- A bug in handling one URL -------------------------------------------------------


def test_bug_in_handling_a_response_is_recorded(pages: PageServer, caplog) -> None:
    root = pages.add_page("/", ["/bad", "/good"])
    pages.add_page("/bad", ["/after-bad"])
    pages.add_page("/good", [])
    crawler = Crawler([root])

    def buggy(url: str, max_redirect: int, response: Any) -> None:
        if url.endswith("/bad"):
            raise ZeroDivisionError("a bug in the crawler")
        Crawler.handle_response(crawler, url, max_redirect, response)

    crawler.handle_response = buggy  # type: ignore[method-assign]
    run(crawler)
    stats = {stat.url: stat for stat in crawler.done}
    assert set(stats) == crawler.seen_urls == {root, root + "bad", root + "good"}
    assert isinstance(stats[root + "bad"].exception, ZeroDivisionError)
    assert "fetching " + root + "bad failed unexpectedly" in caplog.text
    assert crawler.in_flight == 0


def test_bug_inside_the_fetcher_is_recorded_not_retried(pages: PageServer, monkeypatch) -> None:
    root = pages.add_page("/", ["/bad", "/good"])
    pages.add_page("/bad", body=b"the parser chokes on this")
    pages.add_page("/good", [])
    real_feed_data = ResponseParser.feed_data

    def feed_data(parser: ResponseParser, data: bytes) -> None:
        if b"chokes" in data:
            raise ZeroDivisionError("a bug in the parser")
        real_feed_data(parser, data)

    monkeypatch.setattr(ResponseParser, "feed_data", feed_data)
    crawler = stage1_callbacks.crawl([root])
    stats = {stat.url: stat for stat in crawler.done}
    assert isinstance(stats[root + "bad"].exception, ZeroDivisionError)
    assert stats[root + "good"].status == 200
    assert pages.requests["/bad"] == 1


def test_bug_starting_a_fetch_is_recorded(pages: PageServer, monkeypatch) -> None:
    root = pages.add_page("/", ["/bad", "/good"])
    pages.add_page("/good", [])
    real_connect = Fetcher.connect
    broken: list[Fetcher] = []

    def connect(fetcher: Fetcher, error: Exception | None) -> None:
        if fetcher.url.endswith("/bad"):  # After start() set the timeout.
            broken.append(fetcher)
            raise ZeroDivisionError("a bug before the fetch")
        real_connect(fetcher, error)

    monkeypatch.setattr(Fetcher, "connect", connect)
    crawler = stage1_callbacks.crawl([root])
    stats = {stat.url: stat for stat in crawler.done}
    assert len(crawler.done) == 3 and set(stats) == {root, root + "bad", root + "good"}
    assert isinstance(stats[root + "bad"].exception, ZeroDivisionError)
    assert crawler.in_flight == 0 and crawler.jobs == {}
    assert [fetcher.timer.cancelled for fetcher in broken] == [True]  # type: ignore[union-attr]


def test_bug_fetching_robots_txt_skips_the_host(pages: PageServer, monkeypatch) -> None:
    root = pages.add_page("/", ["/a"])
    real_connect = Fetcher.connect

    def connect(fetcher: Fetcher, error: Exception | None) -> None:
        if fetcher.url.endswith("/robots.txt"):
            raise ZeroDivisionError("a bug before the robots.txt request")
        real_connect(fetcher, error)

    monkeypatch.setattr(Fetcher, "connect", connect)
    crawler = stage1_callbacks.crawl([root], obey_robots=True)
    assert [stat.url for stat in crawler.done] == [root]  # robots.txt is no page.
    assert str(crawler.done[0].exception).startswith("robots.txt unreachable (ZeroDivisionError")
    assert crawler.in_flight == 0 and crawler.jobs == {} and crawler.robots_waiting == {}
    assert pages.requests["/"] == 0


# --- Counters --------------------------------------------------------------------------


@pytest.mark.parametrize("max_tasks", [1, 3, 20])
def test_in_flight_counts_the_jobs_and_stays_under_max_tasks(max_tasks: int) -> None:
    seen: list[tuple[int, int]] = []

    class Watched(Crawler):
        def on_response(self, fetcher: Any) -> None:
            seen.append((self.in_flight, len(self.jobs)))  # This one is still in jobs.
            super().on_response(fetcher)

    with ServerThread(make_app(60)) as server:
        crawler = run(Watched([server.url], max_tasks=max_tasks))
    assert all(in_flight == jobs for in_flight, jobs in seen)
    assert max(in_flight for in_flight, _ in seen) == max_tasks
    assert crawler.in_flight == 0 and crawler.jobs == {} and not crawler.q


# --- https ------------------------------------------------------------------------------


def tls_site(pages: dict[str, bytes]) -> ScriptedServer:
    """Return a TLS server that answers each path in ``pages`` (else 404)."""

    def serve(conn: Any, server: ScriptedServer) -> None:
        request = server.read_request(conn)
        path = request.split(b" ")[1].decode()
        if path in pages:
            conn.sendall(http_response(pages[path]))
        else:
            conn.sendall(http_response(b"", "404 Not Found"))

    return ScriptedServer(serve, tls=server_tls())


def test_https_crawl() -> None:
    with tls_site({"/": b'<a href="/a">a</a><a href="/b">b</a>', "/a": b""}) as server:
        crawler = Crawler([server.url])
        crawler.ssl_context = client_tls()
        run(crawler)
    assert server.url.startswith("https://127.0.0.1:")
    results = {(stat.url, stat.status) for stat in crawler.done}
    assert results == {(server.url, 200), (server.url + "a", 200), (server.url + "b", 404)}


def test_https_with_an_untrusted_certificate_fails_cleanly(caplog) -> None:
    with tls_site({"/": b""}) as server:
        crawler = stage1_callbacks.crawl([server.url], max_tries=2)
    assert [(stat.url, stat.status) for stat in crawler.done] == [(server.url, None)]
    assert "certificate verify failed" in str(crawler.done[0].exception)
    assert f"{server.url} failed after 2 tries" in caplog.text

"""Broken servers and big pages: the part of the acceptance suite that attacks.

``HostileServerTests`` is a mixin of ``tests.acceptance.AcceptanceTests``,
so every stage runs it.  One parametrized test plays each behaviour of
``tests.hostile`` against the stage and checks what a good production
client does: the crawl ends within its timeout, records the URL exactly
once with the outcome below, leaves no socket open, and goes on with the
other URLs.

The behaviours that are scripts of bytes and pauses play on the simulated
network (shared/sim), in virtual time, under the ``seed`` fixture: an
endless body, a gzip bomb or a byte a second costs no real time, and
whether the crawl outlived its timeouts is checked on the world's clock,
exactly.  What only real sockets show stays on them
(``test_hostile_server_on_real_sockets``): a kept-alive connection, which
answers twice or closes while idle, and the process's file descriptors.

The outcome of each behaviour, the same in every stage:

- Malformed or incomplete answers (closed before the head or in the body,
  a short body, garbage, an endless or oversized head, no blank line, a
  reset, a refused port, a repeated Content-Length or one next to a
  Transfer-Encoding, a chunk size that is not hex, a Content-Length or
  chunk size of thousands of digits, a thousand interim responses) are
  network failures: tried ``max_tries`` times, then recorded with status
  None and the last exception, which is neither a timeout nor a crash of
  the crawler's (a ValueError, a RecursionError).
- A server that answers too slowly (one byte per second) or never is a
  timeout: the same, with a TimeoutError, after ``max_tries`` timeouts.
- An endless body is cut at ``max_size``: status 200, ``size == max_size``
  and ResponseTooLarge.
- An invalid Location is recorded with its status and BadRedirect; a
  redirect to ftp is recorded and not followed; a Location with spaces and
  non-ASCII characters is recorded, followed and fetched percent-encoded (a
  byte that is not UTF-8 as ``%XX``).
- Non-ASCII bytes in headers do not matter; a missing Content-Type is None;
  of duplicate headers the first wins.  Control characters (ESC, BEL) are
  kept in the record and escaped in the report: every URL's report line is
  one line without a control character, whatever the server sent.
- gzip and deflate bodies (zlib-wrapped or raw) are decoded; size and
  ``max_size`` count decoded bytes, so a gzip bomb is cut at ``max_size``;
  a body that is not in its coding is a network failure; bytes after the
  end of the compressed data (endless, under a 64 MiB Content-Length) end
  the body: the page is what was decoded.
- A folded header line is joined to the one before; interim 1xx responses
  are skipped; a 101 nobody asked for is a network failure; a status
  outside 100-599 is recorded with its code, as a server error.
- On a kept-alive connection (stage 3), a response nobody asked for is never
  read as the answer to the next request, and a connection the server
  closed while it was idle costs no try.
- Bytes right after a complete response (junk, HTML with bare LFs, a bogus
  head), sent with it, are no part of it: the page is that response, tried
  once, and the crawl goes on.  Stage 3 then closes the connection.

A crawl whose roots are public connects to no address of the crawling
machine's own network: a robots.txt redirected there counts as unreachable,
a redirect to a name that resolves there is recorded as a PrivateAddress
failure, without a request (the tests fake the name lookup).  A crawl with
a root on this machine may go anywhere on it.

A robots.txt gone wrong (``test_hostile_robots_txt``, with ``obey_robots``):
a huge one is read up to 500 KiB and obeyed that far; a redirecting one is
followed to its rules; a malformed one is obeyed for the rules that can be
read; one too slow to arrive within the timeout is unreachable, so nothing on
the host is fetched.  In every case robots.txt is no page of the report.
"""

from __future__ import annotations

import asyncio
import collections
import dataclasses
import re
import resource
import socket
import time
import types
import urllib.parse
from collections.abc import Callable, Iterator
from typing import Any

import aiohttp
import pytest
from aiohttp import web

from shared import FetchStatistic, ResponseTooLarge
from shared.crawl.crawling import BadRedirect
from shared.record.report import url_report
from shared.record.stats import RobotsDisallowed
from shared.sim import World
from shared.sim.world import HOST, PORT
from shared.web.http import BadResponse
from shared.web.urls import PrivateAddress
from tests import acceptance  # A cycle: acceptance.py imports this module first.
from tests.grading import level
from tests.hostile import HostileServer, scripted
from tests.servers import PageServer

TIMEOUT = 1.0  # Seconds per request in the hostile crawls.
MAX_TRIES = 2
MAX_SIZE = 1_000_000
SLACK = 1.5  # Seconds a crawl may take beyond its tries' timeouts.
NETWORK, TIMEOUT_ERROR, CUT, BAD_REDIRECT = "network", "timeout", "cut", "bad redirect"
CRASH = "crash"
OPTIONS = {"timeout": TIMEOUT, "max_tries": MAX_TRIES, "max_size": MAX_SIZE}
REFUSED = f"http://{HOST}:{PORT + 1}/"  # No server there on the simulated network.


@dataclasses.dataclass(frozen=True)
class Outcome:
    """What a crawl must record for one hostile path (None: the refused port)."""

    path: str | None
    status: int | None = None
    error: str | None = NETWORK  # The kind of exception recorded, see error_kind.
    tries: int = MAX_TRIES  # Connections the path receives.
    size: int = 0
    content_type: str | None = None
    num_urls: int = 0
    next_url: str | None = None  # A path on the server, or an absolute URL.
    fetched: str | None = None  # The request target of the followed redirect.

    @property
    def id(self) -> str:
        return (self.path or "/refused-port").lstrip("/")


OK_PAGE: dict[str, Any] = {
    "status": 200,
    "error": None,
    "tries": 1,
    "size": 27,
    "content_type": "text/html",
}
NEVER_ASKED = "/kept/unasked"  # Linked only from a response sent unasked.
# Played on the simulated network: scripts of bytes and pauses.
SIMULATED = [
    Outcome("/close-before-head"),
    Outcome("/close-mid-body"),
    Outcome("/short-body"),
    Outcome("/garbage"),
    Outcome("/endless-headers"),
    Outcome("/long-header-line"),
    Outcome("/endless-body", 200, CUT, 1, MAX_SIZE, "text/html"),
    Outcome("/no-blank-line"),
    Outcome("/non-ascii-headers", **OK_PAGE, num_urls=1),
    Outcome("/invalid-location", 302, BAD_REDIRECT, 1),
    Outcome("/redirect-ftp", 302, None, 1, next_url="ftp://127.0.0.1/file.txt"),
    Outcome(
        "/location-utf8",
        302,
        None,
        1,
        next_url="/landing%20page/caf%C3%A9",
        fetched="/landing%20page/caf%C3%A9",
    ),  # fmt: skip
    Outcome(
        "/location-latin1", 302, None, 1, next_url="/landing/caf%E9", fetched="/landing/caf%E9"
    ),
    Outcome("/reset"),
    Outcome("/never-answer", error=TIMEOUT_ERROR),
    Outcome("/slowloris", error=TIMEOUT_ERROR),  # A byte a second.
    Outcome(None),  # The refused port.
    Outcome("/no-content-type", 200, None, 1, 27),
    Outcome("/duplicate-headers", **OK_PAGE, num_urls=1),
    Outcome("/conflicting-length"),
    Outcome("/length-and-chunked"),
    Outcome("/bad-chunk-size"),
    # Compressed bodies: decoded; size and max_size count decoded bytes.
    Outcome("/gzip", **OK_PAGE, num_urls=1),
    Outcome("/deflate", **OK_PAGE, num_urls=1),
    Outcome("/deflate-raw", **OK_PAGE, num_urls=1),
    Outcome("/gzip-bomb", 200, CUT, 1, MAX_SIZE, "text/html"),
    Outcome("/gzip-broken"),
    # Junk after a small gzip body, announced as 64 MiB: the body ends with its data.
    Outcome("/gzip-then-junk", **OK_PAGE, num_urls=1),
    # Wire formats read alike by every stage.
    Outcome("/folded-header", **OK_PAGE, num_urls=1),
    Outcome("/interim-responses", **OK_PAGE, num_urls=1),
    Outcome("/endless-interim"),  # More interim answers than a client skips: malformed.
    Outcome("/huge-content-length"),  # Too many digits: malformed, not a crash.
    Outcome("/huge-chunk-size"),
    # Kept exactly in the record; the report escapes it (check_report_line).
    Outcome("/control-characters", 200, None, 1, 27, "text/html\x1b[2j\x07"),
    Outcome("/unasked-101"),
    Outcome("/status-600", 600, None, 1, 27, "text/html"),
    Outcome("/status-099", 99, None, 1, 27, "text/html"),
]
# Played on real sockets: what a kept-alive connection does with bytes it was not asked for.
REAL = [
    # Connections kept alive (stage 3): what follows an answer is no answer.
    Outcome("/kept/unsolicited-response", **{**OK_PAGE, "size": 29}, num_urls=1),
    # Bytes right after a complete response, in the same read: the page is the response.
    Outcome("/kept/then-junk", **OK_PAGE, num_urls=1),
    Outcome("/kept/then-html", **OK_PAGE, num_urls=1),
    Outcome("/kept/then-bogus-head", **OK_PAGE, num_urls=1),
]


def error_kind(error: BaseException | None) -> str | None:
    """Return which kind of outcome an exception stands for."""
    if error is None:
        return None
    if isinstance(error, ResponseTooLarge):
        return CUT
    if isinstance(error, BadRedirect):
        return BAD_REDIRECT
    if isinstance(error, TimeoutError):
        return TIMEOUT_ERROR
    if isinstance(error, (OSError, BadResponse, aiohttp.ClientError)):
        return NETWORK
    return CRASH  # A bug of the crawler's (a ValueError, a RecursionError), not the server's.


def results_of(crawler: Any) -> set[tuple[str, int | None]]:
    """Return the ``(url, status)`` pairs a crawl recorded."""
    return {(stat.url, stat.status) for stat in crawler.done}


def check_time(world: World, name: str) -> None:
    """Check that a simulated crawl ended within its tries' timeouts, on the world's clock."""
    assert world.time() <= MAX_TRIES * TIMEOUT, (
        f"{name}: the crawl outlived its timeouts: max_tries={MAX_TRIES} with timeout={TIMEOUT:g}"
        f" ends within {MAX_TRIES * TIMEOUT:g} s, and it took {world.time():g} s of simulated time"
    )


def peak_rss_mb() -> float:
    """Return the peak resident memory of this process so far, in MB."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def check_report_line(stat: FetchStatistic) -> None:
    """Check that a URL's report line is one line with no control character in it."""
    line = url_report(stat, collections.Counter())
    assert not re.search("[\x00-\x1f\x7f-\x9f]", line), (
        f"expected a report line without control characters, got {line!r}"
    )


class HostileServerTests:
    """Hostile servers and big pages; mixed into AcceptanceTests."""

    stage: types.ModuleType
    crawl: Any  # AcceptanceTests.crawl: a crawl under a deadline.
    simulate: Any  # SimulatedTests.simulate: a crawl in a World.

    @pytest.fixture
    def hostile(self) -> Iterator[HostileServer]:
        """The hostile server, with every behaviour on its own path."""
        with HostileServer() as server:
            yield server

    @pytest.mark.parametrize("outcome", SIMULATED, ids=lambda outcome: outcome.id)
    @level(6, "http-on-the-wire")
    def test_hostile_server(self, seed: int, outcome: Outcome) -> None:
        world = World(seed)
        server = scripted()
        root = world.serve(server).rstrip("/")
        url_of = lambda path: root + path  # noqa: E731
        url = REFUSED if outcome.path is None else url_of(outcome.path)
        crawler = self.simulate(world, [url, url_of("/ok")], **OPTIONS)
        left = list(world.network.sockets.values())
        print(f"{outcome.id}: {world.time():g} s of simulated time, sockets left open: {left}")
        assert not left, (
            f"{outcome.id}: the crawl left {len(left)} sockets open; each socket is closed,"
            f" whatever the server did: {left}"
        )
        check_time(world, outcome.id)
        if outcome.error == TIMEOUT_ERROR:  # Each try given up after exactly its timeout.
            assert world.time() == pytest.approx(MAX_TRIES * TIMEOUT), (
                f"{outcome.id}: max_tries={MAX_TRIES} with timeout={TIMEOUT:g}: expected the crawl"
                f" to end after {MAX_TRIES * TIMEOUT:g} s of simulated time, {MAX_TRIES} timeouts;"
                f" it ended after {world.time():g} s"
            )
        self.check_outcome(url_of, server.connections, crawler, url, outcome)

    @pytest.mark.parametrize("outcome", REAL, ids=lambda outcome: outcome.id)
    @level(6, "http-on-the-wire")
    def test_hostile_server_on_real_sockets(self, hostile: HostileServer, outcome: Outcome) -> None:
        assert outcome.path is not None
        url, ok = hostile.url(outcome.path), hostile.url("/ok")
        before = acceptance.open_fds()
        start = time.monotonic()
        crawler = acceptance.run_with_deadline(lambda: self.stage.crawl([url, ok], **OPTIONS), 20)
        elapsed = time.monotonic() - start
        after = acceptance.wait_for_fds(before)
        print(f"{outcome.id}: fds before={before} after={after}, {elapsed:.2f} s")
        assert after <= before, (
            f"expected every descriptor closed after the crawl, got {after - before} left open"
        )
        most = MAX_TRIES * TIMEOUT + SLACK
        assert elapsed < most, (
            f"max_tries={MAX_TRIES} x timeout={TIMEOUT:g} s: expected the crawl to end within"
            f" {most:g} s, got {elapsed:.1f} s"
        )
        self.check_outcome(hostile.url, hostile.connections, crawler, url, outcome)

    def check_outcome(
        self,
        url_of: Callable[[str], str],
        connections: collections.Counter[str],
        crawler: Any,
        url: str,
        outcome: Outcome,
    ) -> None:
        """Check a hostile crawl's records: ``url`` once as ``outcome`` says, and the rest."""
        ok, ok_next = url_of("/ok"), url_of("/ok/next")
        urls = [stat.url for stat in crawler.done]
        assert urls.count(url) == 1, f"expected one record of {url}, got {urls.count(url)}"
        recorded = acceptance.differ(set(urls), crawler.seen_urls)
        assert sorted(urls) == sorted(crawler.seen_urls), (
            "expected each URL seen recorded once: the URLs recorded"
            f" {recorded}{acceptance.recorded_twice(crawler)}"
        )
        assert url_of(NEVER_ASKED) not in crawler.seen_urls, (
            f"expected the bytes after the answer left unread, got their link {NEVER_ASKED} seen"
        )
        stats = acceptance.by_url(crawler)
        beside = [stats[each].status if each in stats else "no record" for each in (ok, ok_next)]
        assert beside == [200, 200], (
            f"the crawl stopped: /ok and the page it links to, beside {outcome.id}, got {beside}"
            " instead of status 200 each"
        )
        stat = stats[url]
        got = (stat.status, error_kind(stat.exception), stat.content_type, stat.num_urls, stat.size)
        expected = (
            *(outcome.status, outcome.error, outcome.content_type),
            *(outcome.num_urls, outcome.size),
        )
        assert got == expected, (
            f"{outcome.id}: expected the status, kind of error, content type, links and size"
            f" {expected}, got {got} (the error: {stat.exception!r})"
        )
        if outcome.path is not None:
            asked = connections[outcome.path]
            assert asked == outcome.tries, (
                f"{outcome.id}: expected {outcome.tries} connections (max_tries={MAX_TRIES}"
                f" for a failure, 1 for an answer), the server got {asked}"
            )
        self.check_redirect(url_of, connections, crawler, stat, outcome)
        for each in crawler.done:
            check_report_line(each)

    def check_redirect(
        self,
        url_of: Callable[[str], str],
        connections: collections.Counter[str],
        crawler: Any,
        stat: FetchStatistic,
        outcome: Outcome,
    ) -> None:
        """Check where a hostile redirect pointed and what became of its target."""
        next_url = outcome.next_url
        if next_url is not None and next_url.startswith("/"):
            next_url = url_of(next_url)
        assert stat.next_url == next_url, (
            f"{outcome.id}: expected the next_url {next_url!r}, got {stat.next_url!r}"
        )
        if outcome.fetched is not None and next_url is not None:
            status = acceptance.record_of(crawler, next_url).status
            assert status == 200, f"{outcome.id}: expected {next_url} fetched, got {status}"
            asked = connections[outcome.fetched]
            assert asked == 1, f"expected {outcome.fetched} asked once, the server got {asked}"
        elif next_url is not None:
            assert next_url not in crawler.seen_urls, (
                f"{outcome.id}: the redirect to {next_url} is recorded, not followed"
            )

    @level(6, "http-on-the-wire")
    def test_a_kept_connection_closed_while_idle_costs_no_try(self, hostile: HostileServer) -> None:
        root = hostile.url("/kept/close-when-idle")
        crawler = self.crawl([root], max_tries=1, max_tasks=1, timeout=TIMEOUT)
        expected = {(root, 200), (hostile.url("/kept/next"), 200)}
        assert results_of(crawler) == expected, (
            "a kept connection the server closed while idle costs no try, with max_tries=1:"
            f" the records (url, status) {acceptance.differ(results_of(crawler), expected)}"
        )

    # --- The crawling machine's own network ---------------------------------------

    @pytest.fixture
    def public_site(self, pages: PageServer, monkeypatch: pytest.MonkeyPatch) -> str:
        """Serve ``pages`` as http://public.example:PORT/, a name the crawl takes as public.

        Names under public.example resolve to 127.0.0.1 (as a site's own DNS
        could make them); the roots name no address of this machine.
        """
        real_getaddrinfo = socket.getaddrinfo

        def getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
            name = host.decode() if isinstance(host, bytes) else str(host)
            if name == "public.example" or name.endswith(".public.example"):
                host = "127.0.0.1"
            return real_getaddrinfo(host, *args, **kwargs)

        monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
        return f"http://public.example:{urllib.parse.urlsplit(pages.url).port}/"

    @level(6, "urls", "hostile")
    def test_robots_txt_redirected_into_the_machine_s_network_is_not_fetched(
        self, pages: PageServer, public_site: str
    ) -> None:
        inside = pages.url + "inside/robots.txt"  # On 127.0.0.1: no root names it.
        pages.add_redirect("/robots.txt", inside, status=301)
        pages.add_page("/inside/robots.txt", body=b"User-agent: *\n", content_type="text/plain")
        pages.add_page("/", [])
        crawler = self.crawl([public_site], obey_robots=True, max_tries=2)
        why = "robots.txt redirects to 127.0.0.1, an address of this machine"
        asked = (pages.requests["/robots.txt"], pages.requests["/inside/robots.txt"])
        assert asked == (1, 0), (
            f"{why}: expected robots.txt asked once and the redirect never followed, got"
            f" {asked[0]} and {asked[1]} requests"
        )
        # robots.txt unreachable: nothing on the host is fetched.
        assert len(crawler.done) == 1, f"{why}: expected one record, got {crawler.done}"
        error = crawler.done[0].exception
        reason = "PrivateAddress: 127.0.0.1 is at 127.0.0.1, not a public address"
        assert isinstance(error, RobotsDisallowed) and reason in str(error), (
            f"{why}: expected the root skipped as RobotsDisallowed naming {reason!r}, got {error!r}"
        )

    @level(6, "urls", "hostile")
    def test_a_redirect_to_a_name_that_resolves_inside_is_skipped(
        self, pages: PageServer, public_site: str
    ) -> None:
        secret = public_site.replace("public.example", "inside.public.example") + "secret"
        pages.add_redirect("/", secret)
        pages.add_page("/secret", [])
        crawler = self.crawl([public_site], strict=False, max_tries=2)  # Subdomains allowed.
        why = "a redirect to inside.public.example, a name that resolves to 127.0.0.1"
        root = acceptance.record_of(crawler, public_site)
        assert (root.status, root.next_url) == (302, secret), (
            f"{why}: expected the redirect recorded, got {root[:3]}"
        )
        error = acceptance.record_of(crawler, secret).exception
        reason = "inside.public.example is at 127.0.0.1, not a public address"
        assert isinstance(error, PrivateAddress) and str(error) == reason, (
            f"{why}: expected it skipped with PrivateAddress({reason!r}), got {error!r}"
        )
        asked = pages.requests["/secret"]
        assert asked == 0 and len(crawler.done) == 2, (
            f"{why}: expected /secret never asked and 2 records, got {asked} requests and the"
            f" records {acceptance.records(crawler)}"
        )

    @level(6, "urls", "hostile")
    def test_a_crawl_of_the_machine_s_network_may_go_anywhere_in_it(
        self, pages: PageServer, public_site: str
    ) -> None:
        """Its root is an address of this machine: names that resolve here are fetched."""
        inside = public_site.replace("public.example", "inside.public.example") + "inside"
        pages.add_redirect("/", inside)
        pages.add_page("/inside", [])
        crawler = self.crawl([pages.url, public_site], strict=False)
        status = acceptance.record_of(crawler, inside).status
        assert status == 200, (
            f"a crawl whose root is on 127.0.0.1 may fetch {inside}, which resolves there too:"
            f" expected status 200, got {status}"
        )

    # --- Size ------------------------------------------------------------------

    @pytest.mark.slow
    @level(6, "links")
    def test_page_with_100000_links(self, pages: PageServer) -> None:
        hrefs = [f"/keep/{n}" if n % 1000 == 0 else f"/skip/{n}" for n in range(100_000)]
        body = "".join(f'<a href="{href}">{href}</a>\n' for href in hrefs).encode()
        root = pages.add_page("/", body=body)
        rss = peak_rss_mb()
        start = time.monotonic()
        crawler = self.crawl([root], exclude="/skip/")
        elapsed = time.monotonic() - start
        print(f"100 000 links: {elapsed:.2f} s, peak RSS {rss:.0f} -> {peak_rss_mb():.0f} MB")
        stat = acceptance.first_record(crawler)
        got = (stat.url, stat.status, stat.size, stat.exception, stat.num_urls, stat.num_new_urls)
        expected = (root, 200, len(body), None, 100, 100)
        assert got == expected, (
            "a page of 100000 links, 100 of them not excluded: expected (url, status, size,"
            f" exception, links, new links) {expected}, got {got}"
        )
        counts = (len(crawler.done), len(crawler.seen_urls))
        assert counts == (101, 101), f"expected 101 records of 101 URLs seen, got {counts}"

    @level(6, "fetching-one-url")
    def test_50_mb_body_is_cut_at_max_size(self, pages: PageServer) -> None:
        size, chunk = 50 * 2**20, b"<p>" + b"x" * (2**16 - 7) + b"</p>"

        async def huge(request: web.Request) -> web.StreamResponse:
            response = web.StreamResponse(headers={"Content-Type": "text/html"})
            response.content_length = size
            await response.prepare(request)
            for _ in range(size // len(chunk)):
                await response.write(chunk)
                await asyncio.sleep(0)
            return response

        root = pages.add_handler("/", huge)
        rss = peak_rss_mb()
        start = time.monotonic()
        crawler = self.crawl([root])  # The default max_size: 10 MB.
        elapsed = time.monotonic() - start
        print(f"50 MB body: {elapsed:.2f} s, peak RSS {rss:.0f} MB -> {peak_rss_mb():.0f} MB")
        stat = acceptance.first_record(crawler)
        got = (stat.url, stat.status, stat.size, stat.num_urls, len(crawler.done))
        expected = (root, 200, 10 * 2**20, 0, 1)
        assert got == expected and isinstance(stat.exception, ResponseTooLarge), (
            "a body of 50 MB, cut at the default max_size of 10 MB: expected (url, status,"
            f" size, links, records) {expected} and a ResponseTooLarge, got {got} and"
            f" {stat.exception!r}"
        )

    # --- robots.txt ------------------------------------------------------------

    @pytest.mark.parametrize("robots", ["huge", "redirecting", "malformed", "slow"])
    @level(6, "politeness")
    def test_hostile_robots_txt(self, seed: int, robots: str) -> None:
        world = World(seed)
        hostile = scripted(robots)
        root = world.serve(hostile).rstrip("/")
        url_of = lambda path: root + path  # noqa: E731
        ok, ok_next = url_of("/ok"), url_of("/ok/next")
        options = {"timeout": TIMEOUT, "max_tries": MAX_TRIES, "obey_robots": True}
        crawler = self.simulate(world, [ok], **options)
        left = list(world.network.sockets.values())
        print(f"robots.txt {robots}: {world.time():g} s of simulated time, sockets left: {left}")
        assert not left, (
            f"robots.txt {robots}: the crawl left {len(left)} sockets open; each socket is"
            f" closed, whatever the server did: {left}"
        )
        check_time(world, f"robots.txt {robots}")
        stats = acceptance.by_url(crawler)
        why = f"a {robots} robots.txt"
        assert set(stats) == crawler.seen_urls and len(stats) == len(crawler.done), (
            f"{why}: each URL seen is recorded once; got the records {acceptance.records(crawler)}"
            f" of the URLs seen {sorted(crawler.seen_urls)}"
        )
        assert url_of("/robots.txt") not in stats, (
            f"{why}: expected robots.txt not recorded (it is no page), got it recorded"
        )
        if robots == "slow":  # Unreachable: nothing on the host is fetched.
            asked = {path: hostile.connections[path] for path in ["/robots.txt", "/ok"]}
            error = acceptance.record_of(crawler, ok).exception
            assert list(stats) == [ok] and isinstance(error, RobotsDisallowed), (
                f"{why} is unreachable: expected /ok alone, skipped, got"
                f" {acceptance.records(crawler)}"
            )
            assert str(error).startswith("robots.txt unreachable (TimeoutError"), (
                f"{why}: expected the reason 'robots.txt unreachable (TimeoutError...', got {error}"
            )
            assert asked == {"/robots.txt": 2, "/ok": 0}, (
                f"{why}: expected robots.txt tried twice and no page asked, got {asked}"
            )
            return
        page = acceptance.record_of(crawler, ok)  # Past 500 KiB: not read.
        assert (page.status, page.exception) == (200, None), (
            f"{why}: expected /ok fetched, got the status {page.status} and {page.exception!r}"
        )
        error = acceptance.record_of(crawler, ok_next).exception
        assert isinstance(error, RobotsDisallowed), (
            f"{why} that disallows /ok/next: expected it skipped, got {error!r}"
        )
        asked = {path: hostile.connections[path] for path in ["/robots.txt", "/ok/next"]}
        assert asked == {"/robots.txt": 1, "/ok/next": 0}, (
            f"{why}: expected robots.txt asked once and /ok/next never, got {asked}"
        )
        if robots == "redirecting":
            moved, final = "/robots/moved.txt", "/robots/final.txt"
            hops = (hostile.connections[moved], hostile.connections[final])
            assert hops == (1, 1), f"{why}: expected each hop asked once, got {hops}"

"""Politeness: the part of the acceptance suite about robots.txt, delays and limits.

``PoliteTests`` is a mixin of ``tests.acceptance.AcceptanceTests``, so every
stage runs it.  What it checks, the same in every stage:

- With ``obey_robots=True``, a host's ``/robots.txt`` is requested once,
  before any page of that host, and is not recorded as a page.  A URL it
  disallows is recorded as skipped (status None, a ``RobotsDisallowed``
  exception), never requested; a 4xx robots.txt allows everything; a 5xx or
  unreachable one disallows everything for the crawl.  A host whose name
  does not resolve is no skip: each of its URLs is a failure, as without
  robots.txt.
- Requests to one host start at least ``delay`` seconds apart (or the
  robots.txt Crawl-delay, when longer), measured on the stage's own loop
  clock through ``Crawler.on_request``; at most ``max_per_host`` are in
  flight at one host.
- ``max_pages`` and ``max_depth`` end the crawl cleanly: the URLs past them
  are recorded as not fetched (``CrawlLimitReached``), none is lost.
- The User-Agent names the project, or is the one given, and robots.txt
  rules are read for it.

In every crawl, each URL in ``seen_urls`` is in ``done`` exactly once.
"""

from __future__ import annotations

import asyncio
import itertools
import socket
import types
from collections.abc import Iterator
from typing import Any

import pytest
from aiohttp import web

from shared.crawl.polite import is_name_error
from shared.record.stats import CrawlLimitReached, RobotsDisallowed, Skipped
from shared.testsite.server import COUNTERS, ServerThread, make_app
from shared.testsite.site import expected_results
from tests import acceptance  # A cycle: acceptance.py imports this module first.
from tests.grading import level
from tests.servers import DEADLINE, PageServer

ROBOTS = """User-agent: *
Disallow: /private/
Allow: /private/open/
Disallow: /*?print=
"""


def add_robots(pages: PageServer, text: str, status: int = 200, path: str = "/robots.txt") -> None:
    """Serve ``text`` as the server's robots.txt (or at ``path``)."""

    async def handler(request: web.Request) -> web.StreamResponse:
        return web.Response(status=status, text=text, content_type="text/plain")

    pages.add_handler(path, handler)


def fetched(crawler: Any) -> set[str]:
    """Return the URLs the crawl fetched (recorded with a status)."""
    return {stat.url for stat in crawler.done if stat.status is not None}


def skipped(crawler: Any, kind: type[Exception]) -> dict[str, str]:
    """Return the URLs recorded as skipped for ``kind``, with the reason given."""
    return {s.url: str(s.exception) for s in crawler.done if isinstance(s.exception, kind)}


def check_fetched(crawler: Any, expected: set[str], why: str) -> None:
    """Check which URLs the crawl fetched; ``why`` says what the test set up."""
    got = fetched(crawler)
    assert got == expected, f"{why}: the URLs fetched {acceptance.differ(got, expected)}"


def check_skipped(crawler: Any, kind: type[Exception], expected: Any, why: str) -> None:
    """Check the URLs skipped for ``kind``: a set of URLs, or a dict of URL and reason."""
    reasons = skipped(crawler, kind)
    got = set(reasons) if isinstance(expected, set) else reasons
    assert got == expected, (
        f"{why}: expected the URLs skipped for {kind.__name__} {expected}, got {reasons}"
    )


def check_each_url_once(crawler: Any) -> None:
    """Check the contract's rule: every URL seen is recorded, and only once."""
    urls = [stat.url for stat in crawler.done]
    twice = sorted({url for url in urls if urls.count(url) > 1})
    assert not twice, f"each URL is recorded once; these were recorded more: {twice}"
    recorded = set(urls)
    assert recorded == crawler.seen_urls, (
        "every URL seen is recorded: the URLs recorded"
        f" {acceptance.differ(recorded, crawler.seen_urls)}"
    )


def gaps(times: list[float]) -> list[float]:
    """Return the time between each request and the next."""
    return [later - earlier for earlier, later in itertools.pairwise(times)]


class PoliteTests:
    """robots.txt, delays, per-host limits, page and depth limits; mixed into AcceptanceTests."""

    stage: types.ModuleType
    crawl: Any  # AcceptanceTests.crawl: a crawl under a deadline.

    def crawl_timed(self, roots: list[str], **options: Any) -> tuple[Any, list[tuple[str, float]]]:
        """Crawl, and return the crawler and each request's URL and loop time."""
        crawler = self.stage.Crawler(roots, **options)
        requests: list[tuple[str, float]] = []
        crawler.on_request = lambda url, now: requests.append((url, now))
        acceptance.run_with_deadline(lambda: self.stage.run(crawler))
        answered = [stat.url for stat in crawler.done if stat.status is not None]
        assert requests or not answered, (
            f"the crawl got {len(answered)} answers but never asked for the host's turn:"
            " before each request (robots.txt too), call self.turn(url, loop.time()) and wait"
            " while it returns more than 0; it spaces the requests to a host by the delay,"
            " and tells the tests when each starts"
        )
        return crawler, requests

    @pytest.fixture
    def two_servers(self) -> Iterator[tuple[PageServer, PageServer]]:
        """Two page servers: two hosts to the crawler (same address, other port)."""
        with PageServer() as one, PageServer() as two:
            yield one, two

    # --- robots.txt ---------------------------------------------------------------

    @level(5, "politeness")
    def test_robots_txt_disallowed_urls_are_skipped(self, pages: PageServer) -> None:
        add_robots(pages, ROBOTS)
        links = ["/a", "/private/b", "/private/open/c", "/d?print=1", "/d?page=2"]
        root = pages.add_page("/", links)
        for path in ["/a", "/private/b", "/private/open/c", "/d"]:
            pages.add_page(path, [])
        crawler = self.crawl([root], obey_robots=True)
        base = pages.url.rstrip("/")
        why = "robots.txt disallows /private/ but /private/open/, and /*?print="
        allowed = {root, base + "/a", base + "/private/open/c", base + "/d?page=2"}
        check_fetched(crawler, allowed, why)
        disallowed = {base + "/private/b", base + "/d?print=1"}
        check_skipped(
            crawler, RobotsDisallowed, dict.fromkeys(disallowed, "disallowed by robots.txt"), why
        )
        asked = (pages.requests["/robots.txt"], pages.requests["/private/b"])
        assert asked == (1, 0), (
            f"expected robots.txt asked once and /private/b never, got {asked[0]} and"
            f" {asked[1]} requests"
        )
        assert base + "/robots.txt" not in crawler.seen_urls, (
            "robots.txt is no page of the crawl: it is not in seen_urls"
        )
        check_each_url_once(crawler)

    @level(5, "politeness")
    def test_full_crawl_obeying_robots_txt_matches_the_oracle(self) -> None:
        with ServerThread(make_app(60)) as server:
            crawler = self.crawl([server.url], obey_robots=True, max_tasks=10, max_per_host=4)
            requests = server.app[COUNTERS].requests
        expected = expected_results(server.url, 60, obey_robots=True)
        got = acceptance.results(crawler)
        assert got == expected, (
            "the test site of 60 pages, obeying its robots.txt: the records (url, status,"
            f" next_url) {acceptance.differ(got, expected)}"
        )
        not_fetched = {url for url, status, _ in expected if status is None}
        check_skipped(crawler, RobotsDisallowed, not_fetched, "the test site's robots.txt")
        asked = (requests["/robots.txt"], requests["/private/"])
        assert asked == (1, 0), (
            f"expected robots.txt asked once and /private/ never, got {asked[0]} and"
            f" {asked[1]} requests"
        )
        twice = sorted(path for path, count in requests.items() if count > 1)
        assert not twice, f"each URL is requested once; these were requested more: {twice}"
        check_each_url_once(crawler)

    @level(5, "politeness")
    def test_robots_txt_comes_before_the_first_page(self, pages: PageServer) -> None:
        asked_before: list[int] = []

        async def robots(request: web.Request) -> web.StreamResponse:
            asked_before.append(sum(pages.requests.values()) - 1)  # Not counting this one.
            await asyncio.sleep(0.05)  # Long enough for other workers to ask too.
            return web.Response(text="User-agent: *\nDisallow: /7\n")

        pages.add_handler("/robots.txt", robots)
        roots = [pages.add_page(f"/{n}", []) for n in range(10)]
        crawler = self.crawl(roots, obey_robots=True, max_tasks=10)
        assert asked_before == [0], (
            "robots.txt is asked for before any page of its host: expected it asked once, after"
            f" 0 other requests, got it asked after {asked_before} other requests"
        )
        why = "10 roots, robots.txt disallows /7"
        check_skipped(crawler, RobotsDisallowed, {pages.url + "7"}, why)
        check_fetched(crawler, {root for root in roots if root != pages.url + "7"}, why)
        check_each_url_once(crawler)

    @level(5, "politeness")
    def test_robots_txt_is_ignored_unless_asked_for(self, pages: PageServer) -> None:
        add_robots(pages, "User-agent: *\nDisallow: /\n")
        root = pages.add_page("/", ["/private/"])
        pages.add_page("/private/", [])
        crawler = self.crawl([root])
        why = "without obey_robots=True, a robots.txt that disallows everything"
        check_fetched(crawler, {root, pages.url + "private/"}, why)
        asked = pages.requests["/robots.txt"]
        assert asked == 0, f"{why} is never asked for; it was asked {asked} times"

    @level(5, "politeness")
    def test_missing_robots_txt_allows_everything(self, pages: PageServer) -> None:
        root = pages.add_page("/", ["/private/"])  # No /robots.txt: a 404.
        pages.add_page("/private/", [])
        crawler = self.crawl([root], obey_robots=True)
        check_fetched(crawler, {root, pages.url + "private/"}, "robots.txt answers 404")
        asked = pages.requests["/robots.txt"]
        assert asked == 1, f"expected robots.txt asked once, got {asked} requests"

    @pytest.mark.parametrize("status", [500, 503])
    @level(5, "politeness")
    def test_robots_txt_server_error_disallows_everything(
        self, pages: PageServer, status: int
    ) -> None:
        add_robots(pages, "User-agent: *\nAllow: /\n", status=status)
        root = pages.add_page("/", ["/a"])
        crawler = self.crawl([root], obey_robots=True)
        reason = {root: f"robots.txt answered {status}"}
        check_skipped(crawler, RobotsDisallowed, reason, f"robots.txt answers {status}")
        asked = (pages.requests["/robots.txt"], pages.requests["/"])
        assert asked == (1, 0), (
            f"a robots.txt that answers {status} disallows everything: expected robots.txt"
            f" asked once and / never, got {asked[0]} and {asked[1]} requests"
        )
        check_each_url_once(crawler)

    @level(5, "politeness")
    def test_unreachable_robots_txt_disallows_everything(self, pages: PageServer) -> None:
        pages.add_handler("/robots.txt", acceptance.drop_connection)
        roots = [pages.add_page("/", []), pages.add_page("/a", [])]
        crawler = self.crawl(roots, obey_robots=True, max_tries=2)
        reasons = skipped(crawler, RobotsDisallowed)
        why = "robots.txt drops every connection"
        check_skipped(crawler, RobotsDisallowed, set(roots), why)
        wrong = [
            reason
            for reason in reasons.values()
            if not reason.startswith("robots.txt unreachable (")
        ]
        assert not wrong, f"{why}: expected the reason 'robots.txt unreachable (...)', got {wrong}"
        asked = pages.requests["/robots.txt"]  # Tried max_tries times, as any URL.
        assert asked == 2, f"{why}: expected it tried max_tries=2 times, got {asked} requests"
        pages_asked = (pages.requests["/"], pages.requests["/a"])
        assert pages_asked == (0, 0), f"{why}: no page is asked for, yet got {pages_asked}"

    @level(5, "politeness")
    def test_a_host_whose_name_does_not_resolve_is_a_failure(
        self, pages: PageServer, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """Its robots.txt cannot be fetched, but neither can its pages: no skip."""
        real_getaddrinfo = socket.getaddrinfo

        def getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
            if host in ("nowhere.invalid", b"nowhere.invalid"):  # Asked without the network.
                raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
            return real_getaddrinfo(host, *args, **kwargs)

        monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
        root = pages.add_page("/", [])
        crawler = self.crawl([root, "http://nowhere.invalid/"], obey_robots=True, max_tries=1)
        why = "a root whose host name does not resolve, beside a good one"
        check_fetched(crawler, {root}, why)
        check_skipped(crawler, Skipped, {}, why)
        lost = acceptance.record_of(crawler, "http://nowhere.invalid/")
        assert lost.status is None and is_name_error(lost.exception), (
            f"{why}: expected it recorded as a failed lookup (socket.gaierror), got the status"
            f" {lost.status} and {lost.exception!r}"
        )
        check_each_url_once(crawler)

    @level(5, "politeness")
    def test_robots_txt_redirect_is_followed(self, pages: PageServer) -> None:
        pages.add_redirect("/robots.txt", "/moved/robots.txt", status=301)
        add_robots(pages, "User-agent: *\nDisallow: /secret/\n", path="/moved/robots.txt")
        root = pages.add_page("/", ["/secret/"])
        crawler = self.crawl([root], obey_robots=True)
        why = "robots.txt redirects to /moved/robots.txt, which disallows /secret/"
        check_skipped(crawler, RobotsDisallowed, {pages.url + "secret/"}, why)
        asked = (pages.requests["/robots.txt"], pages.requests["/moved/robots.txt"])
        assert asked == (1, 1), f"{why}: expected each asked once, got {asked} requests"
        assert pages.url + "moved/robots.txt" not in crawler.seen_urls, (
            f"{why}: the moved robots.txt is no page of the crawl, yet it is in seen_urls"
        )

    @level(5, "politeness")
    def test_each_host_has_its_own_robots_txt(
        self, two_servers: tuple[PageServer, PageServer]
    ) -> None:
        one, two = two_servers
        add_robots(one, "User-agent: *\nDisallow: /x\n")
        roots = [one.add_page("/", ["/x"]), two.add_page("/", ["/x"])]
        two.add_page("/x", [])
        crawler = self.crawl(roots, obey_robots=True)
        why = "two hosts, the first disallowing /x"
        check_skipped(crawler, RobotsDisallowed, {one.url + "x"}, why)
        check_fetched(crawler, {*roots, two.url + "x"}, why)
        asked = (one.requests["/robots.txt"], two.requests["/robots.txt"])
        assert asked == (1, 1), f"{why}: expected each robots.txt asked once, got {asked}"

    @level(5, "politeness")
    def test_robots_txt_rules_are_read_for_the_user_agent(self, pages: PageServer) -> None:
        add_robots(pages, "User-agent: special-bot\nDisallow: /\n\nUser-agent: *\nAllow: /\n")
        root = pages.add_page("/", [])
        check_fetched(self.crawl([root], obey_robots=True), {root}, "robots.txt allows *")
        special = self.crawl([root], obey_robots=True, user_agent="Special-Bot/3.0 (+test)")
        why = "robots.txt disallows everything to special-bot, user_agent='Special-Bot/3.0'"
        check_skipped(special, RobotsDisallowed, {root}, why)

    # --- The User-Agent ---------------------------------------------------------------

    @level(5, "politeness")
    def test_user_agent_names_the_project_or_is_the_one_given(self, pages: PageServer) -> None:
        agents: list[str] = []

        async def handler(request: web.Request) -> web.StreamResponse:
            agents.append(request.headers.get("User-Agent", ""))
            return web.Response(text="User-agent: *\nAllow: /\n")

        pages.add_handler("/robots.txt", handler)
        root = pages.add_page("/", [])
        self.crawl([root], obey_robots=True)
        self.crawl([root], obey_robots=True, user_agent="my-bot/0.1")
        assert len(agents) == 2, f"two crawls: expected robots.txt asked twice, not {len(agents)}"
        assert agents[0].startswith("crawler-tutorial/"), (
            f"the default User-Agent starts 'crawler-tutorial/', not {agents[0]!r}"
        )
        assert agents[1] == "my-bot/0.1", (
            f"user_agent='my-bot/0.1' is the User-Agent sent, not {agents[1]!r}"
        )

    # --- Delays -------------------------------------------------------------------------

    @level(5, "politeness")
    def test_requests_to_one_host_are_at_least_the_delay_apart(self, pages: PageServer) -> None:
        roots = [pages.add_page(f"/{n}", []) for n in range(5)]
        crawler, requests = self.crawl_timed(roots, delay=0.1, max_tasks=5, obey_robots=True)
        why = "five pages of one host with delay=0.1 and obey_robots=True"
        urls = [url for url, _ in requests]
        assert urls[:1] == [pages.url + "robots.txt"], (
            f"{why}: expected robots.txt asked first, got the requests {urls}"
        )
        assert len(requests) == 6, (  # robots.txt, then the five pages.
            f"{why}: expected 6 requests, robots.txt and the five pages, got {urls}"
        )
        spacing = gaps([now for _, now in requests])
        print(f"{self.stage.__name__}: request spacing with delay=0.1: {min(spacing):.4f} s min")
        assert min(spacing) >= 0.1, (
            f"{why}: expected requests at least 0.1 s apart; two started {min(spacing):.3f} s apart"
        )
        got = sorted(fetched(crawler))
        assert len(got) == 5, f"{why}: expected the five pages fetched, got {got}"

    @level(5, "politeness")
    def test_retries_wait_for_the_delay_too(self, pages: PageServer) -> None:
        tries = 0

        async def flaky(request: web.Request) -> web.StreamResponse:
            nonlocal tries
            tries += 1
            if tries < 3:
                return await acceptance.drop_connection(request)
            return web.Response(text="ok")

        root = pages.add_handler("/", flaky)
        crawler, requests = self.crawl_timed([root], delay=0.1)
        why = "a page whose connection drops twice, then answers, with delay=0.1"
        urls = [url for url, _ in requests]
        assert urls == [root] * 3, f"{why}: expected the page asked three times, got {urls}"
        spacing = min(gaps([now for _, now in requests]))
        assert spacing >= 0.1, (
            f"{why}: expected each try at least 0.1 s after the last;"
            f" two were {spacing:.3f} s apart"
        )
        status = acceptance.first_record(crawler).status
        assert status == 200, f"{why}: expected the third try's 200 recorded, got {status}"

    # The timeout that starts after the wait for the turn: tests/sim_acceptance.py.

    @level(5, "politeness")
    def test_crawl_delay_counts_when_longer_than_the_delay(self, pages: PageServer) -> None:
        add_robots(pages, "User-agent: *\nCrawl-delay: 0.2\n")
        roots = [pages.add_page(f"/{n}", []) for n in range(3)]
        _, requests = self.crawl_timed(roots, delay=0.05, obey_robots=True)
        why = "three pages, with delay=0.05 and a robots.txt of Crawl-delay: 0.2"
        urls = [url for url, _ in requests]
        assert len(requests) == 4, (
            f"{why}: expected 4 requests, robots.txt and the three pages, got {urls}"
        )
        spacing = min(gaps([now for _, now in requests]))
        assert spacing >= 0.2, (
            f"{why}: expected requests at least 0.2 s apart; two started {spacing:.3f} s apart"
        )

    @level(5, "politeness")
    def test_the_delay_is_kept_per_host(self, two_servers: tuple[PageServer, PageServer]) -> None:
        one, two = two_servers
        roots = [one.add_page(f"/{n}", []) for n in range(2)]
        roots += [two.add_page(f"/{n}", []) for n in range(2)]
        _, requests = self.crawl_timed(roots, delay=0.1)
        why = "two pages on each of two hosts, with delay=0.1"
        urls = [url for url, _ in requests]
        for server in two_servers:
            times = [now for url, now in requests if url.startswith(server.url)]
            assert len(times) == 2 and gaps(times)[0] >= 0.1, (
                f"{why}: expected {server.url} asked twice, at least 0.1 s apart, got"
                f" requests at {times}"
            )
        # The second host's first request does not wait for the first host's delay.
        hosts = [url.startswith(one.url) for url, _ in requests]
        assert hosts.index(False) < len(hosts) - 1 - hosts[::-1].index(True), (
            f"{why}: expected the second host's first request before the first host's last,"
            f" without waiting out the first host's delay; the requests were {urls}"
        )

    # --- Per-host concurrency --------------------------------------------------------------

    @pytest.mark.parametrize("max_per_host", [1, 2, 3])
    @level(5, "politeness")
    def test_max_per_host_is_reached_and_never_exceeded(
        self, pages: PageServer, max_per_host: int
    ) -> None:
        async def held(request: web.Request) -> web.StreamResponse:
            # Hold every answer until max_per_host requests have been in
            # flight together (or a deadline passed, and the test fails),
            # then a moment more, in which one request too many would arrive.
            deadline = asyncio.get_running_loop().time() + DEADLINE
            while pages.max_in_flight < max_per_host:
                if asyncio.get_running_loop().time() > deadline:
                    break
                await asyncio.sleep(0.005)
            await asyncio.sleep(0.02)
            return web.Response(text="")

        roots = [pages.add_handler(f"/{n}", held) for n in range(6)]
        crawler = self.crawl(roots, max_tasks=6, max_per_host=max_per_host)
        most = pages.max_in_flight
        assert most == max_per_host, (
            f"6 pages on one host, max_tasks=6, max_per_host={max_per_host}: {most} requests"
            f" at once, not {max_per_host}"
        )
        check_fetched(crawler, set(roots), f"6 pages with max_per_host={max_per_host}")

    # --- Limits ---------------------------------------------------------------------------

    @level(5, "politeness", "limits")
    def test_max_pages_ends_the_crawl_with_the_rest_not_fetched(self, pages: PageServer) -> None:
        for n in range(20):
            pages.add_page(f"/{n}", [f"/{(n + 1) % 20}", f"/{(n + 2) % 20}"])
        crawler = self.crawl([pages.url + "0"], max_pages=5, max_tasks=3)
        got = (len(fetched(crawler)), sum(pages.requests.values()))
        assert got == (5, 5), (
            f"20 linked pages with max_pages=5: expected 5 fetched and 5 requests, got {got[0]}"
            f" fetched and {got[1]} requests"
        )
        not_fetched = skipped(crawler, CrawlLimitReached)
        assert not_fetched and set(not_fetched.values()) == {"max_pages=5 reached"}, (
            "the pages queued past max_pages are recorded as skipped, 'max_pages=5 reached':"
            f" got {not_fetched}"
        )
        check_each_url_once(crawler)

    @level(5, "politeness", "limits")
    def test_max_pages_does_not_count_skipped_urls(self, pages: PageServer) -> None:
        add_robots(pages, "User-agent: *\nDisallow: /no\n")
        root = pages.add_page("/", ["/no1", "/no2", "/next"])
        pages.add_page("/next", ["/last"])  # Queued after /no1 and /no2 were decided.
        pages.add_page("/last", [])
        crawler = self.crawl([root], max_pages=3, obey_robots=True, max_tasks=1)
        why = "max_pages=3, two links disallowed by robots.txt"
        check_fetched(crawler, {root, pages.url + "next", pages.url + "last"}, why)
        check_skipped(crawler, RobotsDisallowed, {pages.url + "no1", pages.url + "no2"}, why)

    @level(5, "politeness", "limits")
    def test_max_depth_counts_links_from_a_root(self, pages: PageServer) -> None:
        root = pages.add_page("/", ["/1"])
        pages.add_redirect("/1", "/1b")  # A redirect is no link deeper.
        pages.add_page("/1b", ["/2"])
        pages.add_page("/2", ["/3"])
        crawler = self.crawl([root], max_depth=1)
        base = pages.url.rstrip("/")
        why = "max_depth=1: / links to /1, which redirects to /1b, which links to /2"
        check_fetched(crawler, {root, base + "/1", base + "/1b"}, why)
        reason = {base + "/2": "deeper than max_depth=1"}
        check_skipped(crawler, CrawlLimitReached, reason, why)
        asked = pages.requests["/2"]
        assert asked == 0, f"{why}: /2 is never asked for, yet it was asked {asked} times"
        assert base + "/3" not in crawler.seen_urls, f"{why}: /3 is never seen, yet it was"
        check_each_url_once(crawler)

    @level(5, "politeness", "limits")
    def test_max_depth_zero_fetches_the_roots_only(self, pages: PageServer) -> None:
        roots = [pages.add_page("/", ["/a"]), pages.add_page("/b", ["/a"])]
        crawler = self.crawl(roots, max_depth=0)
        why = "max_depth=0, two roots linking to /a"
        check_fetched(crawler, set(roots), why)
        check_skipped(crawler, CrawlLimitReached, {pages.url + "a"}, why)

    @level(5, "politeness")
    def test_bad_politeness_options_raise_value_error(self) -> None:
        bad: list[dict[str, Any]] = [
            {"delay": -1},
            {"delay": float("inf")},
            {"max_per_host": 0},
            {"max_pages": 0},
            {"max_depth": -1},
            {"user_agent": ""},
            {"user_agent": "bot\r\nX-Injected: 1"},
            {"obey_robots": "yes"},
        ]
        for options in bad:
            with pytest.raises(ValueError):
                self.stage.Crawler(["http://example.com/"], **options)

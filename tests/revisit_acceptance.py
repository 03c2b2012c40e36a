"""Coming back politely: the part of the acceptance suite about a second visit.

``RevisitTests`` is a mixin of ``tests.acceptance.AcceptanceTests``, so every
stage runs it.  What it checks, the same in every stage:

- A 429 or 503 answer with ``Retry-After`` (seconds, or an HTTP date) is
  tried again once that time has passed, and every other request to the
  host waits too; a wait over ``max_retry_after`` is not made: the answer
  is recorded with a ``RetryAfterTooLong``.  Without a Retry-After, or with
  one that cannot be read, the wait is an exponential backoff.  The times
  are the stage's own loop clock (``Crawler.on_request``), never a timer of
  the test's.
- With ``sitemaps=True``, the sitemaps a root host's robots.txt names (or
  its ``/sitemap.xml``) are fetched and recorded like pages, sitemap index
  files are followed, gzip-compressed sitemaps are read, and the pages
  they list that the crawl allows are queued.  A sitemap that is too long
  (a gzip bomb included), not XML, or declares a DOCTYPE is recorded with
  the reason, and the crawl goes on.
- With ``since=PATH`` (an earlier crawl's JSON Lines), each page is asked
  for with ``If-None-Match`` / ``If-Modified-Since`` from its record; a
  304 answer is recorded as not modified, with the earlier links, and the
  crawl goes on past it.  Against the bundled site, a recrawl of an
  unchanged site gets 304 for every page, and after the site's next
  edition exactly the revised pages come whole.
"""

from __future__ import annotations

import asyncio
import email.utils
import gzip
import json
import math
import pathlib
import time
import types
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from aiohttp import web

from shared.record.report import report, write_jsonl
from shared.record.stats import ResponseTooLarge, RobotsDisallowed
from shared.testsite.server import SITE, ServerThread, make_app
from shared.testsite.site import changed_urls, expected_results
from shared.web.retry import RetryAfterTooLong
from shared.web.sitemaps import MAX_SITEMAPS, BadSitemap, SitemapTooLarge
from tests import acceptance  # A cycle: acceptance.py imports this module first.
from tests.grading import level
from tests.polite_acceptance import check_each_url_once, check_fetched, check_skipped
from tests.servers import DEADLINE, PageServer

SLOW = pytest.mark.slow  # As in tests.acceptance: over a second.
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def busy_then_ok(answers: list[dict[str, str] | None], status: int = 503) -> Handler:
    """Return a handler that answers ``status`` with each header set given, then 200.

    None in ``answers`` stands for no Retry-After at all.
    """
    calls = 0

    async def handler(request: web.Request) -> web.StreamResponse:
        nonlocal calls
        calls += 1
        if calls <= len(answers):
            return web.Response(status=status, headers=answers[calls - 1] or {}, text="busy")
        return web.Response(text="<p>ok</p>", content_type="text/html")

    return handler


def urlset(*locations: str, root: str = "urlset", entry: str = "url") -> bytes:
    """Return a sitemap listing ``locations`` (an index with root="sitemapindex")."""
    items = "".join(f"<{entry}><loc>{location}</loc></{entry}>" for location in locations)
    namespace = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"'
    return f'<?xml version="1.0"?><{root} {namespace}>{items}</{root}>'.encode()


def index(*locations: str) -> bytes:
    """Return a sitemap index listing the sitemaps at ``locations``."""
    return urlset(*locations, root="sitemapindex", entry="sitemap")


def add_sitemap(pages: PageServer, path: str, body: bytes, gzipped: bool = False) -> str:
    """Serve a sitemap at ``path`` (as a .gz file if ``gzipped``); return its URL."""
    if gzipped:
        return pages.add_page(path, body=gzip.compress(body), content_type="application/gzip")
    return pages.add_page(path, body=body, content_type="application/xml")


def add_robots(pages: PageServer, *lines: str) -> None:
    """Serve a robots.txt of ``lines``."""
    pages.add_page("/robots.txt", body="\n".join(lines).encode(), content_type="text/plain")


def retry_after(value: str) -> dict[str, str]:
    """Return the headers of an answer that asks to come back after ``value``."""
    return {"Retry-After": value}


def save_records(crawler: Any, path: pathlib.Path) -> str:
    """Write a crawl's JSON Lines to ``path``, as ``crawl --json`` does; return the path."""
    with path.open("w", encoding="utf-8") as file:
        write_jsonl(crawler, file)
    return str(path)


def as_first_time(crawler: Any) -> set[tuple[str, int | None, str | None]]:
    """Return a recrawl's results with each 304 read as the 200 it stands for."""
    return {
        (url, 200 if status == 304 else status, nxt)
        for url, status, nxt in acceptance.results(crawler)
    }


class RevisitTests:
    """Retry-After and backoff, sitemaps, recrawls; mixed into AcceptanceTests."""

    stage: types.ModuleType
    crawl: Any  # AcceptanceTests.crawl: a crawl under a deadline.

    def crawl_clocked(self, roots: list[str], **options: Any) -> tuple[Any, dict[str, list[float]]]:
        """Crawl, and return the crawler and the loop times each URL was requested at."""
        crawler = self.stage.Crawler(roots, **options)
        times: dict[str, list[float]] = {}
        crawler.on_request = lambda url, now: times.setdefault(url, []).append(now)
        acceptance.run_with_deadline(lambda: self.stage.run(crawler))
        return crawler, times

    # --- Retry-After ----------------------------------------------------------------

    @SLOW
    @level(7, "coming-back")
    def test_retry_after_seconds_holds_the_whole_host(self, pages: PageServer) -> None:
        crawler: Any = None

        async def after_the_hold(request: web.Request) -> web.StreamResponse:
            # Answer only once the crawler has taken /a's Retry-After, so
            # that /c (queued behind this page) starts after it for sure.
            deadline = asyncio.get_running_loop().time() + DEADLINE
            while not any(h.not_before > -math.inf for h in list(crawler.polite.hosts.values())):
                if asyncio.get_running_loop().time() > deadline:
                    break
                await asyncio.sleep(0.005)
            return web.Response(text="")

        a = pages.add_handler("/a", busy_then_ok([retry_after("1")], status=429))
        b = pages.add_handler("/b", after_the_hold)
        c = pages.add_page("/c", [])
        crawler = self.stage.Crawler([a, b, c], max_tasks=2)
        times: dict[str, list[float]] = {}
        crawler.on_request = lambda url, now: times.setdefault(url, []).append(now)
        acceptance.run_with_deadline(lambda: self.stage.run(crawler))
        holds = {host.not_before for host in crawler.polite.hosts.values()}
        why = "/a answers 429 with Retry-After: 1 while /b and /c wait on the same host"
        assert len(holds) == 1, f"{why}: expected one host held until one time, got {holds}"
        (held_until,) = holds
        at_a, at_c = times.get(a, []), times.get(c, [])
        assert len(at_a) == 2 and at_a[1] - at_a[0] >= 1.0, (
            f"{why}: expected /a asked twice, at least 1 s apart, got requests at {at_a}"
        )
        # The host waited.
        assert at_a[1] >= held_until and at_c and at_c[0] >= held_until, (
            f"{why}: expected /a's second try and /c to start once the host's hold ended"
            f" ({held_until:.3f}), got /a at {at_a} and /c at {at_c}"
        )
        statuses = [stat.status for stat in crawler.done if stat.url == a]
        assert statuses == [200], (
            f"{why}: expected one record of /a, the 200 after the wait, got the statuses {statuses}"
        )
        assert crawler.waits == {"retry_after": 1}, (
            f"{why}: expected the waits {{'retry_after': 1}}, got {crawler.waits}"
        )

    @level(7, "coming-back")
    def test_retry_after_date_in_the_past_is_no_wait(self, pages: PageServer) -> None:
        past = email.utils.formatdate(time.time() - 3600, usegmt=True)
        root = pages.add_handler("/", busy_then_ok([retry_after(past)]))
        crawler = self.crawl([root])
        why = "a 503 with a Retry-After date an hour ago"
        got = (pages.requests["/"], acceptance.first_record(crawler).status)
        assert got == (2, 200), (
            f"{why}: expected / asked again at once and fetched (2 requests, status 200),"
            f" got {got[0]} requests and the status {got[1]}"
        )
        assert crawler.waits == {"retry_after": 1}, (
            f"{why}: expected the waits {{'retry_after': 1}}, got {crawler.waits}"
        )

    @pytest.mark.parametrize("value", ["3600", "99999999999999999999999", "9" * 5000])
    @level(7, "coming-back")
    def test_retry_after_over_the_cap_is_recorded_not_waited(
        self, pages: PageServer, value: str
    ) -> None:
        root = pages.add_handler("/", busy_then_ok([retry_after(value)] * 9, status=429))
        crawler = self.crawl([root])
        why = f"a 429 with Retry-After: {value[:30]!r}, over the cap of 120 s"
        assert len(crawler.done) == 1, (
            f"{why}: expected one record, got {acceptance.records(crawler)}"
        )
        stat = acceptance.first_record(crawler)
        assert (stat.status, type(stat.exception)) == (429, RetryAfterTooLong), (
            f"{why}: expected the 429 recorded with a RetryAfterTooLong, got"
            f" {stat.status} and {stat.exception!r}"
        )
        assert "over max_retry_after=120" in str(stat.exception), (
            f"{why}: expected the error to say 'over max_retry_after=120', got {stat.exception}"
        )
        got = (pages.requests["/"], crawler.waits)
        assert got[0] == 1 and not got[1], (
            f"{why}: expected / asked once and no wait, got {got[0]} requests"
            f" and the waits {got[1]}"
        )

    @level(7, "coming-back")
    def test_max_retry_after_sets_the_cap(self, pages: PageServer) -> None:
        root = pages.add_handler("/", busy_then_ok([retry_after("1")] * 9))
        crawler = self.crawl([root], max_retry_after=0.5)
        why = "a 503 with Retry-After: 1, over max_retry_after=0.5"
        error = acceptance.first_record(crawler).exception
        assert isinstance(error, RetryAfterTooLong), (
            f"{why}: expected the answer recorded with a RetryAfterTooLong, got {error!r}"
        )
        asked = pages.requests["/"]
        assert asked == 1, (
            f"{why}: expected / asked once, not waited for; it was asked {asked} times"
        )

    # --- Without a usable Retry-After: backoff ------------------------------------------

    # The waits themselves (a date, a backoff, an unreadable Retry-After) are
    # checked in simulated time: tests/sim_acceptance.py.

    @level(7, "coming-back")
    def test_busy_answer_is_kept_once_max_tries_are_spent(self, pages: PageServer) -> None:
        root = pages.add_handler("/", busy_then_ok([retry_after("0")] * 9))
        crawler = self.crawl([root], max_tries=2)
        why = "a 503 with Retry-After: 0 on every try, with max_tries=2"
        assert len(crawler.done) == 1, (
            f"{why}: expected one record, got {acceptance.records(crawler)}"
        )
        stat = acceptance.first_record(crawler)
        assert (stat.status, stat.exception) == (503, None), (
            f"{why}: expected the last 503 kept as the answer, without an error; got"
            f" {stat.status} and {stat.exception!r}"
        )
        got = (pages.requests["/"], crawler.waits)
        assert got == (2, {"retry_after": 1}), (
            f"{why}: expected / asked twice with one wait {{'retry_after': 1}}, got {got[0]}"
            f" requests and the waits {got[1]}"
        )

    @level(7, "coming-back")
    def test_other_statuses_with_retry_after_are_not_retried(self, pages: PageServer) -> None:
        root = pages.add_handler("/", busy_then_ok([retry_after("0")], status=500))
        crawler = self.crawl([root])
        got = (acceptance.first_record(crawler).status, pages.requests["/"])
        assert got == (500, 1), (
            "a 500 with Retry-After: 0 is an answer, not a request to come back: expected the"
            f" 500 recorded after 1 request, got the status {got[0]} after {got[1]} requests"
        )

    @level(7, "coming-back")
    def test_the_report_counts_the_waits(self, pages: PageServer, capsys: Any) -> None:
        root = pages.add_page("/", ["/a", "/b"])
        pages.add_handler("/a", busy_then_ok([retry_after("0"), None]))
        pages.add_handler("/b", busy_then_ok([retry_after("nonsense")], status=429))
        crawler = self.crawl([root])
        report(crawler)
        lines = capsys.readouterr().out.splitlines()
        counted = {"1 wait_retry_after", "1 wait_backoff", "1 wait_bad_retry_after"}
        assert counted <= {line.strip() for line in lines}, (
            f"one wait of each kind: expected the report to have the lines {sorted(counted)},"
            f" got {lines}"
        )
        statuses = {stat.status for stat in crawler.done}
        assert statuses == {200}, (
            f"/, /a and /b each answer 200 in the end: expected only 200s, got {statuses}"
        )

    # --- Sitemaps -----------------------------------------------------------------------

    @pytest.mark.parametrize("obey_robots", [True, False])
    @level(7, "sitemaps", "sitemaps")
    def test_full_crawl_with_sitemaps_matches_the_oracle(self, obey_robots: bool) -> None:
        with ServerThread(make_app(60)) as server:
            crawler = self.crawl([server.url], obey_robots=obey_robots, sitemaps=True)
        expected = expected_results(server.url, 60, obey_robots=obey_robots, sitemaps=True)
        got = acceptance.results(crawler)
        assert got == expected, (
            f"the test site of 60 pages with sitemaps=True, obey_robots={obey_robots}: the"
            f" records (url, status, next_url) {acceptance.differ(got, expected)}"
        )
        # The oracle itself: the sitemap adds a page no link reaches.
        assert (server.url + "sitemap-only/", 200, None) in expected, (
            "the oracle with sitemaps=True lacks the page only the sitemap lists"
        )
        assert expected > expected_results(server.url, 60, obey_robots=obey_robots), (
            "the oracle with sitemaps=True is not a superset of the one without"
        )

    @level(7, "sitemaps", "sitemaps")
    def test_sitemap_index_and_gzip_sitemap_are_followed(self, pages: PageServer) -> None:
        root = pages.add_page("/", [])
        add_robots(pages, "User-agent: *", "Disallow: /no", "Sitemap: /index.xml")
        add_sitemap(pages, "/index.xml", index("/a.xml", pages.url + "b.xml.gz"))
        add_sitemap(pages, "/a.xml", urlset("/one", "/no", "http://example.com/off"))
        add_sitemap(pages, "/b.xml.gz", urlset(pages.url + "two", "/one"), gzipped=True)
        for path in ["/one", "/two", "/no"]:
            pages.add_page(path, [])
        crawler = self.crawl([root], sitemaps=True, obey_robots=True)
        base = pages.url.rstrip("/")
        sitemaps = {base + path for path in ["/index.xml", "/a.xml", "/b.xml.gz"]}
        why = "robots.txt names a sitemap index of a sitemap and a gzipped one"
        check_fetched(crawler, {root, base + "/one", base + "/two", *sitemaps}, why)
        check_skipped(crawler, RobotsDisallowed, {base + "/no"}, why)
        listed = {s.url: s.num_urls for s in crawler.done if s.url in sitemaps}
        expected = dict.fromkeys(sorted(sitemaps), 2)
        assert listed == expected, f"{why}: expected the URLs each lists {expected}, got {listed}"
        errors = {s.url: s.exception for s in crawler.done if s.url in sitemaps and s.exception}
        assert not errors, f"{why}: each sitemap is read without error, yet got {errors}"
        check_each_url_once(crawler)

    @level(7, "sitemaps", "sitemaps")
    def test_sitemap_xml_when_robots_txt_names_none(self, pages: PageServer) -> None:
        root = pages.add_page("/", [])
        add_robots(pages, "User-agent: *", "Disallow: /hidden")
        add_sitemap(pages, "/sitemap.xml", urlset("/hidden"))
        pages.add_page("/hidden", [])
        crawler = self.crawl([root], sitemaps=True)  # robots.txt read, not obeyed.
        why = "sitemaps=True and a robots.txt that names no sitemap"
        check_fetched(crawler, {root, pages.url + "sitemap.xml", pages.url + "hidden"}, why)
        asked = pages.requests["/robots.txt"]
        assert asked == 1, f"{why}: expected robots.txt asked once, got {asked} requests"

    @level(7, "sitemaps", "sitemaps")
    def test_sitemaps_only_when_asked(self, pages: PageServer) -> None:
        root = pages.add_page("/", [])
        add_sitemap(pages, "/sitemap.xml", urlset("/a"))
        why = "without sitemaps=True"
        check_fetched(self.crawl([root], obey_robots=True), {root}, why)
        asked = pages.requests["/sitemap.xml"]
        assert asked == 0, f"{why}, /sitemap.xml is never asked for; it was asked {asked} times"

    @level(7, "sitemaps", "sitemaps")
    def test_sitemap_bomb_is_cut_and_recorded(self, pages: PageServer) -> None:
        root = pages.add_page("/", ["/after"])
        pages.add_page("/after", [])
        add_robots(pages, "Sitemap: /bomb.xml.gz", "Sitemap: /big.xml")
        # 20 MB of one entry repeated: about 60 KB gzipped.
        bomb = urlset(*["/x"] * 500_000)
        add_sitemap(pages, "/bomb.xml.gz", bomb, gzipped=True)
        add_sitemap(pages, "/big.xml", urlset(*["/y"] * 20_000))
        crawler = self.crawl([root], sitemaps=True, max_size=100_000)
        cut = acceptance.record_of(crawler, pages.url + "bomb.xml.gz").exception
        assert isinstance(cut, SitemapTooLarge), (
            f"a gzipped sitemap of 20 MB, max_size=100000: expected SitemapTooLarge, got {cut!r}"
        )
        big = acceptance.record_of(crawler, pages.url + "big.xml").exception
        assert isinstance(big, ResponseTooLarge), (
            f"a sitemap over max_size=100000: expected ResponseTooLarge, got {big!r}"
        )
        expected = {root, pages.url + "after", *(pages.url + p for p in ["bomb.xml.gz", "big.xml"])}
        check_fetched(crawler, expected, "two sitemaps too large to read")
        asked = (pages.requests["/x"], pages.requests["/y"])
        assert asked == (0, 0), (
            f"the URLs of a sitemap too large to read are never asked for, got {asked} requests"
        )

    @pytest.mark.parametrize(
        ("body", "reason"),
        [
            (b"<urlset><url><loc>/a</loc></url>", "not well-formed XML"),
            (b"<html><body>Not found</body></html>", "not a sitemap"),
            (b"\x1f\x8b not really gzip", "not well-formed XML"),
            (
                b'<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">'
                b'<!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">]>'
                b"<urlset><url><loc>/&lol2;</loc></url></urlset>",
                "a DOCTYPE is not allowed",
            ),
        ],
    )
    @level(7, "sitemaps", "sitemaps")
    def test_malformed_sitemap_is_recorded_not_fatal(
        self, pages: PageServer, body: bytes, reason: str
    ) -> None:
        root = pages.add_page("/", ["/b"])
        pages.add_page("/b", [])
        sitemap = add_sitemap(pages, "/sitemap.xml", body)
        crawler = self.crawl([root], sitemaps=True)
        record = acceptance.record_of(crawler, sitemap)
        error = record.exception
        assert record.status == 200 and isinstance(error, BadSitemap) and reason in str(error), (
            f"a sitemap that is {reason}: expected status 200 and a BadSitemap naming"
            f" {reason!r}, got {record.status} and {error!r}"
        )
        check_fetched(crawler, {root, pages.url + "b", sitemap}, f"a sitemap that is {reason}")

    @level(7, "sitemaps", "sitemaps")
    def test_bad_gzip_sitemap_is_recorded(self, pages: PageServer) -> None:
        root = pages.add_page("/", [])
        sitemap = pages.add_page(
            "/sitemap.xml", body=b"\x1f\x8b\x08garbage", content_type="application/gzip"
        )
        crawler = self.crawl([root], sitemaps=True)
        error = acceptance.record_of(crawler, sitemap).exception
        assert "not a gzip file" in str(error), (
            f"a sitemap of broken gzip: expected an error saying 'not a gzip file', got {error!r}"
        )

    @level(7, "sitemaps", "sitemaps")
    def test_sitemap_count_is_limited(self, pages: PageServer) -> None:
        root = pages.add_page("/", [])
        maps = [f"/map/{n}.xml" for n in range(MAX_SITEMAPS + 5)]
        add_sitemap(pages, "/sitemap.xml", index(*maps))
        for path in maps:
            add_sitemap(pages, path, urlset())
        crawler = self.crawl([root], sitemaps=True, max_tasks=20)
        read = [path for path in ["/sitemap.xml", *maps] if pages.requests[path]]
        assert len(read) == MAX_SITEMAPS, (
            f"an index of {len(maps)} sitemaps: expected {MAX_SITEMAPS} sitemaps read at most,"
            f" got {len(read)}"
        )
        check_each_url_once(crawler)

    # --- Recrawl ---------------------------------------------------------------------

    @level(7, "recrawling", "recrawling")
    def test_recrawl_of_an_unchanged_site_is_every_page_304(self, tmp_path: pathlib.Path) -> None:
        with ServerThread(make_app(60)) as server:
            first = self.crawl([server.url], sitemaps=True)
            since = save_records(first, tmp_path / "first.jsonl")
            second = self.crawl([server.url], sitemaps=True, since=since)
        pages = {s.url for s in first.done if s.status == 200}
        sitemaps = {s.url for s in first.done if s.url in first.sitemap_urls}
        why = "a recrawl of a site that did not change"
        unchanged = {s.url for s in second.done if s.status == 304}
        assert unchanged == pages - sitemaps, (
            f"{why}: the pages answered 304 {acceptance.differ(unchanged, pages - sitemaps)}"
        )
        whole = {s.url for s in second.done if s.status == 200}  # Sitemaps: always whole.
        assert whole == sitemaps, (
            f"{why}: the URLs answered 200 (the sitemaps) {acceptance.differ(whole, sitemaps)}"
        )
        again, before = as_first_time(second), acceptance.results(first)
        assert again == before, (
            f"{why}: with each 304 read as its first answer, the records"
            f" {acceptance.differ(again, before)}"
        )
        bare = [s.url for s in second.done if s.status == 304 and not (s.etag and s.last_modified)]
        assert not bare, f"{why}: a 304's record keeps its ETag and Last-Modified; not {bare}"
        first_bytes, second_bytes = (sum(s.size for s in c.done) for c in (first, second))
        print(f"{self.stage.__name__}: recrawl {second_bytes} bytes, first {first_bytes}")
        assert second_bytes < 0.05 * first_bytes, (
            f"{why}: a 304 has no body, so the recrawl reads under 5% of the first crawl's"
            f" {first_bytes} bytes; it read {second_bytes}"
        )
        check_each_url_once(second)

    @level(7, "recrawling", "recrawling")
    def test_recrawl_of_a_changed_site_fetches_exactly_the_changed_pages(
        self, tmp_path: pathlib.Path
    ) -> None:
        with ServerThread(make_app(60)) as server:
            first = self.crawl([server.url])
            since = save_records(first, tmp_path / "first.jsonl")
            server.app[SITE].edition = 2
            second = self.crawl([server.url], since=since)
        changed = changed_urls(server.url, 60)
        assert len(changed) == 2, f"the site's second edition changes 2 pages, not {changed}"
        why = "a recrawl of a site whose second edition changed 2 pages"
        whole = {s.url for s in second.done if s.status == 200}
        assert whole == changed, f"{why}: the URLs answered 200 {acceptance.differ(whole, changed)}"
        again, before = as_first_time(second), acceptance.results(first)
        assert again == before, (
            f"{why}: with each 304 read as its first answer, the records"
            f" {acceptance.differ(again, before)}"
        )
        for url in sorted(changed):
            old, new = acceptance.record_of(first, url), acceptance.record_of(second, url)
            assert new.etag != old.etag and new.size > old.size, (
                f"{why}: {url} changed, so expected a new ETag and a larger size, got"
                f" {old.etag!r} then {new.etag!r}, {old.size} then {new.size} bytes"
            )

    @level(7, "recrawling", "recrawling")
    def test_recrawl_sends_the_validators_it_kept(
        self, pages: PageServer, tmp_path: pathlib.Path
    ) -> None:
        asked: list[dict[str, str | None]] = []

        async def tagged(request: web.Request) -> web.StreamResponse:
            conditions = ("If-None-Match", "If-Modified-Since")
            asked.append({name: request.headers.get(name) for name in conditions})
            headers = {"ETag": 'W/"v1"', "Last-Modified": "Mon, 02 Nov 2026 08:00:00 GMT"}
            if request.headers.get("If-None-Match") == 'W/"v1"':
                return web.Response(status=304, headers=headers)
            return web.Response(
                text='<a href="/a">a</a>', content_type="text/html", headers=headers
            )

        root = pages.add_handler("/", tagged)
        pages.add_page("/a", [])
        first = self.crawl([root])
        etag = acceptance.record_of(first, root).etag
        assert etag == 'W/"v1"', (
            f"an answer's ETag is kept in its record: expected 'W/\"v1\"', got {etag!r}"
        )
        second = self.crawl([root], since=save_records(first, tmp_path / "first.jsonl"))
        expected = [
            {"If-None-Match": None, "If-Modified-Since": None},
            {"If-None-Match": 'W/"v1"', "If-Modified-Since": "Mon, 02 Nov 2026 08:00:00 GMT"},
        ]
        assert asked == expected, (
            "a first crawl sends no validators, a recrawl the ones it kept: expected the"
            f" requests' If-None-Match and If-Modified-Since {expected}, got {asked}"
        )
        record = acceptance.record_of(second, root)
        got = (record.status, record.size, record.num_urls)
        assert got == (304, 0, 1), (
            "a 304 keeps the earlier page's links: expected (status, size, links) (304, 0, 1),"
            f" got {got}"
        )
        again = pages.requests["/a"]
        assert again == 2, f"the crawl goes on past a 304 to /a: it was asked {again} times, not 2"

    @level(7, "recrawling", "recrawling")
    def test_304_without_an_earlier_record_is_an_answer_like_others(
        self, pages: PageServer, tmp_path: pathlib.Path
    ) -> None:
        root = pages.add_page("/", body=b"", status=304)
        since = tmp_path / "empty.jsonl"
        since.write_text("")
        crawler = self.crawl([root], since=str(since))
        got = [(s.status, s.num_urls, s.exception) for s in crawler.done]
        assert got == [(304, 0, None)], (
            "a 304 with no earlier record is an answer: expected one record (status, links,"
            f" exception) (304, 0, None), got {got}"
        )

    @level(7, "recrawling", "recrawling")
    def test_unsafe_validators_in_the_file_are_not_sent(
        self, pages: PageServer, tmp_path: pathlib.Path
    ) -> None:
        root = pages.add_page("/", [])
        record = {"url": root, "status": 200, "exception": None, "links": []}
        record |= {"etag": '"x"\r\nX-Injected: 1', "last_modified": "Mon, 02 Nov 2026 08:00:00 GMT"}
        since = tmp_path / "earlier.jsonl"
        since.write_text(json.dumps(record) + "\n")
        headers: list[Any] = []

        async def look(request: web.Request) -> web.StreamResponse:
            headers.append(request.headers)
            return web.Response(text="")

        pages.add_handler("/", look)
        self.crawl([root], since=str(since))
        assert len(headers) == 1, f"expected one request, the server got {len(headers)}"
        assert "X-Injected" not in headers[0] and "If-None-Match" not in headers[0], (
            "an ETag holding a line break is not sent: the request had the headers"
            f" {dict(headers[0])}"
        )
        sent = headers[0].get("If-Modified-Since")
        assert sent == "Mon, 02 Nov 2026 08:00:00 GMT", (
            f"since= asks for the page only if it changed since then: If-Modified-Since"
            f" should be that date, the request had {sent!r}"
        )

    @level(7, "recrawling", "recrawling")
    def test_unreadable_since_file_raises(self, tmp_path: pathlib.Path) -> None:
        bad = tmp_path / "bad.jsonl"
        bad.write_text('{"url": "http://a/"}\nnot json\n')
        with pytest.raises(ValueError, match="bad.jsonl, line 2: not a JSON record"):
            self.stage.Crawler(["http://a/"], since=str(bad))
        with pytest.raises(OSError):
            self.stage.Crawler(["http://a/"], since=str(tmp_path / "missing.jsonl"))

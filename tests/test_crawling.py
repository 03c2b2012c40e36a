"""Examples for shared.crawl.crawling: options, roots and what a response leads to.

No network here: a tiny ``CrawlerBase`` subclass records the URLs it is
asked to queue, and the tests hand it ``Response`` objects directly.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable
from typing import Any

import pytest

from shared.crawl.crawling import BadRedirect, CrawlerBase, header_text
from shared.record.stats import FetchStatistic, ResponseTooLarge
from shared.web.http import Response

ROOT = "http://example.com/"


class RecordingCrawler(CrawlerBase):
    """A crawler whose queue is a list of ``(url, max_redirect)`` calls."""

    def __init__(self, roots: Iterable[str] = (ROOT,), **options: Any) -> None:
        super().__init__(roots, **options)
        self.added: list[tuple[str, int | None]] = []

    def add_url(self, url: str, max_redirect: int | None = None) -> None:
        self.added.append((url, max_redirect))
        self.seen_urls.add(url)


def html(body: str, status: int = 200, content_type: str = "text/html") -> Response:
    """Return a response with an HTML body."""
    return Response(status, {"content-type": content_type}, body.encode())


# --- Options -------------------------------------------------------------------------


def test_defaults() -> None:
    crawler = RecordingCrawler()
    assert crawler.roots == [ROOT]
    assert (crawler.exclude, crawler.strict) == (None, True)
    assert (crawler.max_redirect, crawler.max_tries, crawler.max_tasks) == (10, 4, 10)
    assert (crawler.timeout, crawler.max_size) == (10.0, 10 * 2**20)
    assert (crawler.seen_urls, crawler.done, crawler.t1) == (set(), [], None)
    assert crawler.added == []  # Constructing queues nothing.


def test_a_single_root_string_is_one_root() -> None:
    assert RecordingCrawler(ROOT).roots == [ROOT]
    assert RecordingCrawler(iter([ROOT, "http://b/"])).roots == [ROOT, "http://b/"]


def test_smallest_valid_options() -> None:
    crawler = RecordingCrawler(max_redirect=0, max_tries=1, max_tasks=1, max_size=0, timeout=0.001)
    assert (crawler.max_redirect, crawler.max_tries, crawler.max_tasks) == (0, 1, 1)
    assert (crawler.max_size, crawler.timeout) == (0, 0.001)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"max_redirect": -1}, "max_redirect must be a whole number of at least 0, not -1"),
        ({"max_tries": 0}, "max_tries must be a whole number of at least 1, not 0"),
        ({"max_tasks": 0}, "max_tasks must be a whole number of at least 1, not 0"),
        ({"max_tasks": -5}, "max_tasks must be a whole number of at least 1, not -5"),
        ({"max_tasks": 2.5}, "max_tasks must be a whole number of at least 1, not 2.5"),
        ({"max_tasks": True}, "max_tasks must be a whole number of at least 1, not True"),
        ({"max_tries": "3"}, "max_tries must be a whole number of at least 1, not '3'"),
        ({"max_size": -1}, "max_size must be a whole number of at least 0, not -1"),
        ({"timeout": 0}, "timeout must be more than 0 seconds, not 0"),
        ({"timeout": -1.5}, "timeout must be more than 0 seconds, not -1.5"),
        ({"timeout": float("nan")}, "timeout must be more than 0 seconds, not nan"),
        ({"exclude": "("}, "invalid exclude pattern '('"),
    ],
)
def test_invalid_options(options: dict, message: str) -> None:
    with pytest.raises(ValueError, match="^" + re.escape(message)):
        RecordingCrawler(**options)


def test_url_allowed_follows_the_options() -> None:
    crawler = RecordingCrawler(exclude="private", strict=True)
    assert crawler.url_allowed("http://www.example.com/a")
    assert not crawler.url_allowed("http://example.com/private/a")
    assert not crawler.url_allowed("http://sub.example.com/")
    assert RecordingCrawler(strict=False).url_allowed("http://sub.example.com/")


def test_add_url_is_left_to_the_stages() -> None:
    with pytest.raises(NotImplementedError):
        CrawlerBase([ROOT]).add_url(ROOT)


# --- Roots -----------------------------------------------------------------------------


def test_add_roots_normalizes_and_queues_each_root_once() -> None:
    crawler = RecordingCrawler(
        [ROOT, "HTTP://Example.COM:80", "http://example.com/#x", "http://b/"]
    )
    crawler.add_roots()
    assert crawler.added == [(ROOT, None), ("http://b/", None)]
    assert crawler.done == []


@pytest.mark.parametrize(
    ("root", "recorded_as"),
    [
        ("not-a-host", "not-a-host"),
        ("ftp://example.com/file", "ftp://example.com/file"),
        ("mailto:someone@example.com", "mailto:someone@example.com"),
        ("http://", "http://"),
        ("http://example.com:bad/", "http://example.com:bad/"),  # Cannot be normalized.
    ],
)
def test_a_root_that_is_not_a_web_url_is_recorded_as_a_failure(
    root: str, recorded_as: str, caplog: pytest.LogCaptureFixture
) -> None:
    crawler = RecordingCrawler([root, ROOT, root])
    crawler.add_roots()
    assert crawler.added == [(ROOT, None)]
    assert len(crawler.done) == 1
    stat = crawler.done[0]
    assert stat[:3] == (recorded_as, None, None)
    assert isinstance(stat.exception, ValueError)
    assert (stat.size, stat.num_urls) == (0, 0)
    assert crawler.seen_urls == {recorded_as, ROOT}  # Not lost, and done == seen.
    assert f"cannot crawl root {root!r}" in caplog.text


# --- Responses ---------------------------------------------------------------------------


def test_html_links_are_recorded_and_new_ones_queued() -> None:
    crawler = RecordingCrawler()
    crawler.seen_urls = {ROOT, "http://example.com/old"}
    page = '<a href="/new">n</a><a href="/old">o</a><a href="/new#x">n</a><a href="/">h</a>'
    page += '<a href="http://elsewhere.org/">e</a><a href="mailto:a@example.com">m</a>'
    crawler.handle_response(ROOT, 10, html(page))
    assert crawler.done == [
        FetchStatistic(
            url=ROOT,
            next_url=None,
            status=200,
            exception=None,
            size=len(page),
            content_type="text/html",
            encoding="utf-8",
            num_urls=3,
            num_new_urls=1,
        )
    ]
    assert crawler.added == [("http://example.com/new", None)]  # With the full budget.


@pytest.mark.parametrize(
    ("content_type", "parsed"),
    [
        ("text/html", True),
        ("text/html; charset=utf-8", True),
        ("TEXT/HTML", True),
        ("application/xhtml+xml", True),
        ("application/xml", True),
        ("text/plain", False),
        ("text/xml", False),
        ("application/json", False),
        ("image/png", False),
        (None, False),
    ],
)
def test_links_only_in_html_and_xml(content_type: str | None, parsed: bool) -> None:
    crawler = RecordingCrawler()
    headers = {} if content_type is None else {"content-type": content_type}
    crawler.handle_response(ROOT, 10, Response(200, headers, b'<a href="/a">a</a>'))
    assert crawler.done[0].num_urls == int(parsed)
    assert crawler.added == ([("http://example.com/a", None)] if parsed else [])


@pytest.mark.parametrize("status", [201, 203, 302, 404, 410, 500])
def test_links_only_for_status_200(status: int) -> None:
    crawler = RecordingCrawler()
    crawler.handle_response(ROOT, 10, html('<a href="/a">a</a>', status=status))
    assert crawler.done == [
        FetchStatistic(
            url=ROOT,
            next_url=None,
            status=status,
            exception=None,
            size=18,
            content_type="text/html",
            encoding="utf-8",
            num_urls=0,
            num_new_urls=0,
        )
    ]
    assert crawler.added == []


def test_excluded_links_are_not_counted_or_queued() -> None:
    crawler = RecordingCrawler(exclude=r"\.png$")
    crawler.handle_response(ROOT, 10, html('<a href="/a.png">i</a><a href="/b">b</a>'))
    assert crawler.done[0].num_urls == 1
    assert crawler.added == [("http://example.com/b", None)]


def test_parse_links_does_not_record_or_queue() -> None:
    crawler = RecordingCrawler()
    stat, links = crawler.parse_links(ROOT, html('<a href="/a">a</a>'))
    assert links == {"http://example.com/a"}
    assert (stat.num_urls, stat.num_new_urls) == (1, 1)
    assert crawler.done == [] and crawler.added == []


def test_truncated_body_is_recorded_with_an_exception_and_no_links() -> None:
    crawler = RecordingCrawler(max_size=20)
    body = b'<a href="/a">a</a><a'  # What the parser kept of a longer body.
    crawler.handle_response(ROOT, 10, Response(200, {"content-type": "text/html"}, body, True))
    stat = crawler.done[0]
    assert stat[:3] == (ROOT, None, 200)
    assert (stat.size, stat.num_urls, stat.num_new_urls) == (20, 0, 0)
    assert isinstance(stat.exception, ResponseTooLarge)
    assert "20" in str(stat.exception)
    assert crawler.added == []


def test_body_is_decoded_with_its_charset() -> None:
    crawler = RecordingCrawler()
    body = '<a href="/caf\xe9/">x</a>'.encode("latin-1")
    crawler.handle_response(
        ROOT, 10, Response(200, {"content-type": "text/html; charset=latin-1"}, body)
    )
    assert crawler.added == [("http://example.com/caf%C3%A9/", None)]
    assert crawler.done[0].encoding == "cp1252"  # What browsers read latin-1 as.


def test_unknown_charset_falls_back_to_utf_8() -> None:
    crawler = RecordingCrawler()
    body = '<a href="/caf\xe9/">x</a>'.encode()
    headers = {"content-type": "text/html; charset=no-such-codec"}
    crawler.handle_response(ROOT, 10, Response(200, headers, body))
    assert crawler.added == [("http://example.com/caf%C3%A9/", None)]
    assert crawler.done[0].encoding == "utf-8"  # The encoding the page was read with.


# --- Redirects --------------------------------------------------------------------------------


def moved(location: str, status: int = 302) -> Response:
    """Return a redirect to ``location``."""
    return Response(status, {"location": location}, b"")


@pytest.mark.parametrize("status", [300, 301, 302, 303, 307, 308])
def test_redirect_is_recorded_then_followed(status: int) -> None:
    crawler = RecordingCrawler()
    crawler.handle_response(ROOT, 3, moved("/next", status))
    assert crawler.done == [
        FetchStatistic(
            url=ROOT,
            next_url="http://example.com/next",
            status=status,
            exception=None,
            size=0,
            content_type=None,
            encoding=None,
            num_urls=0,
            num_new_urls=0,
        )
    ]
    assert crawler.added == [("http://example.com/next", 2)]


@pytest.mark.parametrize("status", [200, 304, 305, 404])
def test_other_statuses_with_location_are_not_redirects(status: int) -> None:
    crawler = RecordingCrawler()
    crawler.handle_response(ROOT, 3, moved("/next", status))
    assert crawler.done == [
        FetchStatistic(
            url=ROOT,
            next_url=None,
            status=status,
            exception=None,
            size=0,
            content_type=None,
            encoding="utf-8",
            num_urls=0,
            num_new_urls=0,
        )
    ]
    assert crawler.added == []


def test_redirect_without_location_is_a_plain_response() -> None:
    crawler = RecordingCrawler()
    crawler.handle_response(ROOT, 3, Response(302, {"content-type": "text/plain"}, b"moved"))
    assert crawler.done == [
        FetchStatistic(
            url=ROOT,
            next_url=None,
            status=302,
            exception=None,
            size=5,
            content_type="text/plain",
            encoding="utf-8",
            num_urls=0,
            num_new_urls=0,
        )
    ]


@pytest.mark.parametrize(
    ("location", "next_url"),
    [
        ("/a", "http://example.com/a"),
        ("b", "http://example.com/dir/b"),
        ("../c?q=1#frag", "http://example.com/c?q=1"),
        ("HTTP://WWW.Example.com:80/d", "http://www.example.com/d"),
        ("  /spaced  ", "http://example.com/spaced"),
    ],
)
def test_redirect_target_is_absolute_and_normalized(location: str, next_url: str) -> None:
    crawler = RecordingCrawler()
    crawler.handle_response("http://example.com/dir/page", 1, moved(location))
    assert crawler.done[0].next_url == next_url
    assert crawler.added == [(next_url, 0)]


def test_redirect_to_a_seen_url_is_recorded_not_followed(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="shared")
    crawler = RecordingCrawler()
    crawler.seen_urls = {ROOT, "http://example.com/seen"}
    crawler.handle_response(ROOT, 3, moved("/seen"))
    assert crawler.done[0].next_url == "http://example.com/seen"
    assert crawler.added == []
    assert caplog.records == []


@pytest.mark.parametrize(
    ("location", "next_url"),
    [
        ("http://elsewhere.org/", "http://elsewhere.org/"),
        ("ftp://example.com/f", "ftp://example.com/f"),
        ("/private/x", "http://example.com/private/x"),
        ("mailto:a@b.c", "mailto:a@b.c"),
    ],
)
def test_redirect_not_allowed_is_recorded_not_followed(
    location: str, next_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="shared")
    crawler = RecordingCrawler(exclude="private")
    crawler.handle_response(ROOT, 3, moved(location))
    assert crawler.done == [
        FetchStatistic(
            url=ROOT,
            next_url=next_url,
            status=302,
            exception=None,
            size=0,
            content_type=None,
            encoding=None,
            num_urls=0,
            num_new_urls=0,
        )
    ]
    assert crawler.added == []
    assert f"not following redirect to {next_url}" in caplog.text


def test_redirect_with_no_budget_left(caplog: pytest.LogCaptureFixture) -> None:
    crawler = RecordingCrawler()
    crawler.handle_response(ROOT, 0, moved("/next"))
    assert crawler.done[0][:3] == (ROOT, "http://example.com/next", 302)
    assert crawler.added == []
    assert [r.levelname for r in caplog.records] == ["ERROR"]
    assert "redirect limit reached for http://example.com/next" in caplog.text


def test_redirect_budget_counts_down_along_a_chain() -> None:
    crawler = RecordingCrawler(max_redirect=2)
    crawler.handle_response(ROOT, 2, moved("/1"))
    crawler.handle_response("http://example.com/1", 1, moved("/2"))
    crawler.handle_response("http://example.com/2", 0, moved("/3"))
    assert crawler.added == [("http://example.com/1", 1), ("http://example.com/2", 0)]
    assert len(crawler.done) == 3


@pytest.mark.parametrize(
    "location", ["http://[oops/", "http://example.com:bad/", "http://h:99999/"]
)
def test_invalid_location_is_a_bad_redirect(location: str) -> None:
    crawler = RecordingCrawler()
    crawler.handle_response(ROOT, 3, moved(location, 301))
    assert len(crawler.done) == 1
    stat = crawler.done[0]
    assert (stat.url, stat.next_url, stat.status, stat.size) == (ROOT, None, 301, 0)
    assert isinstance(stat.exception, BadRedirect)
    assert repr(location) in str(stat.exception)
    assert crawler.added == []


def test_record_crash_keeps_the_url(caplog: pytest.LogCaptureFixture) -> None:
    crawler = RecordingCrawler()
    error = RuntimeError("a bug")
    crawler.record_crash(ROOT, error)
    assert crawler.done == [
        FetchStatistic(
            url=ROOT,
            next_url=None,
            status=None,
            exception=error,
            size=0,
            content_type=None,
            encoding=None,
            num_urls=0,
            num_new_urls=0,
        )
    ]
    assert f"fetching {ROOT} failed unexpectedly" in caplog.text


# --- Hooks and header values ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("response", "saved"),
    [
        (html("<p>page</p>"), True),
        (html("<p>page</p>", content_type="text/html; charset=latin-1"), True),
        (html("<p>x</p>", content_type="application/xhtml+xml"), True),
        (html("<feed/>", content_type="application/xml"), False),
        (html("text", content_type="text/plain"), False),
        (html("<p>gone</p>", status=404), False),
        (Response(200, {"content-type": "text/html"}, b"<p>cut", True), False),
        (moved("/next"), False),
    ],
)
def test_on_page_gets_complete_html_pages_only(response: Response, saved: bool) -> None:
    crawler = RecordingCrawler()
    pages: list[tuple[str, bytes, int]] = []
    crawler.on_page = lambda url, body: pages.append((url, body, len(crawler.done)))
    crawler.handle_response(ROOT, 3, response)
    assert pages == ([(ROOT, response.body, 0)] if saved else [])  # Called before recording.
    assert len(crawler.done) == 1


@pytest.mark.parametrize(
    ("value", "text"),
    [
        ("/plain", "/plain"),
        ("/caf\xe9", "/caf\xe9"),  # Valid UTF-8 arrived as text: kept.
        ("/caf\udce9", "/caf%E9"),  # A latin-1 byte, escaped by surrogateescape.
        ("\udcff\udc80", "%FF%80"),
    ],
)
def test_header_text(value: str, text: str) -> None:
    assert header_text(value) == text


def test_location_with_a_non_utf_8_byte_is_percent_encoded() -> None:
    crawler = RecordingCrawler()
    crawler.handle_response(ROOT, 3, moved("/caf\udce9"))
    assert crawler.done[0].next_url == "http://example.com/caf%E9"
    assert crawler.added == [("http://example.com/caf%E9", 2)]

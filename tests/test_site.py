"""Examples for shared.testsite.site: the test site, its counters and its oracle.

The acceptance suite checks every stage against ``expected_results``.  Here
the oracle itself is checked by something that is not a stage: a small
blocking crawler written with urllib, the shared link parser and the URL
policy, following the contract's rules one request at a time.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import email.utils
import gc
import queue
import socket
import subprocess
import sys
import threading
import urllib.error
import urllib.parse
import urllib.request
import warnings
from collections.abc import Iterator

import pytest
from aiohttp import web

from shared.crawl.polite import RobotsRules
from shared.testsite.server import (
    COUNTERS,
    ServerThread,
    counting_middleware,
    make_app,
    serve,
)
from shared.testsite.site import (
    ROBOTS_TXT,
    Oracle,
    OracleCheck,
    Request,
    Response,
    Site,
    SiteCounters,
    archive_of,
    changed_urls,
    content_links,
    exact,
    expected_results,
    static,
)
from shared.web.encoding import decode_body, find_encoding
from shared.web.http import parse_content_type
from shared.web.links import extract_links
from shared.web.sitemaps import read_sitemap
from shared.web.urls import UrlPolicy, normalize_url
from tests.servers import DEADLINE, poll

BASE = "http://127.0.0.1:8000"
ROOT = BASE + "/"

# --- make_app --------------------------------------------------------------------------


@pytest.mark.parametrize("pages", [9, 0, -1])
def test_make_app_needs_ten_pages(pages: int) -> None:
    with pytest.raises(ValueError, match="at least 10 pages"):
        make_app(pages)


def test_make_app_rejects_negative_latency() -> None:
    with pytest.raises(ValueError, match="latency cannot be negative"):
        make_app(10, latency=-0.001)


def test_make_app_smallest_site() -> None:
    app = make_app(10, latency=0)
    assert app[COUNTERS].requests == {}


# --- The oracle -----------------------------------------------------------------------------


def by_url(results: set) -> dict:
    """Return the oracle's results keyed by URL, checking each URL appears once."""
    table = {url: (status, next_url) for url, status, next_url in results}
    assert len(table) == len(results), "a URL appears twice in the oracle"
    return table


@pytest.mark.parametrize(("pages", "count"), [(10, 71), (14, 67), (20, 91), (57, 166), (300, 656)])
def test_expected_results_count(pages: int, count: int) -> None:
    # 18 fixed pages + the content pages + the archive pages, 6 missing pages,
    # one server error, one slashless redirect per distinct n*7 % pages + 1,
    # 2 redirects off the site, 10 results of the chain, cycle and join, and
    # 4 pages robots.txt disallows or allows.
    assert len(by_url(expected_results(ROOT, pages))) == count
    # Obeying robots.txt, /private/drafts/ is never found (only /private/ links to it).
    assert len(by_url(expected_results(ROOT, pages, obey_robots=True))) == count - 1


def test_expected_results_obeying_robots_txt() -> None:
    table = by_url(expected_results(ROOT, 10, obey_robots=True))
    assert table[BASE + "/private/"] == table[BASE + "/archive/?print=1"] == (None, None)
    assert table[BASE + "/private/open/"] == (200, None)
    assert BASE + "/private/drafts/" not in table
    ignoring = by_url(expected_results(ROOT, 10))
    for path in ["/private/", "/private/drafts/", "/private/open/", "/archive/?print=1"]:
        assert ignoring[BASE + path] == (200, None)


def test_the_oracle_skips_exactly_what_the_site_s_robots_txt_disallows() -> None:
    rules = RobotsRules.parse(ROBOTS_TXT)
    ignoring = {url for url, _, _ in expected_results(ROOT, 57)}
    obeying = expected_results(ROOT, 57, obey_robots=True)
    skipped = {url for url, status, _ in obeying if status is None}
    assert skipped == {url for url, _, _ in obeying if not rules.allowed(url)}
    assert len(skipped) == 2
    # What a crawl ignoring robots.txt fetches beyond them, it finds through them.
    never_found = {url for url in ignoring if not rules.allowed(url)} - skipped
    assert never_found == {BASE + "/private/drafts/"}


def test_expected_results_every_content_and_archive_page() -> None:
    table = by_url(expected_results(ROOT, 120))
    for n in range(1, 121):
        assert table[f"{BASE}/pages/{n}/"] == (200, None)
    assert f"{BASE}/pages/121/" not in table
    assert f"{BASE}/pages/0/" not in table
    for k in (1, 2, 3):
        assert table[f"{BASE}/archive/{k}/"] == (200, None)
    assert f"{BASE}/archive/4/" not in table


def test_expected_results_fixed_pages() -> None:
    table = by_url(expected_results(ROOT, 10))
    for path in ["/", "/archive/", "/feed-only/", "/xhtml-only/", "/caf%C3%A9/", "/area-target/"]:
        assert table[BASE + path] == (200, None), path
    assert table[BASE + "/search?q=1&lang=en"] == (200, None)
    assert table[BASE + "/missing/home"] == (404, None)
    assert table[BASE + "/error/500"] == (500, None)
    for hidden in ["/hidden/comment/", "/hidden/script/", "/hidden/style/", "/hidden/text/"]:
        assert BASE + hidden not in table


@pytest.mark.parametrize("pages", [10, 14, 57])
def test_expected_results_slashless_redirects(pages: int) -> None:
    table = by_url(expected_results(ROOT, pages))
    slashless = {url for url in table if url.startswith(BASE + "/pages/") and url[-1] != "/"}
    numbers = {n * 7 % pages + 1 for n in range(1, pages + 1)}
    assert slashless == {f"{BASE}/pages/{n}" for n in numbers}
    for n in numbers:
        assert table[f"{BASE}/pages/{n}"] == (301, f"{BASE}/pages/{n}/")


def test_expected_results_accepts_a_root_without_a_slash() -> None:
    assert expected_results(BASE, 10) == expected_results(ROOT, 10)


def test_off_site_redirects_are_recorded_not_followed() -> None:
    table = by_url(expected_results(ROOT, 10))
    assert table[BASE + "/redirect/offsite"] == (302, "http://example.com/")
    assert table[BASE + "/redirect/ftp"] == (302, "ftp://127.0.0.1/file.txt")
    assert "http://example.com/" not in table


CHAIN = [f"{BASE}/redirect/chain/{k}" for k in range(4)] + [f"{BASE}/redirect/chain-end/"]
CYCLE_A, CYCLE_B = f"{BASE}/redirect/cycle/a", f"{BASE}/redirect/cycle/b"
FOO, BAR, BAZ = (f"{BASE}/redirect/{name}" for name in ["foo", "bar", "baz/"])


@pytest.mark.parametrize(
    ("max_redirect", "reached"),
    [
        (0, CHAIN[:1] + [CYCLE_A, FOO, BAR]),
        (1, CHAIN[:2] + [CYCLE_A, CYCLE_B, FOO, BAR, BAZ]),
        (2, CHAIN[:3] + [CYCLE_A, CYCLE_B, FOO, BAR, BAZ]),
        (3, CHAIN[:4] + [CYCLE_A, CYCLE_B, FOO, BAR, BAZ]),
        (4, CHAIN + [CYCLE_A, CYCLE_B, FOO, BAR, BAZ]),
        (10, CHAIN + [CYCLE_A, CYCLE_B, FOO, BAR, BAZ]),
    ],
)
def test_chain_cycle_and_join_depend_on_max_redirect(max_redirect: int, reached: list) -> None:
    table = by_url(expected_results(ROOT, 10, max_redirect))
    assert {url for url in table if "/redirect/" in url} - {
        BASE + "/redirect/offsite",
        BASE + "/redirect/ftp",
    } == set(reached)
    statuses = [302, 303, 307, 308]
    for depth, url in enumerate(CHAIN[:4]):
        if url in reached:
            assert table[url] == (statuses[depth], CHAIN[depth + 1])
    if CHAIN[-1] in reached:
        assert table[CHAIN[-1]] == (200, None)
    assert table[CYCLE_A] == (302, CYCLE_B)
    if CYCLE_B in reached:
        assert table[CYCLE_B] == (302, CYCLE_A)
    assert (table[FOO], table[BAR]) == ((302, BAZ), (301, BAZ))


def test_content_links_and_archives() -> None:
    assert content_links(1, 10)[:2] == ["/pages/2/", "/archive/1/"]
    assert content_links(10, 10)[:2] == ["../9/", "/archive/1/"]
    assert content_links(5, 10)[:3] == ["../4/", "/pages/6/", "/archive/1/"]
    assert [archive_of(n) for n in (1, 50, 51, 100, 101)] == [1, 1, 2, 2, 3]


# --- The oracle against an independent crawl -------------------------------------------------


class NoRedirects(urllib.request.HTTPRedirectHandler):
    """Make urllib hand every redirect back as an HTTPError, unfollowed."""

    def redirect_request(self, *args: object, **kwargs: object) -> None:
        return None


OPENER = urllib.request.build_opener(NoRedirects)
REDIRECTS = {300, 301, 302, 303, 307, 308}
LINK_TYPES = {"text/html", "application/xhtml+xml", "application/xml"}


def fetch(url: str) -> tuple[int, dict[str, str], bytes]:
    """GET ``url`` with urllib; return status, headers and body, 4xx/5xx included."""
    try:  # A normalized URL is ASCII, percent-encoded already.
        with OPENER.open(url, timeout=30) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as error:
        with error:
            return error.code, dict(error.headers), error.read()


def reference_crawl(root: str, max_redirect: int) -> list[tuple[str, int, str | None]]:
    """Crawl from ``root`` by the contract's rules, one request at a time."""
    policy = UrlPolicy([root])
    root = normalize_url(root)
    queue, seen = collections.deque([(root, max_redirect)]), {root}
    recorded: list[tuple[str, int, str | None]] = []
    while queue:
        url, budget = queue.popleft()
        status, headers, body = fetch(url)
        headers = {name.lower(): value for name, value in headers.items()}
        if status in REDIRECTS and "location" in headers:
            next_url = normalize_url(headers["location"], url)
            recorded.append((url, status, next_url))
            if next_url not in seen and policy.url_allowed(next_url) and budget > 0:
                seen.add(next_url)
                queue.append((next_url, budget - 1))
            continue
        recorded.append((url, status, None))
        media_type, params = parse_content_type(headers.get("content-type"))
        if status != 200 or media_type not in LINK_TYPES:
            continue
        encoding = find_encoding(params.get("charset"), body, sniff=True)
        for link in extract_links(decode_body(body, encoding), url, encoding):
            if link not in seen and policy.url_allowed(link):
                seen.add(link)
                queue.append((link, max_redirect))
    return recorded


@pytest.fixture(scope="module")
def sites() -> Iterator[dict[int, ServerThread]]:
    """The test site with 10 and with 57 pages, served for this module."""
    with contextlib.ExitStack() as stack:
        yield {pages: stack.enter_context(ServerThread(make_app(pages))) for pages in (10, 57)}


@pytest.mark.parametrize("max_redirect", [0, 1, 2, 3, 4, 5])
@pytest.mark.parametrize("pages", [10, 57])
def test_oracle_agrees_with_a_reference_crawl(
    sites: dict[int, ServerThread], pages: int, max_redirect: int
) -> None:
    server = sites[pages]
    counters = server.app[COUNTERS]
    counters.reset()
    recorded = reference_crawl(server.url, max_redirect)
    assert len(recorded) == len({url for url, _, _ in recorded}), "a URL was recorded twice"
    assert set(recorded) == expected_results(server.url, pages, max_redirect)
    assert max(counters.requests.values()) == 1
    assert sum(counters.requests.values()) == len(recorded)


def test_links_the_oracle_calls_hidden_are_missing_pages(
    sites: dict[int, ServerThread],
) -> None:
    # The reference crawler must not be too lenient: feed it the home page's
    # hidden links and check they would be 404s, so the oracle is meaningful.
    server = sites[10]
    for path in ["hidden/comment/", "hidden/script/", "hidden/text/"]:
        assert fetch(server.url + path)[0] == 404


# --- The server ----------------------------------------------------------------------------------


def test_site_serves_pages_redirects_and_errors(sites: dict[int, ServerThread]) -> None:
    server = sites[10]
    status, headers, body = fetch(server.url + "pages/3/")
    assert (status, headers["Content-Type"]) == (200, "text/html; charset=utf-8")
    assert b"<title>Page 3</title>" in body
    assert fetch(server.url + "pages/11/")[0] == 404
    status, headers, _ = fetch(server.url + "pages/3")
    assert (status, headers["Location"]) == (301, "/pages/3/")
    assert fetch(server.url + "archive/2/")[0] == 404
    assert fetch(server.url + "error/500")[0] == 500
    assert fetch(server.url + "redirect/chain/4")[0] == 404


def test_home_page_names_the_host_it_was_asked_for(sites: dict[int, ServerThread]) -> None:
    server = sites[10]
    host = server.url.removeprefix("http://").rstrip("/")
    body = fetch(server.url)[2].decode()
    assert f'href="HTTP://{host}/pages/6/"' in body


def test_pages_are_the_same_on_every_request(sites: dict[int, ServerThread]) -> None:
    server = sites[57]
    assert fetch(server.url + "pages/42/")[2] == fetch(server.url + "pages/42/")[2]
    assert fetch(server.url + "pages/42/")[2] != fetch(server.url + "pages/43/")[2]


def test_counters_count_requests_by_path_with_query() -> None:
    with ServerThread(make_app(10)) as server:
        for path in ["pages/1/", "pages/1/", "search?q=2", "no/such/page"]:
            fetch(server.url + path)
        counters = server.app[COUNTERS]
        assert counters.requests == {"/pages/1/": 2, "/search?q=2": 1, "/no/such/page": 1}
        assert (counters.in_flight, counters.max_in_flight) == (0, 1)
        counters.reset()
        assert (counters.requests, counters.in_flight, counters.max_in_flight) == ({}, 0, 0)


def send_get(url: str) -> socket.socket:
    """Open a connection and send a GET for ``url`` without reading the answer."""
    parts = urllib.parse.urlsplit(url)
    sock = socket.create_connection((parts.hostname, parts.port), timeout=10)
    sock.sendall(f"GET {parts.path} HTTP/1.0\r\nHost: {parts.netloc}\r\n\r\n".encode())
    return sock


@pytest.mark.parametrize("clients_leave_first", [False, True])
def test_latency_keeps_requests_in_flight_and_counts_them(clients_leave_first: bool) -> None:
    with contextlib.ExitStack() as connections:
        with ServerThread(make_app(10, latency=600.0)) as server:
            counters = server.app[COUNTERS]
            for path in ["", "pages/1/", "pages/2/"]:
                connections.enter_context(send_get(server.url + path))
            assert poll(lambda: counters.in_flight == 3), counters
            assert counters.max_in_flight == 3
            assert counters.requests == {"/": 1, "/pages/1/": 1, "/pages/2/": 1}
            if clients_leave_first:  # Like a crawler that timed out.
                connections.close()
        # Stopping the server cancelled the delayed handlers, which ran their
        # clean-up: none is left pending when the server's loop closes.
        assert counters.in_flight == 0
        assert counters.max_in_flight == 3


def connect_until_refused(address: tuple[str, int], clients: list[socket.socket]) -> None:
    """Open connections to ``address`` into ``clients`` until the server refuses one."""
    with contextlib.suppress(OSError):
        while True:
            clients.append(socket.create_connection(address, timeout=10))


@contextlib.contextmanager
def server_thread() -> Iterator[tuple[str, int]]:
    """Serve 10 pages with ``ServerThread``; yield its address."""
    with ServerThread(make_app(10)) as server:
        yield server.host, server.port


@contextlib.contextmanager
def command_line_server() -> Iterator[tuple[str, int]]:
    """Serve 10 pages with ``serve``, as ``python -m shared.testsite`` does; yield its address.

    Ctrl+C cancels the task that runs ``serve``: so does leaving this block.
    """
    loop = asyncio.new_event_loop()
    ports: queue.Queue[int] = queue.Queue()
    task = loop.create_task(serve(Site(10), "127.0.0.1", 0, ports.put))

    def run() -> None:
        with contextlib.suppress(asyncio.CancelledError):
            loop.run_until_complete(task)

    thread = threading.Thread(target=run)
    thread.start()
    try:
        yield "127.0.0.1", ports.get(timeout=DEADLINE)
    finally:
        loop.call_soon_threadsafe(task.cancel)
        thread.join(DEADLINE)
        loop.close()


@pytest.mark.parametrize(
    ("serving", "rounds"),
    [(server_thread, 8), pytest.param(command_line_server, 4, marks=pytest.mark.slow)],
    ids=["thread", "cli"],
)
def test_stopping_closes_every_connection_even_one_accepted_as_it_stops(serving, rounds) -> None:
    # A connection that arrives while the server stops races its shutdown:
    # one accepted in the same loop turn as the close, or whose handler starts
    # after aiohttp listed the connections to close, used to stay open until
    # the garbage collector found it and warned.  A client keeps connecting
    # until the server refuses, so that connections arrive all through the
    # stop; then every socket left behind is collected, and none may warn.
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ResourceWarning)
        for _ in range(rounds):
            clients: list[socket.socket] = []
            with serving() as address:
                client = threading.Thread(target=connect_until_refused, args=(address, clients))
                client.start()
                assert poll(lambda: len(clients) >= 20)  # noqa: B023 (polled in this round)
            client.join(DEADLINE)
            for sock in clients:
                sock.close()  # Closed, so only the server's sockets can warn.
        gc.collect()
    assert [str(w.message) for w in caught if issubclass(w.category, ResourceWarning)] == []


def test_max_in_flight_of_concurrent_requests() -> None:
    # Each handler waits until all three requests have arrived: three overlap
    # by construction, whatever the scheduling.
    app = web.Application(middlewares=[counting_middleware(0.0)])
    app[COUNTERS] = counters = SiteCounters()
    arrived, all_arrived = 0, asyncio.Event()

    async def together(request: web.Request) -> web.StreamResponse:
        nonlocal arrived
        arrived += 1
        if arrived == 3:
            all_arrived.set()
        await asyncio.wait_for(all_arrived.wait(), 60)
        return web.Response(text="ok")

    app.router.add_get("/{name}", together)
    with ServerThread(app) as server:
        threads = [
            threading.Thread(target=fetch, args=(server.url + name,)) for name in ["a", "b", "c"]
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        assert counters.max_in_flight == 3
        assert counters.in_flight == 0
        assert counters.requests == {"/a": 1, "/b": 1, "/c": 1}


# --- The command line ---------------------------------------------------------------------------


def test_python_m_shared_site_help() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "shared.testsite", "--help"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("usage: python -m shared.testsite")
    for option in ["--host", "--port", "--pages", "--latency-ms"]:
        assert option in result.stdout


def test_python_m_shared_site_rejects_too_few_pages() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "shared.testsite", "--port", "0", "--pages", "5"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2
    assert "at least 10 pages" in result.stderr
    assert "Traceback" not in result.stderr


# --- The sans-IO model ---------------------------------------------------------------------------


def test_site_answers_a_request_without_any_server() -> None:
    site = Site(10)
    response = site.respond(Request("GET", "/pages/3/", "127.0.0.1:8000"))
    assert (response.status, response.headers["Content-Type"]) == (200, "text/html; charset=utf-8")
    assert b"<title>Page 3</title>" in response.body
    assert site.respond(Request("GET", "/pages/11/")).status == 404
    assert site.respond(Request("GET", "/pages/3")).headers["Location"] == "/pages/3/"
    home = site.respond(Request("GET", "/", "example.test:81")).body
    assert b'href="HTTP://example.test:81/pages/6/"' in home


def test_site_decodes_the_target() -> None:
    site = Site(10)
    assert site.respond(Request("GET", "/caf%C3%A9/")).status == 200
    assert site.respond(Request("GET", "/caf%E9/")).status == 404  # Not UTF-8.
    assert Request("GET", "/search?q=1&lang=en&q=2").query == {"q": "1", "lang": "en"}
    assert b"<title>Search: 2</title>" in site.respond(Request("GET", "/search?q=2")).body


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE"])
def test_site_allows_only_get_and_head(method: str) -> None:
    response = Site(10).respond(Request(method, "/"))
    assert (response.status, response.headers["Allow"]) == (405, "GET, HEAD")
    assert Site(10).respond(Request(method, "/no/such/page")).status == 404


def test_site_routes_can_be_extended_per_site() -> None:
    site = Site(10)
    site.routes.append(exact("/extra.txt", static(b"extra", "text/plain")))
    assert site.respond(Request("GET", "/extra.txt")).body == b"extra"
    assert Site(10).respond(Request("GET", "/extra.txt")).status == 404


def test_aiohttp_serves_the_model_and_head_has_no_body(sites: dict[int, ServerThread]) -> None:
    server = sites[10]
    request = urllib.request.Request(server.url + "pages/3/", method="HEAD")
    with OPENER.open(request, timeout=30) as response:
        length = int(response.headers["Content-Length"])
        assert response.read() == b""
    assert length == len(fetch(server.url + "pages/3/")[2])


@pytest.mark.parametrize(
    ("path", "encoding"),
    [("/gbk/", "gb18030"), ("/shift_jis/", "cp932"), ("/cp1251/", "cp1251")],
)
def test_pages_in_other_encodings_declare_it_where_a_browser_looks(
    path: str, encoding: str
) -> None:
    response = Site(10).respond(Request("GET", path))
    charset = parse_content_type(response.headers["Content-Type"])[1].get("charset")
    assert find_encoding(charset, response.body, sniff=True) == encoding
    assert response.body.decode(encoding).isascii() is False  # Text in its script.
    with pytest.raises(UnicodeDecodeError):
        response.body.decode("utf-8")  # Read as UTF-8, its links would be lost.


@pytest.mark.parametrize(
    ("target", "status"),
    [
        ("/zh-search?q=%D6%D0%CE%C4", 200),  # GBK, as a browser sends it.
        ("/zh-search?q=%E4%B8%AD%E6%96%87", 404),  # UTF-8: not what the page asks for.
        ("/ja-search?q=%83e%83X%83g", 200),
        ("/ru-search?q=%F1%F2%F0%E0%ED%E8%F6%E0", 200),
        ("/ru-search", 404),
    ],
)
def test_query_pages_answer_only_the_query_in_the_linking_pages_encoding(
    target: str, status: int
) -> None:
    assert Site(10).respond(Request("GET", target)).status == status


# --- Sitemaps ---------------------------------------------------------------------------


def test_robots_txt_names_the_sitemap_index() -> None:
    body = Site(10).respond(Request("GET", "/robots.txt", "127.0.0.1:8000")).body
    assert RobotsRules.parse(body).sitemaps() == [BASE + "/sitemap_index.xml"]
    assert body.startswith(ROBOTS_TXT)


def test_sitemaps_list_what_the_oracle_expects() -> None:
    site = Site(10)

    def entries(path: str) -> tuple[bool, list[str]]:
        response = site.respond(Request("GET", path, "127.0.0.1:8000"))
        media_type = response.headers["Content-Type"]
        return read_sitemap(response.body, BASE + path, media_type, 10**6)

    assert entries("/sitemap_index.xml") == (
        True,
        [BASE + "/sitemaps/pages.xml", BASE + "/sitemaps/more.xml.gz"],
    )
    assert entries("/sitemaps/pages.xml")[1][0] == ROOT
    listed = entries("/sitemaps/more.xml.gz")[1]  # Served gzip-compressed.
    assert listed == [BASE + "/sitemap-only/", BASE + "/private/drafts/", "http://example.com/x"]
    only = site.respond(Request("GET", "/sitemap-only/", "127.0.0.1:8000"))
    assert only.status == 200


def test_oracle_with_sitemaps_adds_the_sitemaps_and_the_page_only_they_list() -> None:
    paths = ["/sitemap_index.xml", "/sitemaps/pages.xml", "/sitemaps/more.xml.gz"]
    added = {(BASE + path, 200, None) for path in [*paths, "/sitemap-only/"]}
    assert expected_results(ROOT, 10, sitemaps=True) == expected_results(ROOT, 10) | added
    obeying = expected_results(ROOT, 10, obey_robots=True, sitemaps=True)
    drafts = (BASE + "/private/drafts/", None, None)  # Listed, but disallowed.
    assert obeying == expected_results(ROOT, 10, obey_robots=True) | added | {drafts}


# --- Validators, 304 and editions -----------------------------------------------------------


def get(site: Site, path: str, **headers: str) -> Response:
    """Return the site's answer to a GET for ``path`` with ``headers``."""
    return site.respond(Request("GET", path, "127.0.0.1:8000", headers=headers))


def test_every_200_answer_has_an_etag_and_a_last_modified() -> None:
    site = Site(30)
    for path in ["/", "/pages/3/", "/logo.png", "/robots.txt", "/sitemaps/more.xml.gz"]:
        headers = get(site, path).headers
        assert headers["ETag"].startswith('"') and headers["Last-Modified"].endswith(" GMT")
    assert "ETag" not in get(site, "/missing/1").headers


def test_conditional_requests_get_304_without_a_body() -> None:
    site = Site(30)
    first = get(site, "/pages/3/")
    etag, modified = first.headers["ETag"], first.headers["Last-Modified"]
    for conditions in [
        {"if-none-match": etag},
        {"if-none-match": f'"other", W/{etag}'},
        {"if-none-match": "*"},
        {"if-modified-since": modified},
        {"if-modified-since": "Sun, 06 Nov 2050 08:49:37 GMT"},
    ]:
        answer = get(site, "/pages/3/", **conditions)
        assert (answer.status, answer.body, answer.headers["ETag"]) == (304, b"", etag)
    for conditions in [
        {"if-none-match": '"other"'},
        {"if-none-match": '"other"', "if-modified-since": modified},  # The tag decides.
        {"if-modified-since": "Sun, 06 Nov 1994 08:49:37 GMT"},
        {"if-modified-since": "not a date"},
    ]:
        assert get(site, "/pages/3/", **conditions).status == 200


def test_a_new_edition_revises_exactly_the_changed_pages() -> None:
    site = Site(60)
    first = {n: get(site, f"/pages/{n}/") for n in range(1, 61)}
    site.edition = 2
    second = {n: get(site, f"/pages/{n}/") for n in range(1, 61)}
    revised = {n for n in first if first[n].headers["ETag"] != second[n].headers["ETag"]}
    assert revised == {25, 50}
    assert changed_urls(ROOT, 60) == {f"{BASE}/pages/25/", f"{BASE}/pages/50/"}
    dates = [
        email.utils.parsedate_to_datetime(a[25].headers["Last-Modified"]) for a in (first, second)
    ]
    assert dates[1] > dates[0]
    etag = first[25].headers["ETag"]
    assert get(site, "/pages/25/", **{"if-none-match": etag}).status == 200
    with pytest.raises(ValueError, match="the first edition is 1"):
        Site(10, edition=0)


# --- The oracle, URL by URL --------------------------------------------------------


@pytest.mark.parametrize("pages", [10, 14, 57])
@pytest.mark.parametrize("options", [(10, False, False), (0, True, False), (2, True, True)])
def test_the_oracle_places_each_result_and_finds_it_by_its_url(
    pages: int, options: tuple[int, bool, bool]
) -> None:
    oracle = Oracle(ROOT, pages, *options)
    results = list(oracle.results())
    assert len(results) == len(oracle) == len(expected_results(ROOT, pages, *options))
    assert set(results) == expected_results(ROOT, pages, *options)
    assert [oracle.slot(url) for url, _, _ in results] == list(range(len(oracle)))
    assert [oracle.result(slot) for slot in range(len(oracle))] == results


@pytest.mark.parametrize(
    "path",
    ["pages/0/", "pages/011/", "pages/15/", "pages/3/x", "archive/1", "archive/2/", "hidden/"],
)
def test_the_oracle_expects_no_other_url(path: str) -> None:
    assert Oracle(ROOT, 14).slot(ROOT + path) is None  # 14 pages: one archive page.
    assert Oracle(ROOT, 14).slot("http://example.com/pages/1/") is None
    with pytest.raises(IndexError):
        Oracle(ROOT, 14).result(len(Oracle(ROOT, 14)))


def test_the_oracle_check_takes_each_result_once_and_nothing_else() -> None:
    oracle = Oracle(ROOT, 10)
    check = OracleCheck(oracle)
    results = list(oracle.results())
    for result in results[1:]:
        check.see(*result)
    assert not check.matches() and list(check.missing()) == [results[0]]
    check.see(*results[0])
    assert check.matches() and list(check.missing()) == []
    check.see(*results[0])  # Twice: one record too many.
    check.see(results[1][0], 503, None)  # An answer the site does not give.
    check.see(ROOT + "elsewhere/", 200, None)
    assert not check.matches() and (check.unexpected, check.recorded) == (3, len(oracle) + 3)
    assert check.shown == sorted([results[0], (results[1][0], 503, None),
                                  (ROOT + "elsewhere/", 200, None)], key=str)  # fmt: skip
    assert len(check.seen) == len(oracle)  # A byte per result: what it keeps.


def test_a_site_that_counts_no_paths_keeps_the_total() -> None:
    site = Site(10, count_paths=False)
    for target in ["/", "/pages/1/", "/"]:
        with site.counters.counting(target):
            pass
    assert site.counters.requests.total() == 3 and len(site.counters.requests) == 0
    site.counters.reset()
    assert site.counters.requests.total() == 0

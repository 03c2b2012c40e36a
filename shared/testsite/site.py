"""The local test site: a generated website that every stage crawls.

The site has ``pages`` numbered content pages (``/pages/1/`` ...) linked
to each other and from archive pages, plus one of each awkward thing a
crawler meets on the web: trailing-slash redirects, a redirect chain, a
redirect cycle, two redirects joining on one page, links to missing pages,
a server error, off-site and non-http links, fragments, queries, ``../``
links, a ``<base href>``, a link repeated a thousand times, links hidden in
comments and scripts, an XML feed, an image, plain text, a latin-1 page, and
pages in GBK, Shift_JIS and windows-1251 with non-ASCII paths and queries.
Its ``/robots.txt`` disallows a part of it, as real sites do: a crawl that
obeys it skips that part, one that ignores it fetches everything.  It
also names a sitemap index, whose sitemaps (one gzip-compressed) list a
page no link reaches.  Every 200 answer has an ETag and a Last-Modified
date, a conditional request for an unchanged page gets 304, and the
site's next edition (``edition=2``) revises a few pages, for a recrawl.

Every page is generated on request from its number, so the site is the same
on every run and costs nothing to scale to 100 000 pages.  Because the site
knows its own link graph, ``expected_results`` states exactly what a full
crawl must record: the oracle that the acceptance suite checks against.

The site itself does no I/O: ``Site.respond`` turns a ``Request`` (method,
target, host) into a ``Response`` (status, headers, body).  Any server can
serve it, and this module imports none: ``shared.testsite.server.make_app`` wraps it
in an aiohttp application, and stage 2's own HTTP server
(``stage2_generators.server.http_server``) serves the very same object.
Like the rest of ``shared/``, this module imports no stage: the stages
import it.  To add a page, write a handler ``(site, request) ->
Response`` and add a ``Route`` to ``ROUTES`` (``exact`` for a fixed path);
if a full crawl reaches it, add it to ``expected_results`` too.

Run it by hand to browse it (the second line serves it with stage 2's
server instead of aiohttp.web)::

    python -m shared.testsite --port 8000 --pages 300 --latency-ms 0
    python -m stage2_generators.server --port 8000
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import datetime
import email.utils
import gzip
import hashlib
import math
import re
import sys
import urllib.parse
from collections import Counter
from collections.abc import Callable, Iterator, Mapping

DEFAULT_PAGES = 300
MIN_PAGES = 10  # The home page links to pages 1 to 6 by number.
ARCHIVE_SIZE = 50  # Content pages listed on one archive page.
CHAIN = [302, 303, 307, 308]  # Statuses of the redirect chain's hops.
PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360000002000001e221bc330000000049454e44ae426082"
)
WORDS = (
    "event loop socket selector callback future task coroutine generator "
    "frame yield queue crawler fetch redirect link page thread await"
).split()

# --- Requests and responses, without I/O ------------------------------------------


@dataclasses.dataclass(frozen=True)
class Request:
    """What the site needs to know of a request.

    ``target`` is the request target as sent (percent-encoded path and
    query); ``host`` is the Host header; ``params`` are the named groups of
    the route that matched, filled in by ``Site.respond``; ``headers`` are
    the request's headers, of which the site reads the conditional ones.
    """

    method: str
    target: str
    host: str = ""
    params: Mapping[str, str] = dataclasses.field(default_factory=dict)
    headers: Mapping[str, str] = dataclasses.field(default_factory=dict)  # Lower-case names.

    @property
    def path(self) -> str:
        """The target's path, percent-decoded (``/caf%C3%A9/`` is ``/café/``)."""
        return urllib.parse.unquote(self.target.partition("?")[0], errors="replace")

    @property
    def query(self) -> dict[str, str]:
        """The target's query parameters, the first value of each name."""
        pairs = urllib.parse.parse_qsl(self.target.partition("?")[2], keep_blank_values=True)
        return dict(reversed(pairs))


@dataclasses.dataclass(frozen=True)
class Response:
    """A whole answer: status, headers (without Content-Length) and body."""

    status: int
    headers: Mapping[str, str] = dataclasses.field(default_factory=dict)
    body: bytes = b""


def html_page(title: str, body: str, charset: str = "utf-8") -> Response:
    """Return an HTML response with the given title and body markup."""
    text = (
        f'<!DOCTYPE html>\n<html><head><meta charset="{charset}">'
        f"<title>{title}</title></head>\n<body><h1>{title}</h1>\n{body}\n</body></html>\n"
    )
    return Response(200, {"Content-Type": f"text/html; charset={charset}"}, text.encode(charset))


def text_response(status: int, text: str) -> Response:
    """Return a plain-text response, as servers send with an error or a redirect."""
    return Response(status, {"Content-Type": "text/plain; charset=utf-8"}, text.encode())


def not_found() -> Response:
    """Return the answer for a path the site does not have."""
    return text_response(404, "404: Not Found")


def redirect(location: str, status: int = 302) -> Response:
    """Return a redirect to ``location``."""
    return Response(status, {"Location": location})


def link_list(hrefs: list[str]) -> str:
    """Return markup linking to each href in turn."""
    return "\n".join(f'<p><a href="{href}">{href}</a></p>' for href in hrefs)


def filler(number: int, sentences: int = 12) -> str:
    """Return deterministic paragraph text for page ``number`` (about 1 KB)."""
    out, state = [], number * 2654435761 % 2**32
    for _ in range(sentences):
        words = []
        for _ in range(8):
            state = (state * 1103515245 + 12345) % 2**31
            words.append(WORDS[state % len(WORDS)])
        out.append(" ".join(words).capitalize() + ".")
    return "<p>" + " ".join(out) + "</p>"


# --- The content pages ---------------------------------------------------


def content_links(number: int, pages: int) -> list[str]:
    """Return the hrefs on content page ``number``, as written in the page."""
    hrefs = []
    if number > 1:
        hrefs.append(f"../{number - 1}/")  # Relative to /pages/N/.
    if number < pages:
        hrefs.append(f"/pages/{number + 1}/")
    hrefs += [
        f"/archive/{archive_of(number)}/",
        "/",
        f"/pages/{number * 7 % pages + 1}",  # No trailing slash: redirects.
        "#top",
        f"/pages/{number}/#comments",
        f"/search?q={number % 3}",
        f"/missing/{number % 5}",
        f"https://example.com/ref/{number}",
    ]
    return hrefs


def archive_of(number: int) -> int:
    """Return the number of the archive page that lists content page ``number``."""
    return (number - 1) // ARCHIVE_SIZE + 1


def content_page(site: Site, request: Request) -> Response:
    number = int(request.params["number"])
    if not 1 <= number <= site.pages:
        return not_found()
    body = '<a name="top"></a>' + filler(number) + link_list(content_links(number, site.pages))
    if not changed_in(number, site.edition):
        return html_page(f"Page {number}", body)
    revised = html_page(f"Page {number}", f"<p>Revised in edition {site.edition}.</p>{body}")
    return dataclasses.replace(
        revised, headers={**revised.headers, "Last-Modified": published(site.edition)}
    )


# --- Editions: pages that change between two crawls, for a recrawl -------------------
#
# Every answer carries an ETag (a hash of its body) and a Last-Modified date,
# and a request whose If-None-Match or If-Modified-Since shows the client's
# copy is current gets 304 Not Modified, with no body.  In edition 2 and
# later (``Site(edition=2)``, ``--edition 2``), every CHANGED_EVERY-th
# content page is revised, so a recrawl finds exactly those.

CHANGED_EVERY = 25
FIRST_PUBLISHED = 1_793_606_400  # 2026-11-02 08:00:00 UTC, on the wall clock.


def changed_in(number: int, edition: int) -> bool:
    """Tell whether content page ``number`` differs in ``edition`` from the first."""
    return edition > 1 and number % CHANGED_EVERY == 0


def published(edition: int) -> str:
    """Return the Last-Modified date of what changed in ``edition`` (a day each)."""
    return email.utils.formatdate(FIRST_PUBLISHED + 86_400 * (edition - 1), usegmt=True)


def entity_tag(body: bytes) -> str:
    """Return a strong ETag for ``body``: a short hash of its bytes."""
    return '"' + hashlib.sha256(body).hexdigest()[:16] + '"'


def with_validators(request: Request, response: Response) -> Response:
    """Add an ETag and a Last-Modified to a 200 answer; 304 if the client's copy is current."""
    if response.status != 200:
        return response
    validators = {"ETag": entity_tag(response.body), "Last-Modified": published(1)}
    validators |= {name: response.headers[name] for name in validators if name in response.headers}
    if is_current(request.headers, validators):
        return Response(304, validators)
    return Response(200, {**response.headers, **validators}, response.body)


def is_current(conditions: Mapping[str, str], validators: Mapping[str, str]) -> bool:
    """Tell whether a request's conditions show its copy is current (RFC 9110, 13.2.2)."""
    tags = conditions.get("if-none-match")
    if tags is not None:  # It wins over If-Modified-Since when both are sent.
        listed = [tag.strip().removeprefix("W/") for tag in tags.split(",")]
        return "*" in listed or validators["ETag"] in listed
    since = conditions.get("if-modified-since")
    if since is None:
        return False
    try:
        asked = email.utils.parsedate_to_datetime(since)
    except (TypeError, ValueError, IndexError, OverflowError):
        return False  # A date that cannot be read is ignored, as RFC 9110 asks.
    if asked.tzinfo is None:
        asked = asked.replace(tzinfo=datetime.UTC)
    return email.utils.parsedate_to_datetime(validators["Last-Modified"]) <= asked


def slashless_page(site: Site, request: Request) -> Response:
    return redirect(f"/pages/{request.params['number']}/", 301)


def archive_index(site: Site, request: Request) -> Response:
    count = math.ceil(site.pages / ARCHIVE_SIZE)
    return html_page("Archive", link_list([f"{k}/" for k in range(1, count + 1)]))


def archive_page(site: Site, request: Request) -> Response:
    k = int(request.params["k"])
    first = (k - 1) * ARCHIVE_SIZE + 1
    if not 1 <= first <= site.pages:
        return not_found()
    last = min(first + ARCHIVE_SIZE - 1, site.pages)
    hrefs = [f"/pages/{n}/" for n in range(first, last + 1)] + ["/archive/"]
    return html_page(f"Archive {k}", link_list(hrefs))


def search_page(site: Site, request: Request) -> Response:
    query = request.query.get("q", "")
    return html_page(f"Search: {query}", link_list(["/pages/1/"]))


# --- The home page and the awkward cases -----------------------------------

HOME_LINKS = [
    "/pages/1/",
    "/archive/",
    "/redirect/chain/0",
    "/redirect/cycle/a",
    "/redirect/foo",
    "/redirect/bar",
    "/redirect/offsite",
    "/redirect/ftp",
    "/error/500",
    "/base/",
    "/repeat/",
    "/feed.xml",
    "/xhtml/",
    "/logo.png",
    "/notes.txt",
    "/latin1/",
    "/gbk/",
    "/shift_jis/",
    "/cp1251/",
    "/missing/home",
    "/private/",  # Disallowed by robots.txt...
    "/private/open/",  # ...but for this part of it.
    "/archive/?print=1",  # Disallowed by a robots.txt wildcard.
    "/search?q=1&amp;lang=en",  # The parser decodes &amp; to &.
    "  /pages/2/  ",  # Whitespace around an href is stripped.
    "/pages/3/#comments",  # The fragment is dropped.
    "#top",  # The home page itself.
    "",  # An empty href is the page itself too.
    "http://[oops/",  # Unparseable: skipped.
    "http://example.com/",  # Off-site.
    "https://www.python.org/",
    "//example.org/protocol-relative",
    "mailto:reader@example.com",  # Not http or https.
    "javascript:void(0)",
    "ftp://127.0.0.1/pub/",
    "tel:+15550100",
]

HOME_EXTRAS = """
<map name="m"><area shape="rect" coords="0,0,1,1" href="/area-target/"></map>
<link rel="stylesheet" href="/style.css">
<A HREF="/pages/4/">upper-case tag</A> <a href=/pages/5/>unquoted</a>
<a name="no-href">no href</a> <a href="HTTP://{host}/pages/6/">upper-case scheme</a>
<!-- <a href="/hidden/comment/">a link in a comment</a> -->
<script>document.write('<a href="/hidden/script/">');</script>
<style>/* <a href="/hidden/style/"> */</style>
"""


def home_page(site: Site, request: Request) -> Response:
    extras = HOME_EXTRAS.replace("{host}", request.host)
    return html_page("Crawler test site", link_list(HOME_LINKS) + extras)


def chain_redirect(site: Site, request: Request) -> Response:
    """Four hops with four statuses and three styles of Location."""
    k = int(request.params["k"])
    if k >= len(CHAIN):
        return not_found()
    targets = [
        f"http://{request.host}/redirect/chain/1",  # Absolute.
        "/redirect/chain/2",  # Absolute path.
        "3",  # Relative to /redirect/chain/2.
        "/redirect/chain-end/",
    ]
    return redirect(targets[k], CHAIN[k])


def cycle_redirect(site: Site, request: Request) -> Response:
    other = "b" if request.params["name"] == "a" else "a"
    return redirect(f"/redirect/cycle/{other}")


def server_error(site: Site, request: Request) -> Response:
    return text_response(500, "this page always fails")


PageHandler = Callable[["Site", Request], Response]


def redirect_to(location: str, status: int = 302) -> PageHandler:
    """Return a handler that redirects to ``location``."""
    return lambda site, request: redirect(location, status)


def static(body: bytes, content_type: str) -> PageHandler:
    """Return a handler that serves fixed bytes."""
    return lambda site, request: Response(200, {"Content-Type": content_type}, body)


def page(title: str, hrefs: tuple[str, ...] = ()) -> PageHandler:
    """Return a handler that serves a small HTML page linking to ``hrefs``."""
    return lambda site, request: html_page(title, link_list(list(hrefs)))


BASE_PAGE = '<base href="/pages/">' + link_list(["2/", "3/"])
REPEAT_PAGE = '<a href="/pages/1/">again</a>\n' * 1000
FEED = b"""<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom"><title>Test site feed</title>
<link href="/"/><entry><title>Only in the feed</title>
<link href="/feed-only/"/></entry></feed>
"""
XHTML = b"""<?xml version="1.0" encoding="utf-8"?>
<html xmlns="http://www.w3.org/1999/xhtml"><head><title>XHTML</title></head>
<body><p><a href="/xhtml-only/">a page linked only from XHTML</a></p></body></html>
"""
NOTES = b'Plain text is not parsed: <a href="/hidden/text/">not a link</a>\n'
# --8<-- [start:robots_txt]
ROBOTS_TXT = b"""# The test site's robots.txt: what a polite crawler leaves alone.
User-agent: *
Disallow: /private/
Allow: /private/open/
Disallow: /*?print=
"""
# --8<-- [end:robots_txt]


# --- Sitemaps -------------------------------------------------------------------
#
# robots.txt names a sitemap index, which lists a sitemap of a few pages and
# a gzip-compressed one that lists a page no link reaches, a page robots.txt
# disallows and an off-site page.  Only a crawl with --sitemaps finds them.

SITEMAP_INDEX = "/sitemap_index.xml"
SITEMAP_NAMESPACE = "http://www.sitemaps.org/schemas/sitemap/0.9"
SITEMAP_ENTRIES = {
    "/sitemaps/pages.xml": ["/", "/pages/1/", "/pages/2/", "/archive/"],
    "/sitemaps/more.xml.gz": ["/sitemap-only/", "/private/drafts/", "http://example.com/x"],
}


def sitemap_xml(root: str, entry: str, locations: list[str], host: str) -> bytes:
    """Return a sitemap document: ``root`` holds one ``entry`` per location."""
    base = f"http://{host}"
    items = "".join(
        f"<{entry}><loc>{location if '://' in location else base + location}</loc></{entry}>"
        for location in locations
    )
    head = f'<?xml version="1.0" encoding="UTF-8"?>\n<{root} xmlns="{SITEMAP_NAMESPACE}">'
    return f"{head}{items}</{root}>\n".encode()


def robots_txt(site: Site, request: Request) -> Response:
    sitemap = f"Sitemap: http://{request.host}{SITEMAP_INDEX}\n"
    return Response(
        200, {"Content-Type": "text/plain; charset=utf-8"}, ROBOTS_TXT + sitemap.encode()
    )


def sitemap_index(site: Site, request: Request) -> Response:
    body = sitemap_xml("sitemapindex", "sitemap", list(SITEMAP_ENTRIES), request.host)
    return Response(200, {"Content-Type": "application/xml"}, body)


def sitemap(site: Site, request: Request) -> Response:
    body = sitemap_xml("urlset", "url", SITEMAP_ENTRIES[request.path], request.host)
    if request.path.endswith(".gz"):
        return Response(200, {"Content-Type": "application/gzip"}, gzip.compress(body, mtime=0))
    return Response(200, {"Content-Type": "application/xml"}, body)


LATIN1 = (
    "<html><head><title>Caf\xe9</title></head><body>"
    '<p>Un caf\xe9, s\'il vous pla\xeet.</p><a href="/caf\xe9/">caf\xe9</a></body></html>'
).encode("latin-1")


# --- Pages in other encodings -----------------------------------------------------
#
# Each page links to a path and a query in its own script.  A browser sends
# the path in UTF-8 and the query in the page's encoding, percent-encoded;
# the query pages answer 404 to any other spelling, so a crawler that reads
# a page in the wrong encoding, or encodes a query wrongly, misses a page.


def encoded_page(title: str, hrefs: list[str], encoding: str, declared: str) -> bytes:
    """Return an HTML page in ``encoding`` whose head carries ``declared`` markup."""
    links = "".join(f'<p><a href="{href}">{href}</a></p>' for href in hrefs)
    text = f"<html><head>{declared}<title>{title}</title></head><body>{links}</body></html>"
    return text.encode(encoding)


def query_page(expected: str) -> PageHandler:
    """Return a handler that answers 200 only to the query string ``expected``, as sent."""

    def handler(site: Site, request: Request) -> Response:
        if request.target.partition("?")[2] != expected:
            return not_found()
        return html_page("Found", link_list(["/"]))

    return handler


CHINESE, JAPANESE, RUSSIAN = (
    "\u4e2d\u6587",
    "\u65e5\u672c\u8a9e",
    "\u0441\u0442\u0440\u0430\u043d\u0438\u0446\u0430",
)
# GBK, declared only in a <meta charset>: the header says text/html and nothing more.
GBK = encoded_page(
    CHINESE, [f"/{CHINESE}/\u9875\u9762/", f"/zh-search?q={CHINESE}"], "gbk", '<meta charset="gbk">'
)
# Shift_JIS, declared only in the Content-Type header.
SHIFT_JIS = encoded_page(
    JAPANESE, [f"/{JAPANESE}/", "/ja-search?q=\u30c6\u30b9\u30c8"], "shift_jis", ""
)
# windows-1251, declared only in a <meta http-equiv="Content-Type">.
CP1251 = encoded_page(
    RUSSIAN,
    [f"/{RUSSIAN}/", f"/ru-search?q={RUSSIAN}"],
    "cp1251",
    '<meta http-equiv="Content-Type" content="text/html; charset=windows-1251">',
)
# What a browser requests for those links: UTF-8 paths, queries in the page's encoding.
ENCODED_PAGES = [
    "/gbk/",
    "/%E4%B8%AD%E6%96%87/%E9%A1%B5%E9%9D%A2/",
    "/zh-search?q=%D6%D0%CE%C4",
    "/shift_jis/",
    "/%E6%97%A5%E6%9C%AC%E8%AA%9E/",
    "/ja-search?q=%83e%83X%83g",
    "/cp1251/",
    "/%D1%81%D1%82%D1%80%D0%B0%D0%BD%D0%B8%D1%86%D0%B0/",
    "/ru-search?q=%F1%F2%F0%E0%ED%E8%F6%E0",
]


# --- Routing: the whole site as one function of the request --------------------------


@dataclasses.dataclass(frozen=True)
class Route:
    """A path pattern (a regular expression matched whole) and its handler."""

    pattern: str
    handler: PageHandler
    regex: re.Pattern[str] = dataclasses.field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "regex", re.compile(self.pattern))  # Compiled once.


def exact(path: str, handler: PageHandler) -> Route:
    """Return a route for exactly ``path``."""
    return Route(re.escape(path), handler)


ROUTES = (
    exact("/", home_page),
    Route(r"/pages/(?P<number>[0-9]+)/", content_page),
    Route(r"/pages/(?P<number>[0-9]+)", slashless_page),
    exact("/archive/", archive_index),
    Route(r"/archive/(?P<k>[0-9]+)/", archive_page),
    exact("/search", search_page),
    Route(r"/redirect/chain/(?P<k>[0-9]+)", chain_redirect),
    exact("/redirect/chain-end/", page("End of the chain")),
    Route(r"/redirect/cycle/(?P<name>[ab])", cycle_redirect),
    exact("/redirect/foo", redirect_to("/redirect/baz/")),
    exact("/redirect/bar", redirect_to("/redirect/baz/", 301)),
    exact("/redirect/baz/", page("Two redirects join here")),
    exact("/redirect/offsite", redirect_to("http://example.com/")),
    exact("/redirect/ftp", redirect_to("ftp://127.0.0.1/file.txt")),
    exact("/error/500", server_error),
    exact("/base/", static(html_page("Base", BASE_PAGE).body, "text/html")),
    exact("/repeat/", static(html_page("Repeat", REPEAT_PAGE).body, "text/html")),
    exact("/feed.xml", static(FEED, "application/xml")),
    exact("/feed-only/", page("Linked from the feed only")),
    exact("/xhtml/", static(XHTML, "application/xhtml+xml; charset=utf-8")),
    exact("/xhtml-only/", page("Linked from XHTML only")),
    exact("/logo.png", static(PNG, "image/png")),
    exact("/notes.txt", static(NOTES, "text/plain; charset=utf-8")),
    exact("/style.css", static(b"body { font-family: serif; }\n", "text/css")),
    exact("/area-target/", page("Linked from an image map")),
    exact("/latin1/", static(LATIN1, "text/html; charset=iso-8859-1")),
    exact("/caf\xe9/", page("Caf\xe9", ("/latin1/",))),
    exact("/robots.txt", robots_txt),
    exact(SITEMAP_INDEX, sitemap_index),
    *(exact(path, sitemap) for path in SITEMAP_ENTRIES),
    exact("/sitemap-only/", page("Listed in the sitemap only", ("/",))),
    exact("/private/", page("Private", ("/private/drafts/",))),
    exact("/private/drafts/", page("Drafts: found only by ignoring robots.txt")),
    exact("/private/open/", page("Open to crawlers")),
    exact("/gbk/", static(GBK, "text/html")),
    exact(f"/{CHINESE}/\u9875\u9762/", page(CHINESE)),
    exact("/zh-search", query_page("q=%D6%D0%CE%C4")),
    exact("/shift_jis/", static(SHIFT_JIS, "text/html; charset=Shift_JIS")),
    exact(f"/{JAPANESE}/", page(JAPANESE)),
    exact("/ja-search", query_page("q=%83e%83X%83g")),
    exact("/cp1251/", static(CP1251, "text/html")),
    exact(f"/{RUSSIAN}/", page(RUSSIAN)),
    exact("/ru-search", query_page("q=%F1%F2%F0%E0%ED%E8%F6%E0")),
)
METHODS = ("GET", "HEAD")  # A server sends HEAD's answer without its body.


class TotalOnly(Counter[str]):
    """A count of requests that keeps their total, not one count per path.

    A site of a million pages served to a crawl that reads no counts per
    path need not keep one for each: ``site.counters.requests[target] += 1``
    adds to ``total()`` and stores nothing.
    """

    def __init__(self) -> None:
        super().__init__()
        self.counted = 0

    def __setitem__(self, key: str, value: int) -> None:
        self.counted += value  # The item read before was 0: none is stored.

    def total(self) -> int:
        """Return how many requests came."""
        return self.counted

    def clear(self) -> None:
        """Forget the requests counted so far."""
        self.counted = 0


@dataclasses.dataclass
class SiteCounters:
    """What the server saw: requests in flight now and at most, and per path."""

    in_flight: int = 0
    max_in_flight: int = 0
    requests: Counter[str] = dataclasses.field(default_factory=Counter)

    def reset(self) -> None:
        """Forget everything counted so far."""
        self.in_flight = self.max_in_flight = 0
        self.requests.clear()

    @contextlib.contextmanager
    def counting(self, target: str) -> Iterator[None]:
        """Count a request for ``target`` as in flight while the block runs."""
        self.requests[target] += 1
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            yield
        finally:
            self.in_flight -= 1


class Site:
    """The test site: ``respond`` answers a request, with no I/O.

    ``latency`` is for the server: seconds to wait before each answer.
    ``edition`` above 1 revises some pages (see ``changed_in``).
    ``routes`` may be extended, as the benchmark does with its own pages.
    Without ``count_paths``, ``counters.requests`` keeps only the total.
    Raises ValueError when ``pages`` is below MIN_PAGES, latency is negative
    or edition is below 1.
    """

    def __init__(
        self,
        pages: int = DEFAULT_PAGES,
        latency: float = 0.0,
        edition: int = 1,
        count_paths: bool = True,
    ) -> None:
        if pages < MIN_PAGES:
            raise ValueError(f"the site needs at least {MIN_PAGES} pages, not {pages}")
        if latency < 0:
            raise ValueError(f"latency cannot be negative: {latency}")
        if edition < 1:
            raise ValueError(f"the first edition is 1, not {edition}")
        self.pages = pages
        self.latency = latency
        self.edition = edition  # May change while the site runs: a new edition.
        # Without count_paths, the requests are counted but not by path (TotalOnly).
        self.counters = SiteCounters() if count_paths else SiteCounters(requests=TotalOnly())
        self.routes = list(ROUTES)

    def respond(self, request: Request) -> Response:
        """Return the site's answer to ``request``."""
        path = request.path
        for route in self.routes:
            match = route.regex.fullmatch(path)
            if match is None:
                continue
            if request.method not in METHODS:
                allow = {"Allow": ", ".join(METHODS), "Content-Type": "text/plain; charset=utf-8"}
                return Response(405, allow, b"405: Method Not Allowed")
            response = route.handler(self, dataclasses.replace(request, params=match.groupdict()))
            return with_validators(request, response)
        return not_found()


# --- The oracle ----------------------------------------------------------------

Result = tuple[str, "int | None", "str | None"]
# A URL of a numbered page: a content page, its address without the slash, an archive page.
NUMBERED = re.compile(r"/(pages|archive)/([1-9][0-9]*)(/?)")


def expected_results(
    root_url: str,
    pages: int = DEFAULT_PAGES,
    max_redirect: int = 10,
    obey_robots: bool = False,
    sitemaps: bool = False,
) -> set[Result]:
    """Return the ``(url, status, next_url)`` of every URL a full crawl records.

    ``root_url`` is the address the site is served at, such as
    ``http://127.0.0.1:8000/``; the crawl starts there.  Redirect targets that
    no page links to are only reached while ``max_redirect`` allows.  With
    ``obey_robots``, the URLs robots.txt disallows are recorded as skipped:
    no status, and the pages only they link to are never found.  With
    ``sitemaps``, the sitemaps and the page only they list are found too.
    """
    return set(Oracle(root_url, pages, max_redirect, obey_robots, sitemaps).results())


class Oracle:
    """What a full crawl records, URL by URL, worked out when asked (see ``expected_results``).

    A set of every result holds each URL again: a crawl of a million pages
    would keep two million results beside its own records.  Most of the
    site is numbered, so the oracle keeps only the few other results; a
    numbered page's result comes from its number.  Each result has a place,
    ``slot(url)``, from 0 to ``len(oracle)``, which ``OracleCheck`` marks.
    """

    def __init__(
        self,
        root_url: str,
        pages: int = DEFAULT_PAGES,
        max_redirect: int = 10,
        obey_robots: bool = False,
        sitemaps: bool = False,
    ) -> None:
        self.base = root_url.rstrip("/")
        self.pages = pages
        self.archives = math.ceil(pages / ARCHIVE_SIZE)
        # /pages/N redirects to /pages/N/ for the N a content page links to,
        # n * 7 % pages + 1: every N - 1 that is a multiple of gcd(7, pages).
        self.every = math.gcd(7, pages)
        self.redirects = (pages - 1) // self.every + 1
        self.others = sorted(other_results(self.base, max_redirect, obey_robots, sitemaps))
        self.places = {url: place for place, (url, _, _) in enumerate(self.others)}

    def __len__(self) -> int:
        return len(self.others) + self.pages + self.redirects + self.archives

    def slot(self, url: str) -> int | None:
        """Return the place of ``url``'s result, or None when a full crawl does not record it."""
        place = self.places.get(url)
        if place is not None or not url.startswith(self.base):
            return place
        found = NUMBERED.fullmatch(url, len(self.base))
        if found is None:
            return None
        kind, digits, slash = found.groups()
        number, first = int(digits), len(self.others)
        if kind == "archive":
            first += self.pages + self.redirects
            return first + number - 1 if slash and number <= self.archives else None
        if number > self.pages:
            return None
        if slash:
            return first + number - 1
        if (number - 1) % self.every == 0:
            return first + self.pages + (number - 1) // self.every
        return None

    def result(self, slot: int) -> Result:
        """Return the result at ``slot``.  Raises IndexError outside 0 to ``len(self)``."""
        if not 0 <= slot < len(self):
            raise IndexError(f"no result at {slot}")
        if slot < len(self.others):
            return self.others[slot]
        slot -= len(self.others)
        if slot < self.pages:
            return (f"{self.base}/pages/{slot + 1}/", 200, None)
        slot -= self.pages
        if slot < self.redirects:
            url = f"{self.base}/pages/{slot * self.every + 1}"
            return (url, 301, url + "/")
        return (f"{self.base}/archive/{slot - self.redirects + 1}/", 200, None)

    def results(self) -> Iterator[Result]:
        """Yield every result, one at a time, in the order of their places."""
        for slot in range(len(self)):
            yield self.result(slot)


class OracleCheck:
    """Check a crawl's records against the oracle as they come, with a byte per URL.

    ``see`` takes one record; ``matches`` tells, at the end, whether the
    records were exactly the oracle's results, each once.  A result the
    oracle does not have, or has already seen, is unexpected.
    """

    SHOWN = 10  # Unexpected results kept to show: the first in sorted order.

    def __init__(self, oracle: Oracle) -> None:
        self.oracle = oracle
        self.seen = bytearray(len(oracle))
        self.recorded = self.unexpected = 0
        self.shown: list[Result] = []

    def see(self, url: str, status: int | None, next_url: str | None) -> None:
        """Check one record's URL, status and redirect target."""
        self.recorded += 1
        slot = self.oracle.slot(url)
        if slot is None or self.seen[slot] or self.oracle.result(slot) != (url, status, next_url):
            self.unexpected += 1
            self.shown = sorted([*self.shown, (url, status, next_url)], key=str)[: self.SHOWN]
            return
        self.seen[slot] = 1

    def missing(self) -> Iterator[Result]:
        """Yield the results no record has matched yet."""
        for slot in range(len(self.oracle)):
            if not self.seen[slot]:
                yield self.oracle.result(slot)

    def matches(self) -> bool:
        """Tell whether the records seen are the oracle's results, each exactly once."""
        return self.unexpected == 0 and self.recorded == len(self.oracle)


def other_results(base: str, max_redirect: int, obey_robots: bool, sitemaps: bool) -> set[Result]:
    """Return the results of the URLs that are not numbered pages (see ``expected_results``)."""
    found = ["/", "/archive/", "/base/", "/repeat/", "/feed.xml", "/feed-only/"]
    found += ["/xhtml/", "/xhtml-only/", "/logo.png", "/notes.txt", "/style.css"]
    found += ["/area-target/", "/latin1/", "/caf%C3%A9/", "/search?q=1&lang=en"]
    found += ENCODED_PAGES
    found += [f"/search?q={q}" for q in range(3)]
    results: set[Result] = {(base + path, 200, None) for path in found}
    missing = ["/missing/home"] + [f"/missing/{k}" for k in range(5)]
    results |= {(base + path, 404, None) for path in missing}
    results.add((base + "/error/500", 500, None))
    results.add((base + "/redirect/offsite", 302, "http://example.com/"))
    results.add((base + "/redirect/ftp", 302, "ftp://127.0.0.1/file.txt"))
    results |= _reached_by_redirects(base, max_redirect)
    results.add((base + "/private/open/", 200, None))
    disallowed = ["/private/", "/archive/?print=1"]
    if obey_robots:
        results |= {(base + path, None, None) for path in disallowed}
    else:
        results |= {(base + path, 200, None) for path in [*disallowed, "/private/drafts/"]}
    if sitemaps:
        listed = [SITEMAP_INDEX, *SITEMAP_ENTRIES, "/sitemap-only/"]
        results |= {(base + path, 200, None) for path in listed}
        if obey_robots:  # A sitemap lists it; robots.txt still disallows it.
            results.add((base + "/private/drafts/", None, None))
    return results


def changed_urls(root_url: str, pages: int = DEFAULT_PAGES, edition: int = 2) -> set[str]:
    """Return the URLs whose answer differs in ``edition`` from the first edition."""
    base = root_url.rstrip("/")
    return {f"{base}/pages/{n}/" for n in range(1, pages + 1) if changed_in(n, edition)}


def _reached_by_redirects(base: str, max_redirect: int) -> set[Result]:
    """Return the results of the chain, the cycle and the join."""
    chain = [f"{base}/redirect/chain/{k}" for k in range(len(CHAIN))]
    chain.append(f"{base}/redirect/chain-end/")
    results: set[Result] = set()
    # The hop at depth d is fetched with d redirects already spent.
    for depth, status in enumerate(CHAIN):
        if depth <= max_redirect:
            results.add((chain[depth], status, chain[depth + 1]))
    if len(CHAIN) <= max_redirect:
        results.add((chain[-1], 200, None))
    cycle_a, cycle_b = f"{base}/redirect/cycle/a", f"{base}/redirect/cycle/b"
    baz = f"{base}/redirect/baz/"
    results |= {(cycle_a, 302, cycle_b)}
    results |= {(f"{base}/redirect/foo", 302, baz), (f"{base}/redirect/bar", 301, baz)}
    if max_redirect >= 1:
        results |= {(cycle_b, 302, cycle_a), (baz, 200, None)}
    return results


Serve = Callable[["Site", str, int], None]  # Serves a site on (host, port) until Ctrl+C.


def main(
    argv: list[str] | None = None,
    *,
    prog: str = "python -m shared.testsite",
    serve: Serve,
) -> None:
    """Serve the test site until interrupted, with ``serve``.

    ``python -m shared.testsite`` passes aiohttp.web's (``shared/testsite/
    __main__.py``), stage 2's server its own (``python -m
    stage2_generators.server``): the site itself imports neither.
    """
    parser = argparse.ArgumentParser(prog=prog, description="Serve the crawler's local test site.")
    parser.add_argument(
        "--host", default="127.0.0.1", help="address to bind (default: %(default)s)"
    )
    parser.add_argument(
        "--port", type=int, default=8000, help="port, 0 for any (default: %(default)s)"
    )
    parser.add_argument(
        "--pages", type=int, default=DEFAULT_PAGES, help="content pages (default: %(default)s)"
    )
    parser.add_argument("--latency-ms", type=float, default=0.0, help="delay per response in ms")
    parser.add_argument(
        "--edition",
        type=int,
        default=1,
        help=f"2 or more revises every {CHANGED_EVERY}th page (default: %(default)s)",
    )
    args = parser.parse_args(argv)
    try:
        site = Site(args.pages, args.latency_ms / 1000, args.edition)
    except ValueError as error:
        parser.error(str(error))
    try:
        serve(site, args.host, args.port)
    except KeyboardInterrupt:
        pass  # Ctrl+C is how the reader stops the site.
    except OSError as error:
        sys.exit(f"{prog}: cannot serve on {args.host}:{args.port}: {error}")


def announce(pages: int, host: str, port: int) -> None:
    """Say where the site listens (the real port, when 0 was asked for)."""
    print(f"Test site with {pages} pages on http://{host}:{port}/")
    print("(Press Ctrl+C to stop.)", flush=True)

"""The local test site: a generated website that every stage crawls.

The site has ``pages`` numbered content pages (``/pages/1/`` ...) linked
to each other and from archive pages, plus one of each awkward thing a
crawler meets on the web: trailing-slash redirects, a redirect chain, a
redirect cycle, two redirects joining on one page, links to missing pages,
a server error, off-site and non-http links, fragments, queries, ``../``
links, a ``<base href>``, a link repeated a thousand times, links hidden in
comments and scripts, an XML feed, an image, plain text and a latin-1 page.

Every page is generated on request from its number, so the site is the same
on every run and costs nothing to scale to 100 000 pages.  Because the site
knows its own link graph, ``expected_results`` states exactly what a full
crawl must record: the oracle that the acceptance suite checks against.

Run it by hand to browse it::

    python -m shared.site --port 8000 --pages 300 --latency-ms 0
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import math
import sys
from collections import Counter
from collections.abc import Awaitable, Callable

from aiohttp import web

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

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


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


COUNTERS = web.AppKey("counters", SiteCounters)
PAGES = web.AppKey("pages", int)


def counting_middleware(latency: float):  # noqa: ANN201 - an aiohttp middleware
    """Return a middleware that counts requests and delays each response."""

    @web.middleware
    async def middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
        counters = request.app[COUNTERS]
        counters.requests[request.raw_path] += 1
        counters.in_flight += 1
        counters.max_in_flight = max(counters.max_in_flight, counters.in_flight)
        try:
            if latency > 0:
                await asyncio.sleep(latency)
            return await handler(request)
        finally:
            counters.in_flight -= 1

    return middleware


def html_page(title: str, body: str, charset: str = "utf-8") -> web.Response:
    """Return an HTML response with the given title and body markup."""
    text = (
        f'<!DOCTYPE html>\n<html><head><meta charset="{charset}">'
        f"<title>{title}</title></head>\n<body><h1>{title}</h1>\n{body}\n</body></html>\n"
    )
    return web.Response(body=text.encode(charset), content_type="text/html", charset=charset)


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


async def content_page(request: web.Request) -> web.StreamResponse:
    number, pages = int(request.match_info["number"]), request.app[PAGES]
    if not 1 <= number <= pages:
        raise web.HTTPNotFound()
    body = '<a name="top"></a>' + filler(number) + link_list(content_links(number, pages))
    return html_page(f"Page {number}", body)


async def slashless_page(request: web.Request) -> web.StreamResponse:
    raise web.HTTPMovedPermanently(location=f"/pages/{request.match_info['number']}/")


async def archive_index(request: web.Request) -> web.StreamResponse:
    count = math.ceil(request.app[PAGES] / ARCHIVE_SIZE)
    return html_page("Archive", link_list([f"{k}/" for k in range(1, count + 1)]))


async def archive_page(request: web.Request) -> web.StreamResponse:
    k, pages = int(request.match_info["k"]), request.app[PAGES]
    first = (k - 1) * ARCHIVE_SIZE + 1
    if not 1 <= first <= pages:
        raise web.HTTPNotFound()
    last = min(first + ARCHIVE_SIZE - 1, pages)
    hrefs = [f"/pages/{n}/" for n in range(first, last + 1)] + ["/archive/"]
    return html_page(f"Archive {k}", link_list(hrefs))


async def search_page(request: web.Request) -> web.StreamResponse:
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
    "/missing/home",
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


async def home_page(request: web.Request) -> web.StreamResponse:
    extras = HOME_EXTRAS.replace("{host}", request.host)
    return html_page("Crawler test site", link_list(HOME_LINKS) + extras)


async def chain_redirect(request: web.Request) -> web.StreamResponse:
    """Four hops with four statuses and three styles of Location."""
    k = int(request.match_info["k"])
    if k >= len(CHAIN):
        raise web.HTTPNotFound()
    targets = [
        f"http://{request.host}/redirect/chain/1",  # Absolute.
        "/redirect/chain/2",  # Absolute path.
        "3",  # Relative to /redirect/chain/2.
        "/redirect/chain-end/",
    ]
    return web.Response(status=CHAIN[k], headers={"Location": targets[k]})


async def cycle_redirect(request: web.Request) -> web.StreamResponse:
    other = "b" if request.match_info["name"] == "a" else "a"
    raise web.HTTPFound(location=f"/redirect/cycle/{other}")


def redirect_to(location: str, status: int = 302) -> Handler:
    """Return a handler that redirects to ``location``."""

    async def handler(request: web.Request) -> web.StreamResponse:
        return web.Response(status=status, headers={"Location": location})

    return handler


def static(body: bytes, content_type: str) -> Handler:
    """Return a handler that serves fixed bytes."""

    async def handler(request: web.Request) -> web.StreamResponse:
        return web.Response(body=body, headers={"Content-Type": content_type})

    return handler


def page(title: str, hrefs: list[str] = ()) -> Handler:  # type: ignore[assignment]
    """Return a handler that serves a small HTML page linking to ``hrefs``."""

    async def handler(request: web.Request) -> web.StreamResponse:
        return html_page(title, link_list(list(hrefs)))

    return handler


async def server_error(request: web.Request) -> web.StreamResponse:
    raise web.HTTPInternalServerError(text="this page always fails")


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
LATIN1 = (
    "<html><head><title>Caf\xe9</title></head><body>"
    '<p>Un caf\xe9, s\'il vous pla\xeet.</p><a href="/caf\xe9/">caf\xe9</a></body></html>'
).encode("latin-1")


def make_app(pages: int = DEFAULT_PAGES, latency: float = 0.0) -> web.Application:
    """Return the test site as an aiohttp application.

    Raises ValueError when ``pages`` is below MIN_PAGES or latency is negative.
    """
    if pages < MIN_PAGES:
        raise ValueError(f"the site needs at least {MIN_PAGES} pages, not {pages}")
    if latency < 0:
        raise ValueError(f"latency cannot be negative: {latency}")
    app = web.Application(middlewares=[counting_middleware(latency)])
    app[COUNTERS] = SiteCounters()
    app[PAGES] = pages
    add = app.router.add_get
    add("/", home_page)
    add(r"/pages/{number:\d+}/", content_page)
    add(r"/pages/{number:\d+}", slashless_page)
    add("/archive/", archive_index)
    add(r"/archive/{k:\d+}/", archive_page)
    add("/search", search_page)
    add(r"/redirect/chain/{k:\d+}", chain_redirect)
    add("/redirect/chain-end/", page("End of the chain"))
    add(r"/redirect/cycle/{name:[ab]}", cycle_redirect)
    add("/redirect/foo", redirect_to("/redirect/baz/"))
    add("/redirect/bar", redirect_to("/redirect/baz/", 301))
    add("/redirect/baz/", page("Two redirects join here"))
    add("/redirect/offsite", redirect_to("http://example.com/"))
    add("/redirect/ftp", redirect_to("ftp://127.0.0.1/file.txt"))
    add("/error/500", server_error)
    add("/base/", static(html_page_bytes("Base", BASE_PAGE), "text/html"))
    add("/repeat/", static(html_page_bytes("Repeat", REPEAT_PAGE), "text/html"))
    add("/feed.xml", static(FEED, "application/xml"))
    add("/feed-only/", page("Linked from the feed only"))
    add("/xhtml/", static(XHTML, "application/xhtml+xml; charset=utf-8"))
    add("/xhtml-only/", page("Linked from XHTML only"))
    add("/logo.png", static(PNG, "image/png"))
    add("/notes.txt", static(NOTES, "text/plain; charset=utf-8"))
    add("/style.css", static(b"body { font-family: serif; }\n", "text/css"))
    add("/area-target/", page("Linked from an image map"))
    add("/latin1/", static(LATIN1, "text/html; charset=iso-8859-1"))
    add("/caf\xe9/", page("Caf\xe9", ["/latin1/"]))
    return app


def html_page_bytes(title: str, body: str) -> bytes:
    """Return the bytes of an HTML page, for handlers that serve fixed bytes."""
    return html_page(title, body).body  # type: ignore[return-value]


# --- The oracle ----------------------------------------------------------------

Result = tuple[str, "int | None", "str | None"]


def expected_results(
    root_url: str, pages: int = DEFAULT_PAGES, max_redirect: int = 10
) -> set[Result]:
    """Return the ``(url, status, next_url)`` of every URL a full crawl records.

    ``root_url`` is the address the site is served at, such as
    ``http://127.0.0.1:8000/``; the crawl starts there.  Redirect targets that
    no page links to are only reached while ``max_redirect`` allows.
    """
    base = root_url.rstrip("/")
    archives = math.ceil(pages / ARCHIVE_SIZE)
    found = ["/", "/archive/", "/base/", "/repeat/", "/feed.xml", "/feed-only/"]
    found += ["/xhtml/", "/xhtml-only/", "/logo.png", "/notes.txt", "/style.css"]
    found += ["/area-target/", "/latin1/", "/caf\xe9/", "/search?q=1&lang=en"]
    found += [f"/search?q={q}" for q in range(3)]
    found += [f"/pages/{n}/" for n in range(1, pages + 1)]
    found += [f"/archive/{k}/" for k in range(1, archives + 1)]
    results: set[Result] = {(base + path, 200, None) for path in found}
    missing = ["/missing/home"] + [f"/missing/{k}" for k in range(5)]
    results |= {(base + path, 404, None) for path in missing}
    results.add((base + "/error/500", 500, None))
    for n in {n * 7 % pages + 1 for n in range(1, pages + 1)}:
        results.add((f"{base}/pages/{n}", 301, f"{base}/pages/{n}/"))
    results.add((base + "/redirect/offsite", 302, "http://example.com/"))
    results.add((base + "/redirect/ftp", 302, "ftp://127.0.0.1/file.txt"))
    results |= _reached_by_redirects(base, max_redirect)
    return results


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


def main(argv: list[str] | None = None) -> None:
    """Serve the test site until interrupted."""
    parser = argparse.ArgumentParser(
        prog="python -m shared.site", description="Serve the crawler's local test site."
    )
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
    args = parser.parse_args(argv)
    try:
        app = make_app(args.pages, args.latency_ms / 1000)
    except ValueError as error:
        parser.error(str(error))
    try:
        asyncio.run(serve(app, args.host, args.port, args.pages))
    except KeyboardInterrupt:
        pass  # Ctrl+C is how the reader stops the site.
    except OSError as error:
        sys.exit(f"python -m shared.site: cannot serve on {args.host}:{args.port}: {error}")


async def serve(app: web.Application, host: str, port: int, pages: int) -> None:
    """Serve ``app`` until cancelled, saying where it listens (the real port)."""
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    try:
        await web.TCPSite(runner, host, port, backlog=4096).start()
        bound = runner.addresses[0][1]
        print(f"Test site with {pages} pages on http://{host}:{bound}/")
        print("(Press Ctrl+C to stop.)", flush=True)
        await asyncio.Event().wait()  # Forever: Ctrl+C cancels this.
    finally:
        await runner.cleanup()


if __name__ == "__main__":
    main()

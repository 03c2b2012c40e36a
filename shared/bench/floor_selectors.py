"""The floor of stages 1 and 2: a bare selectors loop with the stages' HTTP code and parser.

A crawler's instructions per request are worth judging against the least
that any crawler of the same site could run.  This one keeps only what a
crawl of the benchmark's site cannot do without: a queue of URLs, a seen
set, ``max_tasks`` non-blocking sockets on one ``selectors`` loop, and the
parts the stages share (``shared.web.http`` builds the request and parses
the answer, ``shared.web.links`` finds the links, ``shared.web.encoding``
reads the page).  No retries, timeouts, politeness, robots.txt, URL policy
or statistics: a record is the URL, the status and the redirect target,
for the oracle.  Stages 1 and 2 are held within 1.25 times its count::

    python -m shared.bench.instructions floor-selectors

It has a stage's ``Crawler`` and ``run``, so ``shared.bench.run_one``
runs it as it runs them.
"""

from __future__ import annotations

import selectors
import socket
import time
from collections import deque
from collections.abc import Iterable
from typing import Any, NamedTuple

from shared.web.encoding import decode_body, find_encoding
from shared.web.http import Response, ResponseParser, build_request, parse_content_type
from shared.web.links import extract_links
from shared.web.urls import normalize_url

MAX_SIZE = 10 * 2**20  # The stages' default max_size.
REDIRECTS = frozenset({300, 301, 302, 303, 307, 308})
HTML = frozenset({"text/html", "application/xhtml+xml", "application/xml"})


class Record(NamedTuple):
    """What the oracle checks of a URL."""

    url: str
    next_url: str | None
    status: int | None


class Crawler:
    """Crawl the site at ``roots[0]``, ``max_tasks`` requests at once, and nothing more."""

    def __init__(self, roots: Iterable[str], max_tasks: int = 100, **ignored: Any) -> None:
        (self.root,) = roots
        self.max_tasks = max_tasks
        host, _, port = self.root.split("/")[2].partition(":")
        self.address = (host, int(port or 80))
        self.todo = deque([self.root])
        self.seen_urls = {self.root}
        self.done: list[Record] = []
        self.selector = selectors.DefaultSelector()
        self.t0, self.t1 = time.time(), 0.0

    def start(self, url: str) -> None:
        """Connect a socket for ``url``; it sends once writable."""
        sock = socket.socket()
        sock.setblocking(False)
        sock.connect_ex(self.address)  # EINPROGRESS, or connected already.
        self.selector.register(sock, selectors.EVENT_WRITE, (url, ResponseParser(MAX_SIZE)))

    def ready(self, key: selectors.SelectorKey, events: int) -> None:
        """Send the request, or read what came; at the end, take the response."""
        sock: socket.socket = key.fileobj  # type: ignore[assignment]
        url, parser = key.data
        if events & selectors.EVENT_WRITE:
            sock.send(build_request(url))  # A request fits in a socket's buffer.
            self.selector.modify(sock, selectors.EVENT_READ, key.data)
            return
        data = sock.recv(65536)
        if data:
            parser.feed_data(data)
        else:
            parser.feed_eof()
        if parser.done:
            self.selector.unregister(sock)
            sock.close()
            self.handle(url, parser.response())

    def handle(self, url: str, response: Response) -> None:
        """Record the response; queue its redirect target or its links, if new."""
        links: Iterable[str] = ()
        location = response.headers.get("location")
        if response.status in REDIRECTS and location is not None:
            links = [normalize_url(location, url)]
            self.done.append(Record(url, links[0], response.status))
        else:
            self.done.append(Record(url, None, response.status))
            media_type, params = parse_content_type(response.headers.get("content-type"))
            if response.status == 200 and media_type in HTML:
                encoding = find_encoding(params.get("charset"), response.body, sniff=True)
                links = extract_links(decode_body(response.body, encoding), url, encoding)
        for link in links:
            if link not in self.seen_urls and link.startswith(self.root):
                self.seen_urls.add(link)
                self.todo.append(link)

    def crawl(self) -> None:
        """Keep ``max_tasks`` requests in flight until nothing is left to fetch."""
        in_flight = 0
        while self.todo or in_flight:
            while self.todo and in_flight < self.max_tasks:
                self.start(self.todo.popleft())
                in_flight += 1
            for key, events in self.selector.select():
                self.ready(key, events)
            in_flight = len(self.selector.get_map())
        self.t1 = time.time()


def run(crawler: Crawler) -> Crawler:
    """Run the crawl to its end."""
    try:
        crawler.crawl()
    finally:
        crawler.selector.close()
    return crawler

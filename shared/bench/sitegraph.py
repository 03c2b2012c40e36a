"""The test site's link graph, as a crawler sees it, without a network.

The simulated ideal crawler (``simulate``) needs to know, for every URL,
which URLs a crawler queues after fetching it.  Rather than restate the
site's rules, this module asks the site itself: it runs the site's request
handlers in-process on mocked requests, and hands each response to the
same ``CrawlerBase`` code every stage uses to find links and follow
redirects.  The result is the graph a real crawl walks, page for page.
"""

from __future__ import annotations

import asyncio
import dataclasses
import urllib.parse
from collections import deque

from aiohttp import web
from aiohttp.test_utils import make_mocked_request

from shared.crawl.crawling import REDIRECT_STATUSES, CrawlerBase
from shared.testsite.server import make_app
from shared.web.http import Response, request_target
from shared.web.urls import normalize_url


@dataclasses.dataclass(frozen=True)
class Node:
    """What fetching one URL gives: its status, redirect target and links."""

    status: int
    next_url: str | None  # The normalized Location of a redirect.
    links: tuple[str, ...]  # URLs the crawler would queue, in sorted order.


class InProcessSite:
    """The test site's handlers, called directly on mocked requests."""

    def __init__(self, pages: int) -> None:
        self.app = make_app(pages)
        # Mocked requests are slow to build; every request is a clone of this one.
        self.template = make_mocked_request("GET", "/", app=self.app)

    async def fetch(self, url: str) -> Response:
        """Answer a GET for ``url`` as the server would, without a network."""
        host, port, target = request_target(url)
        request = self.template.clone(rel_url=target, headers={"Host": f"{host}:{port}"})
        match = await self.app.router.resolve(request)
        match.add_app(self.app)  # What aiohttp's Application._handle does.
        request._match_info = match
        if match.http_exception is not None:
            answer: web.StreamResponse = match.http_exception
        else:
            try:
                answer = await match.handler(request)
            except web.HTTPException as error:  # aiohttp raises redirects and 404s.
                answer = error
        body = b""
        if isinstance(answer, web.Response) and isinstance(answer.body, bytes):
            body = answer.body
        names = {name.lower(): value for name, value in reversed(list(answer.headers.items()))}
        return Response(answer.status, names, body)


def node_of(crawler: CrawlerBase, url: str, response: Response) -> Node:
    """Return the Node of a response: what a crawler records and queues."""
    if response.status in REDIRECT_STATUSES and "location" in response.headers:
        location = urllib.parse.urljoin(url, response.headers["location"])
        next_url = normalize_url(location)
        targets = (next_url,) if crawler.url_allowed(next_url) else ()
        return Node(response.status, next_url, targets)
    _, links = crawler.parse_links(url, response)
    return Node(response.status, None, tuple(sorted(links)))


def link_graph(root_url: str, pages: int) -> dict[str, Node]:
    """Return every URL a crawl from ``root_url`` reaches, with its Node.

    The walk ignores ``max_redirect``: the site's longest redirect chain has
    four hops, well under the default budget of ten.
    """
    return asyncio.run(_walk(root_url, pages))


async def _walk(root_url: str, pages: int) -> dict[str, Node]:
    site = InProcessSite(pages)
    crawler = CrawlerBase([root_url])
    root = normalize_url(root_url)
    graph: dict[str, Node] = {}
    todo = deque([root])
    seen = {root}
    while todo:
        url = todo.popleft()
        graph[url] = node = node_of(crawler, url, await site.fetch(url))
        for link in node.links:
            if link not in seen:
                seen.add(link)
                todo.append(link)
    return graph


def page_bodies(root_url: str, pages: int, paths: list[str]) -> list[tuple[str, str]]:
    """Return ``(url, text)`` of the site's pages at ``paths``, for parser timing."""

    async def fetch_all() -> list[tuple[str, str]]:
        site = InProcessSite(pages)
        base = root_url.rstrip("/")
        out = []
        for path in paths:
            response = await site.fetch(base + path)
            out.append((base + path, response.body.decode("utf-8", "replace")))
        return out

    return asyncio.run(fetch_all())

"""The floor of stage 3: a bare aiohttp loop with the stages' link parser.

What stage 3 could not do with less, on aiohttp: one ``ClientSession``,
``max_tasks`` tasks taking URLs from one ``asyncio.Queue``, each a ``get``
and a ``read``; ``shared.web.links`` finds the links of a page and a seen
set keeps each URL once.  No retries, politeness, robots.txt, URL policy,
body limit or statistics; the session is aiohttp's as it comes (its
connector, cookie jar, decompression and timeout), and the URL goes to
it as stage 3 sends it, already encoded.  A record is the URL, the status
and the redirect target, for the oracle.  Stage 3 is held within 1.25
times its count::

    python -m shared.bench.instructions floor-aiohttp

It has a stage's ``Crawler`` and ``run``, so ``shared.bench.run_one``
runs it as it runs them.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterable
from typing import Any

import aiohttp
import yarl

from shared.bench.floor_selectors import HTML, REDIRECTS, Record
from shared.web.encoding import decode_body, find_encoding
from shared.web.http import parse_content_type
from shared.web.links import extract_links
from shared.web.urls import normalize_url


class Crawler:
    """Crawl the site at ``roots[0]`` with ``max_tasks`` tasks on one session, and nothing more."""

    def __init__(self, roots: Iterable[str], max_tasks: int = 100, **ignored: Any) -> None:
        (self.root,) = roots
        self.max_tasks = max_tasks
        self.seen_urls = {self.root}
        self.done: list[Record] = []
        self.t0, self.t1 = time.time(), 0.0

    async def crawl(self) -> None:
        """Fetch until the queue is empty and every task is idle."""
        q: asyncio.Queue[str] = asyncio.Queue()
        q.put_nowait(self.root)
        connector = aiohttp.TCPConnector(limit=self.max_tasks)
        async with aiohttp.ClientSession(connector=connector) as session:
            workers = [asyncio.create_task(self.work(session, q)) for _ in range(self.max_tasks)]
            await q.join()
            for worker in workers:
                worker.cancel()
            await asyncio.gather(*workers, return_exceptions=True)
        self.t1 = time.time()

    async def work(self, session: aiohttp.ClientSession, q: asyncio.Queue[str]) -> None:
        """Take a URL, get it, read it, queue its new links; again."""
        while True:
            url = await q.get()
            try:
                # encoded=True: the URL is normal already, as in stage 3.
                async with session.get(yarl.URL(url, encoded=True), allow_redirects=False) as got:
                    body = await got.read()
                for link in self.links(url, got, body):
                    if link not in self.seen_urls and link.startswith(self.root):
                        self.seen_urls.add(link)
                        q.put_nowait(link)
            finally:
                q.task_done()

    def links(self, url: str, got: aiohttp.ClientResponse, body: bytes) -> Iterable[str]:
        """Record the answer; return its redirect target or its page's links."""
        location = got.headers.get("Location")
        if got.status in REDIRECTS and location is not None:
            target = normalize_url(location, url)
            self.done.append(Record(url, target, got.status))
            return [target]
        self.done.append(Record(url, None, got.status))
        media_type, params = parse_content_type(got.headers.get("Content-Type"))
        if got.status != 200 or media_type not in HTML:
            return ()
        encoding = find_encoding(params.get("charset"), body, sniff=True)
        return extract_links(decode_body(body, encoding), url, encoding)


def run(crawler: Crawler) -> Crawler:
    """Run the crawl to its end on a new asyncio event loop."""
    asyncio.run(crawler.crawl())
    return crawler

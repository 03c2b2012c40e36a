"""Exercise: a crawl that stops after ``seconds``, and keeps what it has.

The crawler of stage 3's step, which now notes each URL's status in
``statuses``.  A site with one page that never answers keeps it busy
forever: ``q.join()`` waits for that page.  Make ``crawl`` stop once
``seconds`` have passed (``None``: no limit), cancel its workers, and
return the statuses of the pages it did fetch, not an error.
"""

import asyncio

import aiohttp

from shared.steps import links_to_follow
from stage3_asyncio.steps import crawl


class Crawler(crawl.Crawler):
    """Crawl the site of ``root``; stop after ``seconds``."""

    def __init__(
        self, root: str, max_tasks: int = 10, seconds: float | None = None
    ) -> None:
        super().__init__(root, max_tasks)
        self.seconds = seconds
        self.statuses: dict[str, int] = {}  # Each URL fetched: its status.

    async def crawl(self) -> dict[str, int]:  # type: ignore[override]
        """Start the workers; return ``statuses`` once every URL is done."""
        async with aiohttp.ClientSession() as self.session:
            workers = [
                asyncio.create_task(self.work()) for _ in range(self.max_tasks)
            ]
            try:
                await self.q.join()
            finally:  # However the wait ends: no worker outlives the session.
                for worker in workers:
                    worker.cancel()
                await asyncio.gather(*workers, return_exceptions=True)
        return self.statuses

    async def fetch(self, url: str) -> None:
        """Fetch ``url``, note its status, and queue the new links."""
        async with self.session.get(url, allow_redirects=False) as response:
            body = await response.read()
        self.statuses[url] = response.status
        links = links_to_follow(url, response.status, response.headers, body)
        for link in links - self.seen_urls:
            self.seen_urls.add(link)
            self.q.put_nowait(link)

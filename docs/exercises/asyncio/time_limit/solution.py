"""A solution: ``asyncio.timeout`` around the join, and nothing else.

When the time is up, ``asyncio.timeout`` cancels the wait in ``join`` and
turns it into ``TimeoutError`` at the end of its block, where ``crawl``
catches it.  The workers are cancelled in ``finally`` either way, so the
fetch still under way is cancelled too, and the session closes cleanly.
What ``statuses`` holds by then is the result.
"""

import asyncio
import contextlib

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
        """Start the workers; return ``statuses`` when done or out of time."""
        async with aiohttp.ClientSession() as self.session:
            workers = [
                asyncio.create_task(self.work()) for _ in range(self.max_tasks)
            ]
            try:
                with contextlib.suppress(TimeoutError):  # Time is up: stop.
                    async with asyncio.timeout(self.seconds):
                        await self.q.join()
            finally:
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

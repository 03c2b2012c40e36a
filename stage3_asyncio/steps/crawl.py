"""Step 1 of stage 3: the queue crawler on asyncio and aiohttp.

Stage 2's ``crawl`` step on asyncio, with aiohttp to speak HTTP.  Once the
queue is joined, ``crawl`` cancels the workers and waits for them to end.

Still wrong: no timeout, no retry, no limit but ``max_tasks``.  A failed
fetch ends its worker without a word; once ``max_tasks`` fetches have
failed, no worker is left, and ``join`` waits for ever.
"""

import asyncio

import aiohttp

from shared.steps import Progress, links_to_follow, url_from_argv


class Crawler:
    """Crawl the site of ``root`` with ``max_tasks`` workers."""

    def __init__(self, root: str, max_tasks: int = 10) -> None:
        self.progress = Progress()
        self.max_tasks = max_tasks
        self.q: asyncio.Queue[str] = asyncio.Queue()
        self.seen_urls = {root}
        self.q.put_nowait(root)

    async def crawl(self) -> None:
        """Start the workers; return once every URL is done."""
        async with aiohttp.ClientSession() as self.session:
            workers = [
                asyncio.create_task(self.work()) for _ in range(self.max_tasks)
            ]
            await self.q.join()
            for worker in workers:
                worker.cancel()
            await asyncio.gather(*workers, return_exceptions=True)

    async def work(self) -> None:
        """Take URLs from the queue, until cancelled."""
        while True:
            url = await self.q.get()
            try:
                await self.fetch(url)
            finally:
                self.q.task_done()

    async def fetch(self, url: str) -> None:
        """Fetch ``url``, print its status, and queue the new links."""
        self.progress.begin(url)
        async with self.session.get(url, allow_redirects=False) as response:
            body = await response.read()
        status, headers = response.status, response.headers
        self.progress.end(url, str(status))
        links = links_to_follow(url, status, headers, body)
        for link in links - self.seen_urls:
            self.seen_urls.add(link)
            self.q.put_nowait(link)


if __name__ == "__main__":
    crawler = Crawler(url_from_argv())
    asyncio.run(crawler.crawl())
    seconds = crawler.progress.seconds()
    print(f"{len(crawler.seen_urls)} URLs in {seconds:.3f} s")

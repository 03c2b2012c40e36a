"""Step 1 of stage 3: the queue crawler on asyncio and aiohttp.

The crawler of stage 2's ``crawl`` step, word for word where the idea is the
same: ``yield from`` becomes ``await``, generator functions become ``async
def``, ``Task(...)`` becomes ``asyncio.create_task(...)``, and the Queue
and the loop are asyncio's.  aiohttp speaks HTTP: it connects, sends, reads
and parses the response, and keeps connections open for the next request.
``crawl`` cancels the workers once the queue is joined, so none is left
behind when ``asyncio.run`` closes the loop.

Still wrong: no timeout, no retry, no limits beyond ``max_tasks``.  A
fetch that fails ends its worker without a word: ``gather`` swallows the
error and the URL is never printed.  Once ``max_tasks`` fetches have
failed, no worker is left, and ``join`` waits forever.  The finished stage
(``stage3_asyncio``) adds timeouts and retries, records every outcome,
counts redirects, and shares its crawl policy with the other stages.
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

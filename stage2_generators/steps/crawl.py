"""Step 4 of stage 2: the queue crawler.

The crawler of the 500 Lines chapter on the tiny library of the previous
steps: ``crawl`` starts ``max_tasks`` workers and waits until the queue is
joined; each worker takes a URL, fetches it, and puts the page's new
links (or its redirect target) into the queue.  A URL goes into
``seen_urls`` when it is queued, so no URL is fetched twice.

Still wrong: no timeout, no retry, no cancellation (the workers are simply
abandoned when the loop ends), and nothing catches an error: a refused
connection raises in ``fetch``, out of ``Task.step`` and through the loop,
and the program stops with a traceback (exit status 1).
The next step, ``tasks``, keeps a coroutine's error on its Task.
"""

import selectors

from shared.steps import Progress, links_to_follow, parse, url_from_argv
from stage2_generators.steps.future import Task
from stage2_generators.steps.queues import Queue, run
from stage2_generators.steps.yield_from import Coroutine, fetch


class Crawler:
    """Crawl the site of ``root`` with ``max_tasks`` workers."""

    def __init__(self, root: str, max_tasks: int = 10) -> None:
        self.selector = selectors.DefaultSelector()
        self.progress = Progress()
        self.max_tasks = max_tasks
        self.q = Queue()
        self.seen_urls = {root}
        self.q.put_nowait(root)

    # --8<-- [start:methods]
    def crawl(self) -> Coroutine:
        """Start the workers; return once every URL is done."""
        for _ in range(self.max_tasks):
            Task(self.work())
        yield from self.q.join()

    def work(self) -> Coroutine:
        """Take URLs from the queue, forever."""
        while True:
            url = yield from self.q.get()
            yield from self.fetch(url)
            self.q.task_done()

    def fetch(self, url: str) -> Coroutine:
        """Fetch ``url``, print its status, and queue the new links."""
        self.progress.begin(url)
        status, headers, body = parse((yield from fetch(url, self.selector)))
        self.progress.end(url, str(status))
        links = links_to_follow(url, status, headers, body)
        for link in links - self.seen_urls:
            self.seen_urls.add(link)
            self.q.put_nowait(link)
        # --8<-- [end:methods]


if __name__ == "__main__":
    crawler = Crawler(url_from_argv())
    run(crawler.selector, crawler.crawl())
    seconds = crawler.progress.seconds()
    print(f"{len(crawler.seen_urls)} URLs in {seconds:.3f} s")

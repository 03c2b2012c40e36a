"""Step 6 of stage 2: the queue crawler in ``async def``, on the same Task.

``await x`` is ``yield from x`` with a type check first: it takes a
native coroutine (``async def``), an object with ``__await__``, or a
generator marked with ``types.coroutine``, and refuses a plain generator
with TypeError.  Past the check it does what ``yield from`` does: futures
go up to the Task, results come back down.  A native coroutine has a
generator's ``send``, so step 1's ``Task`` drives it unchanged.  Below,
step 4's crawler with ``async def`` and ``await``; underneath, the
generators of steps 2 and 3, marked with ``types.coroutine``.

Still wrong: as in step 4, no timeout, no cancellation, and an error ends
the program.  Next, ``taskgroup`` ties tasks to a block, on the finished
stage's tasks, which can be cancelled.
"""

import selectors
import types
from typing import Any

from shared.steps import Progress, links_to_follow, parse, url_from_argv
from stage1_callbacks.steps.callback import loop
from stage2_generators.steps import yield_from
from stage2_generators.steps.future import Task
from stage2_generators.steps.queues import Queue


@types.coroutine
def fetch(url: str, selector: selectors.BaseSelector) -> Any:
    """Step 2's generator ``fetch``, marked so that ``await`` takes it."""
    return (yield from yield_from.fetch(url, selector))


@types.coroutine
def get(q: Queue) -> Any:
    """``q.get()``, a plain generator, marked for ``await``."""
    return (yield from q.get())


@types.coroutine
def join(q: Queue) -> Any:
    """``q.join()``, marked for ``await``."""
    yield from q.join()


class Crawler:
    """Step 4's crawler, written with ``async def`` and ``await``."""

    def __init__(self, root: str, max_tasks: int = 10) -> None:
        self.selector = selectors.DefaultSelector()
        self.progress = Progress()
        self.max_tasks = max_tasks
        self.q = Queue()
        self.seen_urls = {root}
        self.q.put_nowait(root)

    async def crawl(self) -> None:
        for _ in range(self.max_tasks):
            # Step 1's Task, unchanged: typed for generators, it only
            # calls send().
            Task(self.work())  # type: ignore[arg-type]
        await join(self.q)

    async def work(self) -> None:
        while True:
            url = await get(self.q)
            await self.fetch(url)
            self.q.task_done()

    async def fetch(self, url: str) -> None:
        self.progress.begin(url)
        status, headers, body = parse(await fetch(url, self.selector))
        self.progress.end(url, str(status))
        links = links_to_follow(url, status, headers, body)
        for link in links - self.seen_urls:
            self.seen_urls.add(link)
            self.q.put_nowait(link)


def run(selector: selectors.BaseSelector, main: Any) -> None:
    """Run the native coroutine ``main`` in a Task, and the loop until done."""
    running = {"main"}

    async def until_done() -> None:
        await main  # A generator could not yield from a native coroutine.
        running.clear()  # Empty: the loop stops.

    Task(until_done())  # type: ignore[arg-type]
    loop(selector, running)


if __name__ == "__main__":
    crawler = Crawler(url_from_argv())
    run(crawler.selector, crawler.crawl())
    seconds = crawler.progress.seconds()
    print(f"{len(crawler.seen_urls)} URLs in {seconds:.3f} s")

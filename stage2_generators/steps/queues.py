"""Step 3 of stage 2: a Queue for coroutines, and a pool of workers.

The chapter's queue, on the previous step's Future: ``get`` waits on a
future while the queue is empty, ``join`` until every item put in is
marked done (``task_done``).  Three workers share the ten pages, and
``run`` drives ``join`` and stops the loop once it returns.

Still wrong: the workers are never stopped, and the URLs are a fixed
list.  The next step, ``crawl``, puts each page's new links in the queue.
"""

import collections
import selectors
from typing import Any

from shared.steps import Progress, some_pages, url_from_argv
from stage1_callbacks.steps.callback import loop
from stage2_generators.steps.future import Task
from stage2_generators.steps.yield_from import (
    Coroutine,
    Future,
    fetch_and_print,
)


# --8<-- [start:queue]
class Queue:
    """A FIFO queue for coroutines, with the count of items not done yet."""

    def __init__(self) -> None:
        self.items: collections.deque[Any] = collections.deque()
        self.getters: collections.deque[Future] = collections.deque()
        self.unfinished = 0  # Put in, not yet marked done with task_done().
        self.joiners: list[Future] = []  # Waiting in join().

    def put_nowait(self, item: object) -> None:
        self.unfinished += 1
        if self.getters:
            waiter = self.getters.popleft()  # A worker waiting in get():
            waiter.set_result(item)  # the item goes straight to it.
        else:
            self.items.append(item)

    def get(self) -> Coroutine:
        if self.items:
            return self.items.popleft()
        waiter = Future()
        self.getters.append(waiter)
        return (yield from waiter)

    def task_done(self) -> None:
        self.unfinished -= 1
        if self.unfinished == 0:
            for waiter in self.joiners:
                waiter.set_result()

    def join(self) -> Coroutine:
        if self.unfinished:
            waiter = Future()
            self.joiners.append(waiter)
            yield from waiter
        # --8<-- [end:queue]


def run(selector: selectors.BaseSelector, main: Coroutine) -> None:
    """Run the coroutine ``main`` in a Task, and the loop until it returns."""
    running = {"main"}

    def until_done() -> Coroutine:
        yield from main
        running.clear()  # Empty: the loop stops.

    Task(until_done())
    loop(selector, running)


def worker(
    q: Queue, selector: selectors.BaseSelector, progress: Progress
) -> Coroutine:
    """Fetch URLs from ``q`` and print their status lines, forever."""
    while True:
        url = yield from q.get()
        yield from fetch_and_print(url, selector, progress)
        q.task_done()


if __name__ == "__main__":
    progress = Progress()
    selector = selectors.DefaultSelector()
    q = Queue()
    urls = some_pages(url_from_argv())
    for url in urls:
        q.put_nowait(url)
    for _ in range(3):
        Task(worker(q, selector, progress))
    run(selector, q.join())  # Until every URL put in is done.
    print(f"{len(urls)} pages in {progress.seconds():.3f} s, 3 workers")

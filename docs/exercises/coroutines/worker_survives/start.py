"""Exercise: a worker that survives a bad item.

A worker of the queue crawler, on the finished stage's ``Queue``: it
takes an item, hands it to ``handle`` (a coroutine) and marks it done.
When ``handle`` raises, the error ends the worker: the items behind the
bad one are never handled, and ``q.join()`` never returns, because the
bad item is never marked done.  Make the worker note the error in
``failures`` as ``(item, error)``, mark the item done, and go on.
"""

from collections.abc import Callable, Generator
from typing import Any

from stage2_generators.queues import Queue

Handler = Callable[[str], Generator[Any, None, None]]


def worker(
    q: Queue[str], handle: Handler, failures: list[tuple[str, Exception]]
) -> Generator[Any, None, None]:
    """Handle the items of ``q``, one after another, forever."""
    while True:
        item = yield from q.get()
        yield from handle(item)
        q.task_done()

"""Wrong: the error is caught, but the item is marked done only on success."""

from collections.abc import Callable, Generator
from typing import Any

from stage2_generators.queues import Queue

Handler = Callable[[str], Generator[Any, None, None]]


def worker(
    q: Queue[str], handle: Handler, failures: list[tuple[str, Exception]]
) -> Generator[Any, None, None]:
    """Handle the items of ``q``; a failed item is never marked done."""
    while True:
        item = yield from q.get()
        try:
            yield from handle(item)
        except Exception as error:
            failures.append((item, error))
        else:
            q.task_done()

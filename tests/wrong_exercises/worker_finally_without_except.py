"""Wrong: every item is marked done, but the error still ends the worker."""

from collections.abc import Callable, Generator
from typing import Any

from stage2_generators.queues import Queue

Handler = Callable[[str], Generator[Any, None, None]]


def worker(
    q: Queue[str], handle: Handler, failures: list[tuple[str, Exception]]
) -> Generator[Any, None, None]:
    """Handle the items of ``q``, until one raises."""
    while True:
        item = yield from q.get()
        try:
            yield from handle(item)
        finally:
            q.task_done()

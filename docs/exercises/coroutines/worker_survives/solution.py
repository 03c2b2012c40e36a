"""A solution: ``except`` notes the error, ``finally`` marks the item done.

``finally`` runs however ``handle`` ends, so every item taken is marked
done exactly once, and ``join`` counts right.  ``except Exception`` lets
``CancelledError`` through (it is a ``BaseException``): a worker that is
cancelled still stops.
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
        try:
            yield from handle(item)
        except Exception as error:
            failures.append((item, error))  # Noted; the worker goes on.
        finally:
            q.task_done()

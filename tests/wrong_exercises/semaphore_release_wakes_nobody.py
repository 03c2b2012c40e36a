"""Wrong: release() frees a place but wakes nobody; waiters wait forever."""

import collections
from collections.abc import Generator
from typing import Any

from stage2_generators.futures import Future


class Semaphore:
    """A count of places, and waiters nobody wakes."""

    def __init__(self, value: int = 1) -> None:
        self.value = value
        self.waiters: collections.deque[Future] = collections.deque()

    def acquire(self) -> Generator[Any, None, None]:
        """Wait until there is room, then take a place."""
        while self.value == 0:
            waiter = Future()
            self.waiters.append(waiter)
            yield from waiter
        self.value -= 1

    def release(self) -> None:
        """Give the place back (and forget the waiters)."""
        self.value += 1

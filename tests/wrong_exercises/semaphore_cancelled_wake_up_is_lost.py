"""Wrong: a waiter woken and then cancelled takes its wake-up with it."""

import collections
from collections.abc import Generator
from typing import Any

from stage2_generators.futures import Future


class Semaphore:
    """Right in every case but one: a cancel between wake-up and run."""

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
        """Give the place back, and wake the first waiter still waiting."""
        self.value += 1
        while self.waiters:
            waiter = self.waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)
                return

"""A solution: a count of free places, and a line of futures.

``acquire`` waits while no place is free; ``release`` frees one and
wakes the first waiter still waiting (a waiter cancelled while it waited
has a cancelled future: it is skipped).  A waiter woken and then
cancelled before it ran would take its wake-up with it; it passes the
wake-up on to the next in line instead.
"""

import collections
from collections.abc import Generator
from typing import Any

from stage2_generators.futures import CancelledError, Future


class Semaphore:
    """At most ``value`` holders at once; the others wait, in order."""

    def __init__(self, value: int = 1) -> None:
        self.value = value  # Places free now.
        self.waiters: collections.deque[Future] = collections.deque()

    def acquire(self) -> Generator[Any, None, None]:
        """Wait until there is room, then take a place."""
        while self.value == 0:
            waiter = Future()
            self.waiters.append(waiter)
            try:
                yield from waiter  # Until release() wakes us.
            except CancelledError:
                if not waiter.cancelled():  # Woken, then cancelled:
                    self.wake_next()  # the wake-up goes to the next.
                raise
        self.value -= 1

    def release(self) -> None:
        """Give the place back, and wake the first waiter."""
        self.value += 1
        self.wake_next()

    def wake_next(self) -> None:
        """Wake the first waiter still waiting, if there is one."""
        while self.waiters:
            waiter = self.waiters.popleft()
            if not waiter.done():  # Done: cancelled while it waited.
                waiter.set_result(None)
                return

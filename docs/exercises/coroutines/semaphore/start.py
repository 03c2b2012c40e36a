"""Exercise: a Semaphore for stage 2.

A semaphore lets at most ``value`` coroutines in at once: a polite
crawler takes one before each fetch, so that no more than ``value``
fetches are in flight.  This class is only a lock so far: one holder,
whatever ``value`` says.  Make it let ``value`` holders in, wake the
first waiter when one leaves, and never lose a place to a waiter that
was cancelled, even one cancelled after ``release`` had woken it.
"""

import collections
from collections.abc import Generator
from typing import Any

from stage2_generators.futures import Future


class Semaphore:
    """At most ``value`` holders at once; the others wait, in order."""

    def __init__(self, value: int = 1) -> None:
        self.value = value
        self.held = False
        self.waiters: collections.deque[Future] = collections.deque()

    def acquire(self) -> Generator[Any, None, None]:
        """Wait until there is room, then take a place."""
        while self.held:
            waiter = Future()
            self.waiters.append(waiter)
            yield from waiter  # Until release() wakes us.
        self.held = True

    def release(self) -> None:
        """Give the place back, and wake the first waiter."""
        self.held = False
        if self.waiters:
            self.waiters.popleft().set_result(None)

"""Synchronization for coroutines: ``Lock``, ``Event`` and ``Semaphore``.

Stage 1 needed none: a callback runs to its end before any other starts.
Coroutines are the same between two ``yield``s, but a coroutine that waits
in the middle of a job lets others run, so some jobs need a lock (only one
coroutine inside), an event (wait until something happened) or a semaphore
(at most N inside).  Each waiting coroutine waits on a future of its own,
kept in a deque, so waiters are served in the order they came.

The names and the behaviour are those of ``asyncio.Lock``, ``Event`` and
``Semaphore``.  Left out: ``Condition``, ``BoundedSemaphore`` and
``Barrier``.  Who uses them: the crawler keeps a ``Semaphore`` per host
(``--max-per-host``), the ``Queue`` waits in ``join`` on an ``Event``, and
the server chapter's lock step guards its counter with a ``Lock``.
"""

from __future__ import annotations

import collections
import types
from collections.abc import Generator
from typing import Any

from stage2_generators.events import get_running_loop
from stage2_generators.futures import CancelledError, Future


class Lock:
    """A fair mutual-exclusion lock: waiters acquire it first come, first served.

    Use ``yield from lock.acquire()`` ... ``lock.release()`` in a generator,
    or ``async with lock:`` in an ``async def`` coroutine.
    """

    def __init__(self) -> None:
        self._locked = False
        self._waiters: collections.deque[Future] = collections.deque()

    def __repr__(self) -> str:
        return _repr(self, "locked" if self._locked else "unlocked")

    def locked(self) -> bool:
        """Tell whether some coroutine holds the lock."""
        return self._locked

    @types.coroutine
    def acquire(self) -> Generator[Any, None, bool]:
        """Wait until the lock is free and our turn has come, then take it."""
        if not self._locked and all(waiter.cancelled() for waiter in self._waiters):
            self._locked = True
            return True
        waiter = get_running_loop().create_future()
        self._waiters.append(waiter)
        try:
            try:
                yield from waiter
            finally:
                self._waiters.remove(waiter)
        except CancelledError:
            if not self._locked:
                self._wake_up_first()  # Our turn came: pass it on.
            raise
        self._locked = True
        return True

    def release(self) -> None:
        """Free the lock and wake the first waiter.  Raises RuntimeError if not locked."""
        if not self._locked:
            raise RuntimeError("Lock is not acquired.")
        self._locked = False
        self._wake_up_first()

    def _wake_up_first(self) -> None:
        """Wake the waiter at the head of the line.

        While it has not run yet, the lock is free but a newcomer sees that
        someone waits and queues behind it: that is what makes it fair.
        """
        if self._waiters and not self._waiters[0].done():
            self._waiters[0].set_result(True)

    async def __aenter__(self) -> None:
        await self.acquire()

    async def __aexit__(self, *exc_info: object) -> None:
        self.release()


class Event:
    """A flag that coroutines can wait for until some other code sets it."""

    def __init__(self) -> None:
        self._value = False
        self._waiters: collections.deque[Future] = collections.deque()

    def __repr__(self) -> str:
        return _repr(self, "set" if self._value else "unset")

    def is_set(self) -> bool:
        """Tell whether the flag is set."""
        return self._value

    def set(self) -> None:
        """Set the flag and wake every waiter."""
        if self._value:
            return
        self._value = True
        for waiter in self._waiters:
            if not waiter.done():
                waiter.set_result(True)

    def clear(self) -> None:
        """Reset the flag; later wait() calls wait again."""
        self._value = False

    @types.coroutine
    def wait(self) -> Generator[Any, None, bool]:
        """Wait until the flag is set; return True."""
        if self._value:
            return True
        waiter = get_running_loop().create_future()
        self._waiters.append(waiter)
        try:
            yield from waiter
            return True
        finally:
            self._waiters.remove(waiter)


class Semaphore:
    """At most ``value`` holders at a time; waiters are served in order.

    Raises ValueError for a negative ``value``.
    """

    def __init__(self, value: int = 1) -> None:
        if value < 0:
            raise ValueError("Semaphore initial value must be >= 0")
        self._value = value
        self._waiters: collections.deque[Future] = collections.deque()

    def __repr__(self) -> str:
        return _repr(self, "locked" if self.locked() else f"unlocked, value:{self._value}")

    def locked(self) -> bool:
        """Tell whether acquire() would have to wait."""
        return self._value == 0 or any(not waiter.cancelled() for waiter in self._waiters)

    @types.coroutine
    def acquire(self) -> Generator[Any, None, bool]:
        """Take one unit, waiting until one is free and our turn has come."""
        if not self.locked():
            self._value -= 1
            return True
        waiter = get_running_loop().create_future()
        self._waiters.append(waiter)
        try:
            try:
                yield from waiter
            finally:
                self._waiters.remove(waiter)
        except CancelledError:
            if waiter.done() and not waiter.cancelled():
                self._value += 1  # The unit handed to us goes back.
            raise
        finally:
            while self._value > 0 and self._wake_up_next():
                pass  # Units freed meanwhile go to the next in line.
        return True

    def release(self) -> None:
        """Give one unit back, waking the next waiter."""
        self._value += 1
        self._wake_up_next()

    def _wake_up_next(self) -> bool:
        """Hand one unit to the first waiter still waiting; False if none."""
        for waiter in self._waiters:
            if not waiter.done():
                self._value -= 1
                waiter.set_result(True)
                return True
        return False

    async def __aenter__(self) -> None:
        await self.acquire()

    async def __aexit__(self, *exc_info: object) -> None:
        self.release()


def _repr(primitive: Lock | Event | Semaphore, state: str) -> str:
    """Return a repr as asyncio's: ``<Lock object at 0x... [locked, waiters:1]>``."""
    waiters = len(primitive._waiters)
    extra = f"{state}, waiters:{waiters}" if waiters else state
    return f"{object.__repr__(primitive)[:-1]} [{extra}]>"

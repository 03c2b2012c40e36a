"""A queue for coroutines: ``get`` waits for an item, ``join`` for the work.

Stage 1 kept the URLs to fetch in a deque and counted the fetches in flight
by hand to know when the crawl was over.  This ``Queue`` does both jobs, as the 500 Lines crawler's
``asyncio.Queue`` does: a worker waits in ``get()`` until there is an item,
calls ``task_done()`` once it has handled it, and ``join()`` returns when
every item ever put has been handled.  Waiting is done with futures, one
per waiting coroutine, woken in the order they started to wait.

The names and the behaviour are those of ``asyncio.Queue``, with
``shutdown()`` as asyncio has it since Python 3.13 (on every Python here).
Left out: ``PriorityQueue`` and ``LifoQueue``.
"""

from __future__ import annotations

import collections
import contextlib
import types
from collections.abc import Generator
from typing import Any, Generic, TypeVar

from stage2_generators.events import get_running_loop
from stage2_generators.futures import Future
from stage2_generators.locks import Event

T = TypeVar("T")


class QueueEmpty(Exception):
    """get_nowait() found the queue empty."""


class QueueFull(Exception):
    """put_nowait() found the queue full."""


class QueueShutDown(Exception):
    """The queue was shut down: no more puts, and no more gets once it is empty."""


class Queue(Generic[T]):
    """A first-in, first-out queue; ``maxsize`` > 0 bounds it.

    Needs no running loop to be made: the loop is looked up when a
    coroutine has to wait.
    """

    def __init__(self, maxsize: int = 0) -> None:
        self._maxsize = maxsize
        self._queue: collections.deque[T] = collections.deque()
        self._getters: collections.deque[Future] = collections.deque()  # Waiting in get().
        self._putters: collections.deque[Future] = collections.deque()  # Waiting in put().
        self._unfinished_tasks = 0  # Items put but not yet marked done.
        self._finished = Event()
        self._finished.set()
        self._is_shutdown = False  # See shutdown().

    @property
    def maxsize(self) -> int:
        """The most items the queue holds; 0 for no limit."""
        return self._maxsize

    def qsize(self) -> int:
        """Return the number of items in the queue."""
        return len(self._queue)

    def empty(self) -> bool:
        """Tell whether the queue holds no item."""
        return not self._queue

    def full(self) -> bool:
        """Tell whether put() would have to wait."""
        return 0 < self._maxsize <= len(self._queue)

    # --8<-- [start:put_get]
    def put_nowait(self, item: T) -> None:
        """Put ``item`` in the queue.

        Raises QueueFull if there is no room, QueueShutDown once shut down.
        """
        if self._is_shutdown:
            raise QueueShutDown
        if self.full():
            raise QueueFull
        self._queue.append(item)
        self._unfinished_tasks += 1
        self._finished.clear()
        _wakeup_next(self._getters)

    def get_nowait(self) -> T:
        """Remove and return the first item.

        Raises QueueEmpty if there is none, QueueShutDown if none and shut down.
        """
        if self.empty():
            raise QueueShutDown if self._is_shutdown else QueueEmpty
        item = self._queue.popleft()
        _wakeup_next(self._putters)
        return item

    @types.coroutine
    def put(self, item: T) -> Generator[Any, None, None]:
        """Put ``item`` in the queue, waiting until there is room.

        Raises QueueShutDown once the queue is shut down.
        """
        while self.full() and not self._is_shutdown:
            yield from _wait_in_line(self._putters, self.full)
        self.put_nowait(item)

    @types.coroutine
    def get(self) -> Generator[Any, None, T]:
        """Remove and return the first item, waiting until there is one.

        Raises QueueShutDown when the queue is empty and shut down.
        """
        while self.empty() and not self._is_shutdown:
            yield from _wait_in_line(self._getters, self.empty)
        return self.get_nowait()

    # --8<-- [end:put_get]

    # --8<-- [start:join]
    def task_done(self) -> None:
        """Mark one item taken from the queue as handled.

        Raises ValueError when called more times than items were put.
        """
        if self._unfinished_tasks <= 0:
            raise ValueError("task_done() called too many times")
        self._unfinished_tasks -= 1
        if self._unfinished_tasks == 0:
            self._finished.set()  # Wake every join().

    @types.coroutine
    def join(self) -> Generator[Any, None, None]:
        """Wait until every item put in the queue has been marked done."""
        if self._unfinished_tasks > 0:
            yield from self._finished.wait()

    # --8<-- [end:join]

    def shutdown(self, immediate: bool = False) -> None:
        """Refuse every put from now on, and every get once the queue is empty.

        With ``immediate``, drop the items left (each counts as done, so
        ``join()`` can return).  Every coroutine waiting in ``get()`` or
        ``put()`` wakes up and raises QueueShutDown, unless an item is left
        for a getter.
        """
        self._is_shutdown = True
        if immediate:
            while self._queue:
                self._queue.popleft()
                if self._unfinished_tasks > 0:
                    self._unfinished_tasks -= 1
            if self._unfinished_tasks == 0:
                self._finished.set()
        for waiters in (self._getters, self._putters):
            while waiters:  # Each wakes up and finds the queue shut down.
                waiter = waiters.popleft()
                if not waiter.done():
                    waiter.set_result(None)

    # --- asyncio compatibility ------------------------------------------
    # asyncio's repr and str, and Queue[int] as a types.GenericAlias.

    def __repr__(self) -> str:
        return f"<{type(self).__name__} at {id(self):#x} {self._format()}>"

    def __str__(self) -> str:
        return f"<{type(self).__name__} {self._format()}>"

    def _format(self) -> str:
        """Describe the queue as asyncio does: size limit, items, waiters."""
        result = f"maxsize={self._maxsize!r}"
        if self._queue:
            result += f" _queue={list(self._queue)!r}"
        if self._getters:
            result += f" _getters[{len(self._getters)}]"
        if self._putters:
            result += f" _putters[{len(self._putters)}]"
        if self._unfinished_tasks:
            result += f" tasks={self._unfinished_tasks}"
        if self._is_shutdown:
            result += " shutdown"
        return result

    __class_getitem__ = classmethod(types.GenericAlias)  # type: ignore[var-annotated]


def _wait_in_line(
    waiters: collections.deque[Future], still_blocked: Any
) -> Generator[Any, None, None]:
    """Wait for a turn to get or put; pass the turn on if cancelled after it came.

    ``still_blocked()`` tells whether the queue is still empty (for get) or
    full (for put).
    """
    waiter = get_running_loop().create_future()
    waiters.append(waiter)
    try:
        yield from waiter
    except BaseException:
        waiter.cancel()  # In case it is not done yet.
        with contextlib.suppress(ValueError):  # _wakeup_next may have taken it off.
            waiters.remove(waiter)
        if not still_blocked() and not waiter.cancelled():
            _wakeup_next(waiters)  # Our turn came but we cannot use it.
        raise


def _wakeup_next(waiters: collections.deque[Future]) -> None:
    """Wake the first waiter that still waits, if any."""
    while waiters:
        waiter = waiters.popleft()
        if not waiter.done():
            waiter.set_result(None)
            break

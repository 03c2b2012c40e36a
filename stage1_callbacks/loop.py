"""Stage 1's event loop: a selector, a queue of ready callbacks, a heap of timers.

A blocking crawler gives each request a thread and lets the operating system
switch between them.  This loop does the switching itself, in one thread: it
asks a ``selectors`` selector which sockets can make progress, and runs the
callback that was registered for each one.  Timers (for timeouts) wait in a
heap ordered by their due time; callbacks that should run "next" wait in a
queue.  That is all an event loop is.

Left out compared with asyncio: futures and tasks (stage 2 adds them),
thread safety (``call_soon_threadsafe`` and its self-pipe), signal handlers,
DNS lookups in a thread pool, transports and protocols, subprocesses and a
debug mode.  There is no exception handler either: an exception raised by a
callback ends ``run()``, where asyncio would log it and carry on.
"""

from __future__ import annotations

import heapq
import itertools
import selectors
import socket
import time
from collections import deque
from collections.abc import Callable
from typing import Any

from shared.record.trace import NO_TRACE, Trace

EVENT_READ = selectors.EVENT_READ
EVENT_WRITE = selectors.EVENT_WRITE


class Handle:
    """A callback and its arguments, scheduled to run once; ``cancel()`` stops it."""

    __slots__ = ("callback", "args", "cancelled")

    def __init__(self, callback: Callable[..., Any], args: tuple[Any, ...]) -> None:
        self.callback: Callable[..., Any] | None = callback
        self.args = args
        self.cancelled = False

    def cancel(self) -> None:
        """Make sure the callback does not run; cancelling twice is harmless."""
        self.cancelled = True
        # Drop the references at once: a cancelled timer stays in the heap
        # until it is due, and must not keep its Fetcher alive until then.
        self.callback, self.args = None, ()

    def __repr__(self) -> str:
        state = "cancelled" if self.cancelled else getattr(self.callback, "__qualname__", "?")
        return f"<{type(self).__name__} {state}>"


class EventLoop:
    """Run callbacks when sockets are ready or timers are due, in one thread."""

    def __init__(
        self,
        recorder: Trace = NO_TRACE,
        *,
        clock: Callable[[], float] = time.monotonic,
        selector: selectors.BaseSelector | None = None,
    ) -> None:
        self.recorder = recorder  # Notes each select() and each run of callbacks.
        # The clock and the way of waiting are the loop's to be given: real
        # ones by default, or a simulated world's (shared/sim), where time
        # jumps ahead whenever nothing is ready.
        self.clock = clock
        self.selector = selector or selectors.DefaultSelector()  # Socket -> Handle to run.
        self.ready: deque[Handle] = deque()  # Handles to run on the next turn.
        # A heap of (when, sequence, handle): the sequence number breaks ties,
        # so timers due at the same moment run in the order they were set.
        self.timers: list[tuple[float, int, Handle]] = []
        self.sequence = itertools.count()
        self.running = False
        self.stopping = False
        self.closed = False

    def time(self) -> float:
        """Return the loop's clock: seconds that only ever go forward."""
        return self.clock()

    # --8<-- [start:scheduling]
    def call_soon(self, callback: Callable[..., Any], *args: Any) -> Handle:
        """Run ``callback(*args)`` on the next turn of the loop, after those before it.

        Raises RuntimeError if the loop is closed.
        """
        self.check_open()
        handle = Handle(callback, args)
        self.ready.append(handle)
        return handle

    def call_later(self, delay: float, callback: Callable[..., Any], *args: Any) -> Handle:
        """Run ``callback(*args)`` once ``delay`` seconds have passed.

        Raises RuntimeError if the loop is closed.
        """
        return self.call_at(self.time() + delay, callback, *args)

    def call_at(self, when: float, callback: Callable[..., Any], *args: Any) -> Handle:
        """Run ``callback(*args)`` once ``self.time()`` reaches ``when``.

        Raises RuntimeError if the loop is closed.
        """
        self.check_open()
        handle = Handle(callback, args)
        heapq.heappush(self.timers, (when, next(self.sequence), handle))
        return handle

    # --8<-- [end:scheduling]

    # --8<-- [start:sockets]
    def register(
        self, sock: socket.socket, events: int, callback: Callable[..., Any], *args: Any
    ) -> None:
        """Run ``callback(*args)`` whenever ``sock`` is ready for ``events``.

        ``events`` is EVENT_READ, EVENT_WRITE or both.  Raises KeyError if
        ``sock`` is already registered, RuntimeError if the loop is closed.
        """
        self.check_open()
        self.selector.register(sock, events, Handle(callback, args))

    def modify(
        self, sock: socket.socket, events: int, callback: Callable[..., Any], *args: Any
    ) -> None:
        """Change what a registered ``sock`` waits for, and the callback it runs.

        Raises KeyError if ``sock`` is not registered.
        """
        key = self.selector.get_key(sock)
        old = key.data
        if key.events == events and old.callback == callback and old.args == args:
            return  # Nothing changes: spare the system call.
        old.cancel()  # It may be in self.ready already; it must not run now.
        self.selector.modify(sock, events, Handle(callback, args))

    def unregister(self, sock: socket.socket) -> None:
        """Stop watching ``sock``; call it before closing the socket.

        Raises KeyError if ``sock`` is not registered.
        """
        key = self.selector.unregister(sock)
        key.data.cancel()

    # --8<-- [end:sockets]

    # --8<-- [start:run]
    def run(self) -> None:
        """Run the loop until ``stop()`` is called or nothing is left to do.

        Nothing is left when no callback is ready, no timer is pending and no
        socket is registered.  Raises RuntimeError if the loop is closed or
        already running, and whatever exception a callback raises.
        """
        self.check_open()
        if self.running:
            raise RuntimeError("the loop is already running")
        self.running = True
        try:
            while self.has_work():
                self.run_once()
                if self.stopping:
                    break
        finally:
            self.running = self.stopping = False

    def has_work(self) -> bool:
        """Tell whether a callback is ready, a timer pending or a socket registered."""
        while self.timers and self.timers[0][2].cancelled:
            heapq.heappop(self.timers)  # Cancelled timers are removed lazily.
        return bool(self.ready or self.timers or self.selector.get_map())

    def stop(self) -> None:
        """Make ``run()`` return once the callbacks of this turn have run."""
        self.stopping = True

    # --8<-- [end:run]

    # --8<-- [start:run_once]
    def run_once(self) -> None:
        """Wait for a socket or the next timer, then run what is ready.

        This is the only place where callbacks are called.
        """
        timeout: float | None = None  # Wait for a socket for as long as it takes...
        if self.ready or self.stopping:
            timeout = 0  # ...unless there is work now...
        elif self.timers:
            # ...or a timer due.
            timeout = max(0.0, self.timers[0][0] - self.time())
        self.recorder.waiting()
        events = self.selector.select(timeout)
        self.recorder.woke(len(events))
        for key, _events in events:
            self.ready.append(key.data)
        now = self.time()
        while self.timers and self.timers[0][0] <= now:
            self.ready.append(heapq.heappop(self.timers)[2])
        # Run only the callbacks that are ready now: any they schedule wait
        # for the next turn, after the loop has looked at the sockets again.
        for _ in range(len(self.ready)):
            handle = self.ready.popleft()
            if handle.callback is not None:  # None once the handle is cancelled.
                handle.callback(*handle.args)

    # --8<-- [end:run_once]

    def close(self) -> None:
        """Close the selector and drop every pending callback; closing twice is harmless.

        The loop does not own the sockets registered with it: close them
        first.  Raises RuntimeError if the loop is running.
        """
        if self.running:
            raise RuntimeError("cannot close a running loop")
        if not self.closed:
            self.closed = True
            self.selector.close()
            self.ready.clear()
            self.timers.clear()

    def check_open(self) -> None:
        """Raise RuntimeError if the loop is closed."""
        if self.closed:
            raise RuntimeError("the loop is closed")

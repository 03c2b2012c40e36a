"""Timeouts: a deadline for a whole block of code, as ``asyncio.timeout``.

``wait_for`` puts a deadline on one awaitable; ``timeout`` puts one on a
block of an ``async def`` function::

    async with timeout(10):
        page = await fetch(url)
        await save(page)

When the deadline passes, a timer cancels the task that runs the block:
CancelledError is thrown in wherever the block waits and travels out of
it, running every ``finally`` on the way.  Only at the block's end, in
``__aexit__``, does it become TimeoutError, and only if it was this
deadline's own cancellation: the task's count of cancel requests
(``cancelling()``), once ours is taken back with ``uncancel()``, is no
higher than when the block began.  So a cancellation from anyone else
(an outer timeout's included) goes on as CancelledError.

The names and the behaviour are those of ``asyncio.timeout``,
``asyncio.timeout_at`` and ``asyncio.Timeout`` (Python 3.11 and later).
Left out: the ``TimeoutError`` that asyncio 3.13 also attaches as context
to other errors leaving an expired block.
"""

from __future__ import annotations

from stage2_generators.events import Handle, get_running_loop
from stage2_generators.futures import CancelledError
from stage2_generators.tasks import Task, current_task

# The life of a Timeout, one way only: made, entered, then either exited
# in time, or expiring (the task is cancelled) and expired at the block's end.
CREATED = "created"
ENTERED = "active"
EXPIRING = "expiring"
EXPIRED = "expired"
EXITED = "finished"


class Timeout:
    """A deadline (in loop time, None for none) for an ``async with`` block."""

    def __init__(self, when: float | None) -> None:
        self._state = CREATED
        self._when = when
        self._timer: Handle | None = None  # Calls _on_timeout at the deadline.
        self._task: Task | None = None  # The task that runs the block.
        self._cancelling = 0  # Its count of cancel requests when the block began.

    def __repr__(self) -> str:
        if self._state != ENTERED:
            return f"<Timeout [{self._state}]>"
        when = round(self._when, 3) if self._when is not None else None
        return f"<Timeout [{self._state}] when={when}>"

    def when(self) -> float | None:
        """Return the deadline, in the loop's time, or None if there is none."""
        return self._when

    def expired(self) -> bool:
        """Tell whether the deadline passed (and the block was cancelled)."""
        return self._state in (EXPIRING, EXPIRED)

    # --8<-- [start:reschedule]
    def reschedule(self, when: float | None) -> None:
        """Move the deadline to ``when`` (loop time; None: no deadline).

        Raises RuntimeError outside the block, or once it has expired.
        """
        if self._state == CREATED:
            raise RuntimeError("Timeout has not been entered")
        if self._state != ENTERED:
            raise RuntimeError(f"Cannot change state of {self._state} Timeout")
        self._when = when
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if when is None:
            return
        loop = get_running_loop()
        if when <= loop.time():
            self._timer = loop.call_soon(self._on_timeout)  # Already late.
        else:
            self._timer = loop.call_at(when, self._on_timeout)

    # --8<-- [end:reschedule]

    async def __aenter__(self) -> Timeout:
        """Start the deadline for the current task.  Raises RuntimeError outside one."""
        if self._state != CREATED:
            raise RuntimeError("Timeout has already been entered")
        task = current_task()
        if task is None:
            raise RuntimeError("Timeout should be used inside a task")
        self._state = ENTERED
        self._task = task
        self._cancelling = task.cancelling()
        self.reschedule(self._when)
        return self

    def _on_timeout(self) -> None:
        """Cancel the task that runs the block: the deadline has passed."""
        assert self._task is not None, "the timer is set once entered"
        self._task.cancel()
        self._state = EXPIRING
        self._timer = None

    # --8<-- [start:exit]
    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: object,
    ) -> None:
        """Stop the timer; turn our own cancellation into TimeoutError."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._state == EXPIRING:
            self._state = EXPIRED
            assert self._task is not None, "it expired, so it was entered"
            # Take back our cancel(); if no other request is left, the
            # CancelledError coming out of the block is ours.
            left = self._task.uncancel()
            if left <= self._cancelling and isinstance(exc, CancelledError):
                raise TimeoutError from exc
        elif self._state == ENTERED:
            self._state = EXITED

    # --8<-- [end:exit]


def timeout(delay: float | None) -> Timeout:
    """Return a Timeout that expires ``delay`` seconds from now (None: never).

    Raises RuntimeError when no loop is running.
    """
    loop = get_running_loop()
    return Timeout(loop.time() + delay if delay is not None else None)


def timeout_at(when: float | None) -> Timeout:
    """Return a Timeout that expires at loop time ``when`` (None: never)."""
    return Timeout(when)

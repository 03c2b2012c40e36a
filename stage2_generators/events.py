"""Handles for scheduled callbacks, and how code finds the running loop.

A ``Handle`` is a callback, its arguments and a ``cancel()``, as in stage
1; a ``TimerHandle`` adds the time it is due.  New in this stage is
``get_running_loop()``, so that a future, a task or a queue can find the
loop without being handed it.  Both have the names and the meaning of their
counterparts in ``asyncio.events``; left out are the event-loop policy,
``get_event_loop()`` and the context (``contextvars``) that asyncio runs
every callback in.

This is a module of its own, as in asyncio, because futures, tasks and the
loop all need ``get_running_loop()`` while the loop needs futures and tasks.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from stage2_generators.loop import EventLoop

LOGGER = logging.getLogger("stage2_generators")


class Handle:
    """A callback and its arguments, waiting in the loop to be called once."""

    # Slots: the loop makes one handle per callback, so they must be small.
    __slots__ = ("_callback", "_args", "_cancelled", "_loop")

    def __init__(
        self, callback: Callable[..., object], args: tuple[Any, ...], loop: EventLoop
    ) -> None:
        self._callback: Callable[..., object] | None = callback
        self._args = args
        self._cancelled = False
        self._loop = loop

    def __repr__(self) -> str:
        state = " cancelled" if self._cancelled else ""
        return f"<{type(self).__name__}{state} {getattr(self._callback, '__qualname__', '?')}>"

    def cancel(self) -> None:
        """Make sure the callback is not called; does nothing if it already ran."""
        if self._cancelled:
            return
        self._cancelled = True
        self._callback, self._args = None, ()  # Free what they refer to now.

    def cancelled(self) -> bool:
        """Tell whether ``cancel()`` was called."""
        return self._cancelled

    def _run(self) -> None:
        """Call the callback; report what it raises instead of stopping the loop.

        KeyboardInterrupt and SystemExit are not reported but raised, so that
        Ctrl+C and sys.exit() still stop the program.
        """
        assert self._callback is not None, "the loop never runs a cancelled handle"
        try:
            self._callback(*self._args)
        except (SystemExit, KeyboardInterrupt):
            raise
        except BaseException as error:
            message = f"Exception in callback {self!r}"
            context = {"message": message, "exception": error, "handle": self}
            self._loop.call_exception_handler(context)


class TimerHandle(Handle):
    """A handle that the loop calls at a given time (in ``loop.time()`` seconds)."""

    __slots__ = ("_when", "_scheduled")

    def __init__(
        self, when: float, callback: Callable[..., object], args: tuple[Any, ...], loop: EventLoop
    ) -> None:
        super().__init__(callback, args, loop)
        self._when = when
        self._scheduled = False  # True while it sits in the loop's heap of timers.

    def __lt__(self, other: TimerHandle) -> bool:
        return self._when < other._when  # The heap of timers orders by time.

    def when(self) -> float:
        """Return the time at which the callback is due."""
        return self._when

    def cancel(self) -> None:
        """Make sure the callback is not called; the loop drops it later."""
        if self._cancelled:
            return
        if self._scheduled:
            self._loop._timer_handle_cancelled(self)
        super().cancel()


# Which loop runs in which thread.  This is the one piece of module-level
# state, as in asyncio: a loop belongs to the thread that runs it, so the
# record is per thread (a thread-local), and only the loop writes it, when
# run_forever() starts and ends.
_running = threading.local()


def get_running_loop() -> EventLoop:
    """Return the loop running in this thread.

    Raises RuntimeError when no loop is running.
    """
    loop: EventLoop | None = getattr(_running, "loop", None)
    if loop is None:
        raise RuntimeError("no running event loop")
    return loop


def _get_running_loop() -> EventLoop | None:
    """Return the loop running in this thread, or None."""
    return getattr(_running, "loop", None)


def _set_running_loop(loop: EventLoop | None) -> None:
    """Record ``loop`` as the one running in this thread (None: no loop)."""
    _running.loop = loop


_SHOWN = ("message", "exception")  # The context entries the log shows in their own way.


def default_exception_handler(context: dict[str, Any]) -> None:
    """Log an error that nobody caught: the message, then the context's other entries."""
    lines = [context.get("message") or "Unhandled exception in event loop"]
    lines += [f"{key}: {value!r}" for key, value in context.items() if key not in _SHOWN]
    error = context.get("exception")
    exc_info = (type(error), error, error.__traceback__) if error is not None else None
    LOGGER.error("\n".join(lines), exc_info=exc_info)  # No arguments: never %-formatted.

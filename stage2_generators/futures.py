"""Futures: a result that is not there yet, and the point a coroutine waits on.

Stage 1 passed callbacks around by hand.  A ``Future`` gives the thing a
callback waited for a name: code that wants the result adds a done callback
to the future, code that produces it calls ``set_result`` or
``set_exception``, and a coroutine waits for it with ``yield from future``
(or ``await future``): ``__iter__`` hands the future itself to the ``Task``
that drives the coroutine, and returns its result once the task resumes it.

The names and the behaviour are those of ``asyncio.Future``, down to the
error logged when a future is collected with an exception nobody
retrieved.  Left out: the contexts
(``contextvars``) that callbacks run in, and ``get_loop()``'s friends for
other kinds of futures (``concurrent.futures``, ``wrap_future``).

The file reads core first: setting an outcome, done callbacks, reading
the outcome, and ``__await__``.  What only completes asyncio's names
comes last, under a heading that says so.
"""

from __future__ import annotations

import reprlib
import types
from collections.abc import Callable, Generator
from typing import TYPE_CHECKING, Any

from stage2_generators.events import get_running_loop

if TYPE_CHECKING:
    from stage2_generators.loop import EventLoop

# The three states of a future.  It starts PENDING and moves to one of the
# others exactly once; nothing ever moves it back.
PENDING = "PENDING"
CANCELLED = "CANCELLED"
FINISHED = "FINISHED"


class CancelledError(BaseException):
    """The future or task was cancelled.

    A BaseException, as in asyncio since Python 3.8, so that ``except
    Exception`` in a coroutine does not swallow a cancellation by accident.
    """


class InvalidStateError(Exception):
    """The future is in the wrong state for this call (not done, or done already)."""


class Future:
    """A result that will be set later, and the callbacks waiting for it.

    Done callbacks are never called inline, from inside ``set_result`` or
    ``cancel``: they are always scheduled with the loop's ``call_soon``.  The
    500 Lines chapter calls them at once, which is simpler but means code
    that sets a result runs arbitrary other code (a whole coroutine step)
    before the call returns, with its own state possibly half updated, and
    that a chain of futures can grow the stack without limit.  Scheduling
    them makes every callback start from the loop with a clean stack, in a
    predictable order.
    """

    # Slots rather than a __dict__: a crawl keeps a few futures alive for
    # each request in flight, and thousands of requests may be in flight.
    __slots__ = (
        "_loop",
        "_state",
        "_result",
        "_exception",
        "_exception_tb",
        "_cancel_message",
        "_cancelled_exc",
        "_callbacks",
        "_blocking",
        "_log_traceback",
    )

    def __init__(self, *, loop: EventLoop | None = None) -> None:
        self._loop = get_running_loop() if loop is None else loop
        self._state = PENDING
        self._result: Any = None
        self._exception: BaseException | None = None
        # The exception's own traceback, kept for result().
        self._exception_tb: types.TracebackType | None = None
        self._cancel_message: str | None = None
        # The CancelledError that stopped a task: raised again, so that its
        # traceback shows where the coroutine was interrupted.
        self._cancelled_exc: CancelledError | None = None
        # A tuple: most futures get one done callback or none, and the empty
        # tuple costs no memory at all.
        self._callbacks: tuple[Callable[[Future], object], ...] = ()
        # Set by __iter__ just before it yields the future, so that a Task
        # can tell ``yield from future`` from a bare ``yield future``.
        # asyncio calls this attribute _asyncio_future_blocking.
        self._blocking = False
        self._log_traceback = False  # True while an exception waits to be retrieved.

    # --8<-- [start:set_result]
    def set_result(self, result: Any) -> None:
        """Mark the future done with ``result`` and schedule its callbacks.

        Raises InvalidStateError if it is done already.
        """
        if self._state != PENDING:
            raise InvalidStateError(f"{self._state}: {self!r}")
        self._result = result
        self._state = FINISHED
        self._schedule_callbacks()

    def set_exception(self, exception: BaseException | type[BaseException]) -> None:
        """Mark the future done with ``exception`` and schedule its callbacks.

        Raises InvalidStateError if it is done already, TypeError for
        StopIteration (which cannot travel through a generator).
        """
        if self._state != PENDING:
            raise InvalidStateError(f"{self._state}: {self!r}")
        if isinstance(exception, type):
            exception = exception()
        if isinstance(exception, StopIteration):
            raise TypeError(
                "StopIteration interacts badly with generators and cannot be raised into a Future"
            )
        self._exception = exception
        self._exception_tb = exception.__traceback__
        self._log_traceback = True  # Until someone retrieves it; see __del__.
        self._state = FINISHED
        self._schedule_callbacks()

    def cancel(self, msg: str | None = None) -> bool:
        """Cancel the future and schedule its callbacks.

        Return False when it is done already.  Either way an exception it
        holds counts as retrieved: whoever cancels no longer wants it.
        """
        self._log_traceback = False
        if self._state != PENDING:
            return False
        self._state = CANCELLED
        self._cancel_message = msg
        self._schedule_callbacks()
        return True

    # --8<-- [end:set_result]

    # --8<-- [start:callbacks]
    def add_done_callback(self, fn: Callable[[Future], object]) -> None:
        """Arrange for ``fn(future)`` to be called, via the loop, once it is done."""
        if self._state != PENDING:
            self._loop.call_soon(fn, self)
        else:
            self._callbacks += (fn,)

    def _schedule_callbacks(self) -> None:
        """Hand every done callback to the loop; never call one from here."""
        callbacks, self._callbacks = self._callbacks, ()
        for callback in callbacks:
            self._loop.call_soon(callback, self)

    # --8<-- [end:callbacks]

    # --8<-- [start:result]
    def result(self) -> Any:
        """Return the result, or raise the exception that was set.

        Raises CancelledError if cancelled, InvalidStateError if not done.
        """
        if self._state != FINISHED:
            raise self._not_finished_error()
        self._log_traceback = False
        if self._exception is not None:
            raise self._exception.with_traceback(self._exception_tb)
        return self._result

    def exception(self) -> BaseException | None:
        """Return the exception that was set, or None if a result was set.

        Raises CancelledError if cancelled, InvalidStateError if not done.
        """
        if self._state != FINISHED:
            raise self._not_finished_error()
        self._log_traceback = False
        return self._exception

    def _not_finished_error(self) -> BaseException:
        """Return what result() and exception() raise for a future not FINISHED."""
        if self._state == CANCELLED:
            return self._make_cancelled_error()
        return InvalidStateError("Result is not ready.")

    def _make_cancelled_error(self) -> CancelledError:
        """Return the CancelledError to raise, with the message given to cancel().

        The first time, that is the error which stopped the task, if any.
        """
        if self._cancelled_exc is not None:
            error, self._cancelled_exc = self._cancelled_exc, None
            return error
        if self._cancel_message is None:
            return CancelledError()
        return CancelledError(self._cancel_message)

    # --8<-- [end:result]

    # --8<-- [start:never_retrieved]
    def __del__(self) -> None:
        """Report an exception that nobody retrieved, when the future is collected.

        Without this, a failure in a task nobody awaits would vanish silently.
        """
        if not getattr(self, "_log_traceback", False):  # Missing if __init__ raised.
            return
        message = f"{type(self).__name__} exception was never retrieved"
        context = {"message": message, "exception": self._exception, "future": self}
        self._loop.call_exception_handler(context)

    # --8<-- [end:never_retrieved]

    def done(self) -> bool:
        """Tell whether the future has a result, an exception, or was cancelled."""
        return self._state != PENDING

    def cancelled(self) -> bool:
        """Tell whether the future was cancelled."""
        return self._state == CANCELLED

    # --8<-- [start:iter]
    def __await__(self) -> Generator[Future, None, Any]:
        """Wait for the future in a coroutine and return its result.

        Raises what result() raises.
        """
        if not self.done():
            self._blocking = True  # Tell the Task that this is a real wait.
            yield self  # The Task parks here until the future is done.
        if not self.done():
            raise RuntimeError("await wasn't used with future")
        return self.result()  # The value of ``yield from future``.

    # ``yield from future`` and ``await future`` are one thing:
    __iter__ = __await__
    # --8<-- [end:iter]

    # --- asyncio compatibility ------------------------------------------
    # Everything below is here so that the names match asyncio.Future; none
    # of it is needed to follow how a coroutine waits for a future.

    @reprlib.recursive_repr()  # A task may wait on a future that waits on it.
    def __repr__(self) -> str:
        return f"<{type(self).__name__} {' '.join(self._repr_info())}>"

    def _repr_info(self) -> list[str]:
        """Return the parts of the repr, as asyncio's: state, outcome, callbacks."""
        info = [self._state.lower()]
        if self._exception is not None:
            info.append(f"exception={self._exception!r}")
        elif self._state == FINISHED:
            info.append(f"result={reprlib.repr(self._result)}")
        if self._callbacks:
            names = [f"{getattr(cb, '__qualname__', repr(cb))}()" for cb in self._callbacks]
            if len(names) > 2:
                names[1:-1] = [f"<{len(names) - 2} more>"]
            info.append(f"cb=[{', '.join(names)}]")
        return info

    def get_loop(self) -> EventLoop:
        """Return the loop the future belongs to.

        Raises RuntimeError if a subclass did not call Future.__init__.
        """
        if not hasattr(self, "_loop"):
            raise RuntimeError("Future object is not initialized.")
        return self._loop

    # Future[str], as in asyncio: a types.GenericAlias.
    __class_getitem__ = classmethod(types.GenericAlias)  # type: ignore[var-annotated]

    def remove_done_callback(self, fn: Callable[[Future], object]) -> int:
        """Forget every registration of ``fn``; return how many there were."""
        if not self._callbacks:
            return 0
        kept = tuple(callback for callback in self._callbacks if callback != fn)
        removed = len(self._callbacks) - len(kept)
        self._callbacks = kept
        return removed


def isfuture(obj: object) -> bool:
    """Tell whether ``obj`` is a future: a Future, or an object that acts as one.

    As asyncio, that is an instance whose class has the attribute
    ``_asyncio_future_blocking`` set to something other than None.
    """
    return isinstance(obj, Future) or (
        hasattr(type(obj), "_asyncio_future_blocking")
        and getattr(obj, "_asyncio_future_blocking", None) is not None
    )

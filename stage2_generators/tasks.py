"""Tasks: the driver that runs a coroutine one step at a time.

A coroutine cannot run itself: something must call ``send()`` to start it,
take the future it yields, and call ``send()`` again once that future is
done.  That something is a ``Task``, which is itself a future, done when
its coroutine returns or raises.  On top of tasks this module builds
``sleep``, ``gather``, ``wait_for`` and ``shield``, with the names and the
meaning of their asyncio counterparts (``wait_for`` as in Python 3.12 and
later).  A task counts the requests to cancel it (``cancelling()``) and
takes one back with ``uncancel()``: that is how ``wait_for``, ``TaskGroup``
(``taskgroups.py``) and ``timeout`` (``timeouts.py``) tell their own
cancellation from another's.

Left out compared with asyncio: ``wait``, ``as_completed``, eager tasks
and the ``contextvars`` context of each task.  The coroutines here (``sleep``, ``wait_for``) are
generators, so that the crawler's generators can use them with ``yield
from``; ``@types.coroutine`` marks them so that ``async def`` code can
``await`` them too.

The file reads core first: how a task steps its coroutine and how it is
cancelled, then ``sleep``, ``gather`` and ``wait_for``.  The rest of
asyncio's task API comes last, under a heading that says so.
"""

from __future__ import annotations

import collections.abc
import inspect
import math
import types
from collections.abc import Awaitable, Generator
from typing import TYPE_CHECKING, Any, TypeGuard, cast

from stage2_generators.events import get_running_loop
from stage2_generators.futures import (
    PENDING,
    CancelledError,
    Future,
    InvalidStateError,
    isfuture,
)

if TYPE_CHECKING:
    from stage2_generators.loop import EventLoop

Coroutine = Generator[Any, None, Any] | collections.abc.Coroutine[Any, Any, Any]


class Task(Future):
    """Run a generator or a native coroutine on the loop, as a Future."""

    # --8<-- [start:invariant]
    # The invariant: between two steps, until the task is done, it is either
    # scheduled to take its next step (a call to _step waits in the loop's
    # ready queue) or parked on exactly one future, _fut_waiter, whose done
    # callback (_wakeup, which the future schedules) will take that step.
    # Never both, never neither: so a task is never lost, and never runs two
    # steps at once.
    # --8<-- [end:invariant]

    # __weakref__: the loop holds its tasks in a WeakSet.
    __slots__ = (
        "_coro", "_fut_waiter", "_must_cancel", "_num_cancels_requested", "_name", "__weakref__",
    )  # fmt: skip

    def __init__(
        self, coro: Coroutine, *, loop: EventLoop | None = None, name: str | None = None
    ) -> None:
        if not iscoroutine(coro):
            raise TypeError(f"a coroutine was expected, got {coro!r}")
        super().__init__(loop=loop)
        self._coro = coro
        self._name = self._loop._task_name(name)
        self._fut_waiter: Future | None = None
        self._must_cancel = False  # Throw CancelledError in at the next step.
        self._num_cancels_requested = 0  # See cancelling() and uncancel().
        self._loop.call_soon(self._step)
        self._loop._tasks.add(self)  # Until it is done (weakly); see all_tasks().

    # --8<-- [start:step]
    def _step(self, exc: BaseException | None = None) -> None:
        """Run the coroutine until it yields a future, returns or raises."""
        if self.done():
            raise InvalidStateError(f"_step(): already done: {self!r}")
        if self._must_cancel:
            if not isinstance(exc, CancelledError):
                exc = self._make_cancelled_error()
            self._must_cancel = False
        self._fut_waiter = None
        self._loop._current_task = self
        try:
            result = self._coro.send(None) if exc is None else self._coro.throw(exc)
        except StopIteration as stop:
            if self._must_cancel:  # cancel() came during this last step.
                self._must_cancel = False
                super().cancel(msg=self._cancel_message)
            else:
                super().set_result(stop.value)
        except CancelledError as error:
            self._cancelled_exc = error  # result() raises it again: see futures.py.
            super().cancel(msg=error.args[0] if error.args else None)
        except (KeyboardInterrupt, SystemExit) as error:
            super().set_exception(error)
            raise  # Let Ctrl+C reach whoever runs the loop.
        except BaseException as error:
            super().set_exception(error)
        else:
            self._wait_on(result)
        finally:
            self._loop._current_task = None

    # --8<-- [end:step]

    # --8<-- [start:wakeup]
    def _wait_on(self, result: object) -> None:
        """Park the task on the future the coroutine yielded, or reschedule it."""
        if isinstance(result, Future) and result._blocking:
            result._blocking = False
            if result is self or result._loop is not self._loop:
                self._loop.call_soon(self._step, _bad_yield(self, result))
                return
            self._fut_waiter = result
            result.add_done_callback(self._wakeup)
            if self._must_cancel and result.cancel(msg=self._cancel_message):
                self._must_cancel = False  # cancel() came while the step ran.
        elif result is None:
            # A bare ``yield``: one turn for the others.
            self._loop.call_soon(self._step)
        else:
            self._loop.call_soon(self._step, _bad_yield(self, result))

    def _wakeup(self, future: Future) -> None:
        """Resume the coroutine now that the future it waited on is done."""
        try:
            future.result()
        except BaseException as error:
            # Thrown in at the yield inside Future.__iter__, so the traceback
            # shows where the coroutine was waiting.
            self._step(error)
        else:
            self._step()  # __iter__ fetches the result itself.

    # --8<-- [end:wakeup]

    # --8<-- [start:cancel]
    def cancel(self, msg: str | None = None) -> bool:
        """Ask the coroutine to stop: throw CancelledError in where it waits.

        Return False if the task is done already.  The coroutine may catch
        the error and go on; the task is only cancelled once it lets it out.
        """
        self._log_traceback = False  # As Future.cancel(): nobody wants its error.
        if self.done():
            return False
        self._num_cancels_requested += 1
        self._cancel_message = msg
        if self._fut_waiter is not None and self._fut_waiter.cancel(msg=msg):
            # Cancelling the future wakes the task (see _wakeup), which then
            # finds the future cancelled and throws CancelledError in.
            return True
        self._must_cancel = True  # Its next step is scheduled: make it throw.
        return True

    # --8<-- [end:cancel]

    # --8<-- [start:destroyed]
    def __del__(self) -> None:
        """Report a task collected while pending: its coroutine will never finish."""
        if getattr(self, "_state", None) == PENDING:  # Missing if __init__ raised.
            message = "Task was destroyed but it is pending!"
            self._loop.call_exception_handler({"message": message, "task": self})
        super().__del__()  # And an exception that nobody retrieved.

    # --8<-- [end:destroyed]

    # --- asyncio compatibility ------------------------------------------
    # Below: what asyncio.Task also offers; not needed to follow how a task
    # drives its coroutine.

    def _repr_info(self) -> list[str]:
        """Return the parts of the repr, as asyncio's: state, name, coroutine, waiter."""
        info = super()._repr_info()
        if self._num_cancels_requested and not self.done():
            info[0] = "cancelling"
        coro = getattr(self._coro, "__qualname__", None) or type(self._coro).__name__
        info[1:1] = [f"name={self._name!r}", f"coro=<{coro}()>"]
        if self._fut_waiter is not None:
            info.insert(3, f"wait_for={self._fut_waiter!r}")
        return info

    def get_name(self) -> str:
        """Return the task's name: the one given, or ``Task-N``."""
        return self._name

    def set_name(self, value: object) -> None:
        """Rename the task."""
        self._name = str(value)

    def _schedule_callbacks(self) -> None:
        """Leave the loop's set of tasks, then schedule the done callbacks."""
        self._loop._tasks.discard(self)  # Runs once: when the task is done.
        super()._schedule_callbacks()

    def get_coro(self) -> Coroutine:
        """Return the coroutine the task runs."""
        return self._coro

    def set_result(self, result: Any) -> None:
        """Refuse: only the coroutine decides a task's result.  Raises RuntimeError."""
        raise RuntimeError("Task does not support set_result operation")

    def set_exception(self, exception: BaseException | type[BaseException]) -> None:
        """Refuse: only the coroutine decides a task's outcome.  Raises RuntimeError."""
        raise RuntimeError("Task does not support set_exception operation")

    def cancelling(self) -> int:
        """Return how many cancel() requests are pending (not undone by uncancel())."""
        return self._num_cancels_requested

    def uncancel(self) -> int:
        """Undo one cancel() request, once the cancellation was handled; return the rest.

        wait_for() uses it to tell its own cancellation (a timeout) from another's.
        """
        if self._num_cancels_requested > 0:
            self._num_cancels_requested -= 1
            if self._num_cancels_requested == 0:
                self._must_cancel = False
        return self._num_cancels_requested


def create_task(coro: Coroutine, *, name: str | None = None) -> Task:
    """Wrap ``coro`` in a Task on the running loop.  Raises RuntimeError if none runs."""
    return get_running_loop().create_task(coro, name=name)


# --8<-- [start:sleep]
@types.coroutine
def sleep(delay: float, result: Any = None) -> Generator[Any, None, Any]:
    """Suspend the calling coroutine for ``delay`` seconds, then return ``result``.

    Raises ValueError for a NaN delay, which no timer could be ordered by.
    """
    if math.isnan(delay):
        raise ValueError("Invalid delay: NaN (not a number)")
    if delay <= 0:
        yield  # Give every other ready callback one turn, as asyncio.sleep(0).
        return result
    loop = get_running_loop()
    future = loop.create_future()
    handle = loop.call_later(delay, _set_result_unless_done, future, result)
    try:
        return (yield from future)
    finally:
        handle.cancel()  # Drop the timer if we were cancelled early.


def _set_result_unless_done(future: Future, result: Any) -> None:
    """Set the result of ``future`` unless it was cancelled meanwhile."""
    if not future.done():
        future.set_result(result)


# --8<-- [end:sleep]


# --8<-- [start:gather]
class _GatheringFuture(Future):
    """The future ``gather`` returns: cancelling it cancels its children."""

    __slots__ = ("_children", "_cancel_requested")

    def __init__(self, children: list[Future], *, loop: EventLoop) -> None:
        super().__init__(loop=loop)
        self._children = children
        self._cancel_requested = False

    def cancel(self, msg: str | None = None) -> bool:
        """Cancel every child that is not done; False if none could be."""
        if self.done():
            return False
        cancelled = [child.cancel(msg=msg) for child in self._children]
        self._cancel_requested = self._cancel_requested or any(cancelled)
        return any(cancelled)


def gather(*aws: Awaitable[Any] | Coroutine, return_exceptions: bool = False) -> Future:
    """Run ``aws`` concurrently; return a future of the list of their results.

    Without return_exceptions, the first exception of a child becomes the
    outcome of the gathering future (the other children keep running).
    """
    loop = next((aw._loop for aw in aws if isinstance(aw, Future)), None)
    loop = loop or get_running_loop()
    futures: dict[Any, Future] = {}  # One future for each distinct argument:
    for aw in aws:  # the same coroutine given twice runs once.
        if aw not in futures:
            futures[aw] = ensure_future(aw, loop=loop)
    children = [futures[aw] for aw in aws]
    outer = _GatheringFuture(children, loop=loop)
    if not children:
        outer.set_result([])
    pending = len(futures)

    def child_done(child: Future) -> None:
        nonlocal pending
        pending -= 1
        if outer.done():
            if not child.cancelled():
                child.exception()  # Retrieved: it has no one else to report to.
            return
        if not return_exceptions and (child.cancelled() or child.exception() is not None):
            outer.set_exception(_outcome(child))
        elif pending == 0:
            _finish_gathering(outer, return_exceptions)

    for child in futures.values():
        child.add_done_callback(child_done)
    return outer


def _outcome(child: Future) -> BaseException:
    """Return the exception of a failed or cancelled child."""
    if child.cancelled():
        return child._make_cancelled_error()
    error = child.exception()
    assert error is not None, "only a failed child has an outcome to report"
    return error


def _finish_gathering(outer: _GatheringFuture, return_exceptions: bool) -> None:
    """Set the outcome of ``outer`` once all its children are done."""
    if outer._cancel_requested:
        # Seen as cancellation, with the children's message, as in asyncio.
        outer.set_exception(outer._children[-1]._make_cancelled_error())
        return
    results = []
    for child in outer._children:
        if child.cancelled() or child.exception() is not None:
            results.append(_outcome(child))
        else:
            results.append(child.result())
    outer.set_result(results)


# --8<-- [end:gather]


# --8<-- [start:wait_for]
@types.coroutine
def wait_for(aw: Awaitable[Any] | Coroutine, timeout: float | None) -> Generator[Any, None, Any]:
    """Wait for ``aw``, cancelling it if it takes more than ``timeout`` seconds.

    As in asyncio since Python 3.12, a coroutine runs in the calling task
    itself, with no task of its own: when the time is up, the timer cancels
    the calling task, which throws CancelledError into ``aw`` where it
    waits; ``aw`` cleans up, and the CancelledError that comes out is
    turned into TimeoutError.  A timeout of zero or less cancels ``aw`` at
    once, unless it is a future that is done already.  Raises TimeoutError,
    else what ``aw`` raises.
    """
    if timeout is not None and timeout <= 0:
        return (yield from _no_time_left(aw))
    awaited = _iterable(aw)
    if timeout is None:
        return (yield from awaited)
    task = current_task()
    if task is None:
        raise RuntimeError("wait_for() must be called from a task")
    expired: list[bool] = []  # Becomes [True] when the timer has cancelled the task.
    handle = task.get_loop().call_later(timeout, _expire, task, expired)
    cancelling = task.cancelling()
    try:
        return (yield from awaited)
    except CancelledError as error:
        if expired:
            expired.clear()  # Undo our own cancel() request, exactly once.
            if task.uncancel() <= cancelling:  # Nobody else asked to cancel: a timeout.
                raise TimeoutError(f"no result within {timeout} seconds") from error
        raise
    finally:
        handle.cancel()
        if expired:  # aw swallowed our CancelledError or raised another error.
            task.uncancel()


def _expire(task: Task, expired: list[bool]) -> None:
    """Cancel ``task``, whose time is up; the timer callback of wait_for."""
    expired.append(True)
    task.cancel()


@types.coroutine
def _no_time_left(aw: Awaitable[Any] | Coroutine) -> Generator[Any, None, Any]:
    """Cancel ``aw`` unless it is done, wait until it is, and raise TimeoutError."""
    future = ensure_future(aw)
    if not future.done():
        future.cancel()
        waiter = future.get_loop().create_future()
        future.add_done_callback(lambda _: _set_result_unless_done(waiter, None))
        yield from waiter  # Until aw has cleaned up.
    try:
        return future.result()  # aw may have swallowed the cancellation.
    except CancelledError as error:
        raise TimeoutError("no time left to wait") from error


# --8<-- [end:wait_for]


def shield(aw: Awaitable[Any] | Coroutine) -> Future:
    """Return a future of ``aw`` that can be cancelled without cancelling ``aw``.

    The caller waiting on it can still be cancelled; ``aw`` goes on running
    (and its outcome is dropped).
    """
    inner = ensure_future(aw)
    if inner.done():
        return inner
    outer = inner.get_loop().create_future()

    def copy_outcome(inner: Future) -> None:
        if outer.cancelled():
            if not inner.cancelled():
                inner.exception()  # Retrieved: nobody else will read it.
        elif inner.cancelled():
            outer.cancel()
        elif inner.exception() is not None:
            outer.set_exception(_outcome(inner))
        else:
            outer.set_result(inner.result())

    def forget_inner(outer: Future) -> None:
        if not inner.done():
            inner.remove_done_callback(copy_outcome)

    inner.add_done_callback(copy_outcome)
    outer.add_done_callback(forget_inner)
    return outer


# --- asyncio compatibility ----------------------------------------------
# The helpers below complete the asyncio names (gather and wait_for use two of
# them); none is needed to follow how a task drives its coroutine.


def current_task(loop: EventLoop | None = None) -> Task | None:
    """Return the task whose step is running now, or None (in a plain callback)."""
    return (loop or get_running_loop())._current_task


def ensure_future(aw: Awaitable[Any] | Coroutine, *, loop: EventLoop | None = None) -> Future:
    """Return ``aw`` if it is a Future, else a Task running it.

    Raises TypeError for what cannot be awaited, ValueError for a future
    of another loop than ``loop``.
    """
    if isfuture(aw):
        aw = cast(Future, aw)  # Or an object that acts as one.
        if loop is not None and aw.get_loop() is not loop:
            raise ValueError(
                "The future belongs to a different loop than the one specified as the loop argument"
            )
        return aw
    if iscoroutine(aw):
        return (loop or get_running_loop()).create_task(aw)
    if hasattr(type(aw), "__await__"):
        return (loop or get_running_loop()).create_task(_wrap_awaitable(aw))
    raise TypeError(f"a Future, a coroutine, a generator or an awaitable is required, not {aw!r}")


def _iterable(aw: Any) -> Any:
    """Return what ``yield from`` can drive for ``aw``: itself or its ``__await__()``.

    Raises TypeError when ``aw`` cannot be awaited.
    """
    if isinstance(aw, (Future, types.GeneratorType, types.CoroutineType)):
        return aw
    if hasattr(type(aw), "__await__"):
        return aw.__await__()
    raise TypeError(f"an awaitable is required, not {aw!r}")


@types.coroutine
def _wrap_awaitable(aw: Any) -> Generator[Any, None, Any]:
    """Await ``aw`` in a generator, so that a Task can run it."""
    return (yield from aw.__await__())


def all_tasks(loop: EventLoop | None = None) -> set[Task]:
    """Return the tasks of ``loop`` (default: the running one) that are not done."""
    loop = loop or get_running_loop()
    return set(loop._tasks)


def _bad_yield(task: Task, result: object) -> RuntimeError:
    """Return the error thrown into a coroutine that yielded ``result``."""
    if result is task:
        return RuntimeError(f"Task cannot await on itself: {task!r}")
    if isinstance(result, Future) and result._loop is not task._loop:
        return RuntimeError(f"Task {task!r} got Future {result!r} attached to another loop")
    if isinstance(result, Future):
        return RuntimeError(
            f"yield was used instead of yield from in task {task!r} with {result!r}"
        )
    return RuntimeError(
        f"Task got bad yield: {result!r} (a coroutine may only yield from futures "
        "or other coroutines)"
    )


def iscoroutine(obj: object) -> TypeGuard[Coroutine]:
    """Tell whether ``obj`` is a coroutine: native, or a generator (the stage's lesson)."""
    return isinstance(obj, (types.CoroutineType, types.GeneratorType, collections.abc.Coroutine))


def iscoroutinefunction(func: object) -> bool:
    """Tell whether ``func`` is an ``async def`` function, as asyncio does.

    A generator function is none, though its generators run as tasks here:
    asyncio's answer, so that code asking it behaves the same.
    """
    return inspect.iscoroutinefunction(func)

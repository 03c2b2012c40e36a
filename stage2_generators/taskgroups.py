"""Task groups: tasks that start inside a block and are all done when it ends.

``create_task`` lets a task outlive the code that started it, and an error
in a task stays in it until somebody awaits it.  A ``TaskGroup`` ties its
tasks to a block::

    async with TaskGroup() as group:
        group.create_task(fetch(first))
        group.create_task(fetch(second))
    # Here every task of the group is done.

The block's end waits for every child.  The first child that fails cancels
the others and the body (by cancelling the task that runs the block); once
all are done, the group raises an ``ExceptionGroup`` of every error, the
body's own included.  Cancelling the task that runs the block cancels the
children too, and the cancellation goes on once they are done.

To cancel the body, the group cancels its own parent task, so at the end it
must tell that cancellation from one that came from outside.  It counts:
it calls ``uncancel()`` once for the ``cancel()`` it made, and lets the
CancelledError go on only if requests from others are left.

The names and the behaviour are those of ``asyncio.TaskGroup`` (Python
3.13).  Left out: the ``context`` argument of ``create_task`` and eager
tasks.  A generator has no ``async with``, so ``run_in_group`` writes out
for the crawler's generators what that statement does.
"""

from __future__ import annotations

import types
from collections.abc import Callable, Generator
from typing import TYPE_CHECKING, Any

from stage2_generators.futures import CancelledError, Future
from stage2_generators.tasks import Coroutine, Task, current_task

if TYPE_CHECKING:
    from stage2_generators.loop import EventLoop


class TaskGroup:
    """Start tasks in an ``async with`` block; wait for all of them at its end."""

    def __init__(self) -> None:
        self._entered = False
        self._exiting = False  # In __aexit__: waiting for the children.
        self._aborting = False  # The children are being cancelled.
        self._parent_task: Task | None = None  # The task that runs the block.
        self._parent_cancel_requested = False  # We cancelled it: uncancel() once.
        self._tasks: set[Task] = set()  # The children not done yet.
        self._errors: list[BaseException] = []
        self._base_error: BaseException | None = None  # KeyboardInterrupt, SystemExit.
        self._all_done: Future | None = None  # What __aexit__ waits on.

    def __repr__(self) -> str:
        state = "exiting" if self._exiting else "entered" if self._entered else "new"
        return f"<TaskGroup {state} tasks={len(self._tasks)} errors={len(self._errors)}>"

    async def __aenter__(self) -> TaskGroup:
        """Start the block in the current task.  Raises RuntimeError if entered already."""
        if self._entered:
            raise RuntimeError(f"{self!r} has already been entered")
        self._parent_task = current_task()
        if self._parent_task is None:
            raise RuntimeError(f"TaskGroup {self!r} cannot determine the parent task")
        self._entered = True
        return self

    def create_task(self, coro: Coroutine, *, name: str | None = None) -> Task:
        """Start ``coro`` as a child task of the group.

        Raises RuntimeError before the block, after it, or once the group
        is cancelling its children.
        """
        refusal = self._refusal()
        if refusal is not None:
            coro.close()  # It will never run: no "never awaited" warning.
            raise RuntimeError(f"{self!r} {refusal}")
        assert self._parent_task is not None, "entered, so it has a parent"
        task = self._parent_task.get_loop().create_task(coro, name=name)
        self._tasks.add(task)
        task.add_done_callback(self._on_task_done)
        return task

    def _refusal(self) -> str | None:
        """Return why create_task() cannot start a task now, or None if it can."""
        if not self._entered:
            return "has not been entered"
        if self._exiting and not self._tasks:
            return "is finished"
        if self._aborting:
            return "is shutting down"
        return None

    # --8<-- [start:task_done]
    def _on_task_done(self, task: Future) -> None:
        """Forget a finished child; on the first failure, cancel the rest."""
        assert isinstance(task, Task), "only tasks are added to the group"
        self._tasks.discard(task)
        waiting = self._all_done  # __aexit__ waits on it for the last child.
        if waiting is not None and not self._tasks and not waiting.done():
            waiting.set_result(None)
        if task.cancelled() or task.exception() is None:
            return
        error = task.exception()
        assert error is not None
        self._errors.append(error)
        if _is_base_error(error) and self._base_error is None:
            self._base_error = error
        if not self._aborting and not self._parent_cancel_requested:
            self._abort()  # Stop the siblings...
            self._parent_cancel_requested = True
            assert self._parent_task is not None
            self._parent_task.cancel()  # ...and the body, wherever it waits.

    def _abort(self) -> None:
        """Cancel every child that is not done."""
        self._aborting = True
        for task in self._tasks:
            if not task.done():
                task.cancel()

    # --8<-- [end:task_done]

    # --8<-- [start:exit]
    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: object,
    ) -> None:
        """Wait for every child; raise what went wrong in them or the body."""
        self._exiting = True
        if exc is not None and _is_base_error(exc) and self._base_error is None:
            self._base_error = exc
        cancelled = exc if isinstance(exc, CancelledError) else None
        if exc is not None and not self._aborting:
            self._abort()  # The body failed or was cancelled: stop them.
        while self._tasks:
            self._all_done = self._loop().create_future()
            try:
                await self._all_done
            except CancelledError as error:
                if not self._aborting:  # Cancelled from outside while waiting.
                    cancelled = error
                    self._abort()
        self._all_done = None
        if self._base_error is not None:
            raise self._base_error
        if self._parent_cancel_requested and self._parent().uncancel() == 0:
            cancelled = None  # The only cancellation was our own: it ends here.
        if cancelled is not None and not self._errors:
            raise cancelled
        if exc is not None and not isinstance(exc, CancelledError):
            self._errors.append(exc)
        if self._errors:
            self._keep_outside_cancellation()
            message = "unhandled errors in a TaskGroup"
            raise BaseExceptionGroup(message, self._errors)

    # --8<-- [end:exit]

    def _keep_outside_cancellation(self) -> None:
        """Let a cancellation from outside hit the parent at its next wait.

        The error group goes out instead of that CancelledError; as asyncio
        does since Python 3.13, the parent is cancelled again so that the
        request is not lost (3.11 and 3.12 drop it).
        """
        parent = self._parent()
        if parent.cancelling():
            parent.uncancel()
            parent.cancel()

    def _parent(self) -> Task:
        """Return the task that runs the block."""
        assert self._parent_task is not None, "only called once entered"
        return self._parent_task

    def _loop(self) -> EventLoop:
        """Return the loop of the task that runs the block."""
        return self._parent().get_loop()


def _is_base_error(error: BaseException) -> bool:
    """Tell whether ``error`` must stop the program rather than join the group."""
    return isinstance(error, (KeyboardInterrupt, SystemExit))


# --8<-- [start:run_in_group]
@types.coroutine
def run_in_group(
    body: Callable[[TaskGroup], Generator[Any, None, Any]],
) -> Generator[Any, None, Any]:
    """Run the coroutine ``body(group)`` in a new TaskGroup; return its result.

    What ``async with TaskGroup() as group:`` does, written out, for
    generators, which cannot use ``async with``.  Raises what the group raises.
    """
    group = TaskGroup()
    yield from group.__aenter__()
    try:
        result = yield from body(group)
    except BaseException as error:
        yield from group.__aexit__(type(error), error, error.__traceback__)
        raise  # __aexit__ did not raise: the body's own error goes on.
    yield from group.__aexit__(None, None, None)
    return result


# --8<-- [end:run_in_group]

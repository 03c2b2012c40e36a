"""A solution: a task, a timer that cancels it, and a note that it did.

The timer's callback notes that the time is up before it cancels the
task, so that a ``CancelledError`` coming out of ``await task`` can be
told apart: the timer's becomes ``TimeoutError``, anyone else's (the
caller being cancelled) goes on up.  ``await task`` returns only once
the task is done, so the coroutine has cleaned up before ``wait_for``
raises.  ``finally`` cancels the timer however ``wait_for`` ends.
"""

from collections.abc import Coroutine
from typing import Any

from stage2_generators.events import get_running_loop
from stage2_generators.futures import CancelledError
from stage2_generators.tasks import create_task


async def wait_for(coro: Coroutine[Any, Any, Any], timeout: float) -> Any:
    """Return what ``coro`` returns; raise TimeoutError after ``timeout`` s."""
    task = create_task(coro)
    expired = False

    def expire() -> None:
        nonlocal expired
        expired = True
        task.cancel()

    timer = get_running_loop().call_later(timeout, expire)
    try:
        return await task
    except CancelledError:
        if expired:
            raise TimeoutError(f"no result in {timeout} s") from None
        raise
    finally:
        timer.cancel()

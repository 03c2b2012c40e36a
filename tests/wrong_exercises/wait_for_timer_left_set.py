"""Wrong: the timer cancels the caller, and is left set after a result.

The coroutine runs in the calling task itself (as in asyncio since
Python 3.12): when the time is up, the timer cancels that task.  But a
result in time leaves the timer set, and it cancels the task later,
whatever it is doing by then.
"""

from collections.abc import Coroutine
from typing import Any

from stage2_generators.events import get_running_loop
from stage2_generators.futures import CancelledError
from stage2_generators.tasks import current_task


async def wait_for(coro: Coroutine[Any, Any, Any], timeout: float) -> Any:
    """Return what ``coro`` returns; raise TimeoutError after ``timeout`` s."""
    caller = current_task()
    assert caller is not None
    get_running_loop().call_later(timeout, caller.cancel)
    try:
        return await coro
    except CancelledError:
        raise TimeoutError(f"no result in {timeout} s") from None

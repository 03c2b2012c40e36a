"""Wrong: any CancelledError, the caller's own too, becomes TimeoutError."""

from collections.abc import Coroutine
from typing import Any

from stage2_generators.events import get_running_loop
from stage2_generators.futures import CancelledError
from stage2_generators.tasks import create_task


async def wait_for(coro: Coroutine[Any, Any, Any], timeout: float) -> Any:
    """Return what ``coro`` returns; raise TimeoutError after ``timeout`` s."""
    task = create_task(coro)
    timer = get_running_loop().call_later(timeout, task.cancel)
    try:
        return await task
    except CancelledError:
        raise TimeoutError(f"no result in {timeout} s") from None
    finally:
        timer.cancel()

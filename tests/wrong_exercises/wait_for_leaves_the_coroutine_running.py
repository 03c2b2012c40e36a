"""Wrong: TimeoutError comes from a race, and the coroutine runs on."""

from collections.abc import Coroutine
from typing import Any

from stage2_generators.events import get_running_loop
from stage2_generators.futures import Future
from stage2_generators.tasks import create_task


async def wait_for(coro: Coroutine[Any, Any, Any], timeout: float) -> Any:
    """Return what ``coro`` returns; raise TimeoutError after ``timeout`` s."""
    loop = get_running_loop()
    task = create_task(coro)
    first: Future = loop.create_future()

    def time_up() -> None:
        if not first.done():
            first.set_exception(TimeoutError(f"no result in {timeout} s"))

    def finished(_: Future) -> None:
        if not first.done():
            first.set_result(None)

    timer = loop.call_later(timeout, time_up)
    task.add_done_callback(finished)
    await first  # Raises TimeoutError; the task is never cancelled.
    timer.cancel()
    return task.result()

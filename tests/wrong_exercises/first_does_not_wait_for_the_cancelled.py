"""Wrong: the others are cancelled, but first() returns before they end."""

from collections.abc import Coroutine
from typing import Any

from stage2_generators.events import get_running_loop
from stage2_generators.futures import Future
from stage2_generators.tasks import create_task


async def first(*coros: Coroutine[Any, Any, Any]) -> Any:
    """Return the result of the coroutine that finishes first."""
    winner = get_running_loop().create_future()

    def offer(task: Future) -> None:
        if not winner.done() and not task.cancelled():
            winner.set_result(task.result())

    tasks = [create_task(coro) for coro in coros]
    for task in tasks:
        task.add_done_callback(offer)
    try:
        return await winner
    finally:
        for task in tasks:
            task.cancel()  # Asked to stop; not yet stopped.

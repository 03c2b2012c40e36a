"""Wrong: the winner's result is returned, and the others run on."""

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

    for coro in coros:
        create_task(coro).add_done_callback(offer)
    return await winner

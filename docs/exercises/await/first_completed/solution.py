"""A solution: a task each, a future for the winner, cancel the rest.

Each task, when it finishes, offers its result to ``winner``; only the
first offer is taken.  ``finally`` cancels every task (cancelling a task
that is done does nothing) and waits for them with ``gather``, so that
their cleanup has run before ``first`` returns, or before the caller's
own cancellation goes on up.
"""

from collections.abc import Coroutine
from typing import Any

from stage2_generators.events import get_running_loop
from stage2_generators.futures import Future
from stage2_generators.tasks import create_task, gather


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
            task.cancel()
        await gather(*tasks, return_exceptions=True)

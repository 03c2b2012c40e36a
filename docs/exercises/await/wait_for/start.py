"""Exercise: ``wait_for`` on the hand-made loop.

``wait_for(coro, timeout)`` returns what ``coro`` returns, or raises
``TimeoutError`` once ``timeout`` seconds have passed.  Today it waits
for as long as it takes.  Write it with what stage 2 has: a task for
``coro`` (``create_task``), a timer (``get_running_loop().call_later``)
and ``Task.cancel``.  When the time is up, cancel the coroutine and wait
until it has cleaned up, then raise ``TimeoutError``; when the result
comes in time, the timer must never fire.  If the task that called
``wait_for`` is itself cancelled, that is a ``CancelledError``, not a
timeout.
"""

from collections.abc import Coroutine
from typing import Any


async def wait_for(coro: Coroutine[Any, Any, Any], timeout: float) -> Any:
    """Return what ``coro`` returns; raise TimeoutError after ``timeout`` s."""
    return await coro

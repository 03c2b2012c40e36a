"""Exercise: the first of several coroutines to finish.

``first(*coros)`` runs the coroutines at once and returns the result of
whichever finishes first, the way a crawler might ask two mirrors for
one page and keep the faster answer.  The others must not run on: cancel
them, and return only once they have cleaned up.  Today it waits for the
coroutines one after another and returns the first one's result, however
long the first one takes.
"""

from collections.abc import Coroutine
from typing import Any


async def first(*coros: Coroutine[Any, Any, Any]) -> Any:
    """Return the result of the coroutine that finishes first."""
    results = [await coro for coro in coros]
    return results[0]

"""Cancels the wrong request: stage 2's wait_for leaving its timer armed after a result.

A bug in the loop's own task machinery.  ``wait_for`` sets a timer that
cancels the waiting task when the time is up; this one forgets to cancel
the timer once the result is in, so the timer fires later, in the middle
of whatever the same worker does next.  That request had all the time it
needed, and its own ``wait_for`` did not expire: the stray cancel goes
through it, the worker dies of it, and the crawl is left with no one to
finish it (in the simulated world: "every task is stuck").
"""

from typing import Any

import stage2_generators
from stage2_generators import loop as event_loop
from stage2_generators.crawler import Coroutine
from stage2_generators.futures import CancelledError
from stage2_generators.tasks import current_task, sleep
from tests.acceptance import AcceptanceTests
from tests.broken import broken_stage

LEVEL = 4
HINTS = {
    "generators": (
        "test_a_timeout_ends_only_its_own_request [seed0]: rule docs/contract.md#fetching-one-url;"
        " read docs/real-coroutines.md#timeouts-wait_for"
    ),
}


def wait_for(coroutine: Coroutine, timeout: float) -> Coroutine:
    """Wait for ``coroutine``; cancel the task after ``timeout`` seconds."""
    task: Any = current_task()
    expired: list[bool] = []
    task.get_loop().call_later(timeout, expire, task, expired)
    try:
        return (yield from coroutine)  # The bug: the timer is never cancelled.
    except CancelledError:
        if expired:
            task.uncancel()
            raise TimeoutError(f"no result within {timeout} seconds") from None
        raise


def expire(task: Any, expired: list[bool]) -> None:
    """Cancel ``task``, whose time is up."""
    expired.append(True)
    task.cancel()


class TimerLeftArmedGenerators(stage2_generators.Crawler):
    def polite_request(self, url: str, max_size: int) -> Coroutine:
        loop = event_loop.get_running_loop()
        slot = self.host_slot(url)
        yield from slot.acquire()
        try:
            while (wait := self.turn(url, loop.time())) > 0:
                yield from sleep(wait)
            return (yield from wait_for(self.request(url, max_size), self.timeout))
        finally:
            slot.release()


class TestGenerators(AcceptanceTests):
    stage = broken_stage(stage2_generators, TimerLeftArmedGenerators)
    shape = "generators"

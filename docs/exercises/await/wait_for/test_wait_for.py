"""wait_for, on a loop whose clock the test moves by hand.

``ClockLoop`` is stage 2's loop with a clock that stands still until the
test moves it, so a timer fires on the turn after the clock passes it,
never earlier, never later.  The awaited coroutine waits on a future the
test controls.  Every check drives the loop one turn at a time.
"""

import gc
from collections.abc import Coroutine, Iterator
from types import ModuleType
from typing import Any

import pytest

from stage2_generators.futures import CancelledError, Future
from stage2_generators.loop import EventLoop

TIMEOUT = 10.0
TURNS = 10  # More than any step here needs.


class ClockLoop(EventLoop):
    """Stage 2's loop, with a clock moved by the test."""

    now = 1000.0

    def time(self) -> float:
        return self.now


def turn(loop: EventLoop) -> None:
    """Run TURNS turns of the loop: the callbacks ready at each."""
    for _ in range(TURNS):
        loop.call_soon(loop.stop)
        loop.run_forever()


@pytest.fixture
def loop() -> Iterator[ClockLoop]:
    loop = ClockLoop()
    yield loop
    for task in list(loop._tasks):
        task.cancel()
    turn(loop)
    loop.close()
    gc.collect()  # Tasks left waiting are reported now.


def page(answer: Future, log: list[str]) -> Coroutine[Any, Any, Any]:
    """A coroutine that waits for ``answer``, noting when it cleans up."""

    async def fetch() -> Any:
        try:
            return await answer
        finally:
            log.append("fetch cleaned up")

    return fetch()


def test_a_result_in_time_is_returned(
    loop: ClockLoop, exercise: ModuleType
) -> None:
    answer, log = Future(loop=loop), []
    task = loop.create_task(exercise.wait_for(page(answer, log), TIMEOUT))
    turn(loop)
    answer.set_result("the page")
    turn(loop)
    assert task.done() and task.result() == "the page", (
        "the coroutine returned 'the page' in time: wait_for should return it"
    )


def test_the_time_is_up(loop: ClockLoop, exercise: ModuleType) -> None:
    answer, log = Future(loop=loop), []

    async def main() -> None:
        try:
            await exercise.wait_for(page(answer, log), TIMEOUT)
        except TimeoutError:
            log.append("TimeoutError")

    loop.create_task(main())
    turn(loop)
    loop.now += TIMEOUT - 0.5
    turn(loop)
    assert log == [], f"{log} before the time was up"
    loop.now += 0.5
    turn(loop)
    assert "TimeoutError" in log, (
        f"{TIMEOUT} s passed and wait_for did not raise TimeoutError: set a "
        f"timer, get_running_loop().call_later(timeout, ...), that cancels "
        f"a task running the coroutine"
    )
    assert log == ["fetch cleaned up", "TimeoutError"], (
        f"{log}: the coroutine must be cancelled, and have cleaned up, "
        f"before wait_for raises TimeoutError"
    )


def test_the_timer_does_not_fire_after_a_result(
    loop: ClockLoop, exercise: ModuleType
) -> None:
    answer, log = Future(loop=loop), []
    later = Future(loop=loop)  # Set by nobody: the task waits on.

    async def main() -> None:
        await exercise.wait_for(page(answer, log), TIMEOUT)
        await later

    task = loop.create_task(main())
    turn(loop)
    answer.set_result("the page")
    turn(loop)
    loop.now += 2 * TIMEOUT
    turn(loop)
    assert not task.done(), (
        "wait_for had returned, and its timer still fired later and "
        "cancelled the task that called it: cancel the timer when wait_for "
        "returns (call_later returns a handle with cancel())"
    )


def test_cancelling_the_caller_is_not_a_timeout(
    loop: ClockLoop, exercise: ModuleType
) -> None:
    answer, log = Future(loop=loop), []

    async def main() -> None:
        try:
            await exercise.wait_for(page(answer, log), TIMEOUT)
        except TimeoutError:
            log.append("TimeoutError")
        except CancelledError:
            log.append("CancelledError")
            raise

    task = loop.create_task(main())
    turn(loop)
    task.cancel()
    turn(loop)
    assert log == ["fetch cleaned up", "CancelledError"], (
        f"{log}: the task that called wait_for was cancelled before the "
        f"time was up; the coroutine should be cancelled too, and "
        f"CancelledError, not TimeoutError, should come out"
    )

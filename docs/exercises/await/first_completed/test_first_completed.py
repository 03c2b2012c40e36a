"""Three coroutines, each waiting on a future the test sets.

The test drives stage 2's loop one turn at a time, and decides which
coroutine finishes first by setting its future: the same interleaving on
every run.
"""

import gc
from collections.abc import Coroutine, Iterator
from types import ModuleType
from typing import Any

import pytest

from stage2_generators.futures import Future
from stage2_generators.loop import EventLoop

TURNS = 10  # More than any step here needs.


def turn(loop: EventLoop) -> None:
    """Run TURNS turns of the loop: the callbacks ready at each."""
    for _ in range(TURNS):
        loop.call_soon(loop.stop)
        loop.run_forever()


@pytest.fixture
def loop() -> Iterator[EventLoop]:
    loop = EventLoop()
    yield loop
    for task in list(loop._tasks):
        task.cancel()
    turn(loop)
    loop.close()
    gc.collect()  # Tasks or coroutines left behind are reported now.


class Race:
    """Coroutines named a, b, c, each returning its name when told to."""

    def __init__(self, loop: EventLoop, exercise: ModuleType) -> None:
        self.log: list[str] = []
        self.go = {name: Future(loop=loop) for name in "abc"}
        coros = [self.runner(name) for name in "abc"]
        self.task = loop.create_task(self.main(exercise, coros))

    async def main(
        self, exercise: ModuleType, coros: list[Coroutine[Any, Any, Any]]
    ) -> None:
        self.log.append(f"first returned {await exercise.first(*coros)}")

    async def runner(self, name: str) -> str:
        try:
            await self.go[name]
            return name
        finally:
            self.log.append(f"{name} ended")


def test_the_first_to_finish_wins(
    loop: EventLoop, exercise: ModuleType
) -> None:
    race = Race(loop, exercise)
    turn(loop)
    race.go["b"].set_result(None)
    turn(loop)
    assert "first returned b" in race.log, (
        f"b finished first, and first() had not returned b ({race.log}): "
        f"run the coroutines at once, a task each, and return as soon as "
        f"one of them has finished"
    )


def test_the_others_are_cancelled_before_it_returns(
    loop: EventLoop, exercise: ModuleType
) -> None:
    race = Race(loop, exercise)
    turn(loop)
    race.go["b"].set_result(None)
    turn(loop)
    assert "first returned b" in race.log, "first() did not return b"
    ended = race.log[: race.log.index("first returned b")]
    assert sorted(ended) == ["a ended", "b ended", "c ended"], (
        f"{race.log}: a and c must be cancelled, and have ended, before "
        f"first() returns; they must not run on"
    )

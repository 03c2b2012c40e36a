"""Who holds the semaphore, turn by turn.

Each task takes the semaphore, notes its name, and holds it until the
test sets its gate (a future).  The test drives stage 2's loop one turn
at a time (``turn``), so every interleaving it checks happens the same
way on every run: no sleeps, no timing.
"""

import gc
from collections.abc import Generator, Iterator
from types import ModuleType
from typing import Any

import pytest

from stage2_generators.futures import Future
from stage2_generators.loop import EventLoop
from stage2_generators.tasks import Task

TURNS = 10  # More than any step here needs.


def turn(loop: EventLoop, count: int = TURNS) -> None:
    """Run ``count`` turns of the loop: the callbacks ready at each."""
    for _ in range(count):
        loop.call_soon(loop.stop)
        loop.run_forever()


class Holders:
    """Tasks that take one semaphore, each until its gate is set."""

    def __init__(self, loop: EventLoop, semaphore: Any) -> None:
        self.loop = loop
        self.semaphore = semaphore
        self.inside: list[str] = []  # Who took it, in order.
        self.gates: dict[str, Future] = {}
        self.tasks: dict[str, Task] = {}

    def start(self, *names: str) -> None:
        """Start a task per name, each asking for the semaphore in turn."""
        for name in names:
            self.gates[name] = Future(loop=self.loop)
            self.tasks[name] = self.loop.create_task(self.hold(name))
            turn(self.loop)  # It runs until it holds or waits.

    def hold(self, name: str) -> Generator[Any, None, None]:
        yield from self.semaphore.acquire()
        self.inside.append(name)
        try:
            yield from self.gates[name]
        finally:
            self.semaphore.release()

    def leave(self, name: str) -> None:
        """Let ``name`` release the semaphore."""
        self.gates[name].set_result(None)


@pytest.fixture
def loop() -> Iterator[EventLoop]:
    loop = EventLoop()
    yield loop
    loop.close()
    gc.collect()  # Tasks left waiting are reported now.


def holders(loop: EventLoop, exercise: ModuleType, value: int) -> Holders:
    return Holders(loop, exercise.Semaphore(value))


def finish(group: Holders) -> None:
    """Cancel what still waits, so that the test leaves nothing running."""
    for task in group.tasks.values():
        task.cancel()
    turn(group.loop)


def test_value_tasks_hold_it_at_once(
    loop: EventLoop, exercise: ModuleType
) -> None:
    group = holders(loop, exercise, 2)
    group.start("A", "B", "C")
    inside = list(group.inside)
    finish(group)
    assert inside == ["A", "B"], (
        f"A, B and C asked for Semaphore(2), and {inside} got in: exactly "
        f"the first two should hold it at once, while C waits"
    )


def test_release_lets_the_first_waiter_in(
    loop: EventLoop, exercise: ModuleType
) -> None:
    group = holders(loop, exercise, 1)
    group.start("A", "B", "C")
    group.leave("A")
    turn(loop)
    inside = list(group.inside)
    finish(group)
    assert inside == ["A", "B"], (
        f"with Semaphore(1), A held it, B then C waited, and A released "
        f"it: {inside} got in; B, the first waiter, should be woken, and "
        f"only B"
    )


def test_a_waiter_cancelled_while_it_waits_is_skipped(
    loop: EventLoop, exercise: ModuleType
) -> None:
    group = holders(loop, exercise, 1)
    group.start("A", "B", "C")
    group.tasks["B"].cancel()
    turn(loop)
    group.leave("A")
    turn(loop)
    inside = list(group.inside)
    finish(group)
    assert inside == ["A", "C"], (
        f"B was cancelled while it waited; then A released: {inside} got "
        f"in.  C should get in: skip the waiters that are gone (a "
        f"cancelled waiter's future is done)"
    )


def test_a_waiter_cancelled_after_its_wake_up_passes_it_on(
    loop: EventLoop, exercise: ModuleType
) -> None:
    group = holders(loop, exercise, 1)
    group.start("A", "B", "C")
    group.leave("A")
    while not group.tasks["A"].done():  # A releases, waking B...
        turn(loop, 1)
    group.tasks["B"].cancel()  # ...and B is cancelled before it runs.
    turn(loop)
    inside = list(group.inside)
    finish(group)
    assert inside == ["A", "C"], (
        f"release() woke B, and B was cancelled before it ran: {inside} got "
        f"in.  C should get in: a waiter woken and then cancelled must pass "
        f"its wake-up on to the next waiter"
    )

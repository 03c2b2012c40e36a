"""One worker, three items, the second of which raises.

The test drives stage 2's loop one turn at a time (``turn``), so what it
sees does not depend on timing: after enough turns either every item was
handled and ``join`` returned, or something is stuck for good.
"""

import gc
from collections.abc import Generator, Iterator
from types import ModuleType
from typing import Any

import pytest

from stage2_generators.loop import EventLoop
from stage2_generators.queues import Queue
from stage2_generators.tasks import sleep

ITEMS = ["a", "bad", "c"]
TURNS = 20  # Far more than three items need.


def turn(loop: EventLoop) -> None:
    """Run one turn of the loop: the callbacks ready now, and no more."""
    loop.call_soon(loop.stop)
    loop.run_forever()


@pytest.fixture
def loop() -> Iterator[EventLoop]:
    loop = EventLoop()
    yield loop
    loop.close()


def run(loop: EventLoop, exercise: ModuleType) -> dict[str, Any]:
    """Run one worker on ITEMS; return what was handled, failed and joined."""
    handled: list[str] = []
    failures: list[tuple[str, Exception]] = []

    def handle(item: str) -> Generator[Any, None, None]:
        yield from sleep(0)  # A wait, as a fetch would.
        handled.append(item)
        if item == "bad":
            raise ValueError(f"cannot handle {item!r}")

    q: Queue[str] = Queue()
    for item in ITEMS:
        q.put_nowait(item)
    worker = loop.create_task(exercise.worker(q, handle, failures))
    joined = loop.create_task(q.join())
    for _ in range(TURNS):
        if joined.done():
            break
        turn(loop)
    worker.cancel()
    joined.cancel()
    turn(loop)
    if not worker.cancelled():
        worker.exception()  # Retrieved: the loop need not report it.
    gc.collect()  # Any task left behind is reported now, not mid-report.
    return {"handled": handled, "failures": failures, "joined": joined}


def test_the_worker_goes_on_after_an_error(
    loop: EventLoop, exercise: ModuleType
) -> None:
    handled = run(loop, exercise)["handled"]
    assert handled == ITEMS, (
        f"the worker handled {handled} and stopped: when handle() raises, "
        f"catch the error (try/except) and take the next item"
    )


def test_join_returns(loop: EventLoop, exercise: ModuleType) -> None:
    joined = run(loop, exercise)["joined"]
    assert not joined.cancelled(), (
        f"q.join() had not returned after {TURNS} turns of the loop: every "
        f"item must be handled and marked done, q.task_done(), even one "
        f"whose handling raised (a finally block)"
    )


def test_the_error_is_noted(loop: EventLoop, exercise: ModuleType) -> None:
    failures = run(loop, exercise)["failures"]
    noted = [(item, type(error)) for item, error in failures]
    assert noted == [("bad", ValueError)], (
        f"failures should hold ('bad', the ValueError), not {failures}"
    )

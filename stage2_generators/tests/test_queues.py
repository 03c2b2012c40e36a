"""Queue: FIFO order, waiting getters and putters, join and task_done.

Modelled on CPython's ``test_asyncio/test_queues.py``.
"""

from __future__ import annotations

import pytest

from stage2_generators.futures import CancelledError
from stage2_generators.loop import EventLoop
from stage2_generators.queues import Queue, QueueEmpty, QueueFull
from stage2_generators.tasks import gather, sleep
from stage2_generators.tests.support import run_briefly


def test_made_without_a_loop() -> None:
    queue = Queue()
    queue.put_nowait(1)
    assert queue.get_nowait() == 1


def test_fifo_and_sizes() -> None:
    queue = Queue()
    assert queue.empty() and not queue.full() and queue.qsize() == 0
    for item in "abc":
        queue.put_nowait(item)
    assert queue.qsize() == 3 and not queue.empty()
    assert [queue.get_nowait() for _ in range(3)] == ["a", "b", "c"]
    with pytest.raises(QueueEmpty):
        queue.get_nowait()


def test_maxsize() -> None:
    queue = Queue(maxsize=2)
    assert queue.maxsize == 2
    queue.put_nowait(1)
    queue.put_nowait(2)
    assert queue.full()
    with pytest.raises(QueueFull):
        queue.put_nowait(3)


def test_get_waits_for_put(loop: EventLoop) -> None:
    queue = Queue()
    task = loop.create_task(queue.get())
    run_briefly(loop)
    assert not task.done()
    queue.put_nowait("item")
    assert loop.run_until_complete(task) == "item"


def test_getters_are_served_in_order(loop: EventLoop) -> None:
    queue = Queue()
    got = []

    def getter(name: str):
        item = yield from queue.get()
        got.append((name, item))

    tasks = [loop.create_task(getter(name)) for name in ("first", "second", "third")]
    run_briefly(loop)
    for item in (1, 2, 3):
        queue.put_nowait(item)
    loop.run_until_complete(gather(*tasks))
    assert got == [("first", 1), ("second", 2), ("third", 3)]


def test_put_waits_for_room(loop: EventLoop) -> None:
    queue = Queue(maxsize=1)
    queue.put_nowait("first")
    putter = loop.create_task(queue.put("second"))
    run_briefly(loop)
    assert not putter.done()
    assert queue.get_nowait() == "first"
    loop.run_until_complete(putter)
    assert queue.get_nowait() == "second"


def test_task_done_too_often() -> None:
    queue = Queue()
    with pytest.raises(ValueError, match="too many times"):
        queue.task_done()
    queue.put_nowait(1)
    queue.get_nowait()
    queue.task_done()
    with pytest.raises(ValueError):
        queue.task_done()


def test_join_with_nothing_unfinished_returns_at_once(loop: EventLoop) -> None:
    queue = Queue()
    joining = queue.join()
    with pytest.raises(StopIteration):
        joining.send(None)


def test_join_waits_for_every_task_done(loop: EventLoop) -> None:
    queue = Queue()
    handled = []

    def worker():
        while True:
            item = yield from queue.get()
            yield from sleep(0)
            handled.append(item)
            queue.task_done()

    def main():
        workers = [loop.create_task(worker()) for _ in range(3)]
        for item in range(10):
            queue.put_nowait(item)
        yield from queue.join()
        assert sorted(handled) == list(range(10)), "join returned before the work was done"
        for task in workers:
            task.cancel()
        yield from gather(*workers, return_exceptions=True)

    loop.run_until_complete(main())
    assert queue.empty()


def test_join_is_not_done_while_an_item_is_being_handled(loop: EventLoop) -> None:
    queue = Queue()
    queue.put_nowait("x")
    queue.get_nowait()  # Taken, but task_done() not called yet.
    joiner = loop.create_task(queue.join())
    run_briefly(loop)
    run_briefly(loop)
    assert not joiner.done()
    queue.task_done()
    loop.run_until_complete(joiner)


def test_cancel_a_task_waiting_on_get(loop: EventLoop) -> None:
    queue = Queue()
    waiting = loop.create_task(queue.get())
    other = loop.create_task(queue.get())
    run_briefly(loop)
    waiting.cancel()
    with pytest.raises(CancelledError):
        loop.run_until_complete(waiting)
    assert len(queue._getters) == 1, "the cancelled getter was left behind"
    queue.put_nowait("for the other")
    assert loop.run_until_complete(other) == "for the other"


def test_a_getter_cancelled_after_its_turn_came_passes_it_on(loop: EventLoop) -> None:
    queue = Queue()
    first = loop.create_task(queue.get())
    second = loop.create_task(queue.get())
    run_briefly(loop)
    queue.put_nowait("item")  # Wakes the first getter...
    first.cancel()  # ...which is cancelled before it runs.
    assert loop.run_until_complete(second) == "item"
    assert first.cancelled()


def test_cancel_a_task_waiting_on_put(loop: EventLoop) -> None:
    queue = Queue(maxsize=1)
    queue.put_nowait(1)
    putter = loop.create_task(queue.put(2))
    run_briefly(loop)
    putter.cancel()
    with pytest.raises(CancelledError):
        loop.run_until_complete(putter)
    assert queue.get_nowait() == 1 and queue.empty()
    assert not queue._putters

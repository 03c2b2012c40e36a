"""Differential tests of Queue, Event, Lock and Semaphore: on asyncio and stage 2.

Waiters are served in the order they came; a waiter cancelled after its
turn came passes the turn on, so that no item and no unit is lost.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from stage2_generators.tests.libraries import generator_coroutine


async def turns(lib: SimpleNamespace, count: int) -> None:
    """Let the loop go round ``count`` times."""
    for _ in range(count):
        await lib.sleep(0)


async def getter(queue: Any, name: str, log: list[tuple[str, Any]]) -> None:
    """Take one item from ``queue`` and log who got what."""
    log.append((name, await queue.get()))


# Queue


def test_queue_is_first_in_first_out(lib: SimpleNamespace) -> None:
    async def main() -> list[Any]:
        queue = lib.Queue()
        for item in "abc":
            await queue.put(item)
        return [queue.get_nowait() for _ in range(3)]

    assert lib.run(main()) == ["a", "b", "c"]


def test_queue_sizes(lib: SimpleNamespace) -> None:
    queue = lib.Queue(maxsize=2)  # No running loop needed to make one.
    sizes = [(queue.qsize(), queue.empty(), queue.full(), queue.maxsize)]
    queue.put_nowait(1)
    sizes.append((queue.qsize(), queue.empty(), queue.full(), queue.maxsize))
    queue.put_nowait(2)
    sizes.append((queue.qsize(), queue.empty(), queue.full(), queue.maxsize))
    assert sizes == [(0, True, False, 2), (1, False, False, 2), (2, False, True, 2)]


def test_a_maxsize_of_zero_or_less_is_unbounded(lib: SimpleNamespace) -> None:
    for maxsize in (0, -1):
        queue = lib.Queue(maxsize=maxsize)
        for item in range(100):
            queue.put_nowait(item)
        assert not queue.full() and queue.qsize() == 100


def test_put_nowait_on_a_full_queue_raises_queue_full(lib: SimpleNamespace) -> None:
    queue = lib.Queue(maxsize=1)
    queue.put_nowait("a")
    with pytest.raises(lib.QueueFull):
        queue.put_nowait("b")
    assert queue.qsize() == 1 and issubclass(lib.QueueFull, Exception)


def test_get_nowait_on_an_empty_queue_raises_queue_empty(lib: SimpleNamespace) -> None:
    with pytest.raises(lib.QueueEmpty):
        lib.Queue().get_nowait()
    assert issubclass(lib.QueueEmpty, Exception)


def test_get_waits_for_an_item(lib: SimpleNamespace) -> None:
    async def main() -> list[tuple[str, Any]]:
        queue = lib.Queue()
        log: list[tuple[str, Any]] = []
        task = lib.create_task(getter(queue, "worker", log))
        await turns(lib, 3)
        log.append(("main", "puts"))
        queue.put_nowait("item")
        await task
        return log

    assert lib.run(main()) == [("main", "puts"), ("worker", "item")]


def test_getters_are_served_in_the_order_they_came(lib: SimpleNamespace) -> None:
    async def main() -> list[tuple[str, Any]]:
        queue = lib.Queue()
        log: list[tuple[str, Any]] = []
        tasks = [lib.create_task(getter(queue, name, log)) for name in ("one", "two", "three")]
        await lib.sleep(0)
        for item in (1, 2, 3):
            queue.put_nowait(item)
        await lib.gather(*tasks)
        return log

    assert lib.run(main()) == [("one", 1), ("two", 2), ("three", 3)]


def test_put_waits_for_room(lib: SimpleNamespace) -> None:
    async def main() -> list[str]:
        queue = lib.Queue(maxsize=1)
        queue.put_nowait("first")
        log: list[str] = []

        async def putter() -> None:
            await queue.put("second")
            log.append("put")

        task = lib.create_task(putter())
        await turns(lib, 3)
        log.append("get " + queue.get_nowait())
        await task
        log.append("get " + queue.get_nowait())
        return log

    assert lib.run(main()) == ["get first", "put", "get second"]


def test_a_cancelled_get_loses_no_item(lib: SimpleNamespace) -> None:
    async def main() -> list[tuple[str, Any]]:
        queue = lib.Queue()
        log: list[tuple[str, Any]] = []
        first = lib.create_task(getter(queue, "first", log))
        second = lib.create_task(getter(queue, "second", log))
        await lib.sleep(0)
        queue.put_nowait("item")  # Wakes the first getter...
        first.cancel()  # ...which is cancelled before it runs.
        await second
        return log + [("first cancelled", first.cancelled()), ("left", queue.qsize())]

    expected = [("second", "item"), ("first cancelled", True), ("left", 0)]
    assert lib.run(main()) == expected


def test_a_cancelled_put_adds_nothing(lib: SimpleNamespace) -> None:
    async def main() -> list[Any]:
        queue = lib.Queue(maxsize=1)
        queue.put_nowait("first")
        task = lib.create_task(queue.put("second"))
        await lib.sleep(0)
        task.cancel()
        await turns(lib, 2)
        return [task.cancelled(), queue.qsize(), queue.get_nowait()]

    assert lib.run(main()) == [True, 1, "first"]


def test_join_waits_until_every_item_is_done(lib: SimpleNamespace) -> None:
    async def main() -> list[str]:
        queue = lib.Queue()
        log: list[str] = []
        queue.put_nowait("a")
        queue.put_nowait("b")

        async def joiner() -> None:
            await queue.join()
            log.append("joined")

        task = lib.create_task(joiner())
        for item in ("a", "b"):
            await turns(lib, 2)
            queue.get_nowait()
            log.append("done " + item)
            queue.task_done()
        await task
        return log

    assert lib.run(main()) == ["done a", "done b", "joined"]


def test_join_on_a_queue_with_no_work_returns_at_once(lib: SimpleNamespace) -> None:
    async def main() -> list[str]:
        order: list[str] = []
        lib.get_running_loop().call_soon(order.append, "callback")
        await lib.Queue().join()
        order.append("joined")
        return list(order)  # Before the callback has had its turn.

    assert lib.run(main()) == ["joined"]


def test_join_wakes_every_waiter(lib: SimpleNamespace) -> None:
    async def main() -> list[bool]:
        queue = lib.Queue()
        queue.put_nowait(1)
        joiners = [lib.create_task(queue.join()) for _ in range(3)]
        await lib.sleep(0)
        queue.get_nowait()
        queue.task_done()
        await turns(lib, 2)
        return [joiner.done() for joiner in joiners]

    assert lib.run(main()) == [True, True, True]


def test_task_done_too_often_raises_value_error(lib: SimpleNamespace) -> None:
    queue = lib.Queue()
    queue.put_nowait(1)
    queue.get_nowait()
    queue.task_done()
    with pytest.raises(ValueError):
        queue.task_done()


def test_a_generator_worker_drains_the_queue(lib: SimpleNamespace) -> None:
    def worker(queue, seen):
        while True:
            item = yield from queue.get()
            seen.append(item)
            queue.task_done()

    async def main() -> list[int]:
        queue = lib.Queue()
        seen: list[int] = []
        task = lib.create_task(generator_coroutine(lib, worker, queue, seen))
        for item in range(5):
            await queue.put(item)
        await queue.join()
        task.cancel()
        return seen

    assert lib.run(main()) == [0, 1, 2, 3, 4]


# Event


def test_an_event_starts_unset(lib: SimpleNamespace) -> None:
    event = lib.Event()
    assert not event.is_set()
    event.set()
    assert event.is_set()
    event.clear()
    assert not event.is_set()


def test_wait_on_a_set_event_returns_true_at_once(lib: SimpleNamespace) -> None:
    async def main() -> list[Any]:
        event = lib.Event()
        event.set()
        order: list[Any] = []
        lib.get_running_loop().call_soon(order.append, "callback")
        order.append(await event.wait())
        return list(order)  # Before the callback has had its turn.

    assert lib.run(main()) == [True]


def test_set_wakes_every_waiter(lib: SimpleNamespace) -> None:
    async def main() -> list[Any]:
        event = lib.Event()
        waiters = [lib.create_task(event.wait()) for _ in range(3)]
        await turns(lib, 2)
        assert not any(waiter.done() for waiter in waiters)
        event.set()
        return await lib.gather(*waiters)

    assert lib.run(main()) == [True, True, True]


def test_waiters_woken_by_set_wake_even_if_cleared_at_once(lib: SimpleNamespace) -> None:
    async def main() -> list[Any]:
        event = lib.Event()
        waiter = lib.create_task(event.wait())
        await lib.sleep(0)
        event.set()
        event.clear()
        await turns(lib, 2)
        return [waiter.done(), event.is_set()]

    assert lib.run(main()) == [True, False]


def test_wait_after_clear_waits_again(lib: SimpleNamespace) -> None:
    async def main() -> bool:
        event = lib.Event()
        event.set()
        event.clear()
        waiter = lib.create_task(event.wait())
        await turns(lib, 3)
        waiting = not waiter.done()
        event.set()
        await waiter
        return waiting

    assert lib.run(main())


# Lock


def test_lock_acquire_and_release(lib: SimpleNamespace) -> None:
    async def main() -> list[bool]:
        lock = lib.Lock()
        states = [lock.locked(), await lock.acquire(), lock.locked()]
        lock.release()
        return states + [lock.locked()]

    assert lib.run(main()) == [False, True, True, False]


def test_releasing_an_unlocked_lock_is_an_error(lib: SimpleNamespace) -> None:
    with pytest.raises(RuntimeError):
        lib.Lock().release()


def test_async_with_holds_the_lock(lib: SimpleNamespace) -> None:
    async def main() -> list[bool]:
        lock = lib.Lock()
        async with lock:
            inside = lock.locked()
        return [inside, lock.locked()]

    assert lib.run(main()) == [True, False]


def test_the_lock_prevents_a_race_across_a_yield_point(lib: SimpleNamespace) -> None:
    async def main() -> int:
        lock = lib.Lock()
        counter = [0]

        async def increment() -> None:
            async with lock:
                seen = counter[0]
                await lib.sleep(0)  # Others run here, but none can enter.
                counter[0] = seen + 1

        await lib.gather(*(increment() for _ in range(5)))
        return counter[0]

    assert lib.run(main()) == 5


def test_lock_waiters_are_served_in_order(lib: SimpleNamespace) -> None:
    async def main() -> list[str]:
        lock = lib.Lock()
        order: list[str] = []

        async def worker(name: str) -> None:
            async with lock:
                order.append(name)
                await lib.sleep(0)

        await lock.acquire()
        tasks = [lib.create_task(worker(name)) for name in ("a", "b", "c")]
        await lib.sleep(0)
        lock.release()
        await lib.gather(*tasks)
        return order

    assert lib.run(main()) == ["a", "b", "c"]


def test_a_newcomer_does_not_jump_the_line(lib: SimpleNamespace) -> None:
    async def main() -> list[str]:
        lock = lib.Lock()
        order: list[str] = []

        async def worker(name: str) -> None:
            async with lock:
                order.append(name)

        await lock.acquire()
        waiting = lib.create_task(worker("waiting"))
        await lib.sleep(0)
        lock.release()  # The lock is free, but "waiting" has not run yet.
        await worker("newcomer")
        await waiting
        return order

    assert lib.run(main()) == ["waiting", "newcomer"]


def test_a_cancelled_lock_waiter_passes_its_turn_on(lib: SimpleNamespace) -> None:
    async def main() -> list[Any]:
        lock = lib.Lock()
        order: list[str] = []

        async def worker(name: str) -> None:
            async with lock:
                order.append(name)

        await lock.acquire()
        first = lib.create_task(worker("first"))
        second = lib.create_task(worker("second"))
        await lib.sleep(0)
        lock.release()  # Wakes "first"...
        first.cancel()  # ...which is cancelled before it runs.
        await second
        return [order, first.cancelled(), lock.locked()]

    assert lib.run(main()) == [["second"], True, False]


# Semaphore


def test_semaphore_counts_its_units(lib: SimpleNamespace) -> None:
    async def main() -> list[bool]:
        semaphore = lib.Semaphore(2)
        states = [semaphore.locked(), await semaphore.acquire(), semaphore.locked()]
        await semaphore.acquire()
        states.append(semaphore.locked())
        semaphore.release()
        return states + [semaphore.locked()]

    assert lib.run(main()) == [False, True, False, True, False]


def test_a_negative_semaphore_is_refused(lib: SimpleNamespace) -> None:
    with pytest.raises(ValueError):
        lib.Semaphore(-1)


def test_a_semaphore_may_be_released_beyond_its_value(lib: SimpleNamespace) -> None:
    async def main() -> list[bool]:
        semaphore = lib.Semaphore(0)
        semaphore.release()
        semaphore.release()
        return [await semaphore.acquire(), await semaphore.acquire(), semaphore.locked()]

    assert lib.run(main()) == [True, True, True]


def test_a_semaphore_bounds_how_many_are_inside(lib: SimpleNamespace) -> None:
    async def main() -> int:
        semaphore = lib.Semaphore(2)
        inside = [0]
        most = [0]

        async def worker() -> None:
            async with semaphore:
                inside[0] += 1
                most[0] = max(most[0], inside[0])
                await turns(lib, 2)
                inside[0] -= 1

        await lib.gather(*(worker() for _ in range(6)))
        return most[0]

    assert lib.run(main()) == 2


def test_semaphore_waiters_are_served_in_order(lib: SimpleNamespace) -> None:
    async def main() -> list[str]:
        semaphore = lib.Semaphore(1)
        order: list[str] = []

        async def worker(name: str) -> None:
            async with semaphore:
                order.append(name)
                await lib.sleep(0)

        await semaphore.acquire()
        tasks = [lib.create_task(worker(name)) for name in ("a", "b", "c")]
        await lib.sleep(0)
        semaphore.release()
        await worker("late")
        await lib.gather(*tasks)
        return order

    assert lib.run(main()) == ["a", "b", "c", "late"]


def test_a_cancelled_semaphore_waiter_loses_no_unit(lib: SimpleNamespace) -> None:
    async def main() -> list[Any]:
        semaphore = lib.Semaphore(1)
        order: list[str] = []

        async def worker(name: str) -> None:
            async with semaphore:
                order.append(name)

        await semaphore.acquire()
        first = lib.create_task(worker("first"))
        second = lib.create_task(worker("second"))
        await lib.sleep(0)
        semaphore.release()  # Hands the unit to "first"...
        first.cancel()  # ...which is cancelled before it runs.
        await second
        return [order, first.cancelled(), semaphore.locked()]

    assert lib.run(main()) == [["second"], True, False]


def test_cancel_a_semaphore_waiter_that_still_waits(lib: SimpleNamespace) -> None:
    async def main() -> list[Any]:
        semaphore = lib.Semaphore(0)
        waiter = lib.create_task(semaphore.acquire())
        await lib.sleep(0)
        waiter.cancel()
        await turns(lib, 2)
        semaphore.release()
        return [waiter.cancelled(), semaphore.locked(), await semaphore.acquire()]

    assert lib.run(main()) == [True, False, True]

"""Lock, Event and Semaphore: fairness, cancellation and ``async with``.

Modelled on CPython's ``test_asyncio/test_locks.py``.
"""

from __future__ import annotations

import pytest

from stage2_generators.futures import CancelledError
from stage2_generators.locks import Event, Lock, Semaphore
from stage2_generators.loop import EventLoop
from stage2_generators.tasks import gather, sleep
from stage2_generators.tests.support import run_briefly


def holder(lock: Lock, name: str, log: list):
    """Take the lock, hold it across a yield, and record the order."""
    yield from lock.acquire()
    try:
        log.append(f"{name} in")
        yield from sleep(0)
        log.append(f"{name} out")
    finally:
        lock.release()


def test_lock_is_free_at_first(loop: EventLoop) -> None:
    lock = Lock()
    assert not lock.locked()
    assert loop.run_until_complete(lock.acquire()) is True
    assert lock.locked()
    lock.release()
    assert not lock.locked()


def test_release_an_unlocked_lock(loop: EventLoop) -> None:
    with pytest.raises(RuntimeError, match="not acquired"):
        Lock().release()


def test_lock_excludes_and_serves_in_order(loop: EventLoop) -> None:
    lock, log = Lock(), []
    tasks = [loop.create_task(holder(lock, name, log)) for name in "ABC"]
    loop.run_until_complete(gather(*tasks))
    assert log == ["A in", "A out", "B in", "B out", "C in", "C out"]


def test_lock_is_fair_to_the_woken_waiter(loop: EventLoop) -> None:
    lock, order = Lock(), []

    def take(name: str):
        yield from lock.acquire()
        order.append(name)
        lock.release()

    loop.run_until_complete(lock.acquire())
    waiter = loop.create_task(take("waiter"))
    run_briefly(loop)
    lock.release()  # The waiter is woken but has not run yet...
    newcomer = loop.create_task(take("newcomer"))  # ...and a newcomer arrives.
    loop.run_until_complete(gather(waiter, newcomer))
    assert order == ["waiter", "newcomer"]


def test_cancelled_lock_waiter_is_skipped(loop: EventLoop) -> None:
    lock, log = Lock(), []
    loop.run_until_complete(lock.acquire())
    first = loop.create_task(holder(lock, "first", log))
    second = loop.create_task(holder(lock, "second", log))
    run_briefly(loop)
    first.cancel()
    run_briefly(loop)
    lock.release()
    loop.run_until_complete(second)
    assert first.cancelled()
    assert log == ["second in", "second out"]


def test_lock_waiter_cancelled_after_its_turn_came_passes_it_on(loop: EventLoop) -> None:
    lock, log = Lock(), []
    loop.run_until_complete(lock.acquire())
    first = loop.create_task(holder(lock, "first", log))
    second = loop.create_task(holder(lock, "second", log))
    run_briefly(loop)
    lock.release()  # Wakes the first waiter...
    first.cancel()  # ...which is cancelled before it runs.
    loop.run_until_complete(second)
    assert log == ["second in", "second out"]
    assert not lock.locked()


def test_lock_async_with(loop: EventLoop) -> None:
    lock = Lock()

    async def main() -> bool:
        async with lock:
            return lock.locked()

    assert loop.run_until_complete(main()) is True
    assert not lock.locked()


def test_event_wakes_every_waiter(loop: EventLoop) -> None:
    event = Event()
    assert not event.is_set()
    waiters = [loop.create_task(event.wait()) for _ in range(3)]
    run_briefly(loop)
    assert not any(waiter.done() for waiter in waiters)
    event.set()
    assert loop.run_until_complete(gather(*waiters)) == [True, True, True]
    assert not event._waiters


def test_event_set_and_clear(loop: EventLoop) -> None:
    event = Event()
    event.set()
    assert event.is_set()
    assert loop.run_until_complete(event.wait()) is True
    event.clear()
    waiter = loop.create_task(event.wait())
    run_briefly(loop)
    assert not waiter.done()
    waiter.cancel()
    with pytest.raises(CancelledError):
        loop.run_until_complete(waiter)
    assert not event._waiters


def test_semaphore_admits_at_most_value(loop: EventLoop) -> None:
    semaphore, inside, most = Semaphore(2), [0], [0]

    def worker():
        yield from semaphore.acquire()
        try:
            inside[0] += 1
            most[0] = max(most[0], inside[0])
            yield from sleep(0)
            inside[0] -= 1
        finally:
            semaphore.release()

    loop.run_until_complete(gather(*(loop.create_task(worker()) for _ in range(6))))
    assert most[0] == 2
    assert not semaphore.locked()


def test_semaphore_serves_in_order(loop: EventLoop) -> None:
    semaphore, order = Semaphore(1), []

    def take(name: str):
        yield from semaphore.acquire()
        order.append(name)
        yield from sleep(0)
        semaphore.release()

    loop.run_until_complete(gather(*(loop.create_task(take(name)) for name in "ABCD")))
    assert order == ["A", "B", "C", "D"]


def test_semaphore_waiter_cancelled_after_its_turn_came(loop: EventLoop) -> None:
    semaphore = Semaphore(0)
    first = loop.create_task(semaphore.acquire())
    second = loop.create_task(semaphore.acquire())
    run_briefly(loop)
    semaphore.release()  # Hands the unit to the first waiter...
    first.cancel()  # ...which is cancelled before it runs.
    assert loop.run_until_complete(second) is True
    assert first.cancelled()
    assert semaphore._value == 0


def test_semaphore_value_cannot_be_negative() -> None:
    with pytest.raises(ValueError):
        Semaphore(-1)


def test_semaphore_async_with(loop: EventLoop) -> None:
    semaphore = Semaphore(1)

    async def main() -> bool:
        async with semaphore:
            return semaphore.locked()

    assert loop.run_until_complete(main()) is True
    assert not semaphore.locked()

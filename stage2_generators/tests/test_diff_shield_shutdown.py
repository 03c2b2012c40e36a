"""Differential tests of shield and Queue.shutdown: on asyncio and stage 2.

``shield`` lets the caller be cancelled while what it waits for goes on.
``Queue.shutdown`` came to asyncio in Python 3.13; on 3.11 and 3.12 its
tests run on stage 2 only, against what asyncio's documentation says.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest


async def value_after(lib: SimpleNamespace, turns: int, value: Any) -> Any:
    """Let the loop go round ``turns`` times, then return ``value``."""
    for _ in range(turns):
        await lib.sleep(0)
    return value


async def fail_after(lib: SimpleNamespace, turns: int, error: BaseException) -> None:
    """Let the loop go round ``turns`` times, then raise ``error``."""
    for _ in range(turns):
        await lib.sleep(0)
    raise error


# --- shield -----------------------------------------------------------------


def test_shield_passes_the_result_through(lib: SimpleNamespace) -> None:
    async def main() -> Any:
        return await lib.shield(value_after(lib, 2, "result"))

    assert lib.run(main()) == "result"


def test_shield_passes_the_exception_through(lib: SimpleNamespace) -> None:
    async def main() -> None:
        await lib.shield(fail_after(lib, 1, ValueError("inner")))

    with pytest.raises(ValueError, match="inner"):
        lib.run(main())


def test_a_cancelled_caller_leaves_the_shielded_task_running(lib: SimpleNamespace) -> None:
    async def caller(inner: Any, seen: list[str]) -> None:
        try:
            await lib.shield(inner)
        except lib.CancelledError:
            seen.append("caller cancelled")
            raise

    async def main() -> tuple[list[str], bool, Any]:
        seen: list[str] = []
        inner = lib.create_task(value_after(lib, 5, "inner finished"))
        task = lib.create_task(caller(inner, seen))
        await lib.sleep(0)
        task.cancel()
        await lib.gather(task, return_exceptions=True)
        return seen, inner.cancelled(), await inner

    assert lib.run(main()) == (["caller cancelled"], False, "inner finished")


def test_cancelling_the_shield_future_spares_the_inner_one(lib: SimpleNamespace) -> None:
    async def main() -> tuple[bool, bool, bool]:
        inner = lib.get_running_loop().create_future()
        outer = lib.shield(inner)
        outer.cancel()
        await lib.sleep(0)
        inner.set_result(1)
        await lib.sleep(0)
        return outer.cancelled(), inner.cancelled(), inner.result() == 1

    assert lib.run(main()) == (True, False, True)


def test_a_cancelled_inner_cancels_the_shield_future(lib: SimpleNamespace) -> None:
    async def main() -> bool:
        inner = lib.get_running_loop().create_future()
        outer = lib.shield(inner)
        inner.cancel()
        await lib.gather(outer, return_exceptions=True)
        return outer.cancelled()

    assert lib.run(main())


def test_shield_of_a_done_future_returns_it(lib: SimpleNamespace) -> None:
    async def main() -> bool:
        future = lib.get_running_loop().create_future()
        future.set_result(3)
        return lib.shield(future) is future

    assert lib.run(main())


# --- Queue.shutdown ---------------------------------------------------------


@pytest.fixture
def qlib(lib: SimpleNamespace) -> SimpleNamespace:
    """The library, for a test of Queue.shutdown (stage 2 only before 3.13)."""
    if lib.QueueShutDown is None:
        pytest.skip("asyncio has Queue.shutdown since Python 3.13")
    return lib


def test_put_after_shutdown_is_refused(qlib: SimpleNamespace) -> None:
    async def main() -> list[str]:
        queue = qlib.Queue()
        queue.shutdown()
        refused = []
        try:
            queue.put_nowait(1)
        except qlib.QueueShutDown:
            refused.append("put_nowait")
        try:
            await queue.put(1)
        except qlib.QueueShutDown:
            refused.append("put")
        return refused

    assert qlib.run(main()) == ["put_nowait", "put"]


def test_get_drains_the_items_left_then_is_refused(qlib: SimpleNamespace) -> None:
    async def main() -> tuple[list[int], list[str]]:
        queue = qlib.Queue()
        for item in (1, 2):
            queue.put_nowait(item)
        queue.shutdown()
        got = [await queue.get(), queue.get_nowait()]
        refused = []
        try:
            queue.get_nowait()
        except qlib.QueueShutDown:
            refused.append("get_nowait")
        try:
            await queue.get()
        except qlib.QueueShutDown:
            refused.append("get")
        return got, refused

    assert qlib.run(main()) == ([1, 2], ["get_nowait", "get"])


def test_shutdown_wakes_the_waiting_getters_and_putters(qlib: SimpleNamespace) -> None:
    async def waits(coro: Any) -> str:
        try:
            await coro
        except qlib.QueueShutDown:
            return "QueueShutDown"
        return "no error"

    async def main() -> list[str]:
        empty, full = qlib.Queue(), qlib.Queue(maxsize=1)
        full.put_nowait("x")
        tasks = [qlib.create_task(waits(empty.get())) for _ in range(2)]
        tasks.append(qlib.create_task(waits(full.put("y"))))
        await qlib.sleep(0)
        empty.shutdown()
        full.shutdown()
        return list(await qlib.gather(*tasks))

    assert qlib.run(main()) == ["QueueShutDown"] * 3


def test_join_waits_for_task_done_after_a_plain_shutdown(qlib: SimpleNamespace) -> None:
    async def main() -> list[str]:
        queue = qlib.Queue()
        queue.put_nowait("item")
        queue.shutdown()
        steps = []
        joiner = qlib.create_task(queue.join())
        await qlib.sleep(0)
        steps.append(f"joined before task_done: {joiner.done()}")
        await queue.get()
        queue.task_done()
        await joiner
        steps.append("joined after task_done")
        return steps

    assert qlib.run(main()) == ["joined before task_done: False", "joined after task_done"]


def test_an_immediate_shutdown_drops_the_items_and_releases_join(
    qlib: SimpleNamespace,
) -> None:
    async def main() -> tuple[int, bool, str]:
        queue = qlib.Queue()
        for item in range(3):
            queue.put_nowait(item)
        joiner = qlib.create_task(queue.join())
        await qlib.sleep(0)
        queue.shutdown(immediate=True)
        await joiner
        try:
            queue.get_nowait()
        except qlib.QueueShutDown:
            return queue.qsize(), joiner.done(), "get refused"
        return queue.qsize(), joiner.done(), "got an item"

    assert qlib.run(main()) == (0, True, "get refused")

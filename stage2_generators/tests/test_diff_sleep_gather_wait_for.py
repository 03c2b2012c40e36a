"""Differential tests of sleep, gather and wait_for: each runs on asyncio and stage 2.

No test waits for time to pass: ``sleep(0)`` counts turns of the loop, and
the few real delays are far apart (a timer of an hour never fires) or only
their order matters.
"""

from __future__ import annotations

import sys
from types import SimpleNamespace
from typing import Any

import pytest

from stage2_generators.tests.libraries import STAGE2, Awaitable, generator_coroutine


async def turns(lib: SimpleNamespace, count: int) -> None:
    """Let the loop go round ``count`` times."""
    for _ in range(count):
        await lib.sleep(0)


async def fail(lib: SimpleNamespace, error: BaseException, after: int = 0) -> None:
    """Raise ``error`` after ``after`` turns of the loop."""
    await turns(lib, after)
    raise error


async def value(lib: SimpleNamespace, result: Any, after: int = 0) -> Any:
    """Return ``result`` after ``after`` turns of the loop."""
    await turns(lib, after)
    return result


# sleep


def test_sleep_zero_returns_its_result(lib: SimpleNamespace) -> None:
    async def main() -> tuple[Any, Any]:
        return await lib.sleep(0), await lib.sleep(0, "result")

    assert lib.run(main()) == (None, "result")


def test_sleep_zero_gives_each_ready_callback_one_turn(lib: SimpleNamespace) -> None:
    async def main() -> list[str]:
        order: list[str] = []
        loop = lib.get_running_loop()

        def first() -> None:
            order.append("first")
            loop.call_soon(order.append, "later")

        loop.call_soon(first)
        await lib.sleep(0)
        order.append("resumed")
        return order

    assert lib.run(main()) == ["first", "resumed", "later"]


def test_sleep_with_a_negative_delay_is_sleep_zero(lib: SimpleNamespace) -> None:
    async def main() -> list[str]:
        order: list[str] = []
        lib.get_running_loop().call_soon(order.append, "callback")
        order.append(await lib.sleep(-1, "slept"))
        return order

    assert lib.run(main()) == ["callback", "slept"]


def test_sleep_does_not_end_before_its_delay(lib: SimpleNamespace) -> None:
    async def main() -> tuple[float, Any]:
        loop = lib.get_running_loop()
        start = loop.time()
        result = await lib.sleep(0.01, "woke")
        return loop.time() - start, result

    elapsed, result = lib.run(main())
    assert result == "woke"
    assert elapsed >= 0.01 - 0.001  # The loop may run a timer up to its clock resolution early.


def test_shorter_sleeps_end_first(lib: SimpleNamespace) -> None:
    async def sleeper(delay: float, order: list[float]) -> None:
        await lib.sleep(delay)
        order.append(delay)

    async def main() -> list[float]:
        order: list[float] = []
        await lib.gather(sleeper(0.03, order), sleeper(0.01, order), sleeper(0.02, order))
        return order

    assert lib.run(main()) == [0.01, 0.02, 0.03]


def test_sleep_can_be_cancelled(lib: SimpleNamespace) -> None:
    def sleeper(steps):
        try:
            yield from lib.sleep(3600)
        except lib.CancelledError:
            steps.append("cancelled")
            raise

    async def main() -> tuple[bool, list[str]]:
        steps: list[str] = []
        task = lib.create_task(generator_coroutine(lib, sleeper, steps))
        await lib.sleep(0)
        task.cancel()
        await turns(lib, 3)
        return task.cancelled(), steps

    assert lib.run(main()) == (True, ["cancelled"])


# gather


def test_gather_keeps_the_order_of_its_arguments(lib: SimpleNamespace) -> None:
    async def main() -> list[Any]:
        return await lib.gather(value(lib, "slow", 3), value(lib, "fast", 0), value(lib, "mid", 1))

    assert lib.run(main()) == ["slow", "fast", "mid"]


def test_gather_of_nothing_is_an_empty_list(lib: SimpleNamespace) -> None:
    async def main() -> list[Any]:
        return await lib.gather()

    assert lib.run(main()) == []


def test_gather_returns_a_future(lib: SimpleNamespace) -> None:
    async def main() -> bool:
        gathering = lib.gather(value(lib, 1))
        result = isinstance(gathering, lib.Future)
        await gathering
        return result

    assert lib.run(main())


def test_gather_mixes_futures_tasks_and_coroutines(lib: SimpleNamespace) -> None:
    async def main() -> list[Any]:
        future = lib.get_running_loop().create_future()
        lib.get_running_loop().call_soon(future.set_result, "future")
        task = lib.create_task(value(lib, "task", 1))
        return await lib.gather(future, task, value(lib, "coroutine"))

    assert lib.run(main()) == ["future", "task", "coroutine"]


def test_gather_accepts_awaitables(lib: SimpleNamespace) -> None:
    async def main() -> list[Any]:
        return await lib.gather(Awaitable(lib, "a"), value(lib, "b"))

    assert lib.run(main()) == ["a", "b"]


def test_the_first_exception_is_raised_and_the_others_go_on(lib: SimpleNamespace) -> None:
    async def main() -> tuple[str, bool, Any]:
        slow = lib.create_task(value(lib, "finished anyway", 5))
        try:
            await lib.gather(fail(lib, KeyError("first"), 1), fail(lib, ValueError(), 3), slow)
        except KeyError as error:
            message = error.args[0]
        running = not slow.done()
        return message, running, await slow

    assert lib.run(main()) == ("first", True, "finished anyway")


def test_return_exceptions_puts_them_in_the_list(lib: SimpleNamespace) -> None:
    async def main() -> list[Any]:
        error = ValueError("bad")
        results = await lib.gather(value(lib, 1), fail(lib, error), return_exceptions=True)
        return [results[0], results[1] is error]

    assert lib.run(main()) == [1, True]


def test_a_cancelled_child_appears_as_cancelled_error(lib: SimpleNamespace) -> None:
    async def main() -> list[Any]:
        child = lib.create_task(lib.sleep(3600))
        lib.get_running_loop().call_soon(child.cancel)
        results = await lib.gather(child, value(lib, "ok", 2), return_exceptions=True)
        return [type(results[0]), results[1]]

    assert lib.run(main()) == [lib.CancelledError, "ok"]


def test_a_cancelled_child_without_return_exceptions(lib: SimpleNamespace) -> None:
    async def main() -> tuple[bool, bool]:
        child = lib.create_task(lib.sleep(3600))
        gathering = lib.gather(child, value(lib, "ok", 5))
        lib.get_running_loop().call_soon(child.cancel)
        with pytest.raises(lib.CancelledError):
            await gathering
        # The gathering future holds the CancelledError as its exception:
        # it was not itself cancelled.
        return gathering.cancelled(), lib.current_task().cancelling() == 0

    assert lib.run(main()) == (False, True)


def test_cancelling_the_gather_cancels_its_children(lib: SimpleNamespace) -> None:
    async def main() -> tuple[bool, list[bool]]:
        children = [lib.create_task(lib.sleep(3600)) for _ in range(3)]
        gathering = lib.gather(*children)
        await lib.sleep(0)
        cancelled = gathering.cancel()
        with pytest.raises(lib.CancelledError):
            await gathering
        return cancelled, [child.cancelled() for child in children]

    assert lib.run(main()) == (True, [True, True, True])


def test_a_cancelled_gather_raises_even_with_return_exceptions(lib: SimpleNamespace) -> None:
    async def main() -> None:
        gathering = lib.gather(lib.sleep(3600), return_exceptions=True)
        await lib.sleep(0)
        gathering.cancel()
        await gathering

    with pytest.raises(lib.CancelledError):
        lib.run(main())


def test_cancelling_a_finished_gather_returns_false(lib: SimpleNamespace) -> None:
    async def main() -> tuple[bool, list[Any]]:
        gathering = lib.gather(value(lib, 1))
        result = await gathering
        return gathering.cancel(), result

    assert lib.run(main()) == (False, [1])


def test_cancelling_the_awaiting_task_cancels_the_children(lib: SimpleNamespace) -> None:
    async def main() -> list[bool]:
        children = [lib.create_task(lib.sleep(3600)) for _ in range(2)]
        waiter = lib.create_task(_await(lib.gather(*children)))
        await lib.sleep(0)
        waiter.cancel()
        await turns(lib, 3)
        return [child.cancelled() for child in children] + [waiter.cancelled()]

    assert lib.run(main()) == [True, True, True]


async def _await(awaitable: Any) -> Any:
    return await awaitable


def test_the_same_coroutine_twice_runs_once(lib: SimpleNamespace) -> None:
    async def counted(runs: list[int]) -> str:
        runs.append(1)
        await lib.sleep(0)
        return "once"

    async def main() -> tuple[list[Any], int]:
        runs: list[int] = []
        coro = counted(runs)
        return await lib.gather(coro, coro), len(runs)

    assert lib.run(main()) == (["once", "once"], 1)


def test_the_same_future_twice_reports_its_result_twice(lib: SimpleNamespace) -> None:
    async def main() -> list[Any]:
        future = lib.get_running_loop().create_future()
        lib.get_running_loop().call_soon(future.set_result, "twice")
        return await lib.gather(future, value(lib, "other"), future)

    assert lib.run(main()) == ["twice", "other", "twice"]


def test_the_same_failing_future_twice_with_return_exceptions(lib: SimpleNamespace) -> None:
    async def main() -> list[Any]:
        task = lib.create_task(fail(lib, ValueError("x")))
        return await lib.gather(task, task, return_exceptions=True)

    first, second = lib.run(main())
    assert isinstance(first, ValueError) and first is second


def test_gather_refuses_what_is_not_awaitable(lib: SimpleNamespace) -> None:
    async def main() -> None:
        with pytest.raises(TypeError):
            lib.gather(42)

    lib.run(main())


def test_a_generator_can_yield_from_gather(lib: SimpleNamespace) -> None:
    def main():
        results = yield from lib.gather(value(lib, "a", 2), value(lib, "b"))
        return results

    assert lib.run(generator_coroutine(lib, main)) == ["a", "b"]


# wait_for


def test_wait_for_returns_the_result_in_time(lib: SimpleNamespace) -> None:
    async def main() -> Any:
        return await lib.wait_for(value(lib, "in time", 2), timeout=3600)

    assert lib.run(main()) == "in time"


def test_wait_for_without_a_timeout_waits(lib: SimpleNamespace) -> None:
    async def main() -> Any:
        return await lib.wait_for(lib.sleep(0.01, "slept"), None)

    assert lib.run(main()) == "slept"


def test_wait_for_times_out_and_cancels_the_coroutine(lib: SimpleNamespace) -> None:
    async def slow(steps: list[str]) -> None:
        try:
            await lib.sleep(3600)
        finally:
            steps.append("cleaned up")

    async def main() -> list[str]:
        steps: list[str] = []
        with pytest.raises(TimeoutError):
            await lib.wait_for(slow(steps), timeout=0.01)
        steps.append("timed out")
        return steps

    assert lib.run(main()) == ["cleaned up", "timed out"]


def test_wait_for_times_out_and_cancels_a_task(lib: SimpleNamespace) -> None:
    async def main() -> bool:
        task = lib.create_task(lib.sleep(3600))
        with pytest.raises(TimeoutError):
            await lib.wait_for(task, timeout=0.01)
        return task.cancelled()

    assert lib.run(main())


def test_the_timeout_error_is_the_builtin_one(lib: SimpleNamespace) -> None:
    async def main() -> None:
        await lib.wait_for(lib.sleep(3600), timeout=0.01)

    with pytest.raises(TimeoutError) as raised:
        lib.run(main())
    assert type(raised.value) is TimeoutError


def test_wait_for_with_zero_timeout_never_runs_a_coroutine(lib: SimpleNamespace) -> None:
    async def body(ran: list[bool]) -> str:
        ran.append(True)
        return "ran"

    async def main() -> tuple[bool, list[bool]]:
        ran: list[bool] = []
        try:
            await lib.wait_for(body(ran), timeout=0)
        except TimeoutError:
            return True, ran
        return False, ran

    assert lib.run(main()) == (True, [])


def test_wait_for_with_negative_timeout_cancels_a_task(lib: SimpleNamespace) -> None:
    async def main() -> bool:
        task = lib.create_task(lib.sleep(3600))
        await lib.sleep(0)
        with pytest.raises(TimeoutError):
            await lib.wait_for(task, timeout=-1)
        return task.cancelled()

    assert lib.run(main())


def test_wait_for_with_zero_timeout_returns_a_done_futures_result(lib: SimpleNamespace) -> None:
    async def main() -> Any:
        future = lib.get_running_loop().create_future()
        future.set_result("already")
        return await lib.wait_for(future, timeout=0)

    assert lib.run(main()) == "already"


def test_wait_for_passes_the_inner_exception_on(lib: SimpleNamespace) -> None:
    async def main() -> None:
        await lib.wait_for(fail(lib, KeyError("inner"), 1), timeout=3600)

    with pytest.raises(KeyError):
        lib.run(main())


def test_an_inner_cancellation_is_not_a_timeout(lib: SimpleNamespace) -> None:
    async def main() -> None:
        task = lib.create_task(lib.sleep(3600))
        lib.get_running_loop().call_soon(task.cancel)
        await lib.wait_for(task, timeout=3600)

    with pytest.raises(lib.CancelledError):
        lib.run(main())


def test_cancelling_the_caller_of_wait_for_is_not_a_timeout(lib: SimpleNamespace) -> None:
    async def caller(steps: list[str]) -> None:
        try:
            await lib.wait_for(lib.sleep(3600), timeout=3600)
        except TimeoutError:
            steps.append("timeout")
        except lib.CancelledError:
            steps.append("cancelled")
            raise

    async def main() -> tuple[bool, list[str]]:
        steps: list[str] = []
        task = lib.create_task(caller(steps))
        await turns(lib, 2)
        task.cancel()
        await turns(lib, 4)
        return task.cancelled(), steps

    assert lib.run(main()) == (True, ["cancelled"])


def test_a_coroutine_that_swallows_the_timeout_gives_its_result(lib: SimpleNamespace) -> None:
    async def stubborn() -> str:
        try:
            await lib.sleep(3600)
        except lib.CancelledError:
            return "kept going"
        return "slept"

    async def main() -> Any:
        return await lib.wait_for(stubborn(), timeout=0.01)

    assert lib.run(main()) == "kept going"


def test_wait_for_accepts_an_awaitable(lib: SimpleNamespace) -> None:
    async def main() -> Any:
        return await lib.wait_for(Awaitable(lib, "awaited"), timeout=3600)

    assert lib.run(main()) == "awaited"


def test_wait_for_refuses_what_is_not_awaitable(lib: SimpleNamespace) -> None:
    async def main() -> None:
        await lib.wait_for(42, timeout=3600)

    with pytest.raises(TypeError):
        lib.run(main())


def test_a_generator_can_yield_from_wait_for(lib: SimpleNamespace) -> None:
    def main():
        try:
            yield from lib.wait_for(lib.sleep(3600), timeout=0.01)
        except TimeoutError:
            return "timed out"

    assert lib.run(generator_coroutine(lib, main)) == "timed out"


def test_wait_for_runs_a_coroutine_in_the_calling_task(lib: SimpleNamespace) -> None:
    # asyncio does so since Python 3.12; on 3.11 it wraps the coroutine in a
    # task of its own.  Stage 2 does as 3.12 on every Python.
    same_task = lib is STAGE2 or sys.version_info >= (3, 12)

    async def inner() -> Any:
        await lib.sleep(0)
        return lib.current_task()

    async def main() -> bool:
        return await lib.wait_for(inner(), timeout=3600) is lib.current_task()

    assert lib.run(main()) is same_task


def test_wait_for_a_done_future_with_time_left(lib: SimpleNamespace) -> None:
    async def main() -> Any:
        future = lib.get_running_loop().create_future()
        future.set_result("done")
        return await lib.wait_for(future, timeout=3600)

    assert lib.run(main()) == "done"


def test_gather_of_futures_of_different_loops_is_refused(lib: SimpleNamespace) -> None:
    first, second = lib.new_event_loop(), lib.new_event_loop()
    try:
        with pytest.raises(ValueError):
            lib.gather(lib.Future(loop=first), lib.Future(loop=second))
    finally:
        first.close()
        second.close()


def test_a_gather_of_only_futures_needs_no_running_loop(
    lib: SimpleNamespace, lib_loop: Any
) -> None:
    future = lib.Future(loop=lib_loop)
    gathering = lib.gather(future)
    future.set_result(1)
    assert lib_loop.run_until_complete(gathering) == [1]

"""Differential tests of Task: each runs on asyncio and on stage 2.

How a task steps its coroutine, what it returns and raises, cancellation at
each kind of wait (and during ``finally``), ``cancelling`` / ``uncancel``,
names, and the helpers around tasks (``current_task``, ``all_tasks``,
``ensure_future``).
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


def test_a_task_starts_on_the_next_turn_of_the_loop(lib: SimpleNamespace) -> None:
    async def child(order: list[str]) -> None:
        order.append("child")

    async def main() -> list[str]:
        order: list[str] = []
        task = lib.create_task(child(order))
        order.append("created")
        await task
        return order

    assert lib.run(main()) == ["created", "child"]


def test_a_task_is_a_future_of_its_coroutine_result(lib: SimpleNamespace) -> None:
    async def child() -> int:
        await lib.sleep(0)
        return 7

    async def main() -> tuple[bool, int, int]:
        task = lib.create_task(child())
        value = await task
        return isinstance(task, lib.Future), value, task.result()

    assert lib.run(main()) == (True, 7, 7)


def test_a_task_runs_a_generator_that_yields_from_futures(lib: SimpleNamespace) -> None:
    def double(future):
        value = yield from future
        return value * 2

    async def main() -> int:
        future = lib.get_running_loop().create_future()
        task = lib.create_task(generator_coroutine(lib, double, future))
        await lib.sleep(0)
        future.set_result(21)
        return await task

    assert lib.run(main()) == 42


def test_yield_from_a_sub_coroutine_returns_its_value(lib: SimpleNamespace) -> None:
    def read(future):
        return (yield from future)

    def fetch(future):
        data = yield from read(future)  # Futures and sub-coroutines alike.
        return data.upper()

    def main():
        future = lib.get_running_loop().create_future()
        lib.get_running_loop().call_soon(future.set_result, "page")
        return (yield from fetch(future))

    assert lib.run(generator_coroutine(lib, main)) == "PAGE"


def test_an_exception_becomes_the_tasks_outcome(lib: SimpleNamespace) -> None:
    async def child() -> None:
        raise ValueError("broken")

    async def main() -> tuple[BaseException | None, str]:
        task = lib.create_task(child())
        try:
            await task
        except ValueError as error:
            return task.exception(), str(error)
        return None, ""

    error, text = lib.run(main())
    assert isinstance(error, ValueError) and text == "broken"


def test_awaiting_a_task_twice_gives_the_same_result(lib: SimpleNamespace) -> None:
    async def main() -> tuple[object, object]:
        task = lib.create_task(lib.sleep(0, result=object()))
        return await task, await task

    first, second = lib.run(main())
    assert first is second


def test_set_result_and_set_exception_are_refused(lib: SimpleNamespace) -> None:
    async def main() -> None:
        task = lib.create_task(lib.sleep(0))
        with pytest.raises(RuntimeError):
            task.set_result(1)
        with pytest.raises(RuntimeError):
            task.set_exception(ValueError())
        await task

    lib.run(main())


def test_create_task_refuses_what_is_not_a_coroutine(lib: SimpleNamespace) -> None:
    async def main() -> None:
        with pytest.raises(TypeError):
            lib.create_task(42)

    lib.run(main())


def test_get_coro_returns_the_coroutine(lib: SimpleNamespace) -> None:
    async def main() -> bool:
        coro = lib.sleep(0)
        task = lib.create_task(coro)
        await task
        return task.get_coro() is coro

    assert lib.run(main())


def test_task_names(lib: SimpleNamespace) -> None:
    async def main() -> tuple[str, str, str, str]:
        named = lib.create_task(lib.sleep(0), name="fetcher")
        first = lib.create_task(lib.sleep(0))
        second = lib.create_task(lib.sleep(0))
        default_names = first.get_name(), second.get_name()
        named.set_name("renamed")
        await lib.gather(named, first, second)
        return named.get_name(), *default_names, repr(named)

    name, first, second, text = lib.run(main())
    assert name == "renamed"
    assert first.startswith("Task-") and second.startswith("Task-") and first != second
    assert "renamed" in text


def test_cancel_before_the_first_step_never_runs_the_body(lib: SimpleNamespace) -> None:
    async def child(ran: list[bool]) -> None:
        ran.append(True)

    async def main() -> tuple[bool, list[bool]]:
        ran: list[bool] = []
        task = lib.create_task(child(ran))
        task.cancel()
        await turns(lib, 2)
        return task.cancelled(), ran

    assert lib.run(main()) == (True, [])


def test_cancel_a_task_waiting_on_a_future_cancels_the_future(lib: SimpleNamespace) -> None:
    async def main() -> tuple[bool, bool]:
        future = lib.get_running_loop().create_future()
        task = lib.create_task(_await(future))
        await lib.sleep(0)
        task.cancel()
        await turns(lib, 2)
        return future.cancelled(), task.cancelled()

    assert lib.run(main()) == (True, True)


async def _await(awaitable: Any) -> Any:
    return await awaitable


def test_cancel_a_task_in_sleep(lib: SimpleNamespace) -> None:
    async def main() -> bool:
        task = lib.create_task(lib.sleep(3600))
        await lib.sleep(0)
        task.cancel()
        with pytest.raises(lib.CancelledError):
            await task
        return task.cancelled()

    assert lib.run(main())


def test_cancel_a_task_in_sleep_zero(lib: SimpleNamespace) -> None:
    async def child(steps: list[int]) -> None:
        for step in range(10):
            steps.append(step)
            await lib.sleep(0)

    async def main() -> tuple[bool, list[int]]:
        steps: list[int] = []
        task = lib.create_task(child(steps))
        await turns(lib, 3)
        task.cancel()
        await turns(lib, 3)
        return task.cancelled(), steps

    cancelled, steps = lib.run(main())
    assert cancelled and steps == [0, 1, 2]


def test_cancel_a_task_awaiting_a_task_cancels_both(lib: SimpleNamespace) -> None:
    async def main() -> tuple[bool, bool]:
        inner = lib.create_task(lib.sleep(3600))
        outer = lib.create_task(_await(inner))
        await turns(lib, 2)
        outer.cancel()
        await turns(lib, 3)
        return inner.cancelled(), outer.cancelled()

    assert lib.run(main()) == (True, True)


def test_cancel_a_task_in_queue_get(lib: SimpleNamespace) -> None:
    async def main() -> bool:
        task = lib.create_task(lib.Queue().get())
        await lib.sleep(0)
        task.cancel()
        await turns(lib, 2)
        return task.cancelled()

    assert lib.run(main())


def test_cancel_a_task_in_event_wait(lib: SimpleNamespace) -> None:
    async def main() -> bool:
        task = lib.create_task(lib.Event().wait())
        await lib.sleep(0)
        task.cancel()
        await turns(lib, 2)
        return task.cancelled()

    assert lib.run(main())


def test_a_coroutine_may_catch_the_cancellation_and_go_on(lib: SimpleNamespace) -> None:
    async def child() -> str:
        try:
            await lib.sleep(3600)
        except lib.CancelledError:
            await lib.sleep(0)  # Cleaning up may itself wait.
            return "cleaned up"
        return "slept"

    async def main() -> tuple[str, bool, int]:
        task = lib.create_task(child())
        await lib.sleep(0)
        task.cancel()
        value = await task
        return value, task.cancelled(), task.cancelling()

    assert lib.run(main()) == ("cleaned up", False, 1)


def test_cancel_a_done_task_returns_false(lib: SimpleNamespace) -> None:
    async def main() -> tuple[bool, bool]:
        task = lib.create_task(lib.sleep(0))
        await task
        return task.cancel(), task.cancelled()

    assert lib.run(main()) == (False, False)


def test_the_cancel_message_reaches_the_coroutine_and_the_task(lib: SimpleNamespace) -> None:
    seen = []

    async def child() -> None:
        try:
            await lib.sleep(3600)
        except lib.CancelledError as error:
            seen.append(error.args)
            raise

    async def main() -> tuple[Any, ...]:
        task = lib.create_task(child())
        await lib.sleep(0)
        task.cancel("shutting down")
        await turns(lib, 2)
        with pytest.raises(lib.CancelledError) as raised:
            task.result()
        return raised.value.args

    assert lib.run(main()) == ("shutting down",)
    assert seen == [("shutting down",)]


def test_a_task_that_cancels_itself_stops_at_its_next_wait(lib: SimpleNamespace) -> None:
    async def child(steps: list[str]) -> None:
        lib.current_task().cancel()
        steps.append("goes on until it waits")
        await lib.sleep(0)
        steps.append("never")

    async def main() -> tuple[bool, list[str]]:
        steps: list[str] = []
        task = lib.create_task(child(steps))
        await turns(lib, 3)
        return task.cancelled(), steps

    assert lib.run(main()) == (True, ["goes on until it waits"])


def test_cancel_during_the_last_step_cancels_the_task(lib: SimpleNamespace) -> None:
    async def child() -> int:
        lib.current_task().cancel()
        return 5  # The result is lost: the task ends cancelled.

    async def main() -> bool:
        task = lib.create_task(child())
        await turns(lib, 2)
        return task.cancelled()

    assert lib.run(main())


def test_a_second_cancel_interrupts_the_finally_block(lib: SimpleNamespace) -> None:
    async def child(steps: list[str]) -> None:
        try:
            await lib.sleep(3600)
        finally:
            steps.append("cleanup starts")
            await lib.sleep(3600)
            steps.append("never")

    async def main() -> tuple[bool, list[str]]:
        steps: list[str] = []
        task = lib.create_task(child(steps))
        await lib.sleep(0)
        task.cancel()
        await lib.sleep(0)
        task.cancel()
        await turns(lib, 2)
        return task.cancelled(), steps

    assert lib.run(main()) == (True, ["cleanup starts"])


def test_cancelling_counts_requests_and_uncancel_undoes_one(lib: SimpleNamespace) -> None:
    async def child() -> None:
        try:
            await lib.sleep(3600)
        except lib.CancelledError:
            return

    async def main() -> list[int]:
        task = lib.create_task(child())
        counts = [task.cancelling()]
        await lib.sleep(0)
        task.cancel()
        task.cancel()
        counts.append(task.cancelling())
        counts.append(task.uncancel())
        await task
        counts.append(task.uncancel())
        counts.append(task.uncancel())  # Never below zero.
        return counts

    assert lib.run(main()) == [0, 2, 1, 0, 0]


def test_keyboard_interrupt_in_a_task_leaves_the_loop(lib: SimpleNamespace) -> None:
    async def child() -> None:
        raise SystemExit(3)

    async def main() -> None:
        await lib.create_task(child())

    with pytest.raises(SystemExit):
        lib.run(main())


def test_current_task(lib: SimpleNamespace) -> None:
    async def main() -> tuple[bool, list[Any]]:
        in_callback: list[Any] = []
        lib.get_running_loop().call_soon(lambda: in_callback.append(lib.current_task()))
        me = lib.current_task()
        await lib.sleep(0)
        return me is lib.current_task() and isinstance(me, lib.Task), in_callback

    assert lib.run(main()) == (True, [None])


def test_current_task_outside_a_loop_is_an_error(lib: SimpleNamespace) -> None:
    with pytest.raises(RuntimeError):
        lib.current_task()


def test_all_tasks_holds_the_tasks_not_done(lib: SimpleNamespace) -> None:
    async def main() -> tuple[bool, bool, bool]:
        me = lib.current_task()
        task = lib.create_task(lib.sleep(0))
        before = lib.all_tasks() == {me, task}
        await task
        return before, lib.all_tasks() == {me}, task.done()

    assert lib.run(main()) == (True, True, True)


def test_ensure_future_returns_a_future_unchanged(lib: SimpleNamespace) -> None:
    async def main() -> bool:
        future = lib.get_running_loop().create_future()
        return lib.ensure_future(future) is future

    assert lib.run(main())


def test_ensure_future_wraps_a_coroutine_in_a_task(lib: SimpleNamespace) -> None:
    async def main() -> tuple[bool, int]:
        task = lib.ensure_future(lib.sleep(0, result=3))
        return isinstance(task, lib.Task), await task

    assert lib.run(main()) == (True, 3)


def test_ensure_future_wraps_an_awaitable(lib: SimpleNamespace) -> None:
    async def main() -> tuple[bool, str]:
        future = lib.ensure_future(Awaitable(lib, "awaited"))
        return isinstance(future, lib.Future), await future

    assert lib.run(main()) == (True, "awaited")


def test_ensure_future_refuses_other_objects(lib: SimpleNamespace) -> None:
    async def main() -> None:
        with pytest.raises(TypeError):
            lib.ensure_future(42)

    lib.run(main())


def test_a_task_awaiting_itself_gets_runtime_error(lib: SimpleNamespace) -> None:
    async def main() -> None:
        await lib.current_task()

    with pytest.raises(RuntimeError):
        lib.run(main())


def test_done_callbacks_of_a_task_get_the_task(lib: SimpleNamespace) -> None:
    async def main() -> bool:
        seen: list[Any] = []
        task = lib.create_task(lib.sleep(0))
        task.add_done_callback(seen.append)
        await task
        await lib.sleep(0)
        return seen == [task]

    assert lib.run(main())


def test_uncancel_before_the_first_step_withdraws_the_cancel(lib: SimpleNamespace) -> None:
    # asyncio does so since Python 3.13; on 3.11 and 3.12 the task is
    # cancelled all the same.  Stage 2 does as 3.13 on every Python.
    withdrawn = lib is STAGE2 or sys.version_info >= (3, 13)

    async def child(steps: list[str]) -> None:
        steps.append("ran")
        await lib.sleep(0)
        steps.append("finished")

    async def main() -> tuple[bool, list[str]]:
        steps: list[str] = []
        task = lib.create_task(child(steps))
        task.cancel()
        task.uncancel()
        await turns(lib, 3)
        return task.cancelled(), steps

    expected = (False, ["ran", "finished"]) if withdrawn else (True, [])
    assert lib.run(main()) == expected


def test_a_pending_task_cannot_give_a_result_yet(lib: SimpleNamespace) -> None:
    async def main() -> None:
        task = lib.create_task(lib.sleep(0))
        with pytest.raises(lib.InvalidStateError):
            task.result()
        with pytest.raises(lib.InvalidStateError):
            task.exception()
        await task

    lib.run(main())


def test_all_tasks_and_current_task_of_a_loop_not_running(
    lib: SimpleNamespace, lib_loop: Any
) -> None:
    async def main() -> None:
        await lib.sleep(0)

    task = lib_loop.create_task(main())
    assert lib.all_tasks(lib_loop) == {task}
    assert lib.current_task(lib_loop) is None
    lib_loop.run_until_complete(task)
    assert lib.all_tasks(lib_loop) == set()


def test_cancelled_error_raised_by_main_leaves_run(lib: SimpleNamespace) -> None:
    async def main() -> None:
        raise lib.CancelledError("from main")

    with pytest.raises(lib.CancelledError):
        lib.run(main())


def test_awaiting_a_cancelled_task_raises_cancelled_error(lib: SimpleNamespace) -> None:
    async def main() -> tuple[bool, bool]:
        task = lib.create_task(lib.sleep(3600))
        await lib.sleep(0)
        task.cancel()
        try:
            await task
        except lib.CancelledError:
            # The awaiting task is not cancelled: only the awaited one was.
            return True, lib.current_task().cancelling() == 0
        return False, False

    assert lib.run(main()) == (True, True)

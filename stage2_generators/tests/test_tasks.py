"""Task, sleep, gather and wait_for.

Modelled on CPython's ``test_asyncio/test_tasks.py``: each test drives a
coroutine with the loop and checks what the coroutine saw and what the task
ended as.  Nothing waits on the wall clock: timeouts are either far away
(the work finishes first) or short against work that never finishes.
"""

from __future__ import annotations

import traceback
import types

import pytest

from stage2_generators.futures import CancelledError, Future, InvalidStateError
from stage2_generators.loop import EventLoop
from stage2_generators.tasks import (
    Task,
    all_tasks,
    create_task,
    current_task,
    ensure_future,
    gather,
    sleep,
    wait_for,
)
from stage2_generators.tests.support import run_briefly

FAR = 60.0  # A timeout that a test never reaches.


def test_task_runs_a_generator(loop: EventLoop) -> None:
    def coro():
        value = yield from sleep(0, "slept")
        return value + "!"

    assert loop.run_until_complete(coro()) == "slept!"


def test_task_runs_an_async_def_coroutine(loop: EventLoop) -> None:
    future = loop.create_future()
    loop.call_soon(future.set_result, 20)

    async def coro() -> int:
        value = await future
        await sleep(0)
        return value + 1

    assert loop.run_until_complete(coro()) == 21


def test_generators_and_native_coroutines_mix(loop: EventLoop) -> None:
    async def native() -> str:
        await sleep(0)
        return "native"

    def generator():
        task = create_task(native())
        return (yield from task) + " via generator"

    async def outer() -> str:
        return await create_task(generator())

    assert loop.run_until_complete(outer()) == "native via generator"


def test_task_is_a_future_that_starts_on_the_next_iteration(loop: EventLoop) -> None:
    started = []

    def coro():
        started.append(True)
        return 5
        yield  # A generator that never waits.

    task = loop.create_task(coro())
    assert isinstance(task, Future)
    assert started == [], "the coroutine ran inside create_task()"
    run_briefly(loop)
    assert started == [True]
    assert task.done() and task.result() == 5


def test_task_rejects_what_is_not_a_coroutine(loop: EventLoop) -> None:
    with pytest.raises(TypeError):
        Task(lambda: None, loop=loop)  # type: ignore[arg-type]


def test_task_refuses_set_result_and_set_exception(loop: EventLoop) -> None:
    task = loop.create_task(sleep(0))
    with pytest.raises(RuntimeError):
        task.set_result(1)
    with pytest.raises(RuntimeError):
        task.set_exception(ValueError())
    loop.run_until_complete(task)


def test_task_waits_on_the_future_it_yielded(loop: EventLoop) -> None:
    future = loop.create_future()

    def coro():
        return (yield from future)

    task = loop.create_task(coro())
    run_briefly(loop)
    assert task._fut_waiter is future
    run_briefly(loop)
    assert not task.done()
    future.set_result("woken")
    assert loop.run_until_complete(task) == "woken"


def test_create_task_needs_a_running_loop() -> None:
    coro = sleep(0)
    with pytest.raises(RuntimeError):
        create_task(coro)
    coro.close()


def test_ensure_future(loop: EventLoop) -> None:
    future = loop.create_future()
    assert ensure_future(future) is future
    task = ensure_future(sleep(0), loop=loop)
    assert isinstance(task, Task)
    loop.run_until_complete(task)
    with pytest.raises(TypeError):
        ensure_future(42, loop=loop)  # type: ignore[arg-type]


def test_all_tasks(loop: EventLoop) -> None:
    future = loop.create_future()

    def waits():
        yield from future

    task = loop.create_task(waits())
    assert all_tasks(loop) == {task}
    future.set_result(None)
    loop.run_until_complete(task)
    assert all_tasks(loop) == set()


def test_current_task(loop: EventLoop) -> None:
    seen = []

    def coro():
        seen.append(current_task())
        yield from sleep(0)
        seen.append(current_task())

    task = loop.create_task(coro())
    loop.call_soon(lambda: seen.append(current_task()))  # A plain callback.
    loop.run_until_complete(task)
    assert seen == [task, None, task]
    assert loop._current_task is None


# --- Cancellation ------------------------------------------------------------


def test_cancel_a_task_waiting_on_a_future(loop: EventLoop) -> None:
    future = loop.create_future()
    seen = []

    def coro():
        try:
            yield from future
        except CancelledError:
            seen.append("cancelled at the yield")
            raise
        finally:
            seen.append("finally")

    task = loop.create_task(coro())
    run_briefly(loop)
    assert task.cancel()
    assert future.cancelled(), "the future the task waited on was not cancelled"
    assert not task.done(), "the coroutine has not seen the cancellation yet"
    with pytest.raises(CancelledError):
        loop.run_until_complete(task)
    assert task.cancelled()
    assert seen == ["cancelled at the yield", "finally"]


def test_cancel_message_reaches_the_coroutine(loop: EventLoop) -> None:
    messages = []

    def coro():
        try:
            yield from loop.create_future()
        except CancelledError as error:
            messages.append(error.args)
            raise

    task = loop.create_task(coro())
    run_briefly(loop)
    task.cancel(msg="stop now")
    with pytest.raises(CancelledError, match="stop now"):
        loop.run_until_complete(task)
    assert messages == [("stop now",)]


def test_cancel_a_sleeping_task_drops_its_timer(loop: EventLoop) -> None:
    task = loop.create_task(sleep(FAR))
    run_briefly(loop)
    assert [timer.cancelled() for timer in loop._scheduled] == [False]
    task.cancel()
    with pytest.raises(CancelledError):
        loop.run_until_complete(task)
    assert all(timer.cancelled() for timer in loop._scheduled)


def test_cancel_before_the_first_step(loop: EventLoop) -> None:
    ran = []

    def coro():
        ran.append(True)
        yield from sleep(0)

    task = loop.create_task(coro())
    task.cancel()
    with pytest.raises(CancelledError):
        loop.run_until_complete(task)
    assert ran == [], "CancelledError is thrown in before the first line runs"


def test_cancel_while_the_wakeup_is_scheduled(loop: EventLoop) -> None:
    future = loop.create_future()
    seen = []

    def coro():
        try:
            yield from future
        except CancelledError:
            seen.append("cancelled")
            raise

    task = loop.create_task(coro())
    run_briefly(loop)
    future.set_result("too late")  # The task's wakeup is scheduled, not run.
    assert task.cancel()
    with pytest.raises(CancelledError):
        loop.run_until_complete(task)
    assert seen == ["cancelled"]


def test_cancel_during_the_last_step_wins_over_the_result(loop: EventLoop) -> None:
    tasks: list[Task] = []

    def coro():
        yield from sleep(0)
        tasks[0].cancel()  # The task cancels itself, then returns.
        return "ignored"

    tasks.append(loop.create_task(coro()))
    with pytest.raises(CancelledError):
        loop.run_until_complete(tasks[0])
    assert tasks[0].cancelled()


def test_a_coroutine_may_refuse_cancellation(loop: EventLoop) -> None:
    def coro():
        try:
            yield from loop.create_future()
        except CancelledError:
            return "carried on"

    task = loop.create_task(coro())
    run_briefly(loop)
    task.cancel()
    assert loop.run_until_complete(task) == "carried on"
    assert not task.cancelled()


def test_cancelling_counts_requests_and_uncancel_undoes_them(loop: EventLoop) -> None:
    def coro():
        try:
            yield from loop.create_future()
        except CancelledError:
            return "handled"

    task = loop.create_task(coro())
    run_briefly(loop)
    assert task.cancelling() == 0
    task.cancel()
    task.cancel()
    assert task.cancelling() == 2
    assert task.uncancel() == 1
    assert loop.run_until_complete(task) == "handled"
    assert task.uncancel() == 0
    assert task.uncancel() == 0, "the count never goes below zero"


def test_cancel_a_done_task(loop: EventLoop) -> None:
    task = loop.create_task(sleep(0))
    loop.run_until_complete(task)
    assert not task.cancel()


def test_cancel_an_async_def_coroutine(loop: EventLoop) -> None:
    seen = []

    async def coro() -> None:
        try:
            await sleep(FAR)
        finally:
            seen.append("finally")

    task = loop.create_task(coro())
    run_briefly(loop)
    task.cancel()
    with pytest.raises(CancelledError):
        loop.run_until_complete(task)
    assert seen == ["finally"]


def test_step_of_a_done_task_is_refused(loop: EventLoop) -> None:
    task = loop.create_task(sleep(0))
    loop.run_until_complete(task)
    with pytest.raises(InvalidStateError):
        task._step()


# --- Exceptions and bad yields ------------------------------------------------


def innermost():
    yield from sleep(0)
    raise ValueError("deep down")


def middle():
    yield from innermost()


def outermost():
    yield from middle()


def frame_names(error: BaseException) -> list[str]:
    return [frame.name for frame in traceback.extract_tb(error.__traceback__)]


def test_exception_travels_through_yield_from_with_its_traceback(loop: EventLoop) -> None:
    with pytest.raises(ValueError, match="deep down") as info:
        loop.run_until_complete(outermost())
    names = frame_names(info.value)
    assert names.index("outermost") < names.index("middle") < names.index("innermost")


def test_exception_travels_from_task_to_task(loop: EventLoop) -> None:
    def waiter():
        yield from create_task(outermost())

    with pytest.raises(ValueError) as info:
        loop.run_until_complete(waiter())
    names = frame_names(info.value)
    assert "waiter" in names
    assert names.index("outermost") < names.index("middle") < names.index("innermost")


def test_exception_can_be_caught_by_the_caller(loop: EventLoop) -> None:
    def catcher():
        try:
            yield from outermost()
        except ValueError as error:
            return str(error)

    assert loop.run_until_complete(catcher()) == "deep down"


def test_exception_from_a_future_is_raised_at_the_yield(loop: EventLoop) -> None:
    future = loop.create_future()
    loop.call_soon(future.set_exception, KeyError("k"))

    def coro():
        try:
            yield from future
        except KeyError:
            return "caught where it waited"

    assert loop.run_until_complete(coro()) == "caught where it waited"


def test_yielding_something_else_throws_a_clear_error_in(loop: EventLoop) -> None:
    def coro():
        try:
            yield 42
        except RuntimeError as error:
            return str(error)

    message = loop.run_until_complete(coro())
    assert "bad yield" in message and "42" in message


def test_uncaught_bad_yield_fails_the_task(loop: EventLoop) -> None:
    def coro():
        yield "not a future"

    with pytest.raises(RuntimeError, match="bad yield: 'not a future'"):
        loop.run_until_complete(coro())


def test_bare_yield_of_a_future_is_an_error(loop: EventLoop) -> None:
    future = loop.create_future()
    loop.call_soon(future.set_result, None)

    def coro():
        yield future  # Should be: yield from future.

    with pytest.raises(RuntimeError, match="yield was used instead of yield from"):
        loop.run_until_complete(coro())


def test_awaiting_itself_is_an_error(loop: EventLoop) -> None:
    tasks: list[Task] = []

    def coro():
        yield from sleep(0)
        yield from tasks[0]

    tasks.append(loop.create_task(coro()))
    with pytest.raises(RuntimeError, match="cannot await on itself"):
        loop.run_until_complete(tasks[0])


def test_future_of_another_loop_is_an_error(loop: EventLoop) -> None:
    other = EventLoop()
    foreign = other.create_future()

    def coro():
        yield from foreign

    try:
        with pytest.raises(RuntimeError, match="another loop"):
            loop.run_until_complete(coro())
    finally:
        other.close()


def test_bare_yield_gives_others_one_turn(loop: EventLoop) -> None:
    order = []

    @types.coroutine
    def coro():
        order.append("before")
        yield  # What asyncio.sleep(0) does.
        order.append("after")

    loop.create_task(coro())
    run_briefly(loop)
    assert order == ["before"]
    run_briefly(loop)
    assert order == ["before", "after"]


def test_keyboard_interrupt_leaves_the_loop(loop: EventLoop) -> None:
    def coro():
        yield from sleep(0)
        raise KeyboardInterrupt

    task = loop.create_task(coro())
    with pytest.raises(KeyboardInterrupt):
        loop.run_until_complete(task)
    assert task.done()


# --- sleep ------------------------------------------------------------------------


def test_sleep_returns_its_result(loop: EventLoop) -> None:
    assert loop.run_until_complete(sleep(0.001, "later")) == "later"


def test_sleepers_wake_in_the_order_of_their_deadlines(loop: EventLoop) -> None:
    deadlines, woken = {}, []

    def sleeper(name: str, delay: float):
        deadlines[name] = loop.time() + delay  # Each timer is due at about this time.
        yield from sleep(delay)
        woken.append(name)

    tasks = [
        loop.create_task(sleeper("a", 0.03)),
        loop.create_task(sleeper("b", 0.01)),
        loop.create_task(sleeper("c", 0.02)),
    ]
    loop.run_until_complete(gather(*tasks))
    assert woken == sorted(deadlines, key=lambda name: deadlines[name])


def test_sleep_zero_takes_exactly_one_turn(loop: EventLoop) -> None:
    order = []

    def coro():
        order.append("start")
        loop.call_soon(order.append, "scheduled by the task")
        yield from sleep(0)
        order.append("resumed")

    loop.create_task(coro())
    run_briefly(loop)
    assert order == ["start"]
    run_briefly(loop)
    assert order == ["start", "scheduled by the task", "resumed"]


# --- gather -----------------------------------------------------------------------


def test_gather_returns_results_in_argument_order(loop: EventLoop) -> None:
    def after(delay: float, value: str):
        yield from sleep(delay)
        return value

    async def main() -> list[str]:
        return await gather(after(0.02, "a"), after(0, "b"), after(0.01, "c"))

    assert loop.run_until_complete(main()) == ["a", "b", "c"]


def test_gather_of_nothing(loop: EventLoop) -> None:
    async def main() -> list:
        return await gather()

    assert loop.run_until_complete(main()) == []


def test_gather_passes_on_the_first_exception(loop: EventLoop) -> None:
    finished = []

    def fails():
        yield from sleep(0)
        raise ValueError("child failed")

    def succeeds():
        yield from sleep(0.01)
        finished.append(True)

    async def main() -> None:
        await gather(fails(), succeeds())

    with pytest.raises(ValueError, match="child failed"):
        loop.run_until_complete(main())
    loop.run_until_complete(sleep(0.02))
    assert finished == [True], "the other child was not left to finish"


def test_gather_with_return_exceptions(loop: EventLoop) -> None:
    error = ValueError("kept")

    def fails():
        yield from sleep(0)
        raise error

    cancelled = loop.create_future()
    cancelled.cancel()
    done = loop.create_future()
    done.set_result("ok")

    async def main() -> list:
        return await gather(fails(), cancelled, done, return_exceptions=True)

    results = loop.run_until_complete(main())
    assert results[0] is error
    assert isinstance(results[1], CancelledError)
    assert results[2] == "ok"


def test_gather_the_same_future_twice(loop: EventLoop) -> None:
    future = loop.create_future()
    loop.call_soon(future.set_result, "x")

    async def main() -> list:
        return await gather(future, future)

    assert loop.run_until_complete(main()) == ["x", "x"]


def test_cancelling_gather_cancels_its_children(loop: EventLoop) -> None:
    children = [loop.create_task(sleep(FAR)) for _ in range(3)]
    outer = gather(*children)
    run_briefly(loop)
    assert outer.cancel()
    with pytest.raises(CancelledError):
        loop.run_until_complete(outer)
    assert all(child.cancelled() for child in children)


def test_a_cancelled_child_cancels_the_awaiting_task(loop: EventLoop) -> None:
    child = loop.create_task(sleep(FAR))

    async def main() -> None:
        await gather(child)

    task = loop.create_task(main())
    run_briefly(loop)
    child.cancel()
    with pytest.raises(CancelledError):
        loop.run_until_complete(task)
    assert task.cancelled()


# --- wait_for -------------------------------------------------------------------


def test_wait_for_returns_the_result_in_time(loop: EventLoop) -> None:
    def quick():
        yield from sleep(0)
        return "in time"

    async def main() -> str:
        return await wait_for(quick(), FAR)

    assert loop.run_until_complete(main()) == "in time"
    assert all(timer.cancelled() for timer in loop._scheduled), "the timeout timer was left"


def test_wait_for_times_out_and_cancels_the_work(loop: EventLoop) -> None:
    seen = []

    def endless():
        try:
            yield from loop.create_future()
        finally:
            seen.append("cleaned up")

    def main():
        try:
            yield from wait_for(endless(), 0.01)
        except TimeoutError:
            seen.append("timed out")

    loop.run_until_complete(main())
    assert seen == ["cleaned up", "timed out"], "wait_for returned before the work ended"


def test_wait_for_timeout_error_is_the_builtin(loop: EventLoop) -> None:
    with pytest.raises(TimeoutError) as info:
        loop.run_until_complete(wait_for(loop.create_future(), 0.01))
    assert type(info.value) is TimeoutError
    assert isinstance(info.value.__cause__, CancelledError)


def test_wait_for_a_future(loop: EventLoop) -> None:
    future = loop.create_future()
    loop.call_soon(future.set_result, 3)
    assert loop.run_until_complete(wait_for(future, FAR)) == 3


def test_wait_for_without_timeout(loop: EventLoop) -> None:
    assert loop.run_until_complete(wait_for(sleep(0, "none"), None)) == "none"


def test_wait_for_zero_timeout(loop: EventLoop) -> None:
    done = loop.create_future()
    done.set_result("already")
    assert loop.run_until_complete(wait_for(done, 0)) == "already"
    with pytest.raises(TimeoutError):
        loop.run_until_complete(wait_for(loop.create_future(), 0))


def test_wait_for_passes_on_the_exception(loop: EventLoop) -> None:
    with pytest.raises(ValueError, match="deep down"):
        loop.run_until_complete(wait_for(outermost(), FAR))


def test_wait_for_returns_what_the_work_returns_when_it_swallows_cancel(
    loop: EventLoop,
) -> None:
    def stubborn():
        try:
            yield from loop.create_future()
        except CancelledError:
            return "swallowed"

    assert loop.run_until_complete(wait_for(stubborn(), 0.01)) == "swallowed"


def test_cancelling_wait_for_cancels_the_work(loop: EventLoop) -> None:
    inner = loop.create_task(sleep(FAR))

    def main():
        yield from wait_for(inner, FAR)

    task = loop.create_task(main())
    run_briefly(loop)
    task.cancel()
    with pytest.raises(CancelledError):
        loop.run_until_complete(task)
    assert inner.cancelled()


def test_wait_for_runs_the_coroutine_in_the_calling_task(loop: EventLoop) -> None:
    def inner():
        yield from sleep(0)
        return current_task()

    def main():
        return current_task(), (yield from wait_for(inner(), FAR))

    outer, seen = loop.run_until_complete(main())
    assert seen is outer
    assert all_tasks(loop) == set()


def test_wait_for_leaves_no_pending_cancel_request(loop: EventLoop) -> None:
    def main():
        with pytest.raises(TimeoutError):
            yield from wait_for(loop.create_future(), 0.001)
        with pytest.raises(TimeoutError):
            yield from wait_for(sleep(FAR), 0.001)
        yield from sleep(0)  # Not cancelled: the timeouts were handled.
        task = current_task()
        assert task is not None
        return task.cancelling()

    assert loop.run_until_complete(main()) == 0


def test_wait_for_lets_an_outside_cancel_win_over_its_timeout(loop: EventLoop) -> None:
    seen = []

    def main():
        try:
            yield from wait_for(loop.create_future(), 0)
        except TimeoutError:
            seen.append("timeout")
        except CancelledError:
            seen.append("cancelled")
            raise

    task = loop.create_task(main())
    run_briefly(loop)  # main() waits; its timer fires on the next iteration.
    loop.call_soon(task.cancel)  # Someone else cancels in that same iteration.
    with pytest.raises(CancelledError):
        loop.run_until_complete(task)
    assert seen == ["cancelled"], "the outside cancellation was swallowed"


def test_wait_for_needs_a_task(loop: EventLoop) -> None:
    errors = []

    def callback() -> None:
        waiting = wait_for(sleep(0), 1)
        try:
            waiting.send(None)
        except RuntimeError as error:
            errors.append(error)

    loop.call_soon(callback)
    run_briefly(loop)
    assert "must be called from a task" in str(errors[0])

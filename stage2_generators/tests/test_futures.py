"""Future: states, results, cancellation, done callbacks and ``yield from``.

Modelled on CPython's ``test_asyncio/test_futures.py``.  What stage 2's
Future shares with asyncio's is tested on both by ``test_diff_futures.py``;
these tests keep what only stage 2 promises (its states, its repr, its
tracebacks, the way ``__iter__`` is ``__await__``).
"""

from __future__ import annotations

import pytest

from stage2_generators import futures
from stage2_generators.futures import CancelledError, Future, InvalidStateError
from stage2_generators.loop import EventLoop
from stage2_generators.tests.support import run_briefly


def test_initial_state(loop: EventLoop) -> None:
    future = Future(loop=loop)
    assert future._state == futures.PENDING
    assert not future.done() and not future.cancelled()
    assert future.get_loop() is loop
    with pytest.raises(InvalidStateError):
        future.result()
    with pytest.raises(InvalidStateError):
        future.exception()


def test_needs_a_running_loop_when_none_is_given() -> None:
    with pytest.raises(RuntimeError, match="no running event loop"):
        Future()


def test_takes_the_running_loop(loop: EventLoop) -> None:
    def make() -> Future:
        return Future()

    made = []
    loop.call_soon(lambda: made.append(make()))
    run_briefly(loop)
    assert made[0].get_loop() is loop


def test_set_result(loop: EventLoop) -> None:
    future = Future(loop=loop)
    future.set_result(42)
    assert future._state == futures.FINISHED
    assert future.done() and not future.cancelled()
    assert future.result() == 42
    assert future.exception() is None
    with pytest.raises(InvalidStateError):
        future.set_result(43)
    with pytest.raises(InvalidStateError):
        future.set_exception(ValueError())
    assert not future.cancel()
    assert future.result() == 42


def test_set_exception(loop: EventLoop) -> None:
    future = Future(loop=loop)
    error = ValueError("bad")
    future.set_exception(error)
    assert future.done() and not future.cancelled()
    assert future.exception() is error
    with pytest.raises(ValueError, match="bad"):
        future.result()
    with pytest.raises(InvalidStateError):
        future.set_result(1)


def test_stop_iteration_cannot_be_set(loop: EventLoop) -> None:
    future = Future(loop=loop)
    with pytest.raises(TypeError, match="StopIteration"):
        future.set_exception(StopIteration())
    assert not future.done()


def test_result_does_not_grow_the_traceback(loop: EventLoop) -> None:
    future = Future(loop=loop)
    try:
        raise ValueError("once")
    except ValueError as error:
        future.set_exception(error)
    depths = []
    for _ in range(3):
        with pytest.raises(ValueError) as info:
            future.result()
        depths.append(len(info.traceback))
    assert depths[0] == depths[1] == depths[2]


def test_cancel(loop: EventLoop) -> None:
    future = Future(loop=loop)
    assert future.cancel()
    assert future._state == futures.CANCELLED
    assert future.done() and future.cancelled()
    with pytest.raises(CancelledError):
        future.result()
    with pytest.raises(CancelledError):
        future.exception()
    with pytest.raises(InvalidStateError):
        future.set_result(1)
    assert not future.cancel()


def test_repr(loop: EventLoop) -> None:
    future = Future(loop=loop)
    assert repr(future) == "<Future pending>"
    future.set_result([1])
    assert repr(future) == "<Future finished result=[1]>"


# --- Done callbacks ---------------------------------------------------------


@pytest.mark.parametrize("finish", ["set_result", "set_exception", "cancel"])
def test_every_way_of_finishing_schedules_callbacks(loop: EventLoop, finish: str) -> None:
    future = Future(loop=loop)
    calls = []
    future.add_done_callback(calls.append)
    argument = () if finish == "cancel" else (ValueError(),)
    getattr(future, finish)(*argument)
    assert calls == []
    run_briefly(loop)
    assert calls == [future]


def test_callbacks_run_in_order_with_other_ready_callbacks(loop: EventLoop) -> None:
    future = Future(loop=loop)
    order = []
    loop.call_soon(order.append, "before")
    future.add_done_callback(lambda f: order.append("done"))
    future.set_result(None)
    loop.call_soon(order.append, "after")
    run_briefly(loop)
    assert order == ["before", "done", "after"]


def test_remove_done_callback(loop: EventLoop) -> None:
    future = Future(loop=loop)
    calls = []

    def first(f: Future) -> None:
        calls.append(1)

    def second(f: Future) -> None:
        calls.append(2)

    future.add_done_callback(first)
    future.add_done_callback(second)
    future.add_done_callback(first)
    assert future.remove_done_callback(first) == 2
    assert future.remove_done_callback(first) == 0
    future.set_result(None)
    run_briefly(loop)
    assert calls == [2]


def test_a_failing_callback_is_reported_and_the_others_run(loop: EventLoop) -> None:
    reported = []
    loop.set_exception_handler(lambda loop, context: reported.append(context))
    future = Future(loop=loop)
    calls = []

    def broken(f: Future) -> None:
        raise ZeroDivisionError

    future.add_done_callback(broken)
    future.add_done_callback(calls.append)
    future.set_result(None)
    run_briefly(loop)
    assert calls == [future]
    assert isinstance(reported[0]["exception"], ZeroDivisionError)


# --- yield from / await -----------------------------------------------------


def test_iter_of_a_done_future_returns_at_once(loop: EventLoop) -> None:
    future = Future(loop=loop)
    future.set_result(7)

    def coro():
        return (yield from future)

    with pytest.raises(StopIteration) as stop:
        next(coro())
    assert stop.value.value == 7


def test_iter_raises_the_exception(loop: EventLoop) -> None:
    future = Future(loop=loop)
    waiting = iter(future)
    next(waiting)
    future.set_exception(ValueError("bad"))
    with pytest.raises(ValueError, match="bad"):
        next(waiting)


def test_iter_resumed_before_the_future_is_done(loop: EventLoop) -> None:
    future = Future(loop=loop)
    waiting = iter(future)
    next(waiting)
    with pytest.raises(RuntimeError, match="await wasn't used with future"):
        next(waiting)


def test_await_is_iter() -> None:
    assert Future.__await__ is Future.__iter__


def test_await_in_a_native_coroutine(loop: EventLoop) -> None:
    future = Future(loop=loop)

    async def coro() -> str:
        return await future

    waiting = coro()
    assert waiting.send(None) is future
    future.set_result("awaited")
    with pytest.raises(StopIteration) as stop:
        waiting.send(None)
    assert stop.value.value == "awaited"

"""Differential tests of the event loop: on asyncio and on stage 2.

Scheduling (``call_soon``, ``call_later``, ``call_at``, ``Handle.cancel``),
running and stopping, ``run``, the exception handler, and what is logged
when a future's exception is never retrieved or a pending task is
destroyed.  The logging tests find each library's message through
``caplog``, whatever the logger's name.
"""

from __future__ import annotations

import gc
from types import SimpleNamespace
from typing import Any

import pytest

# Each test collects garbage first (no_garbage_from_earlier_tests): quick
# with the heap that was alive before the module set aside.
pytestmark = pytest.mark.usefixtures("heap_set_aside")


def run_briefly(loop: Any) -> None:
    """Run one iteration of ``loop``: the callbacks ready now, and no more."""
    loop.call_soon(loop.stop)
    loop.run_forever()


# Scheduling


def test_call_soon_runs_callbacks_in_order_with_their_arguments(
    lib: SimpleNamespace, lib_loop: Any
) -> None:
    calls: list[tuple[Any, ...]] = []
    lib_loop.call_soon(lambda *args: calls.append(args), 1, 2)
    lib_loop.call_soon(lambda *args: calls.append(args), "x")
    lib_loop.call_soon(lambda *args: calls.append(args))
    run_briefly(lib_loop)
    assert calls == [(1, 2), ("x",), ()]


def test_a_callback_scheduled_by_a_callback_waits_for_the_next_iteration(
    lib: SimpleNamespace, lib_loop: Any
) -> None:
    order: list[str] = []

    def first() -> None:
        order.append("first")
        lib_loop.call_soon(order.append, "scheduled by first")
        lib_loop.stop()

    lib_loop.call_soon(first)
    lib_loop.call_soon(order.append, "second")
    lib_loop.run_forever()
    assert order == ["first", "second"]
    run_briefly(lib_loop)
    assert order == ["first", "second", "scheduled by first"]


def test_a_cancelled_handle_is_not_called(lib: SimpleNamespace, lib_loop: Any) -> None:
    called: list[str] = []
    handle = lib_loop.call_soon(called.append, "no")
    assert isinstance(handle, lib.Handle) and not handle.cancelled()
    handle.cancel()
    handle.cancel()  # Twice is harmless.
    run_briefly(lib_loop)
    assert called == [] and handle.cancelled()


def test_call_later_runs_callbacks_by_due_time(lib: SimpleNamespace, lib_loop: Any) -> None:
    order: list[float] = []
    for delay in (0.02, 0.0, 0.01):
        lib_loop.call_later(delay, order.append, delay)
    lib_loop.call_later(0.03, lib_loop.stop)
    lib_loop.run_forever()
    assert order == [0.0, 0.01, 0.02]


def test_call_at_is_due_at_the_loop_time_given(lib: SimpleNamespace, lib_loop: Any) -> None:
    when = lib_loop.time() + 3600
    handle = lib_loop.call_at(when, print)
    assert isinstance(handle, lib.TimerHandle)
    assert handle.when() == when
    handle.cancel()


def test_call_at_in_the_past_runs_on_the_next_iteration(
    lib: SimpleNamespace, lib_loop: Any
) -> None:
    called: list[str] = []
    lib_loop.call_at(lib_loop.time() - 10, called.append, "late")
    run_briefly(lib_loop)
    assert called == ["late"]


def test_a_cancelled_timer_is_not_called(lib: SimpleNamespace, lib_loop: Any) -> None:
    called: list[str] = []
    timer = lib_loop.call_later(0, called.append, "no")
    timer.cancel()
    lib_loop.call_later(0.01, lib_loop.stop)
    lib_loop.run_forever()
    assert called == [] and timer.cancelled()


def test_call_later_after_call_soon(lib: SimpleNamespace, lib_loop: Any) -> None:
    order: list[str] = []
    lib_loop.call_later(0, order.append, "later")
    lib_loop.call_soon(order.append, "soon")
    lib_loop.call_later(0.01, lib_loop.stop)
    lib_loop.run_forever()
    assert order == ["soon", "later"]


def test_the_loop_clock_does_not_go_back(lib: SimpleNamespace, lib_loop: Any) -> None:
    times = [lib_loop.time() for _ in range(100)]
    assert times == sorted(times)


def test_a_closed_loop_schedules_nothing(lib: SimpleNamespace) -> None:
    loop = lib.new_event_loop()
    loop.close()
    loop.close()  # Twice is harmless.
    assert loop.is_closed()
    with pytest.raises(RuntimeError):
        loop.call_soon(print)
    with pytest.raises(RuntimeError):
        loop.call_later(1, print)
    with pytest.raises(RuntimeError):
        loop.run_forever()


# Running and stopping


def test_stop_before_run_forever_runs_one_iteration(lib: SimpleNamespace, lib_loop: Any) -> None:
    called: list[str] = []
    lib_loop.call_soon(called.append, "ran")
    lib_loop.stop()
    lib_loop.run_forever()
    assert called == ["ran"] and not lib_loop.is_running()


def test_run_until_complete_returns_the_result(lib: SimpleNamespace, lib_loop: Any) -> None:
    async def main() -> tuple[bool, str]:
        return lib_loop.is_running(), "result"

    assert lib_loop.run_until_complete(main()) == (True, "result")
    assert not lib_loop.is_running()


def test_run_until_complete_raises_the_exception(lib: SimpleNamespace, lib_loop: Any) -> None:
    async def main() -> None:
        raise LookupError("lost")

    with pytest.raises(LookupError):
        lib_loop.run_until_complete(main())


def test_run_until_complete_refuses_what_is_not_awaitable(
    lib: SimpleNamespace, lib_loop: Any
) -> None:
    with pytest.raises(TypeError):
        lib_loop.run_until_complete(42)


def test_a_running_loop_cannot_be_closed(lib: SimpleNamespace, lib_loop: Any) -> None:
    async def main() -> None:
        with pytest.raises(RuntimeError):
            lib_loop.close()

    lib_loop.run_until_complete(main())
    assert not lib_loop.is_closed()


def test_a_running_loop_cannot_be_run_again(lib: SimpleNamespace, lib_loop: Any) -> None:
    # The last thing the test does with the loop: on Python 3.13.0, the
    # refused run_forever() leaves asyncio's loop believing it is not
    # running any more.
    async def main() -> None:
        with pytest.raises(RuntimeError):
            lib_loop.run_forever()

    lib_loop.run_until_complete(main())


def test_another_loop_cannot_run_inside_a_running_one(lib: SimpleNamespace) -> None:
    async def inner() -> None:
        pass

    async def main() -> None:
        other = lib.new_event_loop()
        coro = inner()
        try:
            with pytest.raises(RuntimeError):
                other.run_until_complete(coro)
        finally:
            coro.close()
            other.close()

    lib.run(main())


def test_run_until_complete_refuses_a_future_of_another_loop(
    lib: SimpleNamespace, lib_loop: Any
) -> None:
    other = lib.new_event_loop()
    try:
        with pytest.raises(ValueError):
            lib_loop.run_until_complete(lib.Future(loop=other))
    finally:
        other.close()


def test_a_handle_for_call_later_is_a_handle(lib: SimpleNamespace, lib_loop: Any) -> None:
    timer = lib_loop.call_later(3600, print)
    assert isinstance(timer, lib.Handle) and not timer.cancelled()
    timer.cancel()
    assert timer.cancelled()


def test_the_loop_stopped_before_the_future_was_done(lib: SimpleNamespace, lib_loop: Any) -> None:
    future = lib_loop.create_future()
    lib_loop.call_soon(lib_loop.stop)
    with pytest.raises(RuntimeError):
        lib_loop.run_until_complete(future)


def test_get_running_loop(lib: SimpleNamespace) -> None:
    with pytest.raises(RuntimeError):
        lib.get_running_loop()

    async def main() -> Any:
        return lib.get_running_loop()

    loop = lib.run(main())
    assert loop.is_closed() and not loop.is_running()


# run


def test_run_returns_what_main_returns(lib: SimpleNamespace) -> None:
    async def main() -> str:
        await lib.sleep(0)
        return "returned"

    assert lib.run(main()) == "returned"


def test_run_raises_what_main_raises(lib: SimpleNamespace) -> None:
    async def main() -> None:
        raise ArithmeticError("raised")

    with pytest.raises(ArithmeticError, match="raised"):
        lib.run(main())


def test_run_refuses_what_is_not_a_coroutine(lib: SimpleNamespace) -> None:
    with pytest.raises(ValueError):
        lib.run(42)


def test_run_inside_a_running_loop_is_an_error(lib: SimpleNamespace) -> None:
    async def inner() -> None:
        pass

    async def main() -> None:
        coro = inner()
        try:
            with pytest.raises(RuntimeError):
                lib.run(coro)
        finally:
            coro.close()

    lib.run(main())


def test_run_cancels_what_main_left_running(lib: SimpleNamespace) -> None:
    steps: list[str] = []
    tasks: list[Any] = []

    async def left_behind() -> None:
        try:
            await lib.sleep(3600)
        finally:
            steps.append("cleaned up")

    async def main() -> None:
        tasks.append(lib.create_task(left_behind()))
        await lib.sleep(0)

    lib.run(main())
    assert steps == ["cleaned up"] and tasks[0].cancelled()


def test_run_cancels_leftovers_after_main_raised(lib: SimpleNamespace) -> None:
    steps: list[str] = []

    async def left_behind() -> None:
        try:
            await lib.sleep(3600)
        finally:
            steps.append("cleaned up")

    async def main() -> None:
        lib.create_task(left_behind())
        await lib.sleep(0)
        raise KeyError("main failed")

    with pytest.raises(KeyError):
        lib.run(main())
    assert steps == ["cleaned up"]


def test_run_reports_a_leftover_that_fails_while_cancelled(lib: SimpleNamespace) -> None:
    contexts: list[dict[str, Any]] = []

    async def stubborn() -> None:
        try:
            await lib.sleep(3600)
        except lib.CancelledError:
            raise OSError("failed during cleanup") from None

    async def main() -> None:
        lib.get_running_loop().set_exception_handler(lambda loop, context: contexts.append(context))
        lib.create_task(stubborn())
        await lib.sleep(0)

    lib.run(main())
    assert [type(context["exception"]) for context in contexts] == [OSError]
    assert "shutdown" in contexts[0]["message"]


def test_run_twice_in_a_row(lib: SimpleNamespace) -> None:
    async def main() -> Any:
        return lib.get_running_loop()

    assert lib.run(main()) is not lib.run(main())


# The exception handler


def test_an_exception_in_a_callback_is_logged_and_the_loop_goes_on(
    lib: SimpleNamespace, lib_loop: Any, caplog: pytest.LogCaptureFixture
) -> None:
    called: list[str] = []
    lib_loop.call_soon(lambda: 1 / 0)
    lib_loop.call_soon(called.append, "next")
    run_briefly(lib_loop)
    assert called == ["next"]
    [record] = caplog.records
    assert record.name == lib.logger and record.levelname == "ERROR"
    assert record.getMessage().startswith("Exception in callback")
    assert record.exc_info is not None and record.exc_info[0] is ZeroDivisionError


def test_the_handler_is_called_with_the_loop_and_a_context(
    lib: SimpleNamespace, lib_loop: Any
) -> None:
    calls: list[tuple[Any, dict[str, Any]]] = []
    lib_loop.set_exception_handler(lambda loop, context: calls.append((loop, context)))
    assert lib_loop.get_exception_handler() is not None
    lib_loop.call_soon(lambda: 1 / 0)
    run_briefly(lib_loop)
    [(loop, context)] = calls
    assert loop is lib_loop
    assert isinstance(context["exception"], ZeroDivisionError)
    assert context["message"].startswith("Exception in callback")
    assert isinstance(context["handle"], lib.Handle)


def test_call_exception_handler_hands_the_context_on(lib: SimpleNamespace, lib_loop: Any) -> None:
    contexts: list[dict[str, Any]] = []
    lib_loop.set_exception_handler(lambda loop, context: contexts.append(context))
    lib_loop.call_exception_handler({"message": "from user code"})
    assert contexts == [{"message": "from user code"}]


def test_the_default_handler_logs_the_message(
    lib: SimpleNamespace, lib_loop: Any, caplog: pytest.LogCaptureFixture
) -> None:
    assert lib_loop.get_exception_handler() is None
    lib_loop.call_exception_handler({"message": "something odd", "exception": KeyError("k")})
    [record] = caplog.records
    assert record.getMessage().startswith("something odd")
    assert record.exc_info is not None and record.exc_info[0] is KeyError


def test_a_custom_handler_may_call_the_default_one(
    lib: SimpleNamespace, lib_loop: Any, caplog: pytest.LogCaptureFixture
) -> None:
    lib_loop.set_exception_handler(lambda loop, context: loop.default_exception_handler(context))
    lib_loop.call_exception_handler({"message": "passed on"})
    assert [record.getMessage() for record in caplog.records] == ["passed on"]


def test_none_restores_the_default_handler(
    lib: SimpleNamespace, lib_loop: Any, caplog: pytest.LogCaptureFixture
) -> None:
    lib_loop.set_exception_handler(lambda loop, context: None)
    lib_loop.set_exception_handler(None)
    assert lib_loop.get_exception_handler() is None
    lib_loop.call_exception_handler({"message": "logged again"})
    assert [record.getMessage() for record in caplog.records] == ["logged again"]


def test_a_handler_must_be_callable(lib: SimpleNamespace, lib_loop: Any) -> None:
    with pytest.raises(TypeError):
        lib_loop.set_exception_handler(42)


def test_a_handler_that_raises_is_logged_and_the_loop_goes_on(
    lib: SimpleNamespace, lib_loop: Any, caplog: pytest.LogCaptureFixture
) -> None:
    def broken_handler(loop: Any, context: dict[str, Any]) -> None:
        raise RuntimeError("the handler is broken")

    called: list[str] = []
    lib_loop.set_exception_handler(broken_handler)
    lib_loop.call_soon(lambda: 1 / 0)
    lib_loop.call_soon(called.append, "next")
    run_briefly(lib_loop)
    assert called == ["next"]
    [record] = caplog.records
    assert "Unhandled error in exception handler" in record.getMessage()
    assert record.exc_info is not None and record.exc_info[0] is RuntimeError


# What nobody looked at


def collect() -> None:
    """Collect garbage now, so that __del__ runs during the test."""
    gc.collect()


@pytest.fixture(autouse=True)
def no_garbage_from_earlier_tests() -> None:
    """Collect what earlier tests left, so that its messages are not counted here."""
    gc.collect()


def test_an_exception_never_retrieved_is_logged(
    lib: SimpleNamespace, lib_loop: Any, caplog: pytest.LogCaptureFixture
) -> None:
    future = lib.Future(loop=lib_loop)
    future.set_exception(ValueError("nobody looked"))
    del future
    collect()
    [record] = caplog.records
    assert record.name == lib.logger and record.levelname == "ERROR"
    assert "exception was never retrieved" in record.getMessage()
    assert record.exc_info is not None and record.exc_info[0] is ValueError


@pytest.mark.parametrize("retrieve", ["result", "exception", "await"])
def test_an_exception_retrieved_is_not_logged(
    lib: SimpleNamespace, lib_loop: Any, caplog: pytest.LogCaptureFixture, retrieve: str
) -> None:
    future = lib.Future(loop=lib_loop)
    future.set_exception(ValueError("looked at"))
    if retrieve == "exception":
        future.exception()
    elif retrieve == "result":
        with pytest.raises(ValueError):
            future.result()
    else:
        with pytest.raises(ValueError):
            lib_loop.run_until_complete(future)
    del future
    collect()
    assert caplog.records == []


def test_a_cancelled_future_is_not_logged(
    lib: SimpleNamespace, lib_loop: Any, caplog: pytest.LogCaptureFixture
) -> None:
    future = lib.Future(loop=lib_loop)
    future.cancel()
    del future
    collect()
    assert caplog.records == []


def test_a_task_exception_never_retrieved_is_logged(
    lib: SimpleNamespace, lib_loop: Any, caplog: pytest.LogCaptureFixture
) -> None:
    async def broken() -> None:
        raise LookupError("nobody awaited me")

    async def main() -> None:
        lib.create_task(broken())
        await lib.sleep(0)
        await lib.sleep(0)

    lib_loop.run_until_complete(main())
    collect()
    [record] = caplog.records
    assert "Task exception was never retrieved" in record.getMessage()
    assert record.exc_info is not None and record.exc_info[0] is LookupError


def test_the_never_retrieved_context_goes_to_the_handler(
    lib: SimpleNamespace, lib_loop: Any
) -> None:
    contexts: list[dict[str, Any]] = []
    lib_loop.set_exception_handler(lambda loop, context: contexts.append(context))
    future = lib.Future(loop=lib_loop)
    error = ValueError("nobody looked")
    future.set_exception(error)
    del future
    collect()
    [context] = contexts
    assert context["exception"] is error
    assert isinstance(context["future"], lib.Future)
    assert "exception was never retrieved" in context["message"]


def test_a_child_failing_after_gather_failed_is_not_logged(
    lib: SimpleNamespace, lib_loop: Any, caplog: pytest.LogCaptureFixture
) -> None:
    async def fail(turns: int) -> None:
        for _ in range(turns):
            await lib.sleep(0)
        raise ValueError(turns)

    async def main() -> None:
        with pytest.raises(ValueError):
            await lib.gather(fail(0), fail(2))
        for _ in range(4):
            await lib.sleep(0)

    lib_loop.run_until_complete(main())
    collect()
    assert caplog.records == []


def test_a_pending_task_destroyed_is_logged(
    lib: SimpleNamespace, caplog: pytest.LogCaptureFixture
) -> None:
    async def forgotten() -> None:
        await lib.get_running_loop().create_future()  # Never done.

    async def main() -> None:
        lib.create_task(forgotten())
        await lib.sleep(0)

    loop = lib.new_event_loop()
    loop.run_until_complete(main())  # Unlike run(), leaves the task pending.
    loop.close()
    del loop
    collect()
    messages = [record.getMessage() for record in caplog.records]
    assert len(messages) == 1
    assert messages[0].startswith("Task was destroyed but it is pending!")


def test_a_forgotten_pending_task_is_freed_while_the_loop_runs(
    lib: SimpleNamespace, lib_loop: Any, caplog: pytest.LogCaptureFixture
) -> None:
    # What docs/examples/forgotten_tasks.py shows of asyncio: the loop holds
    # its tasks weakly.  Stage 2's loop held every task until it was done,
    # so a forgotten task lived, silent, as long as the loop.
    async def wait_forever() -> None:
        await lib.get_running_loop().create_future()  # Nothing will resolve it.

    async def main() -> list[str]:
        task = lib.create_task(wait_forever())
        await lib.sleep(0)  # It runs up to its await and waits.
        del task
        collect()
        return [record.getMessage() for record in caplog.records]

    messages = lib_loop.run_until_complete(main())
    assert len(messages) == 1
    assert messages[0].startswith("Task was destroyed but it is pending!")


def test_a_finished_task_destroyed_is_not_logged(
    lib: SimpleNamespace, lib_loop: Any, caplog: pytest.LogCaptureFixture
) -> None:
    async def main() -> None:
        await lib.create_task(lib.sleep(0))

    lib_loop.run_until_complete(main())
    collect()
    assert caplog.records == []

"""Differential tests of Future: each runs on asyncio and on stage 2.

States, results and exceptions, cancellation with a message, done
callbacks (scheduled, never inline, in order), and waiting with ``await``
or ``yield from``.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from stage2_generators.tests.libraries import generator_coroutine


def run_briefly(loop: Any) -> None:
    """Run one iteration of ``loop``: the callbacks ready now, and no more."""
    loop.call_soon(loop.stop)
    loop.run_forever()


def test_a_new_future_is_pending(lib: SimpleNamespace, lib_loop: Any) -> None:
    future = lib.Future(loop=lib_loop)
    assert not future.done()
    assert not future.cancelled()
    assert future.get_loop() is lib_loop


def test_result_of_a_pending_future_is_an_invalid_state(
    lib: SimpleNamespace, lib_loop: Any
) -> None:
    future = lib.Future(loop=lib_loop)
    with pytest.raises(lib.InvalidStateError):
        future.result()
    with pytest.raises(lib.InvalidStateError):
        future.exception()


def test_set_result(lib: SimpleNamespace, lib_loop: Any) -> None:
    future = lib.Future(loop=lib_loop)
    future.set_result(42)
    assert future.done() and not future.cancelled()
    assert future.result() == 42
    assert future.exception() is None


def test_an_outcome_is_set_once(lib: SimpleNamespace, lib_loop: Any) -> None:
    future = lib.Future(loop=lib_loop)
    future.set_result(1)
    with pytest.raises(lib.InvalidStateError):
        future.set_result(2)
    with pytest.raises(lib.InvalidStateError):
        future.set_exception(ValueError())
    assert future.result() == 1


def test_set_exception(lib: SimpleNamespace, lib_loop: Any) -> None:
    future = lib.Future(loop=lib_loop)
    error = ValueError("bad")
    future.set_exception(error)
    assert future.done() and not future.cancelled()
    assert future.exception() is error
    with pytest.raises(ValueError, match="bad") as raised:
        future.result()
    assert raised.value is error


def test_set_exception_with_a_class_makes_an_instance(lib: SimpleNamespace, lib_loop: Any) -> None:
    future = lib.Future(loop=lib_loop)
    future.set_exception(KeyError)
    assert type(future.exception()) is KeyError


def test_stop_iteration_never_becomes_the_outcome(lib: SimpleNamespace, lib_loop: Any) -> None:
    # Python 3.11 and 3.12 refuse it with TypeError; asyncio on 3.13 sets a
    # RuntimeError in its place instead.  Stage 2 keeps the TypeError.
    future = lib.Future(loop=lib_loop)
    try:
        future.set_exception(StopIteration())
    except TypeError:
        assert not future.done()
    else:
        assert type(future.exception()) is RuntimeError
        assert isinstance(future.exception().__cause__, StopIteration)


def test_cancel(lib: SimpleNamespace, lib_loop: Any) -> None:
    future = lib.Future(loop=lib_loop)
    assert future.cancel() is True
    assert future.cancelled() and future.done()
    with pytest.raises(lib.CancelledError):
        future.result()
    with pytest.raises(lib.CancelledError):
        future.exception()


def test_cancel_a_second_time_returns_false(lib: SimpleNamespace, lib_loop: Any) -> None:
    future = lib.Future(loop=lib_loop)
    future.cancel()
    assert future.cancel() is False
    with pytest.raises(lib.InvalidStateError):
        future.set_result(1)


def test_cancel_a_finished_future_changes_nothing(lib: SimpleNamespace, lib_loop: Any) -> None:
    future = lib.Future(loop=lib_loop)
    future.set_result("kept")
    assert future.cancel() is False
    assert not future.cancelled()
    assert future.result() == "kept"


def test_cancel_with_a_message(lib: SimpleNamespace, lib_loop: Any) -> None:
    future = lib.Future(loop=lib_loop)
    future.cancel(msg="no longer needed")
    with pytest.raises(lib.CancelledError) as raised:
        future.result()
    assert raised.value.args == ("no longer needed",)


def test_cancelled_error_is_a_base_exception(lib: SimpleNamespace) -> None:
    assert issubclass(lib.CancelledError, BaseException)
    assert not issubclass(lib.CancelledError, Exception)
    assert issubclass(lib.InvalidStateError, Exception)


def test_done_callbacks_are_scheduled_not_called_inline(
    lib: SimpleNamespace, lib_loop: Any
) -> None:
    future = lib.Future(loop=lib_loop)
    called = []
    future.add_done_callback(called.append)
    future.set_result(1)
    assert called == []
    run_briefly(lib_loop)
    assert called == [future]


def test_done_callbacks_run_in_the_order_they_were_added(
    lib: SimpleNamespace, lib_loop: Any
) -> None:
    future = lib.Future(loop=lib_loop)
    order = []
    for name in "abc":
        future.add_done_callback(lambda _, name=name: order.append(name))
    future.cancel()
    run_briefly(lib_loop)
    assert order == ["a", "b", "c"]


def test_a_callback_added_when_done_is_scheduled_too(lib: SimpleNamespace, lib_loop: Any) -> None:
    future = lib.Future(loop=lib_loop)
    future.set_exception(ValueError())
    future.exception()
    called = []
    future.add_done_callback(called.append)
    assert called == []
    run_briefly(lib_loop)
    assert called == [future]


def test_remove_done_callback_counts_every_registration(
    lib: SimpleNamespace, lib_loop: Any
) -> None:
    future = lib.Future(loop=lib_loop)
    called = []
    future.add_done_callback(called.append)
    future.add_done_callback(print)
    future.add_done_callback(called.append)
    assert future.remove_done_callback(called.append) == 2
    assert future.remove_done_callback(called.append) == 0
    future.set_result(None)
    run_briefly(lib_loop)
    assert called == []


def test_iterating_a_future_yields_it_then_returns_its_result(
    lib: SimpleNamespace, lib_loop: Any
) -> None:
    future = lib.Future(loop=lib_loop)
    waiting = iter(future)
    assert next(waiting) is future
    future.set_result("value")
    with pytest.raises(StopIteration) as stop:
        next(waiting)
    assert stop.value.value == "value"


def test_await_returns_the_result(lib: SimpleNamespace) -> None:
    async def main() -> Any:
        future = lib.get_running_loop().create_future()
        lib.get_running_loop().call_soon(future.set_result, "done")
        return await future

    assert lib.run(main()) == "done"


def test_yield_from_returns_the_result(lib: SimpleNamespace) -> None:
    def main():
        future = lib.get_running_loop().create_future()
        lib.get_running_loop().call_soon(future.set_result, "done")
        return (yield from future)

    assert lib.run(generator_coroutine(lib, main)) == "done"


def test_await_raises_the_exception_set(lib: SimpleNamespace) -> None:
    async def main() -> None:
        future = lib.get_running_loop().create_future()
        lib.get_running_loop().call_soon(future.set_exception, KeyError("k"))
        await future

    with pytest.raises(KeyError):
        lib.run(main())


def test_yield_from_a_cancelled_future_raises_cancelled_error(lib: SimpleNamespace) -> None:
    def main():
        future = lib.get_running_loop().create_future()
        lib.get_running_loop().call_soon(future.cancel)
        try:
            yield from future
        except lib.CancelledError:
            return "caught"

    assert lib.run(generator_coroutine(lib, main)) == "caught"


def test_awaiting_a_done_future_does_not_pause(lib: SimpleNamespace) -> None:
    async def main() -> list[str]:
        loop = lib.get_running_loop()
        order = []
        future = loop.create_future()
        future.set_result(None)
        loop.call_soon(order.append, "callback")
        await future
        order.append("after await")
        await lib.sleep(0)
        return order

    assert lib.run(main()) == ["after await", "callback"]


def test_awaiting_a_future_of_another_loop_is_an_error(lib: SimpleNamespace) -> None:
    other = lib.new_event_loop()

    async def main() -> None:
        await lib.Future(loop=other)

    try:
        with pytest.raises(RuntimeError):
            lib.run(main())
    finally:
        other.close()


def test_a_bare_yield_gives_other_callbacks_one_turn(lib: SimpleNamespace) -> None:
    def main():
        order = []
        lib.get_running_loop().call_soon(order.append, "callback")
        yield  # A bare yield (None) asks for one turn of the loop, like sleep(0).
        order.append("resumed")
        return order

    assert lib.run(generator_coroutine(lib, main)) == ["callback", "resumed"]


def test_yielding_something_else_throws_runtime_error_in(lib: SimpleNamespace) -> None:
    def main():
        try:
            yield "not a future"
        except RuntimeError:
            return "refused"

    assert lib.run(generator_coroutine(lib, main)) == "refused"

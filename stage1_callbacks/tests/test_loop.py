"""The event loop: callbacks in order, timers by due time, sockets by readiness."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest

from stage1_callbacks.loop import EVENT_READ, EVENT_WRITE, EventLoop


@pytest.fixture
def loop() -> Iterator[EventLoop]:
    loop = EventLoop()
    yield loop
    loop.close()


@pytest.fixture
def pair() -> Iterator[tuple[socket.socket, socket.socket]]:
    left, right = socket.socketpair()
    left.setblocking(False)
    yield left, right
    left.close()
    right.close()


class FakeClock:
    """A clock for the loop that moves only when the test says so."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


# --- call_soon -------------------------------------------------------------------


def test_cancelled_callback_does_not_run(loop: EventLoop) -> None:
    calls = []
    handle = loop.call_soon(calls.append, "cancelled")
    loop.call_soon(calls.append, "kept")
    handle.cancel()
    handle.cancel()  # Twice is harmless.
    loop.run()
    assert calls == ["kept"]
    assert handle.cancelled and handle.callback is None


# --- Timers --------------------------------------------------------------------


def test_timers_run_in_order_of_due_time(loop: EventLoop, monkeypatch) -> None:
    clock = FakeClock()
    monkeypatch.setattr(loop, "time", clock)
    calls = []
    loop.call_later(3, calls.append, "3 s")
    loop.call_later(1, calls.append, "1 s")
    loop.call_later(2, calls.append, "2 s")
    loop.call_later(1, calls.append, "1 s, set second")  # Ties keep their order.
    clock.now += 1.5
    loop.run_once()
    assert calls == ["1 s", "1 s, set second"]
    clock.now += 10
    loop.run_once()
    assert calls == ["1 s", "1 s, set second", "2 s", "3 s"]


def test_timer_does_not_run_before_it_is_due(loop: EventLoop, monkeypatch) -> None:
    clock = FakeClock()
    monkeypatch.setattr(loop, "time", clock)
    calls = []
    loop.call_later(5, calls.append, "due")
    loop.call_soon(calls.append, "soon")  # Makes run_once poll instead of wait.
    loop.run_once()
    assert calls == ["soon"]
    clock.now += 5
    loop.run_once()
    assert calls == ["soon", "due"]


def test_call_at_uses_the_loop_clock(loop: EventLoop) -> None:
    calls = []
    loop.call_at(loop.time() - 1, calls.append, "in the past")
    loop.run()
    assert calls == ["in the past"]


def test_cancelled_timer_does_not_run_nor_keep_the_loop_alive(loop: EventLoop) -> None:
    calls = []
    timer = loop.call_later(3600, calls.append, "an hour later")
    loop.call_later(0, calls.append, "now")
    timer.cancel()
    loop.run()  # Returns at once: waiting an hour for nothing would hang the test.
    assert calls == ["now"]
    assert loop.timers == []


def test_run_returns_when_nothing_is_left(loop: EventLoop) -> None:
    loop.run()  # Nothing to do at all.
    calls = []
    loop.call_later(0.01, calls.append, "timer")
    loop.run()
    assert calls == ["timer"]


# --- stop, close ---------------------------------------------------------------


def test_stop_returns_after_the_current_turn(loop: EventLoop) -> None:
    calls = []

    def stop_then_schedule() -> None:
        loop.stop()
        loop.call_soon(calls.append, "next turn")

    loop.call_soon(stop_then_schedule)
    loop.call_soon(calls.append, "same turn")
    loop.run()
    assert calls == ["same turn"]
    loop.run()  # The loop can be run again; what was left runs then.
    assert calls == ["same turn", "next turn"]


def test_exception_in_a_callback_ends_run(loop: EventLoop) -> None:
    def fail() -> None:
        raise ZeroDivisionError

    loop.call_soon(fail)
    with pytest.raises(ZeroDivisionError):
        loop.run()
    assert not loop.running


def test_run_inside_run_is_refused(loop: EventLoop) -> None:
    errors = []

    def nested() -> None:
        with pytest.raises(RuntimeError) as info:
            loop.run()
        errors.append(info.value)

    loop.call_soon(nested)
    loop.run()
    assert len(errors) == 1


def test_closed_loop_refuses_work() -> None:
    loop = EventLoop()
    loop.call_soon(print)
    loop.close()
    loop.close()  # Twice is harmless.
    assert not loop.ready
    with pytest.raises(RuntimeError):
        loop.call_soon(print)
    with pytest.raises(RuntimeError):
        loop.call_later(1, print)
    with pytest.raises(RuntimeError):
        loop.run()


# --- Sockets ---------------------------------------------------------------------


def test_register_runs_the_callback_when_the_socket_is_ready(loop: EventLoop, pair) -> None:
    left, right = pair
    received = []

    def on_readable() -> None:
        received.append(left.recv(100))
        loop.unregister(left)

    loop.register(left, EVENT_READ, on_readable)
    right.sendall(b"hello")
    loop.run()  # Returns once nothing is registered any more.
    assert received == [b"hello"]


def test_callback_arguments(loop: EventLoop, pair) -> None:
    left, _ = pair
    calls = []

    def on_writable(name: str) -> None:
        calls.append(name)
        loop.unregister(left)

    loop.register(left, EVENT_WRITE, on_writable, "left")
    loop.run()
    assert calls == ["left"]


def test_register_twice_is_refused(loop: EventLoop, pair) -> None:
    left, _ = pair
    loop.register(left, EVENT_READ, print)
    with pytest.raises(KeyError):
        loop.register(left, EVENT_WRITE, print)
    loop.unregister(left)
    with pytest.raises(KeyError):
        loop.unregister(left)
    with pytest.raises(KeyError):
        loop.modify(left, EVENT_READ, print)


def test_modify_changes_events_and_callback(loop: EventLoop, pair) -> None:
    left, right = pair
    calls: list[object] = []

    def on_writable() -> None:
        calls.append("writable")
        loop.modify(left, EVENT_READ, on_readable)
        right.sendall(b"x")

    def on_readable() -> None:
        calls.append(("readable", left.recv(10)))
        loop.unregister(left)

    loop.register(left, EVENT_WRITE, on_writable)
    loop.run()
    assert calls == ["writable", ("readable", b"x")]


def test_unregister_cancels_a_callback_already_ready(loop: EventLoop, pair) -> None:
    # Both sockets are writable, so both callbacks are ready in the same
    # turn.  Whichever runs first unregisters the other: it must not run.
    left, right = pair
    right.setblocking(False)
    calls = []

    def on_writable(me: socket.socket, other: socket.socket) -> None:
        calls.append(me)
        loop.unregister(me)
        loop.unregister(other)

    loop.register(left, EVENT_WRITE, on_writable, left, right)
    loop.register(right, EVENT_WRITE, on_writable, right, left)
    loop.run()
    assert len(calls) == 1


def test_modify_without_change_keeps_the_handle(loop: EventLoop, pair) -> None:
    left, _ = pair
    loop.register(left, EVENT_READ, print)
    handle = loop.selector.get_key(left).data
    loop.modify(left, EVENT_READ, print)
    assert loop.selector.get_key(left).data is handle and not handle.cancelled
    loop.modify(left, EVENT_WRITE, print)
    assert handle.cancelled
    loop.unregister(left)

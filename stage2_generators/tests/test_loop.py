"""The event loop: callback order, timers, running and stopping, readers and
writers, and the socket helpers against a local socket pair.

Modelled on CPython's ``test_asyncio/test_base_events.py`` and
``test_sock_lowlevel.py``.
"""

from __future__ import annotations

import contextlib
import errno
import gc
import logging
import selectors
import signal
import socket
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from stage2_generators import loop as event_loop
from stage2_generators.events import get_running_loop
from stage2_generators.futures import CancelledError
from stage2_generators.loop import MIN_SCHEDULED_TIMER_HANDLES, EventLoop
from stage2_generators.taskgroups import TaskGroup
from stage2_generators.tasks import all_tasks, create_task, sleep
from stage2_generators.tests.support import run_briefly

FAR = 60.0


@pytest.fixture
def pair() -> Iterator[tuple[socket.socket, socket.socket]]:
    """Two connected non-blocking sockets."""
    first, second = socket.socketpair()
    first.setblocking(False)
    second.setblocking(False)
    yield first, second
    first.close()
    second.close()


# --- Callbacks and timers ------------------------------------------------------


def test_timers_run_in_time_order(loop: EventLoop) -> None:
    calls = []
    now = loop.time()
    loop.call_at(now + 0.03, calls.append, "third")
    loop.call_at(now + 0.01, calls.append, "first")
    loop.call_at(now + 0.02, calls.append, "second")
    loop.call_at(now + 0.04, loop.stop)
    loop.run_forever()
    assert calls == ["first", "second", "third"]


def test_call_later_is_relative_to_now(loop: EventLoop) -> None:
    before = loop.time()
    timer = loop.call_later(FAR, print)
    assert before + FAR <= timer.when() <= loop.time() + FAR
    timer.cancel()


def test_timer_is_not_called_before_it_is_due(loop: EventLoop) -> None:
    calls = []
    timer = loop.call_later(FAR, calls.append, "too early")
    run_briefly(loop)
    assert calls == []
    assert timer.when() >= loop.time()
    timer.cancel()


def test_cancelled_timers_are_dropped_lazily(loop: EventLoop) -> None:
    soon = loop.call_later(0, print)
    live = loop.call_later(FAR, print)
    later = loop.call_later(2 * FAR, print)
    soon.cancel()
    later.cancel()
    assert len(loop._scheduled) == 3, "cancelling a timer searched the heap"
    run_briefly(loop)
    assert loop._scheduled[0] is live, "the cancelled timer at the top is still there"
    assert later in loop._scheduled, "the one below waits until it reaches the top"
    live.cancel()


def test_many_cancelled_timers_are_swept_out(loop: EventLoop) -> None:
    timers = [loop.call_later(FAR + n, print) for n in range(2 * MIN_SCHEDULED_TIMER_HANDLES)]
    keep = timers[::4]
    for timer in timers:
        if timer not in keep:
            timer.cancel()
    run_briefly(loop)
    assert loop._scheduled and set(loop._scheduled) == set(keep)
    assert loop._timer_cancelled_count == 0
    for timer in keep:
        timer.cancel()


def test_stop_lets_the_current_iteration_finish(loop: EventLoop) -> None:
    calls = []
    loop.call_soon(loop.stop)
    loop.call_soon(calls.append, "same iteration")
    loop.call_soon(lambda: loop.call_soon(calls.append, "next iteration"))
    loop.run_forever()
    assert calls == ["same iteration"]
    run_briefly(loop)
    assert calls == ["same iteration", "next iteration"]


def test_exception_in_a_callback_is_logged_and_the_loop_goes_on(
    loop: EventLoop, caplog: pytest.LogCaptureFixture
) -> None:
    calls = []
    loop.call_soon(lambda: 1 / 0)
    loop.call_soon(calls.append, "still runs")
    with caplog.at_level(logging.ERROR, logger="stage2_generators"):
        run_briefly(loop)
    assert calls == ["still runs"]
    assert "Exception in callback" in caplog.text
    assert "ZeroDivisionError" in caplog.text


def test_keyboard_interrupt_in_a_callback_stops_the_loop(loop: EventLoop) -> None:
    def interrupt() -> None:
        raise KeyboardInterrupt

    loop.call_soon(interrupt)
    with pytest.raises(KeyboardInterrupt):
        loop.run_forever()
    assert not loop.is_running()


# --- Running -------------------------------------------------------------------


def test_run_until_complete_returns_the_result(loop: EventLoop) -> None:
    future = loop.create_future()
    loop.call_soon(future.set_result, "done")
    assert loop.run_until_complete(future) == "done"
    assert not loop.is_running()


def test_run_until_complete_raises_the_exception(loop: EventLoop) -> None:
    future = loop.create_future()
    loop.call_soon(future.set_exception, ValueError("failed"))
    with pytest.raises(ValueError, match="failed"):
        loop.run_until_complete(future)


def test_run_until_complete_stops_when_the_future_is_done(loop: EventLoop) -> None:
    calls = []
    future = loop.create_future()
    loop.call_soon(future.set_result, None)
    loop.call_later(FAR, calls.append, "far away")
    loop.run_until_complete(future)  # Would run for a minute if it did not stop.
    assert calls == []
    assert not future._callbacks, "the stopping callback was left on the future"


def test_loop_stopped_before_the_future_is_done(loop: EventLoop) -> None:
    future = loop.create_future()
    loop.call_soon(loop.stop)
    with pytest.raises(RuntimeError, match="stopped before Future completed"):
        loop.run_until_complete(future)


def test_nothing_left_to_wait_for_is_an_error_not_a_hang(loop: EventLoop) -> None:
    with pytest.raises(RuntimeError, match="nothing to wait for"):
        loop.run_until_complete(loop.create_future())
    assert not loop.is_running()


def test_get_running_loop(loop: EventLoop) -> None:
    with pytest.raises(RuntimeError):
        get_running_loop()
    seen = []
    loop.call_soon(lambda: seen.append(get_running_loop()))
    run_briefly(loop)
    assert seen == [loop]
    with pytest.raises(RuntimeError):
        get_running_loop()


def test_running_loop_is_per_thread(loop: EventLoop) -> None:
    seen = []

    def in_other_thread() -> None:
        try:
            get_running_loop()
        except RuntimeError:
            seen.append("no loop there")

    def callback() -> None:
        thread = threading.Thread(target=in_other_thread)
        thread.start()
        thread.join()

    loop.call_soon(callback)
    run_briefly(loop)
    assert seen == ["no loop there"]


def test_running_twice_or_nested_is_refused(loop: EventLoop) -> None:
    errors = []
    other = EventLoop()

    def nested() -> None:
        for run in (loop.run_forever, other.run_forever):
            try:
                run()
            except RuntimeError as error:
                errors.append(str(error))

    loop.call_soon(nested)
    run_briefly(loop)
    other.close()
    assert "already running" in errors[0]
    assert "another loop is running" in errors[1]


def test_close(loop: EventLoop) -> None:
    loop.call_soon(print)
    loop.close()
    assert loop.is_closed()
    loop.close()  # A second close does nothing.
    with pytest.raises(RuntimeError, match="closed"):
        loop.call_soon(print)
    with pytest.raises(RuntimeError, match="closed"):
        loop.call_later(1, print)
    with pytest.raises(RuntimeError):
        loop.run_forever()


def test_close_while_running_is_refused(loop: EventLoop) -> None:
    errors = []

    def close() -> None:
        try:
            loop.close()
        except RuntimeError as error:
            errors.append(error)

    loop.call_soon(close)
    run_briefly(loop)
    assert len(errors) == 1 and not loop.is_closed()


def test_run_runs_main_and_closes_its_loop() -> None:
    loops = []

    def main():
        loops.append(get_running_loop())
        yield from sleep(0)
        return "result"

    assert event_loop.run(main()) == "result"
    assert loops[0].is_closed()


def test_run_cancels_what_main_left_running() -> None:
    cleaned = []
    loops = []

    def forgotten():
        try:
            yield from sleep(FAR)
        finally:
            cleaned.append(True)

    def main():
        loops.append(get_running_loop())
        create_task(forgotten())
        yield from sleep(0)

    event_loop.run(main())
    assert cleaned == [True]
    assert loops[0].is_closed()
    assert all_tasks(loops[0]) == set()


def test_run_cleans_up_after_ctrl_c(pair) -> None:
    first, _ = pair
    cleaned, loops = [], []

    def reader():
        try:
            yield from get_running_loop().sock_recv(first, 100)
        finally:
            cleaned.append("reader")

    def main():
        loops.append(get_running_loop())
        create_task(reader())
        yield from sleep(0)
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        event_loop.run(main())
    assert cleaned == ["reader"]
    assert loops[0].is_closed()


@pytest.mark.usefixtures("sigint")
def test_ctrl_c_cancels_main_where_it_waits_not_where_the_loop_is() -> None:
    # Python's handler raised KeyboardInterrupt in whatever callback ran:
    # between taking a callback from the ready queue and calling it, that
    # lost the callback, and its task was never woken, nor cancelled.
    seen = []

    def ctrl_c_in_a_callback() -> None:
        signal.raise_signal(signal.SIGINT)  # As if the user pressed Ctrl+C now.
        seen.append("the callback ran to its end")

    def main():
        get_running_loop().call_soon(ctrl_c_in_a_callback)
        try:
            yield from sleep(FAR)
        except CancelledError:
            seen.append("main cancelled where it waits")
            raise

    with pytest.raises(KeyboardInterrupt):
        event_loop.run(main())
    assert seen == ["the callback ran to its end", "main cancelled where it waits"]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


@pytest.mark.usefixtures("sigint")
def test_ctrl_c_wakes_a_loop_that_waits_in_select() -> None:
    # A signal arriving in select() must not leave it waiting: the handler
    # writes to a socket the loop watches.  From another thread, as a
    # terminal would send it, once the loop waits for a socket.
    main_thread = threading.get_ident()
    first, second = socket.socketpair()
    first.setblocking(False)

    def main():
        loop = get_running_loop()
        kill = threading.Thread(target=signal.pthread_kill, args=(main_thread, signal.SIGINT))
        loop.call_soon(kill.start)
        yield from loop.sock_recv(first, 1)  # Nothing ever comes.

    with first, second, pytest.raises(KeyboardInterrupt):
        event_loop.run(main())


def test_an_interrupt_passed_on_by_a_task_group_is_not_reported_again(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # The task group raised its child's KeyboardInterrupt again in main
    # while run() cancelled what was left: that stopped the cleanup, and
    # main's exception was logged as never retrieved.
    cleaned = []

    async def sibling() -> None:
        try:
            await sleep(FAR)
        finally:
            cleaned.append("sibling")

    async def child() -> None:
        await sleep(0)
        raise KeyboardInterrupt

    async def main() -> None:
        async with TaskGroup() as group:
            group.create_task(sibling())
            group.create_task(child())
            await sleep(FAR)

    with pytest.raises(KeyboardInterrupt):
        event_loop.run(main())
    gc.collect()
    assert cleaned == ["sibling"]
    errors = [record.getMessage() for record in caplog.records if record.levelno >= logging.ERROR]
    assert errors == []


def test_run_inside_a_running_loop_is_refused(loop: EventLoop) -> None:
    errors = []

    def inner():
        yield from sleep(0)

    def callback() -> None:
        coro = inner()
        try:
            event_loop.run(coro)
        except RuntimeError as error:
            errors.append(error)
        coro.close()

    loop.call_soon(callback)
    run_briefly(loop)
    assert len(errors) == 1


# --- Readers and writers ---------------------------------------------------------


def test_reader_is_called_when_data_arrives(loop: EventLoop, pair) -> None:
    first, second = pair
    received = []

    def on_readable() -> None:
        received.append(first.recv(100))
        loop.remove_reader(first)
        loop.stop()

    loop.add_reader(first, on_readable)
    second.send(b"ping")
    loop.run_forever()
    assert received == [b"ping"]


def test_remove_reader_and_writer(loop: EventLoop, pair) -> None:
    first, _ = pair
    assert not loop.remove_reader(first)
    loop.add_reader(first, print)
    loop.add_writer(first, print)
    assert loop.remove_reader(first)
    assert not loop.remove_reader(first)
    assert loop._selector.get_key(first).events == selectors.EVENT_WRITE
    assert loop.remove_writer(first)
    assert not loop._selector.get_map()


def test_adding_a_reader_again_replaces_it(loop: EventLoop, pair) -> None:
    first, second = pair
    calls = []
    old = loop.add_reader(first, calls.append, "old")
    loop.add_reader(first, calls.append, "new")
    assert old.cancelled()
    second.send(b"x")
    loop.call_later(FAR, print)  # Lets the loop wait on the selector.
    while not calls:
        run_briefly(loop)
    assert set(calls) == {"new"}
    loop.remove_reader(first)


def test_writer_is_called_when_there_is_room(loop: EventLoop, pair) -> None:
    first, _ = pair
    calls = []

    def on_writable() -> None:
        calls.append("writable")
        loop.remove_writer(first)
        loop.stop()

    loop.add_writer(first, on_writable)
    loop.run_forever()
    assert calls == ["writable"]


def test_readers_need_an_open_loop(loop: EventLoop, pair) -> None:
    first, _ = pair
    loop.close()
    with pytest.raises(RuntimeError):
        loop.add_reader(first, print)
    assert not loop.remove_reader(first)


# --- Socket helpers ------------------------------------------------------------------


def test_sock_recv_waits_for_data(loop: EventLoop, pair) -> None:
    first, second = pair
    loop.call_later(0.01, second.send, b"late data")
    assert loop.run_until_complete(loop.sock_recv(first, 100)) == b"late data"
    assert not loop._selector.get_map(), "sock_recv left its reader registered"


def test_sock_recv_returns_at_once_when_data_is_there(loop: EventLoop, pair) -> None:
    first, second = pair
    second.send(b"ready")
    receiving = loop.sock_recv(first, 100)
    with pytest.raises(StopIteration) as stop:
        receiving.send(None)  # No yield at all: nothing to wait for.
    assert stop.value.value == b"ready"


def test_sock_recv_returns_empty_bytes_at_end_of_stream(loop: EventLoop, pair) -> None:
    first, second = pair
    loop.call_soon(second.close)
    assert loop.run_until_complete(loop.sock_recv(first, 100)) == b""


def test_read_all_over_sock_recv(loop: EventLoop, pair) -> None:
    first, second = pair
    pieces = [b"one ", b"two ", b"three"]
    now = loop.time()
    for n, piece in enumerate(pieces):
        loop.call_at(now + 0.005 * n, second.send, piece)
    loop.call_at(now + 0.005 * len(pieces), second.close)

    def read_all(sock: socket.socket):  # The chapter's read_all.
        response = []
        chunk = yield from loop.sock_recv(sock, 4096)
        while chunk:
            response.append(chunk)
            chunk = yield from loop.sock_recv(sock, 4096)
        return b"".join(response)

    assert loop.run_until_complete(read_all(first)) == b"one two three"


def test_sock_sendall_sends_more_than_the_buffer_holds(loop: EventLoop, pair) -> None:
    first, second = pair
    data = bytes(range(256)) * 40_000  # About 10 MB: the send must wait.

    def receive():
        received = bytearray()
        while len(received) < len(data):
            received += yield from loop.sock_recv(second, 65536)
        return bytes(received)

    def main():
        receiver = create_task(receive())
        yield from loop.sock_sendall(first, data)
        return (yield from receiver)

    assert loop.run_until_complete(main()) == data
    assert not loop._selector.get_map()


def test_cancelling_sock_recv_removes_the_reader(loop: EventLoop, pair) -> None:
    first, _ = pair
    task = loop.create_task(loop.sock_recv(first, 100))
    run_briefly(loop)
    assert loop._selector.get_map()
    task.cancel()
    with pytest.raises(CancelledError):
        loop.run_until_complete(task)
    assert not loop._selector.get_map()


def test_a_wait_that_ends_leaves_a_newer_handler_of_its_descriptor(loop: EventLoop, pair) -> None:
    # The wait's cleanup removed whatever handler the descriptor had: here
    # the newer reader, which then never ran (and the loop had nothing left
    # to wait for).
    first, second = pair
    waiter = loop.create_task(loop.sock_recv(first, 100))
    run_briefly(loop)  # The waiter watches the socket now.
    called = loop.create_future()

    def newer_reader() -> None:
        if not called.done():
            called.set_result(True)

    loop.add_reader(first.fileno(), newer_reader)
    waiter.cancel()
    with pytest.raises(CancelledError):
        loop.run_until_complete(waiter)
    second.send(b"x")
    assert loop.run_until_complete(called) is True
    loop.remove_reader(first.fileno())


class InterruptedConnectSocket(socket.socket):
    """A socket whose connect() is interrupted by a signal (EINTR) as it starts."""

    def connect(self, address: Any) -> None:
        with contextlib.suppress(BlockingIOError):
            super().connect(address)  # The kernel starts connecting, or is done.
        raise InterruptedError(errno.EINTR, "Interrupted system call")


def test_sock_connect_waits_on_after_an_interrupted_call(loop: EventLoop) -> None:
    # InterruptedError was raised as a failure, though the kernel goes on
    # connecting, as after EINPROGRESS.
    with (
        socket.create_server(("127.0.0.1", 0)) as listener,
        InterruptedConnectSocket() as client,
    ):
        client.setblocking(False)
        loop.run_until_complete(loop.sock_connect(client, listener.getsockname()))
        conn, _ = listener.accept()
        with conn:
            assert conn.getpeername() == client.getsockname()


def test_sock_connect_and_talk(loop: EventLoop) -> None:
    with socket.create_server(("127.0.0.1", 0)) as listener, socket.socket() as client:
        listener.setblocking(False)
        client.setblocking(False)

        def accept():
            while True:
                try:
                    return listener.accept()[0]
                except BlockingIOError:
                    yield from loop._wait_ready(listener, selectors.EVENT_READ)

        def main():
            server_side = create_task(accept())
            yield from loop.sock_connect(client, listener.getsockname())
            conn = yield from server_side
            with conn:
                conn.setblocking(False)
                yield from loop.sock_sendall(client, b"hello")
                return (yield from loop.sock_recv(conn, 100))

        assert loop.run_until_complete(main()) == b"hello"


def test_sock_connect_refused(loop: EventLoop) -> None:
    with socket.socket() as bound, socket.socket() as client:
        bound.bind(("127.0.0.1", 0))  # Bound but not listening: refuses.
        client.setblocking(False)
        with pytest.raises(ConnectionRefusedError):
            loop.run_until_complete(loop.sock_connect(client, bound.getsockname()))
    assert not loop._selector.get_map()

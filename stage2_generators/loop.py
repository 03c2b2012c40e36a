"""The event loop: a queue of ready callbacks, a heap of timers, a selector.

Stage 1's loop had the same three parts and ran callbacks.  This one also
runs coroutines: it creates futures and tasks (``create_future``,
``create_task``), runs until a future is done (``run_until_complete``, a
done callback that stops the loop), and logs an exception a callback lets
out instead of dying of it.  On top of the selector it offers coroutines
that wait for a socket without blocking, ``sock_connect``,
``sock_sendall`` and ``sock_recv``, like the chapter's ``read`` and
``read_all``: each registers a future with the selector and yields from
it; ``sock_accept`` does the same for a server's listening socket.  The
names and the behaviour are those of asyncio's event loop (``add_reader``
rather than stage 1's ``register``), so that stage 3 only swaps it for the
real one.

Left out compared with asyncio: ``call_soon_threadsafe`` and everything else
that other threads or signals would need (the one self-pipe is ``run``'s, for
Ctrl+C), transports
and protocols, ``getaddrinfo`` in a thread pool, subprocesses, async
generators' shutdown, and debug mode.  One thing is added: when nothing is
ready, no timer is set and no socket is watched, ``run_forever`` raises
RuntimeError where asyncio would wait forever (nothing could ever wake this
loop up, so waiting would be a hang).

The file reads core first: scheduling, ``_run_once``, running and
stopping, then the socket coroutines.  What only completes asyncio's
names, and the performance plumbing (dropping cancelled timers, a
memory-saving ``recv``), come last under headings that say so.
"""

from __future__ import annotations

import collections
import contextlib
import heapq
import selectors
import signal
import socket
import ssl
import sys
import threading
import time
import types
import weakref
from collections.abc import Callable, Generator, Iterator
from typing import Any

from shared.record.journal import NO_JOURNAL, Journal
from shared.record.trace import NO_TRACE, Trace
from stage2_generators.events import (
    Handle,
    TimerHandle,
    _get_running_loop,
    _set_running_loop,
    default_exception_handler,
    get_running_loop,
)
from stage2_generators.futures import CancelledError, Future
from stage2_generators.tasks import Coroutine, Task, all_tasks, ensure_future, gather

__all__ = ["EventLoop", "get_running_loop", "run"]

MAXIMUM_SELECT_TIMEOUT = 24 * 3600  # Some selectors refuse longer timeouts.
# When more than this many timers wait and more than this fraction of them
# are cancelled, the heap is rebuilt without them (see _drop_cancelled_timers).
MIN_SCHEDULED_TIMER_HANDLES = 100
MIN_CANCELLED_TIMER_HANDLES_FRACTION = 0.5


class EventLoop:
    """Run callbacks, timers and coroutines until told to stop."""

    def __init__(
        self,
        recorder: Trace = NO_TRACE,
        journal: Journal = NO_JOURNAL,
        # --8<-- [start:clock]
        *,
        clock: Callable[[], float] = time.monotonic,
        selector: selectors.BaseSelector | None = None,
    ) -> None:
        # Real by default, or a simulated world's (shared/sim): time jumps on.
        self._clock = clock
        self._selector = selector or selectors.DefaultSelector()
        # --8<-- [end:clock]
        self._recorder = recorder  # Notes each select() and each run of steps.
        self._journal = journal  # Notes each turn and each callback, for a replay.
        self._ready: collections.deque[Handle] = collections.deque()
        self._scheduled: list[TimerHandle] = []  # A heap, earliest first.
        self._timer_cancelled_count = 0  # Cancelled handles still in the heap.
        self._clock_resolution = time.get_clock_info("monotonic").resolution
        self._stopping = False
        self._running = False
        self._closed = False
        self._exception_handler: Callable[[EventLoop, dict[str, Any]], object] | None = None
        # The tasks not done yet, for all_tasks(), held weakly as asyncio holds
        # them: a task that nothing else refers to (waiting on a future that
        # nobody keeps) is freed, and Task.__del__ reports it.
        self._tasks: weakref.WeakSet[Task] = weakref.WeakSet()
        self._current_task: Task | None = None  # The task taking a step, if any.
        self._tasks_made = 0  # For the default task names: Task-1, Task-2...
        self._internal_fds = 0  # Sockets watched for run()'s Ctrl+C: no task waits on them.

    # --8<-- [start:schedule]
    def call_soon(self, callback: Callable[..., object], *args: Any) -> Handle:
        """Call ``callback(*args)`` on the next iteration.  Raises RuntimeError if closed."""
        if self._closed:
            raise RuntimeError("Event loop is closed")
        handle = Handle(callback, args, self)
        self._ready.append(handle)
        return handle

    def call_later(self, delay: float, callback: Callable[..., object], *args: Any) -> TimerHandle:
        """Call ``callback(*args)`` in ``delay`` seconds.  Raises RuntimeError if closed."""
        return self.call_at(self.time() + delay, callback, *args)

    def call_at(self, when: float, callback: Callable[..., object], *args: Any) -> TimerHandle:
        """Call ``callback(*args)`` at loop time ``when``.  Raises RuntimeError if closed."""
        if self._closed:
            raise RuntimeError("Event loop is closed")
        timer = TimerHandle(when, callback, args, self)
        heapq.heappush(self._scheduled, timer)
        timer._scheduled = True
        return timer

    def time(self) -> float:
        """Return the loop's clock: seconds on a monotonic clock, or a simulation's."""
        return self._clock()

    # --8<-- [end:schedule]

    # --8<-- [start:run_once]
    def _run_once(self) -> None:
        """Run one iteration: wait for I/O or a timer, then run what is ready."""
        self._drop_cancelled_timers()
        self._recorder.waiting()
        events = self._selector.select(self._select_timeout())
        self._recorder.woke(len(events))
        for key, mask in events:
            reader, writer = key.data
            if mask & selectors.EVENT_READ and reader is not None:
                self._ready.append(reader)
            if mask & selectors.EVENT_WRITE and writer is not None:
                self._ready.append(writer)
        end_time = self.time() + self._clock_resolution
        while self._scheduled and self._scheduled[0]._when < end_time:
            timer = heapq.heappop(self._scheduled)
            timer._scheduled = False
            if timer._cancelled:
                self._timer_cancelled_count -= 1
            else:
                self._ready.append(timer)
        self._journal.woke(self, events)
        # This is the only place where callbacks are called.  Only those
        # that are ready now run: the ones they schedule wait for the next
        # iteration, so I/O is polled in between and none can starve it.
        for _ in range(len(self._ready)):
            handle = self._ready.popleft()
            if not handle._cancelled:
                handle._run()
                self._journal.ran(self, handle)

    def _select_timeout(self) -> float | None:
        """Return how long select() may wait: until the first timer, or forever.

        Raises RuntimeError when nothing could ever end the wait.
        """
        if self._ready or self._stopping:
            return 0
        if self._scheduled:
            delay = self._scheduled[0]._when - self.time()
            return min(max(delay, 0), MAXIMUM_SELECT_TIMEOUT)
        if len(self._selector.get_map()) <= self._internal_fds:
            raise RuntimeError(
                "the event loop has nothing to wait for: no callback is ready, "
                "no timer is set and no socket is watched (every task is stuck)"
            )
        return None

    # --8<-- [end:run_once]

    # --8<-- [start:run]
    def run_forever(self) -> None:
        """Run iterations until stop() is called.

        Raises RuntimeError if the loop is closed or running, or another
        loop runs in this thread.
        """
        self._check_runnable()
        if _get_running_loop() is not None:
            raise RuntimeError("Cannot run the event loop while another loop is running")
        self._running = True
        _set_running_loop(self)
        try:
            while True:
                self._run_once()
                if self._stopping:
                    break
        finally:
            self._stopping = False
            self._running = False
            _set_running_loop(None)

    def run_until_complete(self, future: Future | Coroutine) -> Any:
        """Run until ``future`` (or the task made from a coroutine) is done.

        Return its result or raise its exception.  Raises RuntimeError if
        the loop is closed or running, or stopped before the future was done.
        """
        self._check_runnable()
        future = ensure_future(future, loop=self)
        future.add_done_callback(_run_until_complete_cb)
        try:
            self.run_forever()
        finally:
            future.remove_done_callback(_run_until_complete_cb)
        if not future.done():
            raise RuntimeError("Event loop stopped before Future completed.")
        return future.result()

    def _check_runnable(self) -> None:
        """Raise RuntimeError if the loop is closed or running already."""
        if self._closed:
            raise RuntimeError("Event loop is closed")
        if self._running:
            raise RuntimeError("This event loop is already running")

    def stop(self) -> None:
        """Stop after the callbacks that are ready now have run."""
        self._stopping = True

    def close(self) -> None:
        """Drop pending callbacks and close the selector.  Raises RuntimeError if running."""
        if self._running:
            raise RuntimeError("Cannot close a running event loop")
        if self._closed:
            return
        self._closed = True
        self._ready.clear()
        self._scheduled.clear()
        self._selector.close()

    # --8<-- [end:run]

    def create_future(self) -> Future:
        """Return a new pending Future attached to this loop."""
        return Future(loop=self)

    def create_task(self, coro: Coroutine, *, name: str | None = None) -> Task:
        """Wrap ``coro`` in a Task that starts on the next iteration.

        Raises RuntimeError if the loop is closed, TypeError if ``coro`` is
        no coroutine.
        """
        if self._closed:
            raise RuntimeError("Event loop is closed")
        return Task(coro, loop=self, name=name)

    # --8<-- [start:readers]
    def add_reader(
        self, fd: int | socket.socket, callback: Callable[..., object], *args: Any
    ) -> Handle:
        """Call ``callback(*args)`` whenever ``fd`` is readable.  Raises RuntimeError if closed."""
        return self._add_handle(fd, selectors.EVENT_READ, Handle(callback, args, self))

    def add_writer(
        self, fd: int | socket.socket, callback: Callable[..., object], *args: Any
    ) -> Handle:
        """Call ``callback(*args)`` whenever ``fd`` is writable.  Raises RuntimeError if closed."""
        return self._add_handle(fd, selectors.EVENT_WRITE, Handle(callback, args, self))

    def remove_reader(self, fd: int | socket.socket) -> bool:
        """Stop watching ``fd`` for reading; return False if it was not watched."""
        return self._remove_handle(fd, selectors.EVENT_READ)

    def remove_writer(self, fd: int | socket.socket) -> bool:
        """Stop watching ``fd`` for writing; return False if it was not watched."""
        return self._remove_handle(fd, selectors.EVENT_WRITE)

    def _add_handle(self, fd: int | socket.socket, event: int, handle: Handle) -> Handle:
        """Register ``handle`` for ``event`` on ``fd``, replacing an earlier one."""
        if self._closed:
            raise RuntimeError("Event loop is closed")
        try:
            key = self._selector.get_key(fd)
        except KeyError:
            handles = (handle, None) if event == selectors.EVENT_READ else (None, handle)
            self._selector.register(fd, event, handles)
            return handle
        reader, writer = key.data
        if event == selectors.EVENT_READ:
            old, handles = reader, (handle, writer)
        else:
            old, handles = writer, (reader, handle)
        self._selector.modify(fd, key.events | event, handles)
        if old is not None:
            old.cancel()
        return handle

    def _remove_handle(
        self, fd: int | socket.socket, event: int, only: Handle | None = None
    ) -> bool:
        """Unregister the handle for ``event`` on ``fd``; False if there was none.

        With ``only``, unregister it only if it is that handle: False if another.
        """
        if self._closed:
            return False
        try:
            key = self._selector.get_key(fd)
        except KeyError:
            return False
        reader, writer = key.data
        if event == selectors.EVENT_READ:
            old, handles = reader, (None, writer)
        else:
            old, handles = writer, (reader, None)
        if old is None or (only is not None and old is not only):
            return False
        if key.events == event:
            self._selector.unregister(fd)
        else:
            self._selector.modify(fd, key.events & ~event, handles)
        old.cancel()
        return True

    # --8<-- [end:readers]

    # --8<-- [start:sock]
    def _wait_ready(self, sock: socket.socket, event: int) -> Future:
        """Return a future done when ``sock`` is ready for ``event``: EVENT_READ or EVENT_WRITE.

        The chapter's read() in general form: register a future with the
        selector, for the caller to ``yield from``.  The watch ends when the
        socket is ready (``_wake`` unregisters it) or when the future is
        cancelled (``_SocketWait.cancel``), so the socket is never left
        registered once the wait is over.  A plain function rather than a
        generator: that saves a generator per waiting fetch (about 290 bytes).
        """
        fd = sock.fileno()
        future = _SocketWait(self, fd, event)
        future._handle = self._add_handle(fd, event, Handle(_wake, (future,), self))
        return future

    @types.coroutine
    def sock_connect(self, sock: socket.socket, address: Any) -> Generator[Any, None, None]:
        """Connect the non-blocking ``sock`` to a resolved ``address``.  Raises OSError."""
        try:
            sock.connect(address)
            return
        except (BlockingIOError, InterruptedError):
            # The kernel goes on connecting (also when a signal interrupted
            # the call): wait for it, outside the except.
            pass
        if _has_peer(sock):
            # Over loopback the handshake is done by the time connect()
            # returns: no need to watch the socket (saves 12% of instructions
            # per URL), but the others still get their turn, as in a wait.
            yield
            return
        yield from self._wait_ready(sock, selectors.EVENT_WRITE)
        error = sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
        if error:
            raise OSError(error, f"Connect call failed {address}")

    @types.coroutine
    def sock_sendall(self, sock: socket.socket, data: bytes) -> Generator[Any, None, None]:
        """Send all of ``data``, waiting whenever the socket's buffer is full.

        Raises OSError.  Works on a non-blocking ``ssl.SSLSocket`` too.
        """
        view = memoryview(data)
        while view:
            try:
                view = view[sock.send(view) :]
                continue
            except (BlockingIOError, ssl.SSLWantWriteError):
                event = selectors.EVENT_WRITE
            except ssl.SSLWantReadError:  # TLS needs to read first.
                event = selectors.EVENT_READ
            yield from self._wait_ready(sock, event)

    # --8<-- [start:sock_recv]
    @types.coroutine
    def sock_recv(
        self,
        sock: socket.socket,
        nbytes: int,
    ) -> Generator[Any, None, bytes]:
        """Return up to ``nbytes`` bytes from ``sock``, b"" once the peer closed it.

        Tries at once and waits only if nothing has arrived yet.  Raises
        OSError.  Works on a non-blocking ``ssl.SSLSocket`` too.
        """
        while True:
            data, event = _recv_now(sock, nbytes)
            if not event:
                return data
            yield from self._wait_ready(sock, event)

    # --8<-- [end:sock_recv]

    # --8<-- [start:sock_accept]
    @types.coroutine
    def sock_accept(self, sock: socket.socket) -> Generator[Any, None, tuple[socket.socket, Any]]:
        """Accept a connection on the listening ``sock``: ``(conn, address)``.

        Tries at once and waits only when no connection is pending.  The
        new socket is non-blocking.  Raises OSError.
        """
        while True:
            try:
                conn, address = sock.accept()
                break
            except BlockingIOError:
                pass  # Nobody is knocking yet: wait (outside the except).
            yield from self._wait_ready(sock, selectors.EVENT_READ)
        conn.setblocking(False)
        return conn, address

    # --8<-- [end:sock_accept]

    # --8<-- [end:sock]

    # --- asyncio compatibility ------------------------------------------
    # What asyncio's loop also offers; not needed to follow how the loop runs.

    def __repr__(self) -> str:
        return f"<{type(self).__name__} running={self._running} closed={self._closed}>"

    def is_running(self) -> bool:
        """Tell whether the loop is running."""
        return self._running

    def is_closed(self) -> bool:
        """Tell whether the loop was closed."""
        return self._closed

    def set_exception_handler(
        self, handler: Callable[[EventLoop, dict[str, Any]], object] | None
    ) -> None:
        """Report errors nobody caught with ``handler(loop, context)``; None: log them.

        Raises TypeError if ``handler`` is not callable.
        """
        if handler is not None and not callable(handler):
            raise TypeError(f"A callable object or None is expected, got {handler!r}")
        self._exception_handler = handler

    def get_exception_handler(self) -> Callable[[EventLoop, dict[str, Any]], object] | None:
        """Return the handler set with set_exception_handler(), or None."""
        return self._exception_handler

    def default_exception_handler(self, context: dict[str, Any]) -> None:
        """Log ``context``: its message, its other entries and the exception's traceback."""
        default_exception_handler(context)

    def call_exception_handler(self, context: dict[str, Any]) -> None:
        """Report an error that nobody caught: to the handler set, or to the log.

        A handler that raises is reported in turn (logged), and the loop goes on.
        """
        if self._exception_handler is None:
            self.default_exception_handler(context)
            return
        try:
            self._exception_handler(self, context)
        except (SystemExit, KeyboardInterrupt):
            raise
        except BaseException as error:
            message = "Unhandled error in exception handler"
            self.default_exception_handler(
                {"message": message, "exception": error, "context": context}
            )

    def _task_name(self, name: object) -> str:
        """Return the name of a new task: ``name``, or the next ``Task-N``."""
        if name is not None:
            return str(name)
        self._tasks_made += 1
        return f"Task-{self._tasks_made}"

    # --- performance plumbing -------------------------------------------
    # Keeps the heap of timers small when many are cancelled (every fetch
    # that finishes in time cancels its timeout); the loop works without it.

    def _timer_handle_cancelled(self, handle: TimerHandle) -> None:
        """Count a cancelled timer that still sits in the heap."""
        self._timer_cancelled_count += 1

    def _drop_cancelled_timers(self) -> None:
        """Remove cancelled timers: from the top of the heap, or all at once.

        Cancelling a timer only marks it, which costs nothing; it leaves the
        heap when it reaches the top.  If cancelled timers pile up (more
        than half of the heap), the heap is rebuilt without them: a full
        pass, but one paid for by the cancellations since the last rebuild.
        """
        count = len(self._scheduled)
        if (
            count > MIN_SCHEDULED_TIMER_HANDLES
            and self._timer_cancelled_count / count > MIN_CANCELLED_TIMER_HANDLES_FRACTION
        ):
            for timer in self._scheduled:
                timer._scheduled = not timer._cancelled
            self._scheduled = [timer for timer in self._scheduled if timer._scheduled]
            heapq.heapify(self._scheduled)
            self._timer_cancelled_count = 0
        while self._scheduled and self._scheduled[0]._cancelled:
            heapq.heappop(self._scheduled)._scheduled = False
            self._timer_cancelled_count -= 1


class _SocketWait(Future):
    """The future of ``_wait_ready``: cancelling it stops watching the socket."""

    __slots__ = ("_fd", "_event", "_handle")

    def __init__(self, loop: EventLoop, fd: int, event: int) -> None:
        super().__init__(loop=loop)
        self._fd = fd
        self._event = event
        self._handle: Handle | None = None  # The selector's callback, _wake.

    def cancel(self, msg: str | None = None) -> bool:
        """Cancel the wait and unregister it from the selector."""
        if not super().cancel(msg=msg):
            return False
        self._loop._remove_handle(self._fd, self._event, only=self._handle)
        return True

    def __iter__(self) -> _Waiting:  # type: ignore[override]
        """Wait as Future.__iter__ does, through a 48-byte iterator.

        Future.__iter__ is a generator: 200 bytes for each waiting fetch,
        and thousands may wait at once (saves 0.15 kB per held fetch).
        """
        return _Waiting(self)

    __await__ = __iter__  # type: ignore[assignment]


class _Waiting:
    """Future.__iter__ written out as an iterator (asyncio's C future has one too)."""

    __slots__ = ("_future", "_yielded")

    def __init__(self, future: Future) -> None:
        self._future = future
        self._yielded = False

    def __iter__(self) -> _Waiting:
        return self

    def __next__(self) -> Future:
        """Yield the future the first time; then return its result (StopIteration)."""
        future = self._future
        if not future.done():
            if self._yielded:
                raise RuntimeError("await wasn't used with future")
            self._yielded = True
            future._blocking = True  # Tell the Task that this is a real wait.
            return future  # Yielded: the Task parks here until it is done.
        raise StopIteration(future.result())

    def send(self, value: None) -> Future:
        """Resume: only None is sent to a waiting coroutine."""
        return self.__next__()


def _wake(future: _SocketWait) -> None:
    """Stop watching the socket and mark ``future`` done: it is ready."""
    future._loop._remove_handle(future._fd, future._event, only=future._handle)
    if not future.done():
        future.set_result(None)


def _run_until_complete_cb(future: Future) -> None:
    """Stop the loop of ``future``: the done callback of run_until_complete."""
    if not future.cancelled() and isinstance(future.exception(), (KeyboardInterrupt, SystemExit)):
        # The error already left run_forever(): this callback is a leftover
        # in the ready queue and must not stop the loop's next run.
        return
    future.get_loop().stop()


# --8<-- [start:run_main]
def run(
    main: Coroutine,
    *,
    recorder: Trace = NO_TRACE,
    journal: Journal = NO_JOURNAL,
    clock: Callable[[], float] = time.monotonic,
    selector: selectors.BaseSelector | None = None,
) -> Any:
    """Run the coroutine ``main`` on a new event loop, then close the loop.

    Whatever ``main`` left running is cancelled and allowed to clean up
    first (close its sockets), as ``asyncio.run`` does, also when ``main``
    raised or Ctrl+C interrupted it.  Ctrl+C cancels ``main`` (see
    ``_ctrl_c_cancels``), and KeyboardInterrupt comes out once it has
    cleaned up.  Raises RuntimeError when called while a loop runs in this
    thread, ValueError if ``main`` is no coroutine (a generator counts as
    one, as in the chapter); else returns or raises what ``main`` does.
    ``recorder`` notes what the loop does (shared/record/trace.py), and
    ``journal`` each turn, for a replay (shared/record/journal.py);
    ``clock`` and ``selector`` go to EventLoop (a simulation's, shared/sim).
    """
    if _get_running_loop() is not None:
        raise RuntimeError("run() cannot be called from a running event loop")
    if not isinstance(main, (types.GeneratorType, types.CoroutineType)):
        raise ValueError(f"a coroutine was expected, got {main!r}")
    loop = EventLoop(recorder, journal, clock=clock, selector=selector)
    try:
        task = loop.create_task(main)
        with _ctrl_c_cancels(task) as presses:
            try:
                return loop.run_until_complete(task)
            except CancelledError:
                if presses and task.uncancel() == 0:  # Cancelled by Ctrl+C alone.
                    raise KeyboardInterrupt from None
                raise
    finally:
        try:
            _cancel_all_tasks(loop, sys.exception())
        finally:
            loop.close()


def _cancel_all_tasks(loop: EventLoop, leaving: BaseException | None = None) -> None:
    """Cancel every task of ``loop`` that is not done and run until they are.

    ``leaving`` is the error on its way out of run(), if any.  A task that
    raises that same error again (a TaskGroup passes on its child's
    KeyboardInterrupt) reports nothing new, and the others still finish.
    """
    tasks = all_tasks(loop)
    if not tasks:
        return
    for task in tasks:
        task.cancel()
    everything = gather(*tasks, return_exceptions=True)
    while not everything.done():
        try:
            loop.run_until_complete(everything)
        except (KeyboardInterrupt, SystemExit) as error:
            if error is not leaving:
                raise
    for task in tasks:
        failure = None if task.cancelled() else task.exception()
        if failure is not None and failure is not leaving:
            message = "unhandled exception during run() shutdown"
            context = {"message": message, "exception": failure, "task": task}
            loop.call_exception_handler(context)


# --8<-- [end:run_main]


# --- Ctrl+C -----------------------------------------------------------------


@contextlib.contextmanager
def _ctrl_c_cancels(task: Task) -> Iterator[list[int]]:
    """Make Ctrl+C cancel ``task`` within the block; yield the list of presses.

    Python's own handler raises KeyboardInterrupt at whatever line runs
    when the signal comes.  In the loop that may be between taking a
    callback from the ready queue and calling it: the task it would have
    woken then never runs again, not even to be cancelled, and run() waits
    for it for good.  So, as asyncio.run does, the first Ctrl+C only
    schedules ``task.cancel`` and sends a byte on a socket pair that the
    loop watches, so that select() returns at once (the "self-pipe"); a
    second one raises KeyboardInterrupt where it lands.  Nothing changes
    outside the main thread, or when SIGINT has another handler than
    Python's (ignored, say, as in a background job).
    """
    presses: list[int] = []
    main_thread = threading.current_thread() is threading.main_thread()
    if not main_thread or signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        yield presses
        return
    loop = task.get_loop()
    wake_here, wake_there = socket.socketpair()
    wake_there.setblocking(False)
    loop.add_reader(wake_here, wake_here.recv, 512)  # Only the waking counts.
    loop._internal_fds += 1

    def on_sigint(signum: int, frame: object) -> None:
        presses.append(signum)
        if len(presses) > 1 or task.done():
            raise KeyboardInterrupt
        loop.call_soon(task.cancel)
        with contextlib.suppress(OSError):  # Full: select() returns anyway.
            wake_there.send(b"\0")

    signal.signal(signal.SIGINT, on_sigint)
    try:
        yield presses
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)
        loop.remove_reader(wake_here)
        loop._internal_fds -= 1
        wake_here.close()
        wake_there.close()


# --- performance plumbing (memory) ----------------------------------------


# --8<-- [start:recv_now]
def _recv_now(sock: socket.socket, nbytes: int) -> tuple[bytes, int]:
    """Return ``(data, 0)`` from ``sock.recv``, or ``(b"", event)`` to wait for.

    Raises OSError.  The "would block" error is caught here rather than in
    sock_recv: an error caught in a generator leaves a frame object attached
    to it for as long as the generator lives (about 200 bytes for each of
    thousands of waiting fetches), and the wait then starts outside any
    except clause, so the error cannot become the __context__ of a
    cancellation.
    """
    try:
        return sock.recv(nbytes), 0
    except (BlockingIOError, ssl.SSLWantReadError):
        return b"", selectors.EVENT_READ
    except ssl.SSLWantWriteError:  # TLS needs to send first.
        return b"", selectors.EVENT_WRITE


# --8<-- [end:recv_now]


def _has_peer(sock: socket.socket) -> bool:
    """Tell whether ``sock`` is connected already: it has a peer address.

    Cheaper than a wait for the socket to be writable, which tells the same
    once the handshake is over.  A connection refused or still under way
    has no peer: then the caller waits, and SO_ERROR tells which it was.
    """
    try:
        sock.getpeername()
    except OSError:
        return False
    return True

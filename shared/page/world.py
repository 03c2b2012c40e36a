"""The world a step runs in, and the ``socket``, ``selectors`` and ``time`` it imports there.

A ``PageWorld`` is a ``shared.sim.World`` serving the test site where the
steps look for it (``http://127.0.0.1:8000/``, the default URL of every
step), each answer ``LATENCY`` seconds away, as ``python -m
shared.testsite --latency-ms 50`` serves it.  ``modules()`` returns three
modules to put in ``sys.modules`` in place of the standard library's:

- ``socket``: ``socket.socket()`` is a socket of the world's network.  It
  blocks by default, as a real one does: a blocking call moves the clock
  on to the moment it can return.  Non-blocking, it raises
  BlockingIOError as the world's socket does.
- ``selectors``: ``DefaultSelector()`` waits on the world's sockets, in
  virtual time.
- ``time``: ``time()``, ``monotonic()`` and ``perf_counter()`` read the
  world's clock, ``sleep()`` moves it on, and ``process_time()`` counts
  the processor time the world charges.

Everything else in each module is the standard library's own.  Why charge
processor time at all: a virtual clock moves only when the program waits,
so a busy loop that asks a socket again and again (the ``nonblocking``
step) would never see its answer come.  Each call into a socket costs
``CALL_COST`` of the clock and of ``process_time()``, about what a system
call costs; the rest of the program's work costs nothing.  So that step
asks a fixed number of times, and prints the same on every run.
"""

from __future__ import annotations

import errno
import ipaddress
import os
import selectors as real_selectors
import socket as real_socket
import time as real_time
import types
from collections.abc import Callable
from typing import Any

from shared.sim import Conditions, SimSelector, SimSocket, World
from shared.testsite.site import DEFAULT_PAGES, Site

LATENCY = 0.05  # Seconds per answer, as the chapters serve the test site.
CALL_COST = 1e-6  # Seconds of the clock, and of the processor, per call into a socket.
EPOCH = 1_767_225_600.0  # time.time() at the world's start: 2026-01-01 00:00 UTC.


class PageWorld:
    """A simulated world serving the test site, and the modules a step imports in it."""

    def __init__(self, seed: int = 0, pages: int = DEFAULT_PAGES) -> None:
        self.world = World(seed, Conditions())
        self.site = Site(pages, latency=LATENCY)
        self.url = self.world.serve(self.site)
        self.cpu = 0.0  # Processor seconds charged so far.

    def now(self) -> float:
        """Return the world's clock, in seconds since its start."""
        return self.world.time()

    def charge(self, seconds: float = CALL_COST) -> None:
        """Spend ``seconds`` of processor time: the clock moves on, what is due arrives."""
        self.cpu += seconds
        network = self.world.network
        network.run_until(network.clock.now + seconds)

    def wait(self, ready: Callable[[], bool], timeout: float | None, what: str) -> None:
        """Move the clock on until ``ready()``, as a blocking call sleeps.

        Raises TimeoutError after ``timeout`` seconds (None: no limit), and
        RuntimeError when nothing on its way could ever make it ready.
        """
        network = self.world.network
        deadline = None if timeout is None else network.clock.now + timeout
        while not ready():
            due = network.next_time()
            if deadline is not None and (due is None or due > deadline):
                network.run_until(deadline)
                raise TimeoutError("timed out")
            if due is None:
                raise RuntimeError(
                    f"the simulation would wait forever: {what}, and nothing is on its way"
                )
            network.run_until(due)

    def sleep(self, seconds: float) -> None:
        """Move the clock on by ``seconds``, delivering what falls due meanwhile."""
        if seconds < 0:
            raise ValueError("sleep length must be non-negative")
        network = self.world.network
        network.run_until(network.clock.now + seconds)

    def modules(self) -> dict[str, types.ModuleType]:
        """Return the ``socket``, ``selectors`` and ``time`` modules of this world."""
        return {
            "socket": socket_module(self),
            "selectors": selectors_module(self),
            "time": time_module(self),
        }


def module_like(real: types.ModuleType, own: dict[str, Any]) -> types.ModuleType:
    """Return a module named as ``real`` holding ``own``, and ``real``'s names for the rest."""
    module = types.ModuleType(real.__name__, real.__doc__)
    module.__dict__.update(own)
    module.__getattr__ = lambda name: getattr(real, name)  # type: ignore[method-assign]
    return module


# --- socket -------------------------------------------------------------------


class PageSocket:
    """``socket.socket`` on the world's network: blocking by default, as a real one is."""

    def __init__(
        self,
        world: PageWorld,
        family: int = real_socket.AF_INET,
        type: int = real_socket.SOCK_STREAM,
        proto: int = 0,
    ) -> None:
        self._world = world
        self._sim: SimSocket = world.world.socket(family, type, proto)
        self._timeout: float | None = None  # None: blocking; 0: non-blocking.

    family = property(lambda self: self._sim.family)
    type = property(lambda self: self._sim.type)
    proto = property(lambda self: self._sim.proto)

    def __repr__(self) -> str:
        return f"<socket.socket fd={self.fileno()} of the simulated network>"

    def __enter__(self) -> PageSocket:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def setblocking(self, flag: bool) -> None:
        """Make calls wait (True) or raise BlockingIOError when they cannot finish (False)."""
        self._timeout = None if flag else 0.0

    def settimeout(self, timeout: float | None) -> None:
        """Make calls wait at most ``timeout`` seconds (None: forever, 0: not at all)."""
        self._timeout = timeout

    def gettimeout(self) -> float | None:
        """Return the timeout: None when blocking, 0.0 when non-blocking."""
        return self._timeout

    def getblocking(self) -> bool:
        """Tell whether calls wait."""
        return self._timeout != 0

    def fileno(self) -> int:
        """Return the socket's descriptor on the simulated network (-1 once closed)."""
        return self._sim.fileno()

    def connect(self, address: tuple[Any, ...]) -> None:
        """Connect to ``address``; raises BlockingIOError at once when non-blocking."""
        self._world.charge()
        try:
            self._sim.connect(address)
        except BlockingIOError:
            if self._timeout == 0:
                raise
        self._block(self._sim.writable, "connecting")
        code = self._sim.getsockopt(real_socket.SOL_SOCKET, real_socket.SO_ERROR)
        if code:
            raise OSError(code, os.strerror(code))

    def connect_ex(self, address: tuple[Any, ...]) -> int:
        """Connect as ``connect`` does; return the error number instead of raising."""
        try:
            self.connect(address)
        except OSError as error:
            return error.errno or errno.EIO
        return 0

    def send(self, data: bytes) -> int:
        """Send ``data``; all of it goes at once on this network."""
        self._world.charge()
        if self._timeout != 0 and self._sim.connecting:
            self._block(self._sim.writable, "connecting")
        return self._sim.send(data)

    def sendall(self, data: bytes) -> None:
        """Send all of ``data``."""
        self.send(data)

    def recv(self, size: int, flags: int = 0) -> bytes:
        """Return up to ``size`` bytes, b"" at the end; waits when blocking."""
        self._world.charge()
        if self._timeout != 0:
            self._block(self._sim.readable, "reading")
        return self._sim.recv(size, flags)

    def recv_into(self, buffer: Any, size: int = 0, flags: int = 0) -> int:
        """Read into ``buffer`` as recv() reads; return how many bytes."""
        data = self.recv(size or len(buffer), flags)
        buffer[: len(data)] = data
        return len(data)

    def getsockopt(self, level: int, option: int, *args: Any) -> int:
        """Return an option: SO_ERROR says why a connection failed."""
        self._world.charge()
        return self._sim.getsockopt(level, option, *args)

    def setsockopt(self, *args: Any) -> None:
        """Accept and ignore an option."""

    def getpeername(self) -> tuple[Any, ...]:
        """Return the address connected to; raises OSError when not connected."""
        return self._sim.getpeername()

    def getsockname(self) -> tuple[str, int]:
        """Return this end's address."""
        return self._sim.getsockname()

    def shutdown(self, how: int) -> None:
        """Accept a shutdown."""

    def close(self) -> None:
        """Close the socket; closing twice is harmless."""
        self._sim.close()

    def _block(self, ready: Callable[[], bool], what: str) -> None:
        """Wait, as a blocking call does, until ``ready()``; raise TimeoutError at the timeout."""
        if self._timeout != 0:
            self._world.wait(ready, self._timeout, f"a blocking socket is {what}")


def getaddrinfo(
    host: bytes | str | None, port: bytes | str | int | None, family: int = 0,
    type: int = 0, proto: int = 0, flags: int = 0,
) -> list[tuple[Any, ...]]:  # fmt: skip
    """Resolve ``host`` in the world: an address is itself, localhost is 127.0.0.1.

    Raises socket.gaierror for any other name: the simulated network has no DNS.
    """
    name = host.decode() if isinstance(host, bytes) else host or "127.0.0.1"
    name = "127.0.0.1" if name == "localhost" else name
    try:
        ip = ipaddress.ip_address(name)
    except ValueError:
        message = f"{name}: no such host in the simulation"
        raise real_socket.gaierror(real_socket.EAI_NONAME, message) from None
    found = real_socket.AF_INET6 if ip.version == 6 else real_socket.AF_INET
    number = int(port) if port not in (None, b"", "") else 0
    kind = type or real_socket.SOCK_STREAM
    return [(found, kind, proto or real_socket.IPPROTO_TCP, "", (name, number))]


def socket_module(world: PageWorld) -> types.ModuleType:
    """Return the ``socket`` module of ``world``."""

    class socket(PageSocket):
        def __init__(
            self, family: int = real_socket.AF_INET, type: int = real_socket.SOCK_STREAM,
            proto: int = 0, fileno: int | None = None,
        ) -> None:  # fmt: skip
            if fileno is not None:
                raise OSError(errno.EBADF, "no file descriptors in the simulated world")
            super().__init__(world, family, type, proto)

    def create_connection(address: tuple[str, int], timeout: float | None = None,
                          *args: Any) -> socket:  # fmt: skip
        sock = socket()
        sock.settimeout(timeout)
        sock.connect(address)
        return sock

    return module_like(
        real_socket,
        {"socket": socket, "SocketType": socket, "getaddrinfo": getaddrinfo,
         "create_connection": create_connection},
    )  # fmt: skip


# --- selectors and time ---------------------------------------------------------


def selectors_module(world: PageWorld) -> types.ModuleType:
    """Return the ``selectors`` module of ``world``: DefaultSelector waits on its sockets."""

    def DefaultSelector() -> SimSelector:
        return world.world.selector()

    return module_like(real_selectors, {"DefaultSelector": DefaultSelector})


def time_module(world: PageWorld) -> types.ModuleType:
    """Return the ``time`` module of ``world``: its clock, its processor time, its sleep."""

    def seconds() -> float:
        return world.now()

    def since_epoch() -> float:
        return EPOCH + world.now()

    def processor() -> float:
        return world.cpu

    def nanoseconds(read: Callable[[], float]) -> Callable[[], int]:
        return lambda: round(read() * 1e9)

    return module_like(
        real_time,
        {
            "time": since_epoch, "time_ns": nanoseconds(since_epoch),
            "monotonic": seconds, "monotonic_ns": nanoseconds(seconds),
            "perf_counter": seconds, "perf_counter_ns": nanoseconds(seconds),
            "process_time": processor, "process_time_ns": nanoseconds(processor),
            "thread_time": processor, "thread_time_ns": nanoseconds(processor),
            "sleep": world.sleep,
        },
    )  # fmt: skip

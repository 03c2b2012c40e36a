"""Stage 3 in the simulated world: asyncio's own loop on the world's clock and network.

asyncio's ``SelectorEventLoop`` takes its selector as an argument, as
stages 1 and 2 now do, and reads its clock through one method,
``time()``.  So the simulated loop is asyncio's loop with the world's
``SimSelector`` (which moves the virtual clock whenever nothing is ready)
and ``time()`` returning the world's clock; the seed orders what the
selector reports ready in one turn, as it does for stages 1 and 2.  aiohttp's
connections need no transport of their own: ``TCPConnector`` takes a
``socket_factory``, and asyncio's socket transport runs unchanged over a
``SimSocket``, which answers the calls it makes (``send``, ``recv``,
``getsockopt`` and the rest).

Why no library: ``looptime`` fast-forwards the clock of an asyncio loop,
but it is made for tests (a pytest plugin and a patched loop) and brings no
network: sockets would still wait on the real one, so a 200 ms page would
still take 200 ms.  ``simloop`` seeds asyncio's schedule over a network of
its own, but needs Python 3.12 or newer, and this project runs on 3.11
too; neither serves the test site's ``Site`` or shares stages 1 and 2's
network, so the three stages could not be compared run for run.

Two things asyncio would hand to threads stay in the loop's own thread
here.  A thread's result wakes the loop through a real pipe, which the
world's selector does not watch, so the simulation could never see it
come back; and a thread's timing is the real machine's, not the seed's.
So ``getaddrinfo`` answers from the world (an address is itself, a name
is unknown: the simulated network has no DNS), and ``run_in_executor``
runs its function at once and returns a finished future.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from collections.abc import Callable
from typing import Any


class SimulatedEventLoop(asyncio.SelectorEventLoop):
    """asyncio's selector loop in a simulated ``World``: its clock, network and seed."""

    def __init__(self, world: Any) -> None:
        super().__init__(selector=world.selector())
        self._world = world

    def time(self) -> float:
        """Return the world's virtual clock."""
        return float(self._world.time())

    async def getaddrinfo(
        self,
        host: bytes | str | None,
        port: bytes | str | int | None,
        *,
        family: int = 0,
        type: int = 0,
        proto: int = 0,
        flags: int = 0,
    ) -> list[tuple[Any, ...]]:
        """Resolve ``host`` in the world: an IP address is itself; raise gaierror for a name."""
        name = host.decode() if isinstance(host, bytes) else host or "127.0.0.1"
        name = "127.0.0.1" if name == "localhost" else name
        try:
            address = ipaddress.ip_address(name)
        except ValueError:
            raise socket.gaierror(
                socket.EAI_NONAME, f"{name}: no such host in the simulation"
            ) from None
        found = socket.AF_INET6 if address.version == 6 else socket.AF_INET
        if family not in (0, found):
            raise socket.gaierror(socket.EAI_FAMILY, f"{name} is not of the family asked for")
        number = int(port) if port not in (None, b"", "") else 0
        kind, protocol = type or socket.SOCK_STREAM, proto or socket.IPPROTO_TCP
        return [(found, kind, protocol, "", (name, number))]

    def run_in_executor(  # type: ignore[override]
        self, executor: Any, func: Callable[..., Any], *args: Any
    ) -> asyncio.Future[Any]:
        """Run ``func(*args)`` now, in the loop's thread; return a finished future."""
        future = self.create_future()
        try:
            future.set_result(func(*args))
        except BaseException as error:  # Handed to whoever awaits it, as a thread's would be.
            future.set_exception(error)
        return future

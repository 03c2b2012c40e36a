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
"""

from __future__ import annotations

import asyncio
from typing import Any


class SimulatedEventLoop(asyncio.SelectorEventLoop):
    """asyncio's selector loop in a simulated ``World``: its clock, network and seed."""

    def __init__(self, world: Any) -> None:
        super().__init__(selector=world.selector())
        self._world = world

    def time(self) -> float:
        """Return the world's virtual clock."""
        return float(self._world.time())

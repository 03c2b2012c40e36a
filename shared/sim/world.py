"""The simulated world a crawl runs in: a virtual clock, a network, a seed.

A stage's loop takes its clock and its selector as arguments (real by
default); ``World.loop_options`` gives the simulated ones.  The seed draws
from two separate streams of random numbers: the network's (each
request's latency, each connection's fate) and the schedule's (the order
of the sockets that turn ready in one turn of the loop and of arrivals
due at the same moment, and how late the loop hears of an arrival).
Seed 0 keeps them first in, first out, and on time.

Why only those: a loop promises to run callbacks in the order they were
scheduled (asyncio's own code counts on it: a future's done callbacks run
in the order they were added), and never to fire a timer early, so a seed
that shuffled callbacks or timers could make runs no real loop makes.
What no loop promises is which of the sockets ready at once it hears of
first, which of two answers due at the same moment arrives first, or how
soon after an arrival a busy machine lets the loop run.  A late wake-up
lets two answers arrive in one turn, one handled right after the other:
that is how a window that takes no virtual time (a ``sleep(0)``, a hand
over through a queue) meets another task.  It is never late past the
loop's own timeout, so timers keep their times exactly.
"""

from __future__ import annotations

import asyncio
import random
import socket
from typing import Any

from shared.sim.asyncio_loop import SimulatedEventLoop
from shared.sim.network import Conditions, Network, Scripted, SimSelector, SimSocket
from shared.testsite.site import Site

HOST, PORT = "127.0.0.1", 8000  # Where the simulated test site answers.
# The world's wall clock at virtual time 0 (2026-01-01 00:00:00 UTC): a
# Retry-After date is read on it, so the same seed waits the same.
EPOCH = 1_767_225_600.0
# How late a wake-up for the network may come, as a share of the latency.
LATE_SHARE = 0.25


class VirtualClock:
    """Seconds that pass only when the simulation moves them on."""

    def __init__(self, start: float = 0.0) -> None:
        self.now = start

    def time(self) -> float:
        """Return the virtual time, in seconds."""
        return self.now

    def advance_to(self, when: float) -> None:
        """Move the clock to ``when``; never backwards."""
        if when > self.now:
            self.now = when


class World:
    """A seed, a virtual clock and an in-memory network that a crawl runs in.

    ``conditions`` is the network's weather (latency, loss...).  Under a
    seed other than 0 the loop may hear of the network up to ``lateness``
    seconds late (by default a quarter of the latency).  With
    ``keep_heard=False`` the network keeps no note of each request
    (``network.heard`` stays empty), for a crawl too big to note them all.
    Raises ValueError for a negative seed or lateness.
    """

    def __init__(
        self,
        seed: int = 0,
        conditions: Conditions | None = None,
        lateness: float | None = None,
        keep_heard: bool = True,
    ) -> None:
        if not isinstance(seed, int) or seed < 0:
            raise ValueError(f"the seed must be a whole number of at least 0, not {seed!r}")
        conditions = conditions or Conditions()
        if lateness is None:
            lateness = LATE_SHARE * conditions.latency
        if not 0 <= lateness < float("inf"):
            raise ValueError(f"lateness must be at least 0 seconds, not {lateness!r}")
        self.seed = seed
        self.lateness = lateness
        self.clock = VirtualClock()
        self.network = Network(self.clock, random.Random(seed), conditions, keep_heard)
        # The schedule's own stream: the same seed with other weather still
        # orders the same ties the same way.
        self.schedule = random.Random(f"schedule {seed}")
        if seed:
            self.network.tie_break = self.schedule.random

    def time(self) -> float:
        """Return the world's clock: the loop's, and the trace's."""
        return self.clock.now

    def wall_time(self) -> float:
        """Return the world's wall clock, in seconds since 1970, as ``time.time()`` reads."""
        return EPOCH + self.clock.now

    def serve(self, site: Site | Scripted, host: str = HOST, port: int = PORT) -> str:
        """Serve ``site`` (or a server of scripts) at ``host:port``; return its root URL."""
        self.network.serve(site, host, port)
        return f"http://{host}:{port}/"

    def socket(
        self, family: int = socket.AF_INET, type: int = socket.SOCK_STREAM, proto: int = 0
    ) -> SimSocket:
        """Return a new socket on the world's network (socket.socket's arguments)."""
        return self.network.socket(family, type, proto)

    def selector(self) -> SimSelector:
        """Return a selector that waits on the world's sockets, in virtual time."""
        if not self.seed:
            return SimSelector(self.network)
        return SimSelector(self.network, self.schedule.shuffle, self.wake_late)

    def wake_late(self) -> float:
        """Draw how late the loop hears of the network: up to ``lateness`` seconds."""
        return self.lateness * self.schedule.random()

    def aiohttp_socket(self, addr_info: tuple[Any, ...]) -> SimSocket:
        """Return a socket for aiohttp's TCPConnector(socket_factory=...)."""
        family, type, proto = addr_info[:3]
        return self.socket(family, type, proto)

    def asyncio_loop(self) -> asyncio.AbstractEventLoop:
        """Return a new asyncio event loop in this world (for asyncio.Runner's loop_factory)."""
        return SimulatedEventLoop(self)

    def loop_options(self) -> dict[str, Any]:
        """Return the keyword arguments that put a stage 1 or 2 loop in this world."""
        return {"clock": self.time, "selector": self.selector()}

"""A simulated world for the crawlers: virtual time, an in-memory network, seeded schedules.

A crawl on real sockets waits on real time: a page that takes 200 ms
costs 200 ms, a timeout of 10 s costs 10 s, and the order in which ready
callbacks run is whatever the machine happened to do.  In a ``World``
nothing waits: its ``VirtualClock`` jumps to the next timer or the next
arrival whenever nothing is ready, its ``Network`` carries bytes between
in-memory sockets and an in-memory server of the test site (which keeps
connections alive as the real one does, and notes what it hears), and its
seed draws everything that could go one way or another (each request's
latency, each connection's fate, the order of the sockets ready in one
turn of the loop, how late the loop hears of an arrival).  The same seed
gives the same run, byte for byte.

``world.py`` holds the clock and the ``World``; ``network.py`` the
sockets, the selector that waits on them and the servers (the test site,
or scripts of bytes and pauses); ``asyncio_loop.py``
the same world under asyncio, for stage 3.
"""

from shared.sim.network import (
    RESET,
    SILENCE,
    Conditions,
    Heard,
    Network,
    Pause,
    Scripted,
    SimSelector,
    SimSocket,
    Step,
)
from shared.sim.world import VirtualClock, World

__all__ = [
    "RESET",
    "SILENCE",
    "Conditions",
    "Heard",
    "Network",
    "Pause",
    "Scripted",
    "SimSelector",
    "SimSocket",
    "Step",
    "VirtualClock",
    "World",
]

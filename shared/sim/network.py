"""An in-memory network: sockets, the selector that waits on them, a server of the test site.

A ``SimSocket`` behaves as a non-blocking TCP socket does for the stages:
``connect`` raises BlockingIOError and the connection is made later,
``send`` takes every byte at once, ``recv`` raises BlockingIOError until
something has arrived and returns b"" at the end.  Nothing travels by
itself: each delivery is an event on the ``Network``'s heap, due at a
virtual time, and ``SimSelector.select`` runs the events that are due and,
when no socket is ready, moves the clock on to the next event (or to the
end of the loop's wait, if a timer comes first).

A server of the test site keeps a connection open after its answer when
the request lets it, as the real test site (aiohttp's server) does: an
HTTP/1.1 request that does not say ``Connection: close`` (stage 3's,
through aiohttp), or an HTTP/1.0 one that says ``keep-alive``.  Stages 1
and 2 send HTTP/1.0 with ``Connection: close``, and their connection closes
after its answer.  A kept connection left idle for ``KEEP_ALIVE`` seconds
is closed by the server.  Each request draws its latency from the
network's seeded random numbers, and each connection its fate, which falls
on its first request: answered, lost (no answer, ever: the crawler's
timeout ends it), stalled (half of the answer, then nothing) or reset
(ECONNRESET when the answer is due).  The later requests of a kept
connection are answered.

The network notes what each server hears (``Network.heard``): when each
request came in, for what, and when it was answered, with the most
requests each server had in hand at once.  The tests measure the
contract's limits there, where a server sees them, never through the
crawler's own bookkeeping.

A server is a ``Site`` (an answer per request, which the fates above act
on) or a ``Scripted`` server, whose answer is a script of steps played as
written: bytes, a ``Pause``, ``RESET`` or ``SILENCE`` (see ``Step``).
"""

from __future__ import annotations

import dataclasses
import errno
import functools
import heapq
import http
import itertools
import math
import random
import selectors
import socket
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

from shared.testsite.site import Request, Site

FIRST_FD = 1_000_000  # Far above the descriptors of real files and sockets.
CHUNK = 16 * 1024  # Bytes delivered at once when the bandwidth is limited.
# Seconds a kept connection may stay idle: what the real test site's aiohttp
# server (its RequestHandler, 3.14) allows when not told otherwise.
KEEP_ALIVE = 3630.0


@dataclasses.dataclass(frozen=True)
class Conditions:
    """The network's weather: what each connection draws its latency and fate from.

    ``latency`` is the seconds between a request and its answer; each
    connection's is drawn within ``latency * (1 +- jitter)``.
    ``bandwidth`` is in bytes a second (None: no limit).  ``loss``,
    ``stall`` and ``reset`` are the chances of each fate, per connection.
    Raises ValueError for a value out of range.
    """

    latency: float = 0.0
    jitter: float = 0.0
    bandwidth: float | None = None
    loss: float = 0.0
    stall: float = 0.0
    reset: float = 0.0

    def __post_init__(self) -> None:
        if not 0 <= self.latency < math.inf:
            raise ValueError(f"latency must be at least 0 seconds, not {self.latency!r}")
        if self.bandwidth is not None and not 0 < self.bandwidth < math.inf:
            raise ValueError(f"bandwidth must be above 0, not {self.bandwidth!r}")
        for name in ("jitter", "loss", "stall", "reset"):
            if not 0 <= getattr(self, name) <= 1:
                raise ValueError(f"{name} must be between 0 and 1, not {getattr(self, name)!r}")
        if self.loss + self.stall + self.reset > 1:
            raise ValueError("loss, stall and reset add up to more than 1")


@dataclasses.dataclass(frozen=True)
class Pause:
    """A step of a script: send nothing for ``seconds`` of virtual time."""

    seconds: float


RESET = "reset"  # A step of a script: reset the connection (ECONNRESET); the script ends.
SILENCE = "silence"  # A step of a script: send nothing, ever, and never close.

# What a script is made of.  Bytes arrive at once, and the next step comes
# once they have gone through at the server's bandwidth; the end of the
# script closes the connection.  A script may be endless (a generator): it
# is played one step at a time, and stops once the client has closed.
Step = bytes | Pause | str


class Scripted:
    """A server whose answer to a request is a script of steps, one script per path.

    ``scripts`` maps a request target (the path as the client sends it) to
    a function that returns a new script for each connection;
    ``not_found`` plays for any other target.  ``bandwidth`` is in bytes a
    second.  ``connections`` counts the connections per target.
    """

    latency = 0.0

    def __init__(
        self,
        scripts: Mapping[str, Callable[[], Iterable[Step]]],
        not_found: Callable[[], Iterable[Step]],
        bandwidth: float = 10_000_000,
    ) -> None:
        self.scripts = scripts
        self.not_found = not_found
        self.bandwidth = bandwidth
        self.connections: Counter[str] = Counter()

    def script(self, target: str) -> Iterator[Step]:
        """Count a connection asking for ``target``; return the steps of its answer."""
        self.connections[target] += 1
        return iter(self.scripts.get(target, self.not_found)())


@dataclasses.dataclass(slots=True)  # Slots: a crawl of a million pages hears two million.
class Heard:
    """One request as its server heard it: when, at which server, what, and when answered.

    ``order`` and ``answered_order`` place the two moments among everything
    the network did, so that two things at one virtual time still come one
    after the other.  ``server`` is ``host:port``; ``target`` is the request
    target as sent; ``fate`` is what the network did to its answer
    (``answered``, ``lost``, ``stalled`` or ``reset``; a script's is ``scripted``).
    """

    time: float
    order: int
    server: str
    target: str
    fate: str = "answered"
    answered: float | None = None  # None while the server still holds it.
    answered_order: int | None = None


# An event of the network: when, a seeded tie-break, a sequence number, what
# to do, and the socket whose closing drops it (None: it always runs).
Event = tuple[float, float, int, Callable[[], None], "SimSocket | None"]


class Network:
    """Deliver bytes between simulated sockets and servers at virtual times."""

    def __init__(
        self, clock: Any, rng: random.Random, conditions: Conditions, keep_heard: bool = True
    ) -> None:
        self.clock = clock  # A VirtualClock: .now, and advance_to().
        self.rng = rng  # Draws each connection's latency and fate.
        self.conditions = conditions
        self.servers: dict[tuple[str, int], Site | Scripted] = {}
        self.sockets: dict[int, SimSocket] = {}  # Open sockets, by descriptor.
        self.events: list[Event] = []  # A heap, earliest first.
        self.sequence = itertools.count()
        # What the servers heard, in order (empty unless keep_heard), and how
        # busy each was ("host:port").
        self.keep_heard = keep_heard
        self.heard: list[Heard] = []
        self.in_hand: Counter[str] = Counter()  # Requests heard and not answered yet.
        self.most_in_hand: Counter[str] = Counter()
        self.moments = itertools.count()  # Orders what the servers hear and answer.
        self.descriptors = itertools.count(FIRST_FD)
        self.ports = itertools.count(40000)  # Each client socket's own port.
        self.tie_break: Callable[[], float] = lambda: 0.0  # A seeded World draws ties.

    def serve(self, site: Site | Scripted, host: str, port: int) -> None:
        """Answer connections to ``(host, port)`` from ``site``."""
        self.servers[(host, port)] = site

    def at(
        self, when: float, action: Callable[[], None], only_for: SimSocket | None = None
    ) -> None:
        """Run ``action`` once the clock reaches ``when``.

        With ``only_for``, the event is dropped if that socket has closed by
        then: a delivery nobody can read is nothing to wait for.
        """
        entry = (when, self.tie_break(), next(self.sequence), action, only_for)
        heapq.heappush(self.events, entry)

    def next_time(self) -> float | None:
        """Return when the next event is due, or None if none is."""
        while self.events and (owner := self.events[0][4]) is not None and owner.closed:
            heapq.heappop(self.events)
        return self.events[0][0] if self.events else None

    def run_until(self, when: float) -> None:
        """Run every event due by ``when``, moving the clock to each; end at ``when``."""
        while (due := self.next_time()) is not None and due <= when:
            action = heapq.heappop(self.events)[3]
            self.clock.advance_to(due)
            action()
        self.clock.advance_to(when)

    def hear(self, server: str, target: str, fate: str) -> Heard:
        """Note that ``server`` heard a request for ``target`` now, to meet ``fate``."""
        heard = Heard(self.clock.now, next(self.moments), server, target, fate)
        if self.keep_heard:
            self.heard.append(heard)
        self.in_hand[server] += 1
        self.most_in_hand[server] = max(self.most_in_hand[server], self.in_hand[server])
        return heard

    def answered(self, heard: Heard) -> None:
        """Note that the server of ``heard`` answered it (or gave up on it) now."""
        heard.answered, heard.answered_order = self.clock.now, next(self.moments)
        self.in_hand[heard.server] -= 1

    def socket(
        self, family: int = socket.AF_INET, type: int = socket.SOCK_STREAM, proto: int = 0
    ) -> SimSocket:
        """Return a new simulated socket."""
        sock = SimSocket(self, next(self.descriptors), family, type, proto)
        self.sockets[sock.fd] = sock
        return sock

    def connect(self, sock: SimSocket, address: tuple[Any, ...]) -> None:
        """Make ``sock``'s connection to ``address``, or refuse it, when due."""
        host, port = address[0], address[1]
        site = self.servers.get((host, port))
        if site is None:
            self.at(self.clock.now, lambda: sock.connection_failed(errno.ECONNREFUSED))
            return
        connection = Connection(self, site, sock, f"{host}:{port}", self.draw_fate())
        self.at(self.clock.now, lambda: sock.connection_made(address, connection))

    def draw_latency(self) -> float:
        """Draw one request's latency from the seed."""
        weather = self.conditions
        return weather.latency * (1 + weather.jitter * (2 * self.rng.random() - 1))

    def draw_fate(self) -> str:
        """Draw one connection's fate from the seed."""
        weather = self.conditions
        chance = self.rng.random()
        fate = "answered"
        if chance < weather.loss:
            fate = "lost"
        elif chance < weather.loss + weather.stall:
            fate = "stalled"
        elif chance < weather.loss + weather.stall + weather.reset:
            fate = "reset"
        return fate


class Connection:
    """The server's end of one connection: it reads requests and answers them, one at a time.

    After an answer it keeps the connection open if the request let it
    (``keeps_alive``), and closes it once it has been idle for KEEP_ALIVE
    seconds.  A ``Scripted`` server plays one script, whose end closes it.
    """

    def __init__(
        self, network: Network, site: Site | Scripted, client: SimSocket, server: str, fate: str
    ) -> None:
        self.network = network
        self.site = site
        self.client = client
        self.server = server  # "host:port", as the network notes what it hears.
        self.fate = fate  # The first request's; a kept connection answers the later ones.
        self.received = b""  # Bytes of requests not answered yet.
        self.busy = False  # A request is being answered.
        self.over = False  # The server is done with the connection: nothing more is read.
        self.idle_since: float | None = None  # When the last answer was out, while idle.
        self.closing = False  # A timer is set to close the connection once idle too long.

    def take(self, data: bytes) -> None:
        """Take bytes the client sent; answer a request once its head is complete."""
        if not self.over:
            self.received += data
            self.serve_next()

    def serve_next(self) -> None:
        """Start answering the next complete request, unless one is being answered."""
        head, blank, rest = self.received.partition(b"\r\n\r\n")
        if self.busy or self.over or not blank:
            return
        self.received, self.busy, self.idle_since = rest, True, None
        request = parse_request(head)
        fate, self.fate = self.fate, "answered"
        if isinstance(self.site, Scripted):
            fate = "scripted"  # A script is played as written, whatever the weather.
        heard = self.network.hear(self.server, request.target, fate)
        when = self.network.clock.now + self.site.latency + self.network.draw_latency()
        if isinstance(self.site, Scripted):
            self.over = True  # One script per connection.
            steps = self.site.script(request.target)
            self.network.at(when, lambda: self.play_from_start(heard, steps))
            return
        counters = self.site.counters
        counters.requests[request.target] += 1
        counters.in_flight += 1
        counters.max_in_flight = max(counters.max_in_flight, counters.in_flight)
        keep = keeps_alive(head)
        self.network.at(when, lambda: self.answer(request, heard, fate, keep))

    def answer(self, request: Request, heard: Heard, fate: str, keep: bool) -> None:
        """Send the site's answer to ``request``, as its fate allows; keep the connection or not."""
        site = self.site
        assert not isinstance(site, Scripted)  # A script is played, never answered.
        site.counters.in_flight -= 1
        self.network.answered(heard)
        if fate != "answered":
            self.over = True
            if fate == "reset":
                self.client.arrive(error=errno.ECONNRESET)
            elif fate == "stalled":
                data = response_bytes(site, request, keep)
                self.client.arrive(data[: len(data) // 2])  # The rest never comes.
            return  # Lost: nothing ever comes, and the client's timeout ends it.
        self.over = not keep
        done = self.deliver(response_bytes(site, request, keep), end=not keep)
        if keep:
            self.network.at(done, self.idle, only_for=self.client)

    def deliver(self, data: bytes, end: bool) -> float:
        """Send ``data`` at the network's bandwidth; return when its last byte arrives."""
        bandwidth = self.network.conditions.bandwidth
        now: float = self.network.clock.now
        if bandwidth is None:
            self.client.arrive(data, end=end)
            return now
        # Pieces of at most a second's worth: at 1 byte a second, a byte a second.
        step = max(1, min(CHUNK, int(bandwidth)))
        when = now
        for start in range(0, len(data), step):
            piece, last = data[start : start + step], start + step >= len(data)
            when = now + (start + len(piece)) / bandwidth
            deliver = functools.partial(self.client.arrive, piece, last and end)
            self.network.at(when, deliver, only_for=self.client)
        return when

    def idle(self) -> None:
        """Wait for the next request on a kept connection; close it if none comes in time.

        A connection has one closing timer at most, not one for each answer:
        a crawl that reuses its connections for a million requests would
        otherwise hold a million timers, each waiting out KEEP_ALIVE.
        """
        self.busy = False
        self.idle_since = self.network.clock.now
        if not self.closing:
            self.closing = True
            self.network.at(self.idle_since + KEEP_ALIVE, self.close_if_idle, self.client)
        self.serve_next()  # A request that came while the answer was on its way.

    def close_if_idle(self) -> None:
        """Close the connection if it has been idle for KEEP_ALIVE seconds; else look again then."""
        self.closing = False
        if self.busy or self.over or self.idle_since is None:
            return  # Busy: its next idle spell sets the timer again.
        due = self.idle_since + KEEP_ALIVE
        if self.network.clock.now < due:  # Answered again since the timer was set.
            self.closing = True
            self.network.at(due, self.close_if_idle, self.client)
            return
        self.over = True
        self.client.arrive(end=True)

    def play_from_start(self, heard: Heard, steps: Iterator[Step]) -> None:
        """Begin a script: the server has answered, as far as the network's notes go."""
        self.network.answered(heard)
        self.play(steps)

    def play(self, steps: Iterator[Step]) -> None:
        """Play a script's next step, and have the one after come when it is due."""
        client, now = self.client, self.network.clock.now
        if client.closed:
            return  # The client went away: an endless script ends with it.
        step = next(steps, None)
        if step is None:
            client.arrive(end=True)
        elif isinstance(step, bytes):
            client.arrive(step)
            assert isinstance(self.site, Scripted)
            self.network.at(now + len(step) / self.site.bandwidth, lambda: self.play(steps))
        elif isinstance(step, Pause):
            self.network.at(now + step.seconds, lambda: self.play(steps))
        elif step == RESET:
            client.arrive(error=errno.ECONNRESET)
        elif step != SILENCE:
            raise ValueError(f"not a step of a script: {step!r}")


def keeps_alive(head: bytes) -> bool:
    """Tell whether a request's head lets the server keep the connection open after it.

    HTTP/1.1 keeps it unless the request says ``Connection: close``; HTTP/1.0
    closes it unless the request says ``Connection: keep-alive``.
    """
    first, *lines = head.decode("latin-1").split("\r\n")
    tokens = set()
    for line in lines:
        name, _, value = line.partition(":")
        if name.strip().lower() == "connection":
            tokens |= {token.strip().lower() for token in value.split(",")}
    if first.rpartition(" ")[2] == "HTTP/1.1":
        return "close" not in tokens
    return "keep-alive" in tokens


def parse_request(head: bytes) -> Request:
    """Return the site's Request for an HTTP request head (a GET has no body)."""
    lines = head.decode("latin-1").split("\r\n")
    method, target, *_ = lines[0].split(" ") + ["", ""]
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    return Request(method, target, headers.get("host", ""), headers=headers)


def response_bytes(site: Site, request: Request, keep: bool = False) -> bytes:
    """Return the bytes of the site's answer to ``request``; ``keep``: the connection stays."""
    response = site.respond(request)
    body = b"" if request.method == "HEAD" else response.body
    try:
        phrase = http.HTTPStatus(response.status).phrase
    except ValueError:
        phrase = "Unknown"
    lines = [f"HTTP/1.1 {response.status} {phrase}"]
    lines += [f"{name}: {value}" for name, value in response.headers.items()]
    lines += [f"Content-Length: {len(response.body)}"]
    lines.append("Connection: keep-alive" if keep else "Connection: close")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body


class SimSocket:
    """A non-blocking TCP socket on the simulated network (the calls the stages make)."""

    def __init__(self, network: Network, fd: int, family: int, type: int, proto: int) -> None:
        self.network = network
        self.fd = fd
        self.family, self.type, self.proto = family, type, proto
        self.peer: tuple[Any, ...] | None = None  # Set once connected.
        self.connection: Connection | None = None
        self.connecting = False
        self.error = 0  # SO_ERROR: why the connection failed, until read.
        self.inbox = bytearray()  # Arrived, not read yet.
        self.ended = False  # The peer closed: recv() returns b"" once inbox is empty.
        self.reset = False
        self.closed = False
        self.port = next(network.ports)

    def __repr__(self) -> str:
        return f"<SimSocket fd={self.fd} peer={self.peer}>"

    def __enter__(self) -> SimSocket:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # --- What the network calls ---------------------------------------------

    def connection_made(self, address: tuple[Any, ...], connection: Connection) -> None:
        """Note that the connection is made: the socket turns writable."""
        if not self.closed:
            self.connecting, self.peer, self.connection = False, address, connection

    def connection_failed(self, code: int) -> None:
        """Note that the connection failed: writable, with SO_ERROR set."""
        self.connecting, self.error = False, code

    def arrive(self, data: bytes = b"", end: bool = False, error: int = 0) -> None:
        """Take bytes from the peer, its end of the connection, or a reset."""
        self.inbox += data
        self.ended = self.ended or end
        self.reset = self.reset or error == errno.ECONNRESET

    def readable(self) -> bool:
        """Tell whether recv() would not block."""
        return bool(self.inbox) or self.ended or self.reset

    def writable(self) -> bool:
        """Tell whether send() would not block, or a failed connect can be read."""
        return not self.connecting and (self.peer is not None or self.error != 0)

    # --- What the stages call ------------------------------------------------

    def fileno(self) -> int:
        """Return the socket's descriptor, or -1 once closed, as a real socket does."""
        return -1 if self.closed else self.fd

    def setblocking(self, flag: bool) -> None:
        """Accept only non-blocking mode: nothing here can block.  Raises ValueError."""
        if flag:
            raise ValueError("a simulated socket is always non-blocking")

    def gettimeout(self) -> float:
        """Return 0.0: the socket is non-blocking."""
        return 0.0

    def setsockopt(self, *args: Any) -> None:
        """Accept and ignore a socket option (TCP_NODELAY and the like)."""

    def getsockopt(self, level: int, option: int, *args: Any) -> int:
        """Return and clear SO_ERROR; any other option reads 0."""
        if (level, option) == (socket.SOL_SOCKET, socket.SO_ERROR):
            code, self.error = self.error, 0
            return code
        return 0

    def connect(self, address: tuple[Any, ...]) -> None:
        """Start connecting to ``address``: raises BlockingIOError, the connection comes later."""
        self.check_open()
        if self.peer is not None:
            raise OSError(errno.EISCONN, "already connected")
        self.connecting = True
        self.network.connect(self, address)
        raise BlockingIOError(errno.EINPROGRESS, "connecting")

    def getpeername(self) -> tuple[Any, ...]:
        """Return the address connected to.  Raises OSError (ENOTCONN) when not connected."""
        if self.peer is None or self.closed:
            raise OSError(errno.ENOTCONN, "not connected")
        return self.peer

    def getsockname(self) -> tuple[str, int]:
        """Return this end's address."""
        return ("127.0.0.1", self.port)

    def send(self, data: bytes | memoryview) -> int:
        """Send every byte of ``data`` at once.  Raises OSError when not connected or reset."""
        self.check_open()
        if self.reset:
            raise ConnectionResetError(errno.ECONNRESET, "connection reset by peer")
        if self.connection is None:
            raise OSError(errno.ENOTCONN, "not connected")
        self.connection.take(bytes(data))
        return len(data)

    def sendmsg(self, buffers: list[bytes], *args: Any) -> int:
        """Send the ``buffers`` one after another, at once."""
        return self.send(b"".join(buffers))

    def recv(self, size: int, flags: int = 0) -> bytes:
        """Return up to ``size`` bytes; b"" at the end.

        Raises BlockingIOError while nothing has arrived, ConnectionResetError
        after a reset, OSError once closed.
        """
        self.check_open()
        if self.inbox:
            data = bytes(self.inbox[:size])
            del self.inbox[:size]
            return data
        if self.reset:
            raise ConnectionResetError(errno.ECONNRESET, "connection reset by peer")
        if self.ended:
            return b""
        raise BlockingIOError(errno.EAGAIN, "nothing to read yet")

    def recv_into(self, buffer: Any, size: int = 0, flags: int = 0) -> int:
        """Read into ``buffer`` as recv() reads; return how many bytes (asyncio's buffered path)."""
        data = self.recv(size or len(buffer))
        buffer[: len(data)] = data
        return len(data)

    def shutdown(self, how: int) -> None:
        """Accept a shutdown: the server has what it needs once the head is complete."""

    def close(self) -> None:
        """Close the socket; closing twice is harmless."""
        if not self.closed:
            self.closed = True
            self.network.sockets.pop(self.fd, None)

    def check_open(self) -> None:
        """Raise OSError (EBADF) if the socket is closed."""
        if self.closed:
            raise OSError(errno.EBADF, "Bad file descriptor")


class SimSelector(selectors.BaseSelector):
    """A selector that waits on simulated sockets, moving the virtual clock instead of sleeping.

    Anything else registered (a real socket: the self-pipe of a loop's
    Ctrl+C handling) is kept but never ready.  ``shuffle``, if given, puts
    the keys ready together in a seed's order: the order in which a kernel
    reports sockets ready at once is no promise either.  ``late``, if
    given, returns how late a wake-up for the network comes (a loaded
    machine's process is not run the moment a packet arrives): whatever
    else arrives by then is ready in the same turn.  A wake-up is never late
    past the loop's own timeout, so every timer still fires on time.
    """

    def __init__(
        self,
        network: Network,
        shuffle: Callable[[list[Any]], None] | None = None,
        late: Callable[[], float] | None = None,
    ) -> None:
        self.network = network
        self.shuffle = shuffle
        self.late = late
        self.keys: dict[int, selectors.SelectorKey] = {}

    def register(self, fileobj: Any, events: int, data: Any = None) -> selectors.SelectorKey:
        """Watch ``fileobj`` for ``events``.  Raises KeyError if it is watched already."""
        fd = descriptor(fileobj)
        if fd in self.keys:
            raise KeyError(f"{fileobj!r} (FD {fd}) is already registered")
        if not events or events & ~(selectors.EVENT_READ | selectors.EVENT_WRITE):
            raise ValueError(f"Invalid events: {events!r}")
        key = selectors.SelectorKey(fileobj, fd, events, data)
        self.keys[fd] = key
        return key

    def unregister(self, fileobj: Any) -> selectors.SelectorKey:
        """Stop watching ``fileobj``.  Raises KeyError if it is not watched."""
        fd = descriptor(fileobj)
        try:
            return self.keys.pop(fd)
        except KeyError:
            raise KeyError(f"{fileobj!r} is not registered") from None

    def get_map(self) -> Mapping[Any, selectors.SelectorKey]:
        """Return the watched keys, by descriptor or file object."""
        return KeyMap(self.keys)

    def select(self, timeout: float | None = None) -> list[tuple[selectors.SelectorKey, int]]:
        """Return the ready keys, moving the clock to the next event while none is.

        Raises RuntimeError when nothing is ready, nothing is due on the
        network and ``timeout`` is None: a real crawl would wait forever.
        """
        clock = self.network.clock
        deadline = None if timeout is None else clock.now + max(timeout, 0)
        while True:
            self.network.run_until(clock.now)
            ready = self.ready()
            if ready or deadline is not None and clock.now >= deadline:
                return ready
            due = self.network.next_time()
            if due is None and deadline is None:
                raise RuntimeError(
                    "the simulation would wait forever: no socket is ready, nothing is "
                    "on its way over the network and no timer is set"
                )
            if deadline is not None and (due is None or deadline < due):
                # A timer comes first: move to it, and a little past if rounding
                # would otherwise leave the clock short of it.
                self.network.run_until(max(deadline, math.nextafter(clock.now, math.inf)))
                return self.ready()
            assert due is not None
            if self.late is not None:  # Late, but never as late as the timer.
                later = due + self.late()
                due = later if deadline is None or later < deadline else due
            self.network.run_until(due)  # Then look again: it may have made nothing ready.

    def ready(self) -> list[tuple[selectors.SelectorKey, int]]:
        """Return the keys whose sockets are ready now, and for what."""
        found = []
        for fd, key in self.keys.items():
            sock = self.network.sockets.get(fd)
            if sock is None:
                continue  # A real descriptor, or a closed socket: never ready.
            events = 0
            if key.events & selectors.EVENT_READ and sock.readable():
                events |= selectors.EVENT_READ
            if key.events & selectors.EVENT_WRITE and sock.writable():
                events |= selectors.EVENT_WRITE
            if events:
                found.append((key, events))
        if self.shuffle is not None:
            self.shuffle(found)
        return found

    def close(self) -> None:
        """Forget every key."""
        self.keys.clear()


class KeyMap(Mapping[Any, selectors.SelectorKey]):
    """The selector's keys, looked up by descriptor or by file object."""

    def __init__(self, keys: dict[int, selectors.SelectorKey]) -> None:
        self.by_fd = keys

    def __len__(self) -> int:
        return len(self.by_fd)

    def __getitem__(self, fileobj: Any) -> selectors.SelectorKey:
        try:
            return self.by_fd[descriptor(fileobj)]
        except (KeyError, ValueError):
            raise KeyError(f"{fileobj!r} is not registered") from None

    def __iter__(self) -> Any:
        return iter(self.by_fd)


def descriptor(fileobj: Any) -> int:
    """Return the descriptor of ``fileobj`` (an int, or anything with fileno()).

    Raises ValueError for a closed one.
    """
    fd = fileobj if isinstance(fileobj, int) else fileobj.fileno()
    if fd < 0:
        raise ValueError(f"Invalid file descriptor: {fd}")
    return fd

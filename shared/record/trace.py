"""The record of a crawl: who fetched what, and when, as a Trace Event Format file.

A crawl with a trace (``crawl --trace FILE``, or ``crawl(..., trace=FILE)``)
notes, with the same names in every stage:

- one ``fetch`` event per request attempt (robots.txt, each retry and each
  redirect included), on the lane of the worker that made it: a task in
  stages 2 and 3, a thread in the thread crawler, a Fetcher slot in stage 1;
- inside it, its ``phase`` events one after another: ``connect``, ``send``,
  ``wait`` (for the first byte of the answer), ``read``, and ``parse``
  (finding the page's links, once the crawler gets to it);
- for the hand-made loops of stages 1 and 2, on a lane of the loop's own:
  each ``select`` (how long it slept, how many events woke it) and each
  ``run`` of callbacks or task steps between two selects;
- two counters: URLs queued, and fetches in flight.

The file is JSON in the Trace Event Format, which Perfetto's UI and
``chrome://tracing`` open as they are; ``shared.record.timeline`` draws it.

A stage calls the recorder at its natural points, one line each; a crawl
without a trace gets ``NO_TRACE``, whose methods do nothing, so the lesson
code has no ``if`` for it and the cost is a call that returns at once.
A fetch is known by its URL: a crawl fetches each URL once, and its tries
one after another, so no two fetches of one URL are in flight together
(a page at a host's ``/robots.txt`` address, linked from a page, could
be: its phases would then go to the later fetch).
"""

from __future__ import annotations

import array
import heapq
import json
import math
import re
import time
import typing
from collections.abc import Callable
from json.encoder import encode_basestring
from pathlib import Path
from typing import Any

PHASES = ("connect", "send", "wait", "read", "parse")
LOOP_LANE = "event loop"
PID = 1  # One process: the crawl.
# The start of each phase's complete event, up to its time.
PHASE_HEADS = {name: f'{{"name": "{name}", "cat": "phase", "ph": "X", "ts": ' for name in PHASES}


class Fetch:
    """One request attempt: its URL, its lane, when it began and ended, its phases."""

    __slots__ = ("url", "lane", "start", "end", "marks")

    def __init__(self, url: str, lane: str | None, start: float) -> None:
        self.url = url
        self.lane = lane  # None: a Fetcher slot, chosen when the file is written.
        self.start = start
        self.end: float | None = None  # None while in flight.
        # Each phase's name and start, one after another in one flat list; a
        # phase lasts until the next mark, and None marks a pause (the request
        # is over, its page not parsed yet).  Flat, because a crawl makes
        # thousands: fewer objects for the garbage collector to walk.
        self.marks: list[Any] = ["connect", start]

    def phase(self) -> str | None:
        """Return the phase the fetch is in (None between its request and its parse)."""
        return typing.cast(str | None, self.marks[-2])


class Trace:
    """Record a crawl's fetches, loop turns and counters; ``write`` saves them.

    ``queued`` returns how many URLs wait for a worker; it is read at the
    start and end of each fetch, for the counters.  Numbers are kept in
    arrays, which the garbage collector does not walk.

    Times are kept as ``self.clock`` gives them (``time.perf_counter``, or
    a simulated crawl's virtual clock) and turned into
    microseconds since the trace began only when the file is written; the
    counters keep each change in the fetches in flight, added up then too.
    Recording then costs stage 1 29 000 instructions per page instead of
    47 000 (counted with callgrind, the write left out).
    """

    def __init__(self, name: str, queued: Callable[[], int] = lambda: 0) -> None:
        self.name = name  # The process's name in a viewer: the stage.
        self.queued = queued
        self.clock: Callable[[], float] = time.perf_counter  # Or a simulation's clock.
        self.t0 = self.clock()
        self.fetches: list[Fetch] = []
        self.latest: dict[str, Fetch] = {}  # The latest fetch of each URL.
        # Time, URLs queued, change in the fetches in flight (+1 or -1); again...
        # The thread crawler's threads all count: one extend() is one step for
        # them, so no lock (the running total is made when the file is written).
        self.counters = array.array("d")
        # The loop's events: start, end and how many events select() returned
        # (-1 for a run of code between two selects); again and again.
        self.loop_events = array.array("d")
        self.loop_since = -1.0  # When the loop began what it does now.
        self.loop_asleep = False  # True while it is in select().

    def use_clock(self, clock: Callable[[], float]) -> None:
        """Record times from ``clock`` from now on (a simulated crawl's virtual time)."""
        self.clock = clock
        self.t0 = clock()

    def now(self) -> float:
        """Return microseconds since the trace began."""
        return (self.clock() - self.t0) * 1e6

    # --- Fetches: called by the stages ---------------------------------------

    def begin(self, url: str, lane: object = None) -> None:
        """Note that a request for ``url`` starts now, connecting first.

        ``lane`` is the worker making it: a task or a thread (named by its
        ``get_name()`` or ``name``), or None for stage 1's Fetcher slots.
        """
        now = self.clock()
        fetch = Fetch(url, lane if lane is None else lane_name(lane), now)
        self.fetches.append(fetch)
        self.latest[url] = fetch
        self.counters.extend((now, self.queued(), +1))

    def phase(self, url: str, name: str) -> None:
        """Note that the fetch of ``url`` enters phase ``name`` now.

        Entering the phase it is in changes nothing.  A fetch that has
        ended is taken up again: the crawler parses a page after its
        request is over, and the parse belongs to that fetch.
        """
        fetch = self.latest.get(url)
        if fetch is None or fetch.marks[-2] == name:
            return
        now = self.clock()
        if fetch.end is not None:
            fetch.end = None
            self.counters.extend((now, self.queued(), +1))
        fetch.marks += (name, now)

    def end(self, url: str) -> None:
        """Note that the fetch of ``url`` is over (done, failed, or its page parsed)."""
        fetch = self.latest.get(url)
        if fetch is None or fetch.end is not None:
            return
        fetch.end = now = self.clock()
        fetch.marks += (None, now)
        self.counters.extend((now, self.queued(), -1))

    # --- The loop: called by the hand-made loops of stages 1 and 2 -----------

    def waiting(self) -> None:
        """Note that the loop is about to wait in ``select()``; its run of code ends."""
        now = self.clock()
        if self.loop_since >= 0:
            self.loop_events.extend((self.loop_since, now, -1))
        self.loop_since, self.loop_asleep = now, True

    def woke(self, events: int) -> None:
        """Note that ``select()`` returned ``events`` events; the loop runs code now."""
        now = self.clock()
        if self.loop_asleep:
            self.loop_events.extend((self.loop_since, now, events))
        self.loop_since, self.loop_asleep = now, False

    # --- The file ------------------------------------------------------------

    def write(self, path: str | Path) -> None:
        """Write the trace to ``path`` in the Trace Event Format.  Raises OSError."""
        lines = self.event_lines()
        with open(path, "w", encoding="utf-8") as file:
            file.write('{"traceEvents": [\n')
            file.write(",\n".join(lines))
            file.write('\n], "displayTimeUnit": "ms"}\n')

    def events(self) -> list[dict[str, Any]]:
        """Return the trace's events, as ``write`` writes them."""
        return [json.loads(line) for line in self.event_lines()]

    def event_lines(self) -> list[str]:
        """Return the trace's events in JSON: lane names, fetches, phases, loop, counters.

        Written from pieces made once per fetch and per kind of event rather
        than by json.dumps: a crawl has tens of thousands of events, and the
        pieces take the write from 128 000 to 72 000 instructions per page
        in stage 2 (counted with callgrind).  Times are whole microseconds, rounded the
        same way at both ends, so a phase that lies inside its fetch still
        does in the file.
        """
        stop = self.clock()
        self.waiting()  # Ends the loop's last run of code, if it has a loop.
        lanes = assign_lanes(self.fetches)
        loop = [LOOP_LANE] if self.loop_events else []
        names = sorted(set(lanes), key=in_order) + loop
        tids = {name: number for number, name in enumerate(names, start=1)}
        lines = metadata(self.name, names)
        for fetch, lane in zip(self.fetches, lanes, strict=True):
            fetch_lines(lines, fetch, tids[lane], stop, self.t0)
        loop_lines(lines, self.loop_events, tids.get(LOOP_LANE, 0), self.t0)
        counter_lines(lines, self.counters, self.t0)
        return lines


class NoTrace(Trace):
    """The recorder of a crawl without a trace: every method returns at once."""

    def __init__(self) -> None:
        super().__init__("no trace")

    def begin(self, url: str, lane: object = None) -> None:
        """Record nothing."""

    def phase(self, url: str, name: str) -> None:
        """Record nothing."""

    def end(self, url: str) -> None:
        """Record nothing."""

    def waiting(self) -> None:
        """Record nothing."""

    def use_clock(self, clock: Callable[[], float]) -> None:
        """Keep the clock: NO_TRACE serves every crawl, simulated or not."""

    def woke(self, events: int) -> None:
        """Record nothing."""

    def write(self, path: str | Path) -> None:
        """Write nothing."""


NO_TRACE = NoTrace()  # Keeps nothing, so one serves every crawl.


def lane_name(lane: object) -> str | None:
    """Return the name of a worker: a task's ``get_name()``, a thread's ``name``."""
    if lane is None or isinstance(lane, str):
        return lane
    get_name = getattr(lane, "get_name", None)
    return str(get_name() if get_name is not None else getattr(lane, "name", lane))


def in_order(lane: str) -> tuple[bool, list[Any]]:
    """Sort lanes as a reader counts: workers before others, ``worker 2`` before ``worker 10``."""
    parts = [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", lane)]
    return lane.startswith("robots.txt"), parts


def assign_lanes(fetches: list[Fetch]) -> list[str]:
    """Return each fetch's lane, giving those without one the first free Fetcher slot.

    Two heaps, the busy slots by when they end and the free ones by number,
    rather than a look at every slot for every fetch: a quarter of the
    write's cost at 100 slots (counted with callgrind).
    """
    busy: list[tuple[float, int]] = []  # (When its fetch ends, slot number).
    free: list[int] = []
    slots = 0
    lanes = []
    for fetch in fetches:  # In the order they began.
        if fetch.lane is not None:
            lanes.append(fetch.lane)
            continue
        while busy and busy[0][0] <= fetch.start:
            heapq.heappush(free, heapq.heappop(busy)[1])
        if free:
            slot = heapq.heappop(free)
        else:
            slots = slot = slots + 1
        heapq.heappush(busy, (fetch.end if fetch.end is not None else math.inf, slot))
        lanes.append(f"slot {slot}")
    return lanes


def metadata(process: str, lanes: list[str]) -> list[str]:
    """Return the events that name the process and each lane, in order."""
    name = json.dumps(process, ensure_ascii=False)
    lines = [f'{{"name": "process_name", "ph": "M", "pid": {PID}, "tid": 0, '
             f'"args": {{"name": {name}}}}}']  # fmt: skip
    for tid, lane in enumerate(lanes, start=1):
        name = json.dumps(lane, ensure_ascii=False)
        lines.append(f'{{"name": "thread_name", "ph": "M", "pid": {PID}, "tid": {tid}, '
                     f'"args": {{"name": {name}}}}}')  # fmt: skip
        lines.append(f'{{"name": "thread_sort_index", "ph": "M", "pid": {PID}, "tid": {tid}, '
                     f'"args": {{"sort_index": {tid}}}}}')  # fmt: skip
    return lines


def fetch_lines(lines: list[str], fetch: Fetch, tid: int, stop: float, t0: float) -> None:
    """Add a fetch's complete event and its phases' to ``lines`` (one in flight ends at ``stop``).

    The fetch's URL is turned into JSON once, for all its events, and
    each phase's line starts from a piece made once per phase name.
    """
    end = fetch.end if fetch.end is not None else stop
    url = encode_basestring(fetch.url)
    tail = f', "pid": {PID}, "tid": {tid}, "args": {{"url": {url}}}}}'
    path = encode_basestring("/" + fetch.url.split("/", 3)[-1])
    # Durations are never negative: perf_counter() does not go back.
    ts = round((fetch.start - t0) * 1e6)
    dur = round((end - t0) * 1e6) - ts
    lines.append(f'{{"name": {path}, "cat": "fetch", "ph": "X", "ts": {ts}, "dur": {dur}{tail}')
    marks = fetch.marks
    last = len(marks) - 2
    for n in range(0, len(marks), 2):
        name = marks[n]
        if name is not None:
            ts = round((marks[n + 1] - t0) * 1e6)
            dur = round(((marks[n + 3] if n < last else end) - t0) * 1e6) - ts
            lines.append(f'{PHASE_HEADS[name]}{ts}, "dur": {dur}{tail}')


def loop_lines(lines: list[str], events: array.array[float], tid: int, t0: float) -> None:
    """Add the loop's ``select`` and ``run`` events to ``lines``, on lane ``tid``."""
    run = '{"name": "run", "cat": "loop", "ph": "X", "ts": '
    select = '{"name": "select", "cat": "loop", "ph": "X", "ts": '
    tail = f', "pid": {PID}, "tid": {tid}, "args": '
    numbers = iter(events)  # Start, end, events; again and again.
    for start, end, count in zip(numbers, numbers, numbers, strict=True):
        ts = round((start - t0) * 1e6)
        dur = round((end - t0) * 1e6) - ts
        if count < 0:
            lines.append(f'{run}{ts}, "dur": {dur}{tail}{{}}}}')
        else:
            lines.append(f'{select}{ts}, "dur": {dur}{tail}{{"events": {int(count)}}}}}')


def counter_lines(lines: list[str], counters: array.array[float], t0: float) -> None:
    """Add the counters' events to ``lines``: URLs queued, fetches in flight.

    A counter keeps its value until its next event, so "URLs queued" is
    written only when it changes: in a crawl of stage 1, five of its events
    in six repeat the one before (the fetches in flight change every time).
    """
    queued = '{"name": "URLs queued", "ph": "C", "ts": '
    flying = '{"name": "fetches in flight", "ph": "C", "ts": '
    tail = f', "pid": {PID}, "tid": 0, "args": {{"value": '
    in_flight, last_waiting = 0, -1
    numbers = iter(counters)  # Time, URLs queued, change in flight; again...
    for now, queued_now, change in zip(numbers, numbers, numbers, strict=True):
        ts = round((now - t0) * 1e6)
        in_flight += int(change)
        waiting = int(queued_now) if queued_now > 0 else 0
        if waiting != last_waiting:  # Most fetches leave the queue as it was.
            lines.append(f"{queued}{ts}{tail}{waiting}}}}}")
            last_waiting = waiting
        lines.append(f"{flying}{ts}{tail}{in_flight}}}}}")

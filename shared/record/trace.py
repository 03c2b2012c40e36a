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
import json
import re
import threading
import time
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Any

PHASES = ("connect", "send", "wait", "read", "parse")
LOOP_LANE = "event loop"
PID = 1  # One process: the crawl.


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
    """

    def __init__(self, name: str, queued: Callable[[], int] = lambda: 0) -> None:
        self.name = name  # The process's name in a viewer: the stage.
        self.queued = queued
        self.t0 = time.perf_counter()
        self.fetches: list[Fetch] = []
        self.latest: dict[str, Fetch] = {}  # The latest fetch of each URL.
        self.in_flight = 0
        # The thread crawler's threads all count: += is no single step for them.
        self.counting = threading.Lock()
        self.counters = array.array("d")  # Time, URLs queued, fetches in flight; again...
        # The loop's events: start, end and how many events select() returned
        # (-1 for a run of code between two selects); again and again.
        self.loop_events = array.array("d")
        self.loop_since = -1.0  # When the loop began what it does now.
        self.loop_asleep = False  # True while it is in select().

    def now(self) -> float:
        """Return microseconds since the trace began."""
        return (time.perf_counter() - self.t0) * 1e6

    # --- Fetches: called by the stages ---------------------------------------

    def begin(self, url: str, lane: object = None) -> None:
        """Note that a request for ``url`` starts now, connecting first.

        ``lane`` is the worker making it: a task or a thread (named by its
        ``get_name()`` or ``name``), or None for stage 1's Fetcher slots.
        """
        fetch = Fetch(url, lane_name(lane), self.now())
        self.fetches.append(fetch)
        self.latest[url] = fetch
        self.count(fetch.start, +1)

    def phase(self, url: str, name: str) -> None:
        """Note that the fetch of ``url`` enters phase ``name`` now.

        Entering the phase it is in changes nothing.  A fetch that has
        ended is taken up again: the crawler parses a page after its
        request is over, and the parse belongs to that fetch.
        """
        fetch = self.latest.get(url)
        if fetch is None or fetch.marks[-2] == name:
            return
        now = self.now()
        if fetch.end is not None:
            fetch.end = None
            self.count(now, +1)
        fetch.marks.append(name)
        fetch.marks.append(now)

    def end(self, url: str) -> None:
        """Note that the fetch of ``url`` is over (done, failed, or its page parsed)."""
        fetch = self.latest.get(url)
        if fetch is None or fetch.end is not None:
            return
        fetch.end = now = self.now()
        fetch.marks.append(None)
        fetch.marks.append(now)
        self.count(now, -1)

    def count(self, now: float, change: int) -> None:
        """Note the counters after ``change`` in the fetches in flight."""
        with self.counting:
            self.in_flight += change
            self.counters.extend((now, max(self.queued(), 0), self.in_flight))

    # --- The loop: called by the hand-made loops of stages 1 and 2 -----------

    def waiting(self) -> None:
        """Note that the loop is about to wait in ``select()``; its run of code ends."""
        now = self.now()
        if self.loop_since >= 0:
            self.loop_events.extend((self.loop_since, now, -1))
        self.loop_since, self.loop_asleep = now, True

    def woke(self, events: int) -> None:
        """Note that ``select()`` returned ``events`` events; the loop runs code now."""
        now = self.now()
        if self.loop_asleep:
            self.loop_events.extend((self.loop_since, now, events))
        self.loop_since, self.loop_asleep = now, False

    # --- The file ------------------------------------------------------------

    def write(self, path: str | Path) -> None:
        """Write the trace to ``path`` in the Trace Event Format.  Raises OSError."""
        lines = ",\n".join(self.event_lines())
        text = f'{{"traceEvents": [\n{lines}\n], "displayTimeUnit": "ms"}}\n'
        Path(path).write_text(text, encoding="utf-8")

    def events(self) -> list[dict[str, Any]]:
        """Return the trace's events, as ``write`` writes them."""
        return [json.loads(line) for line in self.event_lines()]

    def event_lines(self) -> list[str]:
        """Return the trace's events in JSON: lane names, fetches, phases, loop, counters.

        Written from templates rather than by json.dumps: a crawl has tens of
        thousands of events, and the templates cost a third as much.
        """
        stop = self.now()
        self.waiting()  # Ends the loop's last run of code, if it has a loop.
        lanes = assign_lanes(self.fetches)
        loop = [LOOP_LANE] if self.loop_events else []
        names = sorted(set(lanes), key=in_order) + loop
        tids = {name: number for number, name in enumerate(names, start=1)}
        lines = metadata(self.name, names)
        for fetch, lane in zip(self.fetches, lanes, strict=True):
            lines += fetch_lines(fetch, tids[lane], stop)
        events = self.loop_events
        for n in range(0, len(events), 3):
            start, end, count = events[n : n + 3]
            name, args = ("run", "{}") if count < 0 else ("select", f'{{"events": {count:.0f}}}')
            lines.append(complete(f'"{name}"', "loop", start, end, tids.get(LOOP_LANE, 0), args))
        counters = self.counters
        for n in range(0, len(counters), 3):
            now, queued, in_flight = counters[n : n + 3]
            lines.append(counter("URLs queued", now, queued))
            lines.append(counter("fetches in flight", now, in_flight))
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
    """Return each fetch's lane, giving those without one the first free Fetcher slot."""
    slot_ends: list[float] = []  # When each slot's last fetch ended.
    lanes = []
    for fetch in fetches:  # In the order they began.
        if fetch.lane is not None:
            lanes.append(fetch.lane)
            continue
        free = [n for n, end in enumerate(slot_ends) if end <= fetch.start]
        slot = free[0] if free else len(slot_ends)
        if slot == len(slot_ends):
            slot_ends.append(0.0)
        slot_ends[slot] = fetch.end if fetch.end is not None else float("inf")
        lanes.append(f"slot {slot + 1}")
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


def fetch_lines(fetch: Fetch, tid: int, stop: float) -> list[str]:
    """Return a fetch's complete event and its phases' (one still in flight ends at ``stop``)."""
    end = fetch.end if fetch.end is not None else stop
    url = json.dumps(fetch.url, ensure_ascii=False)
    args = f'{{"url": {url}}}'
    path = json.dumps("/" + fetch.url.split("/", 3)[-1], ensure_ascii=False)
    lines = [complete(path, "fetch", fetch.start, end, tid, args)]
    marks = fetch.marks
    for n in range(0, len(marks), 2):
        name, start = marks[n], marks[n + 1]
        if name is not None:
            phase_end = marks[n + 3] if n + 3 < len(marks) else end
            lines.append(complete(f'"{name}"', "phase", start, phase_end, tid, args))
    return lines


def complete(name: str, category: str, start: float, end: float, tid: int, args: str) -> str:
    """Return a complete event (``"ph": "X"``): a name (in JSON), a start and a duration.

    Times are whole microseconds, rounded the same way at both ends, so a
    phase that lies inside its fetch still does in the file.
    """
    ts = round(start)
    dur = max(round(end) - ts, 0)
    return (f'{{"name": {name}, "cat": "{category}", "ph": "X", "ts": {ts}, "dur": {dur}, '
            f'"pid": {PID}, "tid": {tid}, "args": {args}}}')  # fmt: skip


def counter(name: str, now: float, value: float) -> str:
    """Return a counter event (``"ph": "C"``) that sets ``name`` to ``value``."""
    return (f'{{"name": "{name}", "ph": "C", "ts": {round(now)}, "pid": {PID}, "tid": 0, '
            f'"args": {{"value": {value:.0f}}}}}')  # fmt: skip

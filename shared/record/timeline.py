"""Draw a crawl's trace (shared/record/trace.py) as an SVG timeline, and measure its loop.

One row per lane (a task, a thread, a Fetcher slot), each fetch a bar
coloured by phase; the hand-made loops of stages 1 and 2 get a row of their
own beneath, dark where the loop runs code and a thin line where it sleeps
in ``select``.  Several traces can share one figure and one time axis, so
that runs can be compared side by side.  The docs build draws the figures
of the chapters with it::

    python -m shared.record.timeline trace.json [more.json ...] > timeline.svg

Text and axes are drawn in ``currentColor``, set to a dark grey: a page in
a dark theme inverts the whole image (the site's stylesheet does), which
keeps the mid-tone phase colours mid-tone.  ``loop_share`` says how much of
a run the loop spent asleep in ``select`` and how much running code.
"""

from __future__ import annotations

import dataclasses
import json
import math
import sys
from html import escape
from pathlib import Path
from typing import Any

from shared.record.trace import LOOP_LANE, PHASES

COLOURS = {  # Mid-tones: legible on white, and on black once inverted.
    "connect": "#4e79a7",
    "send": "#f28e2b",
    "wait": "#a0a0a0",
    "read": "#59a14f",
    "parse": "#e15759",
}
RUNNING = "#8f5fb0"  # The loop running callbacks or task steps.
WIDTH = 760  # Drawing units; the page scales the image to its width.
LABELS = 120  # Width of the lane names on the left.
ROW, GAP = 12, 3  # Height of a row, and the space between two rows.
FONT = 'font-family="system-ui, sans-serif" font-size="11"'


@dataclasses.dataclass
class Run:
    """One trace, ready to draw: its lanes in order and the events on each."""

    title: str
    lanes: list[str]
    events: dict[str, list[dict[str, Any]]]  # Complete events by lane name.
    end: float  # Microseconds, the end of the last event.


def read_run(title: str, document: dict[str, Any]) -> Run:
    """Return the lanes and events of a Trace Event Format document."""
    names = {e["tid"]: e["args"]["name"] for e in document["traceEvents"]
             if e["name"] == "thread_name"}  # fmt: skip
    complete = [e for e in document["traceEvents"] if e["ph"] == "X"]
    events: dict[str, list[dict[str, Any]]] = {names[tid]: [] for tid in sorted(names)}
    for event in complete:
        events[names[event["tid"]]].append(event)
    end = max((e["ts"] + e["dur"] for e in complete), default=0)
    lanes = [name for name in events if name != LOOP_LANE]
    lanes += [LOOP_LANE] if LOOP_LANE in events else []
    return Run(title, lanes, events, end)


def loop_share(document: dict[str, Any]) -> tuple[float, float]:
    """Return the shares of the loop's wall time spent asleep in select and running code.

    The wall time runs from the loop's first select to the end of its last
    run of code.  Raises ValueError for a trace without loop events (asyncio).
    """
    loop = [e for e in document["traceEvents"] if e["ph"] == "X" and e["cat"] == "loop"]
    if not loop:
        raise ValueError("this trace has no loop events: only stages 1 and 2 record them")
    wall = max(e["ts"] + e["dur"] for e in loop) - min(e["ts"] for e in loop)
    asleep = sum(e["dur"] for e in loop if e["name"] == "select")
    running = sum(e["dur"] for e in loop if e["name"] == "run")
    return asleep / wall, running / wall


def draw(runs: list[Run], title: str) -> str:
    """Return an SVG of ``runs``, one panel each, on one time axis in milliseconds."""
    end = max(run.end for run in runs) or 1
    scale = (WIDTH - LABELS - 16) / end  # Drawing units per microsecond.
    parts, y = legend(any(LOOP_LANE in run.lanes for run in runs)), 34
    for run in runs:
        if run.title:
            parts.append(text(4, y + 10, run.title, 'font-weight="bold"'))
            y += 16
        for lane in run.lanes:
            parts.append(text(4, y + ROW - 2, short(lane)))
            parts += [draw_event(e, y, scale) for e in run.events[lane] if e["cat"] != "phase"]
            y += ROW + GAP
        y += 8
    parts += axis(end, scale, y)
    height = y + 28
    head = (f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {height}" '
            f'width="{WIDTH}" height="{height}" role="img" aria-labelledby="title" '
            f'style="color:#333" {FONT}>')  # fmt: skip
    return "\n".join([head, f'<title id="title">{escape(title)}</title>', *parts, "</svg>\n"])


def draw_event(event: dict[str, Any], y: int, scale: float) -> str:
    """Return the drawing of one fetch (a bar of its phases) or one loop event."""
    x, width = LABELS + event["ts"] * scale, max(event["dur"] * scale, 0.5)
    if event["cat"] == "loop":
        if event["name"] == "run":
            return rect(x, y, width, ROW, RUNNING)
        return rect(x, y + ROW / 2 - 0.5, width, 1, "currentColor", 'opacity="0.5"')
    tip = f"{event['args']['url']}: {event['dur'] / 1000:.1f} ms"
    # A fetch whose phases nobody could see (a blocking library's) is a grey bar.
    fill = 'fill-opacity="0.25"' if not event.get("phases") else 'fill-opacity="0"'
    bars = [rect(x, y, width, ROW, "currentColor", f'stroke="currentColor" {fill}')]
    for phase in event.get("phases", []):
        px, pw = LABELS + phase["ts"] * scale, max(phase["dur"] * scale, 0.3)
        bars.append(rect(px, y + 1, pw, ROW - 2, COLOURS[phase["name"]]))
    return f'<g class="fetch"><title>{escape(tip)}</title>{"".join(bars)}</g>'


def legend(with_loop: bool) -> list[str]:
    """Return the key of the colours, across the top."""
    parts, x = [], 4.0
    keys = [(name, COLOURS[name]) for name in PHASES]
    keys += [("not parsed yet", "none")]  # A fetch's empty stretch: its request is over.
    keys += [("loop running code", RUNNING)] if with_loop else []
    for name, colour in keys:
        parts.append(rect(x, 8, 10, 10, colour, 'stroke="currentColor" stroke-width="0.5"'))
        parts.append(text(x + 14, 17, name))
        x += 24 + 6.5 * len(name)
    if with_loop:
        parts.append(rect(x, 12.5, 14, 1, "currentColor", 'opacity="0.5"'))
        parts.append(text(x + 18, 17, "loop asleep in select"))
    return parts


def axis(end: float, scale: float, y: int) -> list[str]:
    """Return a time axis in milliseconds under the rows, with round ticks."""
    step = nice_step(end / 1000)  # Milliseconds between two ticks.
    parts = [f'<line x1="{LABELS}" y1="{y}" x2="{LABELS + end * scale:.1f}" y2="{y}" '
             'stroke="currentColor" stroke-width="0.7"/>']  # fmt: skip
    for n in range(int(end / 1000 / step) + 1):
        x = LABELS + n * step * 1000 * scale
        parts.append(f'<line x1="{x:.1f}" y1="{y}" x2="{x:.1f}" y2="{y + 4}" '
                     'stroke="currentColor" stroke-width="0.7"/>')  # fmt: skip
        parts.append(text(x, y + 15, f"{n * step:g} ms", 'text-anchor="middle"'))
    return parts


def nice_step(span: float) -> float:
    """Return 1, 2 or 5 times a power of ten: about six ticks over ``span``."""
    rough = max(span / 6, 1e-3)
    power = 10.0 ** math.floor(math.log10(rough))
    return next(m * power for m in (1, 2, 5, 10) if m * power >= rough)


def short(lane: str, width: int = 18) -> str:
    """Return a lane's name cut to fit the label column."""
    return lane if len(lane) <= width else lane[: width - 1] + "…"


def rect(x: float, y: float, width: float, height: float, fill: str, extra: str = "") -> str:
    """Return an SVG rectangle."""
    return (f'<rect x="{x:.1f}" y="{y:.1f}" width="{width:.1f}" height="{height:.1f}" '
            f'fill="{fill}" {extra}/>')  # fmt: skip


def text(x: float, y: float, words: str, extra: str = "") -> str:
    """Return SVG text in the current colour."""
    return f'<text x="{x:.1f}" y="{y:.1f}" fill="currentColor" {extra}>{escape(words)}</text>'


def attach_phases(run: Run) -> Run:
    """Put each phase event inside its fetch event, as ``phases``, for drawing."""
    for events in run.events.values():
        fetches = [e for e in events if e["cat"] == "fetch"]
        for phase in (e for e in events if e["cat"] == "phase"):
            for fetch in fetches:
                inside = fetch["ts"] <= phase["ts"] <= fetch["ts"] + fetch["dur"]
                if inside and fetch["args"] == phase["args"]:
                    fetch.setdefault("phases", []).append(phase)
                    break
    return run


def timeline(documents: list[tuple[str, dict[str, Any]]], title: str) -> str:
    """Return the SVG of titled trace documents, one panel each."""
    return draw([attach_phases(read_run(name, doc)) for name, doc in documents], title)


def main(argv: list[str] | None = None) -> None:
    """Write the SVG of the trace files named in ``argv`` to stdout."""
    paths = sys.argv[1:] if argv is None else argv
    documents = [(Path(p).stem, json.loads(Path(p).read_text("utf-8"))) for p in paths]
    sys.stdout.write(timeline(documents, "Timeline of " + ", ".join(paths)))


if __name__ == "__main__":
    main()

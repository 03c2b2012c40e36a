"""Draw a crawl's trace (shared/record/trace.py) as an SVG timeline, and measure its loop.

One row per lane (a task, a thread, a Fetcher slot), each fetch an outlined
bar filled with the colours of its phases; the hand-made loops of stages 1
and 2 get a row of their own beneath, dark where the loop runs code and a
thin line where it sleeps in ``select``.  Several traces can share one
figure and one time axis, so that runs can be compared side by side.  The
legend names only what the figure shows.  The docs build draws the figures
of the chapters with it, in the page's language (``lang="zh"`` writes the
labels in Chinese; code stays code)::

    python -m shared.record.timeline trace.json [more.json ...] > timeline.svg

A figure is drawn 998 units wide with 16-unit text: the width of the
page's text column, and the size of its body text, in a window 1280 px
wide, so that there it is shown one to one.  Text and axes are drawn in
``currentColor``, set to a dark grey: a page in a dark theme inverts the
whole image (the site's stylesheet does), which keeps the mid-tone phase
colours mid-tone.  ``loop_share`` says how much of a run the loop spent
asleep in ``select`` and how much running code.
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
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
# How wide each phase is drawn in the legend's sample request, before stretching.
SAMPLE_WIDTHS = {"connect": 4, "send": 3, "wait": 16, "read": 8, "parse": 5}
RUNNING = "#8f5fb0"  # The loop running callbacks or task steps.
WIDTH = 998  # The text column at 1280 px, in px: the page shows the figure one to one there.
SIZE = 16  # The body text's size there, in px.
LABELS = 120  # Width of the lane names on the left.
ROW, GAP = 20, 4  # Height of a row, and the space between two rows.
FONT = f'font-family="system-ui, sans-serif" font-size="{SIZE}"'
CODE = 'font-family="ui-monospace, SFMono-Regular, Menlo, Consolas, monospace"'
VISIBLE = 2.0  # Drawing units: an empty stretch narrower than this cannot be seen.
# The words of the figures in Chinese.  Text between backquotes is code, the
# same in every language, and drawn in a monospace font as on the page.
CHINESE = {
    "connect": "连接",
    "send": "发送",
    "wait": "等待应答",
    "read": "读取",
    "parse": "解析",
    "a request, start to end": "一次请求，从开始到结束",
    "empty: read, not parsed yet": "空白：已读完，还没解析",
    "a request, its phases unseen": "一次请求，看不见其中各阶段",
    "loop running code": "事件循环在运行代码",
    "loop asleep in `select()`": "事件循环睡在 `select()` 里",
    "worker": "工作任务",
    "slot": "槽位",
    "thread": "线程",
    LOOP_LANE: "事件循环",
}
LANE = re.compile(r"(?P<kind>worker|slot|thread) (?P<number>\d+)")


def say(words: str, lang: str) -> str:
    """Return ``words`` in ``lang`` ("en" or "zh").  Raises KeyError for words not translated."""
    return words if lang == "en" else CHINESE[words]


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


def draw(runs: list[Run], title: str, lang: str = "en") -> str:
    """Return an SVG of ``runs``, one panel each, on one time axis in milliseconds.

    Titles may hold code between backquotes.  Raises KeyError for a
    ``lang`` other than "en" and "zh".
    """
    end = max(run.end for run in runs) or 1
    scale = (WIDTH - LABELS - 24) / end  # Drawing units per microsecond.
    parts, y = legend(shown(runs, scale), lang)
    for run in runs:
        if run.title:
            parts.append(text(4, y + SIZE, run.title, 'font-weight="bold"'))
            y += SIZE + 8
        for lane in run.lanes:
            parts.append(text(4, y + ROW - 5, lane_label(lane, lang)))
            parts += [draw_event(e, y, scale) for e in run.events[lane] if e["cat"] != "phase"]
            y += ROW + GAP
        y += 10
    parts += axis(end, scale, y)
    height = y + SIZE + 16
    plain = title.replace("`", "")
    head = (f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {height}" '
            f'width="{WIDTH}" height="{height}" role="img" aria-labelledby="title" '
            f'style="color:#333" {FONT}>')  # fmt: skip
    return "\n".join([head, f'<title id="title">{escape(plain)}</title>', *parts, "</svg>\n"])


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


def lane_label(lane: str, lang: str) -> str:
    """Return a lane's name in ``lang``, cut to fit the label column.

    In Chinese, a name the figure does not know (a task's own, such as
    ``Task-3``) is code.
    """
    if lang == "en":
        return short(lane)
    if lane == LOOP_LANE:
        return say(lane, lang)
    match = LANE.fullmatch(lane)
    if match is None:
        return f"`{short(lane, 12)}`"
    return f"{say(match['kind'], lang)} {match['number']}"


def shown(runs: list[Run], scale: float) -> list[str]:
    """Return the keys of the legend that the figure shows, in the legend's order.

    The phases that occur; an empty stretch inside a bar only where one is
    wide enough to see (stage 1 reads a page, then parses it later);
    a bar without phases; the loop's row.
    """
    fetches = [e for run in runs for lane in run.lanes for e in run.events[lane]
               if e["cat"] == "fetch"]  # fmt: skip
    phases = {p["name"] for fetch in fetches for p in fetch.get("phases", [])}
    keys = ["a request, start to end"] if phases else []
    keys += [name for name in PHASES if name in phases]
    if any(widest_gap(fetch) * scale >= VISIBLE for fetch in fetches if fetch.get("phases")):
        keys.append("empty: read, not parsed yet")
    if any(not fetch.get("phases") for fetch in fetches):
        keys.append("a request, its phases unseen")
    if any(LOOP_LANE in run.lanes for run in runs):
        keys += ["loop running code", "loop asleep in `select()`"]
    return keys


def widest_gap(fetch: dict[str, Any]) -> float:
    """Return the longest stretch of a fetch, in microseconds, that no phase covers."""
    gaps, reached = [0.0], fetch["ts"]
    for phase in sorted(fetch["phases"], key=lambda p: p["ts"]):
        gaps.append(phase["ts"] - reached)
        reached = max(reached, phase["ts"] + phase["dur"])
    gaps.append(fetch["ts"] + fetch["dur"] - reached)
    return max(gaps)


def legend(keys: list[str], lang: str) -> tuple[list[str], int]:
    """Return the legend across the top, in as many lines as it needs, and its height."""
    parts, x, y = [], 4.0, 6
    phases = [key for key in keys if key in COLOURS]
    for key in keys:
        swatch, width = sample(key, x, y, phases)
        label = say(key, lang)
        if x > 4 and x + width + 6 + text_width(label) > WIDTH:  # On to the next line.
            x, y = 4.0, y + SIZE + 10
            swatch, width = sample(key, x, y, phases)
        parts += [*swatch, text(x + width + 6, y + SIZE - 3, label)]
        x += width + 6 + text_width(label) + 20
    return parts, y + SIZE + 20


def sample(key: str, x: float, y: float, phases: list[str]) -> tuple[list[str], float]:
    """Return the small drawing that a key of the legend explains, and its width.

    The sample request holds only the ``phases`` the figure shows, stretched
    to fill it: a red parse block in it would promise a parse no bar has.
    """
    outline, top, height = 'stroke="currentColor" stroke-width="0.8"', y + 1, SIZE - 2
    if key in COLOURS:
        return [rect(x, top, height, height, COLOURS[key], outline)], height
    if key == "loop running code":
        return [rect(x, top, height, height, RUNNING)], height
    if key == "loop asleep in `select()`":
        return [rect(x, top + height / 2 - 0.5, 24, 1, "currentColor", 'opacity="0.5"')], 24
    if key == "a request, its phases unseen":
        return [rect(x, top, 36, height, "currentColor", f'{outline} fill-opacity="0.25"')], 36
    box = [rect(x, top, 36, height, "currentColor", f'{outline} fill-opacity="0"')]
    if key == "empty: read, not parsed yet":  # Read, then nothing: the empty stretch.
        return [*box, rect(x, top + 1, 12, height - 2, COLOURS["read"])], 36
    inside = [(name, SAMPLE_WIDTHS[name]) for name in PHASES if name in phases]
    stretch = 36 / sum(width for _, width in inside) if inside else 0
    for name, width in inside:
        box.append(rect(x, top + 1, width * stretch, height - 2, COLOURS[name]))
        x += width * stretch
    return box, 36


def text_width(words: str) -> float:
    """Return about how wide ``words`` are drawn: Chinese characters are square."""
    width = 0.0
    for plain, code in spans(words):
        for char in plain:
            width += SIZE * (1.0 if ord(char) >= 0x2E80 else 0.6 if code else 0.55)
    return width


def axis(end: float, scale: float, y: int) -> list[str]:
    """Return a time axis in milliseconds under the rows, with round ticks."""
    step = nice_step(end / 1000)  # Milliseconds between two ticks.
    parts = [f'<line x1="{LABELS}" y1="{y}" x2="{LABELS + end * scale:.1f}" y2="{y}" '
             'stroke="currentColor" stroke-width="0.7"/>']  # fmt: skip
    for n in range(int(end / 1000 / step) + 1):
        x = LABELS + n * step * 1000 * scale
        parts.append(f'<line x1="{x:.1f}" y1="{y}" x2="{x:.1f}" y2="{y + 5}" '
                     'stroke="currentColor" stroke-width="0.7"/>')  # fmt: skip
        parts.append(text(x, y + SIZE + 6, f"{n * step:g} ms", 'text-anchor="middle"'))
    return parts


def nice_step(span: float) -> float:
    """Return 1, 2 or 5 times a power of ten: about six ticks over ``span``."""
    rough = max(span / 6, 1e-3)
    power = 10.0 ** math.floor(math.log10(rough))
    return next(m * power for m in (1, 2, 5, 10) if m * power >= rough)


def short(lane: str, width: int = 14) -> str:
    """Return a lane's name cut to fit the label column."""
    return lane if len(lane) <= width else lane[: width - 1] + "…"


def rect(x: float, y: float, width: float, height: float, fill: str, extra: str = "") -> str:
    """Return an SVG rectangle."""
    return (f'<rect x="{x:.1f}" y="{y:.1f}" width="{width:.1f}" height="{height:.1f}" '
            f'fill="{fill}" {extra}/>')  # fmt: skip


def spans(words: str) -> list[tuple[str, bool]]:
    """Return the parts of ``words`` and whether each is code (between backquotes)."""
    return [(part, n % 2 == 1) for n, part in enumerate(words.split("`")) if part]


def text(x: float, y: float, words: str, extra: str = "") -> str:
    """Return SVG text in the current colour; code between backquotes in a monospace font."""
    inner = "".join(f"<tspan {CODE}>{escape(part)}</tspan>" if code else escape(part)
                    for part, code in spans(words))  # fmt: skip
    return f'<text x="{x:.1f}" y="{y:.1f}" fill="currentColor" {extra}>{inner}</text>'


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


def timeline(documents: list[tuple[str, dict[str, Any]]], title: str, lang: str = "en") -> str:
    """Return the SVG of titled trace documents, one panel each, with labels in ``lang``."""
    runs = [attach_phases(read_run(name, doc)) for name, doc in documents]
    return draw(runs, title, lang)


def main(argv: list[str] | None = None) -> None:
    """Write the SVG of the trace files named in ``argv`` to stdout."""
    paths = sys.argv[1:] if argv is None else argv
    documents = [(Path(p).stem, json.loads(Path(p).read_text("utf-8"))) for p in paths]
    sys.stdout.write(timeline(documents, "Timeline of " + ", ".join(paths)))


if __name__ == "__main__":
    main()

"""Tests of the trace of a crawl (shared/record/trace.py), in every stage and the thread crawler.

A traced crawl of the bundled site must hold one fetch event per request
the site counted, each on a lane no other fetch uses at the same time,
never more at once than ``max_tasks``, with its phases inside it and in
order; and the file must be JSON in the Trace Event Format, field by field.
"""

from __future__ import annotations

import importlib
import json
import re
import urllib.parse
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from shared.cli import main as cli
from shared.record.timeline import COLOURS, loop_share, nice_step, short, timeline
from shared.record.trace import NO_TRACE, PHASES, Trace
from shared.testsite.server import ServerThread, make_app
from tests.acceptance import run_with_deadline
from tests.servers import ScriptedServer, answer

CRAWLERS = ["stage1_callbacks", "stage2_generators", "stage3_asyncio", "shared.bench.threads"]
HAND_MADE_LOOPS = {"stage1_callbacks", "stage2_generators"}
MAX_TASKS = 4
PAGES = 30


def traced_crawl(module: str, roots: list[str], path: Path, **options: Any) -> Any:
    """Crawl ``roots`` with ``module``'s crawl() and a trace; return the crawler."""
    crawl = importlib.import_module(module).crawl
    return run_with_deadline(lambda: crawl(roots, trace=str(path), **options))


def load(path: Path) -> dict[str, Any]:
    """Return the trace file's JSON document."""
    return json.loads(path.read_text(encoding="utf-8"))


def of_category(document: dict[str, Any], category: str) -> list[dict[str, Any]]:
    """Return the trace's complete events of ``category``."""
    return [e for e in document["traceEvents"] if e["ph"] == "X" and e["cat"] == category]


def target(url: str) -> str:
    """Return what a server sees of ``url``: its path and query."""
    parts = urllib.parse.urlsplit(url)
    return parts.path + (f"?{parts.query}" if parts.query else "")


@pytest.fixture(scope="module")
def site() -> Any:
    """Serve the bundled site, with a little latency so that fetches overlap."""
    with ServerThread(make_app(PAGES, latency=0.005)) as server:
        yield server


@pytest.fixture(scope="module", params=CRAWLERS)
def traced(request: pytest.FixtureRequest, site: Any, tmp_path_factory: Any) -> Any:
    """Crawl the bundled site with one crawler; return (module, document, site requests)."""
    path = tmp_path_factory.mktemp("trace") / "trace.json"
    site.site.counters.reset()
    traced_crawl(request.param, [site.url], path, max_tasks=MAX_TASKS, obey_robots=True)
    return request.param, load(path), Counter(site.site.counters.requests)


# --- A crawl of the bundled site ---------------------------------------------------


@pytest.mark.slow
def test_one_fetch_event_per_request_the_site_counted(traced: Any) -> None:
    _, document, requests = traced
    fetched = Counter(target(e["args"]["url"]) for e in of_category(document, "fetch"))
    assert sum(requests.values()) > PAGES  # Pages, redirects, robots.txt, errors.
    assert fetched == requests


@pytest.mark.slow
def test_no_two_fetches_overlap_on_one_lane(traced: Any) -> None:
    _, document, _ = traced
    by_lane: dict[int, list[dict[str, Any]]] = {}
    for event in of_category(document, "fetch"):
        by_lane.setdefault(event["tid"], []).append(event)
    assert len(by_lane) >= 2  # The fetches did run side by side.
    for events in by_lane.values():
        events.sort(key=lambda e: e["ts"])
        for before, after in zip(events, events[1:], strict=False):
            assert before["ts"] + before["dur"] <= after["ts"], (before, after)


@pytest.mark.slow
def test_never_more_fetches_at_once_than_max_tasks(traced: Any) -> None:
    _, document, _ = traced
    changes = []
    for event in of_category(document, "fetch"):
        changes += [(event["ts"], +1), (event["ts"] + event["dur"], -1)]
    in_flight = most = 0
    for _, change in sorted(changes, key=lambda c: (c[0], c[1])):  # Ends before starts.
        in_flight += change
        most = max(most, in_flight)
    assert 2 <= most <= MAX_TASKS
    counters = [e for e in document["traceEvents"] if e["ph"] == "C"]
    flights = [e["args"]["value"] for e in counters if e["name"] == "fetches in flight"]
    queued = [e["args"]["value"] for e in counters if e["name"] == "URLs queued"]
    assert 1 <= max(flights) <= most and flights[-1] == 0
    assert min(queued) >= 0 and max(queued) > MAX_TASKS  # The site has more pages than workers.


@pytest.mark.slow
def test_phases_lie_inside_their_fetch_in_order(traced: Any) -> None:
    _, document, _ = traced
    fetches = of_category(document, "fetch")
    phases = of_category(document, "phase")
    for fetch in fetches:
        own = [p for p in phases if p["tid"] == fetch["tid"] and p["args"] == fetch["args"]]
        own = [p for p in own if fetch["ts"] <= p["ts"] <= fetch["ts"] + fetch["dur"]]
        assert own and own[0]["name"] == "connect" and own[0]["ts"] == fetch["ts"]
        order = [PHASES.index(p["name"]) for p in own]
        assert order == sorted(set(order)), f"phases out of order: {own}"
        for before, after in zip(own, own[1:], strict=False):
            assert before["ts"] + before["dur"] <= after["ts"]
        assert own[-1]["ts"] + own[-1]["dur"] <= fetch["ts"] + fetch["dur"]
    pages = [f for f in fetches if f["args"]["url"].endswith("/pages/1/")]
    named = {p["name"] for p in phases if p["args"] == pages[0]["args"]}
    assert named == set(PHASES)  # A page goes through every phase.


@pytest.mark.slow
def test_the_file_is_the_trace_event_format(traced: Any) -> None:
    module, document, _ = traced
    assert set(document) == {"traceEvents", "displayTimeUnit"}
    assert document["displayTimeUnit"] == "ms"
    named: dict[int, str] = {}
    for event in document["traceEvents"]:
        check_event(event)
        if event["name"] == "thread_name":
            named[event["tid"]] = event["args"]["name"]
    used = {e["tid"] for e in document["traceEvents"] if e["ph"] == "X"}
    assert used <= set(named), "a lane has no name"
    assert len(set(named.values())) == len(named), "two lanes share a name"
    process = [e for e in document["traceEvents"] if e["name"] == "process_name"]
    assert [e["args"]["name"] for e in process] == [module]


def check_event(event: dict[str, Any]) -> None:
    """Check one event's fields against the format's documentation."""
    assert event["ph"] in ("X", "C", "M")
    assert isinstance(event["name"], str) and event["name"]
    assert isinstance(event["pid"], int) and isinstance(event["tid"], int)
    assert isinstance(event["args"], dict)
    if event["ph"] == "M":
        assert event["name"] in ("process_name", "thread_name", "thread_sort_index")
        assert set(event) == {"name", "ph", "pid", "tid", "args"}
        return
    assert isinstance(event["ts"], int) and event["ts"] >= 0  # Microseconds.
    if event["ph"] == "C":
        assert set(event) == {"name", "ph", "ts", "pid", "tid", "args"}
        assert event["name"] in ("URLs queued", "fetches in flight")
        assert isinstance(event["args"]["value"], int)
        return
    assert set(event) == {"name", "cat", "ph", "ts", "dur", "pid", "tid", "args"}
    assert isinstance(event["dur"], int) and event["dur"] >= 0
    assert event["cat"] in ("fetch", "phase", "loop")
    if event["cat"] in ("fetch", "phase"):
        assert event["args"]["url"].startswith("http://")
    if event["cat"] == "phase":
        assert event["name"] in PHASES
    if event["cat"] == "loop":
        assert event["name"] in ("select", "run")


@pytest.mark.slow
def test_the_loop_lane_alternates_select_and_run(traced: Any) -> None:
    module, document, _ = traced
    loop = of_category(document, "loop")
    if module not in HAND_MADE_LOOPS:
        assert loop == []  # asyncio's loop and the threads report no selects.
        return
    assert len({e["tid"] for e in loop}) == 1
    assert [e["name"] for e in loop[:2]] == ["select", "run"]
    for before, after in zip(loop, loop[1:], strict=False):
        assert before["name"] != after["name"]
        assert before["ts"] + before["dur"] <= after["ts"] + 1  # Rounded to microseconds.
    woken = [e["args"]["events"] for e in loop if e["name"] == "select"]
    assert all(isinstance(n, int) and n >= 0 for n in woken) and max(woken) >= 1


# --- The timeline drawn from it ------------------------------------------------------

SVG = "{http://www.w3.org/2000/svg}"


@pytest.mark.slow
def test_the_timeline_has_one_bar_per_fetch(traced: Any) -> None:
    module, document, _ = traced
    svg = ET.fromstring(timeline([(module, document)], "Timeline of a test"))  # Well-formed.
    assert svg.tag == SVG + "svg" and svg.findtext(SVG + "title") == "Timeline of a test"
    bars = [g for g in svg.iter(SVG + "g") if g.get("class") == "fetch"]
    fetches = of_category(document, "fetch")
    assert len(bars) == len(fetches)
    assert sorted(bar.findtext(SVG + "title", "").partition(": ")[0] for bar in bars) == sorted(
        fetch["args"]["url"] for fetch in fetches
    )
    labels = [text.text for text in svg.iter(SVG + "text")]
    assert "0 ms" in labels and any(re.fullmatch(r"[1-9]\d* ms", str(t)) for t in labels)
    lanes = {e["args"]["name"] for e in document["traceEvents"] if e["name"] == "thread_name"}
    assert {short(lane) for lane in lanes} <= set(labels)


@pytest.mark.slow
def test_the_loop_share_adds_up_to_the_loop_s_time(traced: Any) -> None:
    module, document, _ = traced
    if module not in HAND_MADE_LOOPS:
        with pytest.raises(ValueError, match="no loop events"):
            loop_share(document)
        return
    asleep, running = loop_share(document)
    assert 0 < asleep < 1 and 0 < running < 1
    assert 0.95 < asleep + running <= 1.0  # Only the recorder's own calls fall between.


# A figure's words on a Chinese page are Chinese, or code: what the figure
# draws in a monospace font (as the page sets code), a URL, or a number with
# its unit.  Any other Latin letter is English left untranslated.
NUMBER_WITH_UNIT = re.compile(r"\d[\d,.]*\s?(?:ms|µs|s|%)(?![A-Za-z])")
URL = re.compile(r"https?://\S+")


def english_labels(svg: str) -> list[str]:
    """Return the texts and titles of an SVG that hold English words that are not code.

    A title cannot set code apart, so in it the code of the figure's texts
    counts as code too (the figure's title repeats its panels' titles).
    """
    root = ET.fromstring(svg)
    code = {span.text or "" for span in root.iter(SVG + "tspan")
            if "monospace" in span.get("font-family", "")}  # fmt: skip
    found = []
    for element in root.iter():
        if element.tag not in (SVG + "text", SVG + "title"):
            continue
        words = [element.text or ""]
        for child in element:
            if "monospace" not in child.get("font-family", ""):
                words.append(child.text or "")
            words.append(child.tail or "")
        prose = NUMBER_WITH_UNIT.sub("", URL.sub("", "".join(words)))
        for name in sorted(code, key=len, reverse=True) if element.tag == SVG + "title" else ():
            prose = prose.replace(name, "")
        if re.search(r"[A-Za-z]", prose):
            found.append("".join(element.itertext()))
    return found


def test_code_and_numbers_are_no_english() -> None:
    svg = (
        f'<svg xmlns="{SVG[1:-1]}"><text>工作任务 1</text><text>20 ms</text>'
        '<text>睡在 <tspan font-family="ui-monospace, monospace">select()</tspan> 里</text>'
        "<title>http://127.0.0.1:8000/pages/1/: 12.5 ms</title><title>图：select()</title>"
        "<text>worker 2</text><text>等待 <tspan>read</tspan></text><title>read 图</title></svg>"
    )
    assert english_labels(svg) == ["worker 2", "等待 read", "read 图"]


def hand_made(lanes: dict[str, list[tuple[str, str, int, int]]]) -> dict[str, Any]:
    """Return a trace document: per lane, events (name, category, start, duration) in µs."""
    events: list[dict[str, Any]] = []
    for tid, (lane, drawn) in enumerate(lanes.items(), start=1):
        events.append({"name": "thread_name", "ph": "M", "pid": 1, "tid": tid,
                       "args": {"name": lane}})  # fmt: skip
        for name, category, ts, dur in drawn:
            args = {} if category == "loop" else {"url": "http://a/"}
            events.append({"name": name, "cat": category, "ph": "X", "ts": ts, "dur": dur,
                           "pid": 1, "tid": tid, "args": args})  # fmt: skip
    return {"traceEvents": events}


def legend_words(svg: str) -> set[str]:
    """Return the words of the figure's texts (the legend's among them)."""
    return {"".join(text.itertext()) for text in ET.fromstring(svg).iter(SVG + "text")}


LEGEND = {"a request, start to end", "connect", "send", "wait", "read", "parse",
          "empty: read, not parsed yet", "a request, its phases unseen", "loop running code",
          "loop asleep in select()"}  # fmt: skip
READ_ALL_AT_ONCE = [
    ("/", "fetch", 0, 100_000),
    ("connect", "phase", 0, 10_000),
    ("wait", "phase", 10_000, 80_000),
    ("read", "phase", 90_000, 10_000),
]
PARSED_LATER = [("/", "fetch", 0, 200_000), ("read", "phase", 0, 100_000),
                ("parse", "phase", 150_000, 50_000)]  # fmt: skip
LOOP = [("select", "loop", 0, 150_000), ("run", "loop", 150_000, 50_000)]


@pytest.mark.parametrize(
    ("lanes", "legend"),
    [
        ({"worker 1": READ_ALL_AT_ONCE}, {"a request, start to end", "connect", "wait", "read"}),
        ({"worker 1": PARSED_LATER},
         {"a request, start to end", "read", "parse", "empty: read, not parsed yet"}),
        ({"Task-2": [("/", "fetch", 0, 100_000)]}, {"a request, its phases unseen"}),
        ({"slot 1": READ_ALL_AT_ONCE, "event loop": LOOP},
         {"a request, start to end", "connect", "wait", "read", "loop running code",
          "loop asleep in select()"}),
    ],
)  # fmt: skip
def test_the_legend_names_what_the_figure_shows_and_nothing_else(
    lanes: dict[str, Any], legend: set[str]
) -> None:
    svg = timeline([("", hand_made(lanes))], "A test")
    assert legend_words(svg) & LEGEND == legend


@pytest.mark.parametrize(
    ("drawn", "phases"),
    [(READ_ALL_AT_ONCE, {"connect", "wait", "read"}), (PARSED_LATER, {"read", "parse"})],
)
def test_the_sample_request_holds_only_the_phases_the_figure_shows(
    drawn: list[tuple[str, str, int, int]], phases: set[str]
) -> None:
    """The legend's sample request is drawn in the colours of the figure's phases, no others."""
    svg = ET.fromstring(timeline([("", hand_made({"worker 1": drawn}))], "A test"))
    label = next(t for t in svg.iter(SVG + "text") if "".join(t.itertext()) == "worker 1")
    first_row = float(label.get("y", 0)) - 20  # The label's baseline sits in its row.
    colours = {rect.get("fill") for rect in svg.iter(SVG + "rect")
               if float(rect.get("y", 0)) < first_row}  # fmt: skip
    assert colours - {"currentColor"} == {COLOURS[name] for name in phases}


@pytest.mark.parametrize("lane", ["worker 1", "slot 3", "thread 2", "Task-2"])
def test_a_chinese_figure_says_it_in_chinese(lane: str) -> None:
    lanes = {lane: READ_ALL_AT_ONCE + PARSED_LATER, "event loop": LOOP}
    assert english_labels(timeline([("第二阶段：`crawl`", hand_made(lanes))], "图", "zh")) == []
    english = timeline([("stage 2", hand_made(lanes))], "A test")
    assert lane in english_labels(english) or lane == "Task-2"


def test_a_figure_is_as_wide_as_the_text_column() -> None:
    svg = ET.fromstring(timeline([("", hand_made({"worker 1": READ_ALL_AT_ONCE}))], "A test"))
    assert svg.get("width") == "998" and svg.get("font-size") == "16"


@pytest.mark.parametrize(("span", "step"), [(1000, 200), (95, 20), (6, 1), (0.3, 0.05)])
def test_ticks_fall_on_round_milliseconds(span: float, step: float) -> None:
    assert nice_step(span) == pytest.approx(step)


# --- Retries, and no trace --------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("module", CRAWLERS)
def test_each_try_is_a_fetch_of_its_own(module: str, tmp_path: Path) -> None:
    path = tmp_path / "trace.json"
    with ScriptedServer(answer(b"THIS IS NOT HTTP\r\n\r\n")) as server:
        traced_crawl(module, [server.url], path, max_tries=3)
    fetches = of_category(load(path), "fetch")
    assert len(fetches) == len(server.requests) == 3
    assert len({e["tid"] for e in fetches}) == 1  # One worker tried three times.


@pytest.mark.parametrize("module", CRAWLERS)
def test_without_a_trace_nothing_is_recorded(module: str) -> None:
    crawler = importlib.import_module(module).Crawler(["http://example.com/"])
    assert crawler.recorder is NO_TRACE


def test_a_parse_takes_its_fetch_up_again() -> None:
    trace = Trace("test")
    trace.begin("http://a/", "worker 1")
    trace.phase("http://a/", "read")
    trace.end("http://a/")
    trace.phase("http://a/", "parse")
    trace.end("http://a/")
    events = trace.events()
    fetch, *phases = [e for e in events if e["ph"] == "X"]
    assert [p["name"] for p in phases] == ["connect", "read", "parse"]
    assert phases[-1]["ts"] + phases[-1]["dur"] == fetch["ts"] + fetch["dur"]
    flights = [e["args"]["value"] for e in events if e["name"] == "fetches in flight"]
    assert flights == [1, 0, 1, 0]


def test_fetches_without_a_lane_take_the_first_free_slot() -> None:
    trace = Trace("test")
    for url in ("http://a/", "http://b/"):
        trace.begin(url)
    trace.end("http://a/")
    trace.begin("http://c/")  # Slot 1 is free again.
    names = {e["tid"]: e["args"]["name"] for e in trace.events() if e["name"] == "thread_name"}
    lanes = [names[e["tid"]] for e in trace.events() if e.get("cat") == "fetch"]
    assert lanes == ["slot 1", "slot 2", "slot 1"]


def test_no_trace_writes_no_file(tmp_path: Path) -> None:
    NO_TRACE.begin("http://a/")
    NO_TRACE.write(tmp_path / "trace.json")
    assert not (tmp_path / "trace.json").exists()
    assert NO_TRACE.fetches == []


# --- The option and the command ------------------------------------------------------


@pytest.mark.parametrize("value", ["", 5, b"x.json"])
def test_a_trace_must_be_a_file_name(value: object) -> None:
    with pytest.raises(ValueError, match="trace must be a file name"):
        importlib.import_module("stage1_callbacks").Crawler(["http://a/"], trace=value)


@pytest.mark.slow
@pytest.mark.parametrize("stage", list(cli.STAGES))
def test_crawl_trace_writes_the_file(stage: str, tmp_path: Path) -> None:
    path = tmp_path / "new" / "trace.json"
    argv = ["--stage", stage, "--pages", "10", "--max-tasks", "3", "-q", "--trace", str(path)]
    assert cli.main(argv) == cli.EXIT_OK
    assert of_category(load(path), "fetch")


def test_crawl_trace_refuses_a_file_it_cannot_write(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "file").write_text("")
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["--trace", str(tmp_path / "file" / "trace.json")])
    assert exit_info.value.code == cli.EXIT_USAGE
    assert "cannot write" in capsys.readouterr().err

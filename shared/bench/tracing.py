"""The cost of a trace: CPU per page with ``trace=`` on and off, per crawler.

Each crawler crawls the big site at no latency twice per run, once with a
trace written to a scratch file and once without, the order alternating
from run to run; the figure is the crawl's own CPU time (the trace file's
writing included) divided by the URLs it recorded, median of the runs.

A crawl without a trace still calls the recorder (``NO_TRACE``, whose
methods return at once).  That cost is too small to see between two
crawls, so it is counted instead: the calls a traced crawl made per page,
times what one call to ``NO_TRACE`` costs, measured here with ``timeit``.
"""

from __future__ import annotations

import json
import tempfile
import timeit
from pathlib import Path
from typing import Any

from shared.bench.procs import Server
from shared.bench.scenarios import Config, Log, brief, crawlers, median, run_crawl
from shared.record.trace import NO_TRACE

TARGET_ON = 0.15  # At most 15% more CPU per page with the trace on...
TARGET_OFF = 0.01  # ...and 1% with it off.


def measure(config: Config, log: Log) -> dict[str, Any]:
    """Crawl with and without a trace, per crawler; return CPU per page both ways."""
    names = [name for name in crawlers(extras=False) if name != "stage3-uvloop"]
    runs: dict[str, dict[str, list[dict[str, Any]]]] = {n: {"off": [], "on": []} for n in names}
    calls: dict[str, list[float]] = {name: [] for name in names}
    with (
        tempfile.TemporaryDirectory() as scratch,
        Server("shared.bench.serve", "--cache", "--pages", str(config.tracing_pages)) as server,
    ):
        trace = Path(scratch) / "trace.json"
        for run in range(config.runs):
            for name in names:
                for way in ("on", "off") if run % 2 else ("off", "on"):
                    flags = {"trace": trace} if way == "on" else {}
                    result = run_crawl(name, server, config.throughput_tasks, **flags)
                    if "crawler_cpu" in result and result.get("urls"):
                        result["cpu_per_page"] = result["crawler_cpu"] / result["urls"]
                    runs[name][way].append(result)
                    log(f"tracing run {run + 1}/{config.runs} {name} {way}: {brief(result)}")
                    if way == "on" and "urls" in result:
                        calls[name].append(recorder_calls(trace) / result["urls"])
    return {"pages": config.tracing_pages, "max_tasks": config.throughput_tasks,
            "runs": runs, "calls_per_page": calls, "noop_call_s": noop_call()}  # fmt: skip


def recorder_calls(path: Path) -> int:
    """Return about how many recorder calls a crawl made, from its trace file.

    A fetch is ``begin``, one call per phase after the first, and ``end``
    (twice when its page is parsed); the loop makes two calls per select.
    """
    events = json.loads(path.read_text(encoding="utf-8"))["traceEvents"]
    fetches = sum(1 for e in events if e.get("cat") == "fetch")
    phases = sum(1 for e in events if e.get("cat") == "phase")
    parses = sum(1 for e in events if e.get("cat") == "phase" and e["name"] == "parse")
    selects = sum(1 for e in events if e.get("cat") == "loop" and e["name"] == "select")
    return fetches + phases + parses + 2 * selects


def noop_call() -> float:
    """Return the seconds one call to the recorder of a crawl without a trace takes."""
    number = 1_000_000
    return min(timeit.repeat(lambda: NO_TRACE.phase("http://a/", "read"), number=number,
                             repeat=5)) / number  # fmt: skip


def summary(results: dict[str, Any]) -> dict[str, dict[str, float | None]]:
    """Return, per crawler: µs of CPU per page off and on, the extra on, the extra off."""
    rows: dict[str, dict[str, float | None]] = {}
    for name, ways in results["runs"].items():
        off = median([r["cpu_per_page"] for r in ways["off"] if "cpu_per_page" in r])
        on = median([r["cpu_per_page"] for r in ways["on"] if "cpu_per_page" in r])
        per_page = median(results["calls_per_page"][name])
        idle = per_page * results["noop_call_s"] if per_page is not None else None
        rows[name] = {
            "off_us": off * 1e6 if off else None,
            "on_us": on * 1e6 if on else None,
            "extra_on": on / off - 1 if on and off else None,
            "calls_per_page": per_page,
            "extra_off": idle / off if idle is not None and off else None,
        }
    return rows


def targets(results: dict[str, Any]) -> list[tuple[str, str, str]]:
    """Return (target, measured, verdict) rows: the extra CPU per page on and off."""
    rows = []
    for name, row in summary(results).items():
        for key, target, words in (("extra_on", TARGET_ON, "with"), ("extra_off", TARGET_OFF,
                                                                     "without")):  # fmt: skip
            value = row[key]
            shown = f"{value:+.1%}" if value is not None else "-"
            verdict = "-" if value is None else ("met" if value <= target else "MISSED")
            rows.append((f"{name}: CPU per page {words} a trace, at most {target:+.0%}",
                         shown, verdict))  # fmt: skip
    return rows

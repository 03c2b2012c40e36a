"""Turn the scenarios' figures into ``summary.md``, SVG charts, ``results.json`` and ``targets.md``.

Every figure is the median of the runs; every ratio is the median of the
ratios taken run by run (run k of one crawler against run k of the other,
measured minutes apart in the same benchmark), so slow drifts of the
machine cancel out.  ``summary.md`` is for the reader (the docs include
it), and ``summary.zh.md`` is the same in Chinese, for the Chinese pages
(``texts.py`` holds the words of both); ``targets.md`` is for the
maintainers: each target of issue 7 with its verdict (met, missed, or not
measured when a crawler or tool was not installed), and how busy the
machine was during the run.
"""

from __future__ import annotations

import json
import math
import re
import statistics
import typing
import warnings
from pathlib import Path
from typing import Any

from shared.bench import tracing
from shared.bench.instructions import FLOOR_RATIO, FLOORS
from shared.bench.texts import (
    CEILING,
    CONCURRENCY,
    CONCURRENCY_SERVER,
    INSTRUCTIONS,
    LANGUAGES,
    MACHINE,
    MEMORY,
    MEMORY_WARM,
    PARSERS,
    SCALE,
    SCALE_BREAKDOWN,
    SERVERS,
    SERVERS_KEEP_ALIVE,
    THROUGHPUT,
    TRACING,
    say,
)

LABELS = {
    "stage1": "stage 1 (callbacks)",
    "stage2": "stage 2 (generators)",
    "stage3": "stage 3 (asyncio)",
    "stage3-uvloop": "stage 3 on uvloop",
    "threads": "threads (blocking)",
    "scrapy": "Scrapy",
    "wget": "wget -r",
    "floor-selectors": "bare selectors loop (floor)",
    "floor-aiohttp": "bare aiohttp loop (floor)",
}
STAGES = ("stage1", "stage2", "stage3")


def label(name: str, lang: str) -> str:
    """Return the label of a crawler in ``lang``."""
    return say(LABELS[name], lang)


def med(values: list[float]) -> float | None:
    """Return the median of the values that are not None, or None."""
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def values(runs: list[dict[str, Any]], key: str) -> list[float]:
    """Return ``key`` of each run that has it."""
    return [run[key] for run in runs if key in run]


def paired_ratio(a: list[dict[str, Any]], b: list[dict[str, Any]], key: str) -> float | None:
    """Return the median over runs of ``a[k][key] / b[k][key]``."""
    ratios = [x[key] / y[key] for x, y in zip(a, b, strict=False)
              if key in x and key in y and y[key]]  # fmt: skip
    return med(ratios)


def megabytes(kilobytes: float | None) -> float | None:
    """Return kB as MB, keeping None."""
    return None if kilobytes is None else kilobytes / 1024


def fmt(value: float | None, digits: int = 0, suffix: str = "") -> str:
    """Return a number for a table, or a dash."""
    return "–" if value is None else f"{value:,.{digits}f}{suffix}"


# Machine figures about other work running during a run, kept out of the summary.
MACHINE_LOAD = (
    "load average at start",
    "CPU used by other processes (cores, median / max)",
    # What runs before the bench kept only quiet runs said instead:
    "CPU used by other processes during the crawls (cores, median / max)",
    "load average at end",
)


def verdict(value: float | None, target: float, at_least: bool = True) -> str:
    """Return the verdict of ``value`` against ``target``."""
    if value is None:
        return "not measured"
    met = value >= target if at_least else value <= target
    return "**met**" if met else "**missed**"


# --- Targets ------------------------------------------------------------------------


def cpu_per_request(runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Return, per run, ``{"x": crawler CPU per request}`` (empty for a run that failed)."""
    return [{"x": r["crawler_cpu"] / r["requests"]} if r.get("requests") else {} for r in runs]


def throughput_targets(t: dict[str, Any]) -> list[tuple[str, str, str]]:
    """Return (target, measured, verdict) rows for scenario 1.

    Stage 3 is not held against the thread crawler: its lesson is aiohttp,
    which spends more instructions per request than the stages' own HTTP
    code (see the instructions scenario); it is held against its own floor.
    The CPU targets are set on instruction counts (``instructions_targets``).
    """
    runs, rows = t["runs"], []
    for stage in ("stage1", "stage2"):
        ratio = paired_ratio(runs.get(stage, []), runs.get("threads", []), "pages_per_s")
        rows.append((f"{LABELS[stage]} ≥ 1.4× threads", fmt(ratio, 2, "×"), verdict(ratio, 1.4)))
    ratio = paired_ratio(runs.get("stage3", []), runs.get("scrapy", []), "pages_per_s")
    rows.append(("stage 3 ≥ 12× Scrapy", fmt(ratio, 2, "×"), verdict(ratio, 12)))
    for stage in STAGES:
        ratio = paired_ratio(runs.get(stage, []), runs.get("wget", []), "pages_per_s")
        rows.append((f"{LABELS[stage]} ≥ 2.5× wget -r", fmt(ratio, 2, "×"), verdict(ratio, 2.5)))
    stage2 = [{"x": r["pages_per_s"]} for r in runs.get("stage2", []) if "pages_per_s" in r]
    ceiling = [{"x": c["new_connections"]} for c in t["ceilings"] if c.get("new_connections")]
    ratio = paired_ratio(stage2, ceiling, "x")
    rows.append(
        (
            "stage 2 ≥ 50% of the server's new-connection ceiling",
            fmt(None if ratio is None else ratio * 100, 0, "%"),
            verdict(ratio, 0.5),
        )
    )
    return rows


def per_request(i: dict[str, Any], name: str) -> float | None:
    """Return the instructions per request counted for crawler ``name``, or None."""
    counted = i["counts"].get(name, {})
    return None if "per_request" not in counted else float(counted["per_request"])


def instructions_targets(i: dict[str, Any]) -> list[tuple[str, str, str]]:
    """Return (target, measured, verdict) rows: each stage within FLOOR_RATIO of its floor."""
    rows = []
    for stage, floor in FLOORS.items():
        ours, theirs = per_request(i, stage), per_request(i, floor)
        ratio = ours / theirs if ours and theirs else None
        rows.append((f"{LABELS[stage]} ≤ {FLOOR_RATIO}× the instructions per request of "
                     f"the {LABELS[floor]}", fmt(ratio, 2, "×"),
                     verdict(ratio, FLOOR_RATIO, at_least=False)))  # fmt: skip
    return rows


SCALE_CPU = 1.15  # CPU per URL on the largest site, at most this times the smallest's.
SCALE_BYTES = 300  # Memory per URL on the largest site, at most.


def scale_figure(s: dict[str, Any], stage: str, pages: int, key: str) -> float | None:
    """Return the median of ``key`` over the scale runs of ``stage`` on ``pages`` pages."""
    return med(values(s["runs"][stage][pages], key))


def scale_targets(s: dict[str, Any]) -> list[tuple[str, str, str]]:
    """Return (target, measured, verdict) rows for the scale scenario."""
    rows, smallest, largest = [], s["sizes"][0], s["sizes"][-1]
    for stage in s["runs"]:
        cpu = [scale_figure(s, stage, n, "us_per_url") for n in (smallest, largest)]
        ratio = cpu[1] / cpu[0] if cpu[0] and cpu[1] else None
        rows.append((f"{LABELS[stage]}: CPU per URL at {largest:,} pages ≤ {SCALE_CPU}× "
                     f"at {smallest:,}", fmt(ratio, 2, "×"),
                     verdict(ratio, SCALE_CPU, at_least=False)))  # fmt: skip
        held = scale_figure(s, stage, largest, "bytes_per_url")
        rows.append((f"{LABELS[stage]}: memory per URL at {largest:,} pages ≤ {SCALE_BYTES} "
                     "bytes", fmt(held, 0, " bytes"),
                     verdict(held, SCALE_BYTES, at_least=False)))  # fmt: skip
    return rows


def concurrency_targets(c: dict[str, Any]) -> list[tuple[str, str, str]]:
    """Return (target, measured, verdict) rows for scenario 2."""
    rows = []
    for name in c["runs"]:
        if name not in STAGES:
            continue
        ratios = {tasks: med(values(runs, "ratio")) for tasks, runs in c["runs"][name].items()}
        worst = max((r for r in ratios.values() if r is not None), default=None)
        measured = ", ".join(f"{tasks}: {fmt(r, 2, '×')}" for tasks, r in ratios.items())
        rows.append((f"{LABELS[name]} ≤ 1.10× ideal at every max_tasks", measured,
                     verdict(worst, 1.10, at_least=False)))  # fmt: skip
    return rows


def memory_targets(m: dict[str, Any]) -> list[tuple[str, str, str]]:
    """Return (target, measured, verdict) rows for scenarios 3 and 4."""
    rows, runs = [], m["runs"]
    for stage, goal in (("stage1", 0.2), ("stage2", 0.2), ("stage3", 0.67)):
        if stage not in runs:
            continue
        for n in m["sizes"]:
            ratio = paired_ratio(runs[stage][n], runs["threads"][n], "kb_per_fetch")
            rows.append((f"{LABELS[stage]} ≤ {goal:g}× a thread's memory, {n:,} fetches",
                         fmt(ratio, 2, "×"), verdict(ratio, goal, at_least=False)))  # fmt: skip
    n = m["c10k"]
    for stage in STAGES:
        done = runs.get(stage, {}).get(n) or m.get("c10k_runs", {}).get(stage)
        if done:
            ok = sum(1 for r in done if r.get("complete") and r.get("retries") == 0)
            rows.append((f"C10K: {LABELS[stage]} completes {n:,} held connections, no error",
                         f"{ok} of {len(done)} runs", "**met**" if done and ok == len(done)
                         else "**missed**"))  # fmt: skip
    return rows


def servers_targets(s: dict[str, Any]) -> list[tuple[str, str, str]]:
    """Return (target, measured, verdict) rows for the servers scenario."""

    def ratio(name: str, kind: str) -> float | None:
        ours, theirs = ([{"x": r["per_second"]} for r in s["runs"][n].get(kind, [])
                         if r["per_second"]] for n in (name, "aiohttp"))  # fmt: skip
        return paired_ratio(ours, theirs, "x")

    new, idle = ratio("generators", "new"), s["idle"]["generators"]
    rows = [
        ("stage 2's server ≥ 0.5× aiohttp.web's requests/s, new connections",
         fmt(new, 2, "×"), verdict(new, 0.5)),
    ]  # fmt: skip
    if "wrk" in s["runs"]["generators"]:
        for name, server in SERVER_NAMES[1:]:
            kept = ratio(name, "wrk") if name in s["runs"] else None
            rows.append((f"{server} ≥ 0.8× aiohttp.web's requests/s, keep-alive (wrk)",
                         fmt(kept, 2, "×"), verdict(kept, 0.8)))  # fmt: skip
    rows.append((f"stage 2's server holds {idle['connections']:,} idle connections",
                 f"{idle['held']:,} held", verdict(idle["held"], idle["connections"])))  # fmt: skip
    return rows


# --- Tables -------------------------------------------------------------------------


def table(header: list[str], rows: list[list[str]]) -> str:
    """Return a Markdown table."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def throughput_table(
    t: dict[str, Any], lang: str = "en", counted: dict[str, Any] | None = None
) -> str:
    """Return the throughput table; with ``counted`` (the instructions scenario), its counts too."""
    rows = []
    for name, runs in t["runs"].items():
        ok = [r for r in runs if "wall" in r]
        errors = len(runs) - len(ok)
        correct = {r.get("correct") for r in ok} - {None}
        same = "yes" if correct == {True} else ("no" if correct else "–")
        rows.append([
            label(name, lang), fmt(med(values(ok, "pages_per_s"))),
            fmt(med(values(ok, "wall")), 2), fmt(med(values(ok, "requests"))),
            fmt(med([r["crawler_cpu"] / r["requests"] * 1e6 for r in ok if r.get("requests")])),
            fmt(med([r["server_cpu"] / r["requests"] * 1e6 for r in ok if r.get("requests")])),
            say(same, lang) if same != "–" else same,
            str(errors) if errors else "",
        ])  # fmt: skip
        if counted is not None:  # Counted, beside the times.
            rows[-1].insert(5, fmt(per_request({"counts": counted}, name)))
    header = ["crawler", "pages/s", "wall (s)", "requests", "crawler CPU µs/request",
              "server CPU µs/request", "same as oracle", "errors"]  # fmt: skip
    if counted is not None:
        header.insert(5, "crawler instructions/request")
    return table([say(h, lang) for h in header], rows)


def tracing_table(r: dict[str, Any], lang: str = "en") -> str:
    """Return the table of the tracing scenario: CPU per page with a trace and without."""
    rows = []
    for name, row in tracing.summary(r).items():
        rows.append([
            label(name, lang), fmt(row["off_us"]), fmt(row["on_us"]),
            fmt(None if row["extra_on"] is None else row["extra_on"] * 100, 1, "%"),
            fmt(row["calls_per_page"], 1),
            fmt(None if row["extra_off"] is None else row["extra_off"] * 100, 2, "%"),
        ])  # fmt: skip
    header = ["crawler", "CPU µs per page, no trace", "with a trace", "more with a trace",
              "recorder calls per page", "more without a trace (counted)"]  # fmt: skip
    return table([say(h, lang) for h in header], rows)


def ceiling_table(t: dict[str, Any], lang: str = "en") -> str:
    ceilings = t["ceilings"]
    tool = ceilings[0]["tool"] if ceilings else "–"
    rows = [[say("new connection per request", lang),
             fmt(med([c.get("new_connections") for c in ceilings]))]]  # fmt: skip
    if any(c.get("keep_alive") for c in ceilings):
        rows.append([say("keep-alive", lang), fmt(med([c.get("keep_alive") for c in ceilings]))])
    return (
        say(CEILING, lang).format(tool=tool)
        + "\n\n"
        + table([say("server ceiling", lang), say("requests/s", lang)], rows)
    )


def concurrency_table(c: dict[str, Any], lang: str = "en") -> str:
    tasks_list = list(next(iter(c["runs"].values())).keys())
    header = ["max_tasks", say("ideal, no CPU (s)", lang)] + [label(n, lang) for n in c["runs"]]
    cell = say("{wall} s ({ratio} its ideal of {ideal} s), CPU {cpu} s{warning}", lang)
    rows = []
    for tasks in tasks_list:
        row = [str(tasks), fmt(c["ideal"][tasks]["median"], 2)]
        for name in c["runs"]:
            runs = c["runs"][name][tasks]
            over = any(r.get("max_in_flight", 0) > tasks for r in runs)
            row.append(cell.format(
                wall=fmt(med(values(runs, "wall")), 2),
                ratio=fmt(med(values(runs, "ratio")), 2, "×"),
                ideal=fmt(med(values(runs, "ideal")), 2),
                cpu=fmt(med(values(runs, "crawler_cpu")), 2),
                warning=say(" ⚠ over max_tasks", lang) if over else "",
            ))  # fmt: skip
        rows.append(row)
    return table(header, rows)


def memory_table(m: dict[str, Any], lang: str = "en") -> str:
    header = [
        "crawler",
        "fetches held",
        "RSS before (MB)",
        "RSS held (MB)",
        "kB per fetch",
        "× a thread's",
        "s to hold all",
        "s to finish after release",
        "complete",
    ]
    groups = [(n, name, by_size[n]) for n in m["sizes"] for name, by_size in m["runs"].items()]
    groups += [(m["c10k"], name, done) for name, done in m.get("c10k_runs", {}).items()]
    rows = []
    for n, name, done in groups:
        threads = m["runs"].get("threads", {}).get(n, [])
        runs = [r for r in done if "kb_per_fetch" in r]
        errors = [r["error"] for r in done if "error" in r]
        ratio = paired_ratio(done, threads, "kb_per_fetch")
        complete = say("{complete} of {runs}", lang).format(
            complete=sum(1 for r in runs if r["complete"]), runs=len(done)
        )
        if errors:
            complete += say(" ({failed} failed)", lang).format(failed=len(errors))
        rows.append([
            label(name, lang), f"{med(values(runs, 'held')) or 0:,.0f}",
            fmt(megabytes(med(values(runs, "rss_before_kb"))), 1),
            fmt(megabytes(med(values(runs, "rss_held_kb"))), 1),
            fmt(med(values(runs, "kb_per_fetch")), 1), fmt(ratio, 2, "×"),
            fmt(med(values(runs, "seconds_to_hold_all")), 1),
            fmt(med(values(runs, "seconds_after_release")), 1), complete,
        ])  # fmt: skip
    return table([say(h, lang) for h in header], rows)


def servers_table(s: dict[str, Any], lang: str = "en") -> str:
    """Return the servers scenario's tables: rates and CPU under load, then idle connections.

    Two tables, not one of ten columns: one that wide does not fit the page.
    """
    if "wrk" not in s["runs"]["generators"]:  # A run from before wrk was measured.
        return servers_table_ab_only(s, lang)
    rows, idle_rows = [], []
    # The ratio column divides the row's own wrk median by aiohttp.web's, so
    # it says what the row shows; the targets (targets.md) pair the runs.
    aiohttp_wrk = med([r["per_second"] for r in s["runs"]["aiohttp"]["wrk"]])
    for name, server in SERVER_NAMES:
        if name not in s["runs"]:
            continue
        runs, idle = s["runs"][name], s["idle"].get(name)
        wrk = med([r["per_second"] for r in runs["wrk"]])
        kept = med([r["kept"] for r in runs["keep_alive"]])
        rows.append([
            say(server, lang),
            fmt(med([r["per_second"] for r in runs["new"]])),
            fmt(med([r["per_second"] for r in runs["keep_alive"]])),
            say("{held:,} of {connections:,}", lang).format(
                held=round(kept or 0), connections=s["keep_alive_requests"]),
            fmt(wrk),
            fmt(wrk / aiohttp_wrk if wrk and aiohttp_wrk else None, 2, "×"),
            fmt(med([r["others"] for r in runs["new"] + runs["keep_alive"] + runs["wrk"]]), 2),
        ])  # fmt: skip
        if idle:
            idle_rows.append([
                say(server, lang), fmt(idle["kb_per_connection"], 1),
                say("{held:,} of {connections:,}", lang).format(**idle),
                fmt(idle["machine_busy_cores"], 2),
            ])  # fmt: skip
    header = ["server", "requests/s, new connections (ab)",
              "requests/s, ab -k (HTTP/1.0 keep-alive)", "ab -k requests on a kept connection",
              "requests/s, wrk (HTTP/1.1 keep-alive)", "wrk ÷ aiohttp.web's",
              "other processes' CPU during ab and wrk (cores)"]  # fmt: skip
    idle_header = ["server", "kB per idle connection", "idle connections held",
                   "machine busy while held (cores)"]  # fmt: skip
    return (
        table([say(h, lang) for h in header], rows)
        + "\n\n"
        + table([say(h, lang) for h in idle_header], idle_rows)
    )


SERVER_NAMES = (
    ("aiohttp", "aiohttp.web"),
    ("generators", "stage 2's server"),
    ("llhttp", "step 6 (llhttp)"),
)


def servers_table_ab_only(s: dict[str, Any], lang: str = "en") -> str:
    """Return the table of a servers run measured with ``ab`` alone."""
    rows = []
    for name, server in SERVER_NAMES[:2]:
        runs, idle = s["runs"][name], s["idle"][name]
        rows.append([
            say(server, lang),
            fmt(med([r["per_second"] for r in runs["new"]])),
            fmt(med([r["per_second"] for r in runs["keep_alive"]])),
            fmt(med([r["others"] for r in runs["new"] + runs["keep_alive"]]), 2),
            fmt(idle["kb_per_connection"], 1),
            say("{held:,} of {connections:,}", lang).format(**idle),
            fmt(idle["machine_busy_cores"], 2),
        ])  # fmt: skip
    header = ["server", "requests/s, new connections", "requests/s, keep-alive",
              "other processes' CPU during ab (cores)", "kB per idle connection",
              "idle connections held", "machine busy while held (cores)"]  # fmt: skip
    return table([say(h, lang) for h in header], rows)


def instructions_table(i: dict[str, Any], lang: str = "en") -> str:
    """Return the table of instructions per request, each crawler beside its floor."""
    rows = []
    for name, counted in i["counts"].items():
        floor = FLOORS.get(name)
        ours, theirs = per_request(i, name), per_request(i, floor) if floor else None
        rows.append([
            label(name, lang),
            fmt(ours) if "error" not in counted else say("error", lang),
            label(floor, lang) if floor else "–",
            fmt(ours / theirs if ours and theirs else None, 2, "×"),
        ])  # fmt: skip
    header = ["crawler", "instructions per request", "its floor", "× its floor"]
    return table([say(h, lang) for h in header], rows)


def scale_table(s: dict[str, Any], lang: str = "en") -> str:
    """Return the scale scenario's table: CPU and memory per URL by stage and size."""
    rows, smallest = [], s["sizes"][0]
    for stage, by_size in s["runs"].items():
        first = scale_figure(s, stage, smallest, "us_per_url")
        for pages, runs in by_size.items():
            cpu = scale_figure(s, stage, pages, "us_per_url")
            matched = {r.get("oracle_matched") for r in runs} - {None}
            rows.append([
                label(stage, lang), f"{pages:,}", fmt(med(values(runs, "urls"))), fmt(cpu),
                fmt(cpu / first if cpu and first else None, 2, "×"),
                fmt(med(values(runs, "bytes_per_url"))),
                say("matched" if matched == {True} else "MISMATCH", lang) if matched else "–",
            ])  # fmt: skip
    header = ["crawler", "pages", "URLs", "CPU µs per URL", "× the smallest site's CPU",
              "bytes per URL (peak RSS)", "oracle"]  # fmt: skip
    return table([say(h, lang) for h in header], rows)


def breakdown_table(s: dict[str, Any], lang: str = "en") -> str:
    """Return what the bytes per URL are, by part of the crawl, one column per stage."""
    stages = [stage for stage, b in s["breakdowns"].items() if "bytes_per_url" in b]
    parts: list[str] = []
    for stage in stages:  # In the order of the first stage's, largest first.
        shares = s["breakdowns"][stage]["bytes_per_url"]
        parts += [p for p in sorted(shares, key=lambda p: -shares[p]) if p not in parts]
    parts.sort(key=lambda part: part == "other")  # "other" last, the rest as they were.
    rows = []
    for part in parts:
        cells = [fmt(s["breakdowns"][stage]["bytes_per_url"].get(part)) for stage in stages]
        rows.append([say(part, lang), *cells])
    totals = [fmt(sum(s["breakdowns"][stage]["bytes_per_url"].values())) for stage in stages]
    rows.append([say("traced in all", lang), *totals])
    pages = s["breakdown_pages"]
    if all(pages in s["runs"][stage] for stage in stages):
        rss = [fmt(scale_figure(s, stage, pages, "bytes_per_url")) for stage in stages]
        rows.append([say("RSS, for comparison", lang), *rss])
    return table([say("part of the crawl", lang), *(label(n, lang) for n in stages)], rows)


def parser_table(p: dict[str, Any], lang: str = "en") -> str:
    def cost(run: dict[str, Any], key: str) -> str:
        return fmt(run[key], 1) if key in run else "–"  # link_path: absent in older results.

    stdlib = p["html.parser"]
    rows = [[say("html.parser (standard library)", lang), cost(stdlib, "read"),
             cost(stdlib, "extract"), cost(stdlib, "link_path"), "–"]]  # fmt: skip
    if "selectolax" in p:
        s = p["selectolax"]
        same = say("yes" if s["same_links"] else "no", lang)
        rows.append([say("selectolax (lexbor, C)", lang), cost(s, "read"), cost(s, "extract"),
                     cost(s, "link_path"), same])  # fmt: skip
    header = ["parser", "reading the page (µs)", "whole extract_links (µs)",
              "link path: parse, resolve, normalize, filter (µs)", "same links"]  # fmt: skip
    return table([say(h, lang) for h in header], rows)


# --- Charts -------------------------------------------------------------------------


CHARTS = ("throughput.svg", "concurrency.svg", "memory.svg", "scale.svg")
# Charts are SVG on a transparent background, drawn dark grey on light with
# mid-tone colours, like the docs' timelines: the site's dark theme inverts
# them and turns the hues back (docs/stylesheets/extra.css, ``img.chart``).
INK = "#333333"
# Drawn as wide as the docs' column (998 px: 10.4 inches of 72 points, at
# 4/3 px a point), so the page shows a chart one to one and its words at
# the size of the text beside it; a narrower window scales it down.
FIGSIZE = (10.4, 4.4)
# One colour per crawler, the same in every chart, none of them close to
# the target's line (INK, dashed): the threads line used to be red beside
# a red target.
COLOURS = {
    "stage1": "#4e79a7",
    "stage2": "#f28e2b",
    "stage3": "#59a14f",
    "stage3-uvloop": "#76b7b2",
    "threads": "#b07aa1",
    "scrapy": "#9c755f",
    "wget": "#bab0ac",
}
STYLE: dict[str, Any] = {
    "font.size": 13,
    "legend.fontsize": 12,
    "svg.fonttype": "none",  # Text stays text: the page's fonts draw it, Chinese too.
    "svg.hashsalt": "crawler-bench",  # The same figures give the same file.
    "font.family": ["DejaVu Sans", "Noto Sans CJK SC", "Noto Sans CJK JP", "sans-serif"],
    "text.color": INK,
    "axes.labelcolor": INK,
    "axes.edgecolor": INK,
    "xtick.color": INK,
    "ytick.color": INK,
    "legend.frameon": False,
    "figure.facecolor": "none",
    "axes.facecolor": "none",
    "savefig.transparent": True,
}


def chart_file(name: str, lang: str) -> str:
    """Return the file of chart ``name`` (``throughput.svg``) in ``lang``: ``throughput.zh.svg``."""
    return name if lang == "en" else name.replace(".svg", f".{lang}.svg")


def charts(results: dict[str, Any], out: Path) -> list[str]:
    """Draw the charts into ``out``, in each language; return their English file names."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = []
    with plt.rc_context(typing.cast(Any, STYLE)), warnings.catch_warnings():
        # Without a Chinese font, matplotlib measures Chinese text roughly and
        # says so; the browser draws the text, with its own fonts, either way.
        warnings.filterwarnings("ignore", message="Glyph .* missing from font")
        warnings.filterwarnings("ignore", message="findfont: Font family .* not found")
        for lang in LANGUAGES:
            drawers = (throughput_chart, concurrency_chart, memory_chart, scale_chart)
            for name, draw in zip(CHARTS, drawers, strict=True):
                fig = draw(results, lang)
                if fig is not None:
                    save(fig, out / chart_file(name, lang))
                    names += [name] if lang == "en" else []
    return names


def throughput_chart(results: dict[str, Any], lang: str) -> Any:
    """Return the chart of pages per second by crawler, or None without the scenario."""
    import matplotlib.pyplot as plt

    if "throughput" not in results:
        return None
    t = results["throughput"]
    fig, ax = plt.subplots(figsize=FIGSIZE)
    crawlers = [n for n in t["runs"] if med(values(t["runs"][n], "pages_per_s"))]
    speeds = [med(values(t["runs"][n], "pages_per_s")) or 0.0 for n in crawlers]
    ax.barh([label(n, lang) for n in crawlers], speeds, color="#4e79a7")
    ceiling = med([c.get("new_connections") for c in t["ceilings"]])
    if ceiling:
        ax.axvline(ceiling, color="#e15759", linestyle="--",
                   label=say("server ceiling (new connections, cached answers)", lang))  # fmt: skip
        ax.legend(loc="lower right")
    ax.invert_yaxis()
    ax.set_xlabel(say("pages per second ({urls:,} URLs, max_tasks {max_tasks})", lang).format(**t))
    return fig


def concurrency_chart(results: dict[str, Any], lang: str) -> Any:
    """Return the chart of wall time over the ideal by max_tasks, or None."""
    import matplotlib.pyplot as plt

    if "concurrency" not in results:
        return None
    c = results["concurrency"]
    fig, ax = plt.subplots(figsize=FIGSIZE)
    for name, by_tasks in c["runs"].items():
        tasks = list(by_tasks)
        ratios = [med(values(by_tasks[k], "ratio")) for k in tasks]
        ax.plot(tasks, [math.nan if r is None else r for r in ratios], marker="o",
                linewidth=2, color=COLOURS.get(name), label=label(name, lang))  # fmt: skip
    ax.axhline(1.10, color=INK, linestyle="--", linewidth=1.5,
               label=say("target: 1.10× ideal", lang))  # fmt: skip
    ax.axhline(1.0, color="#a0a0a0", linewidth=0.8)
    ax.set_xscale("log")
    ticks = list(next(iter(c["runs"].values())))
    ax.set_xticks(ticks, [str(k) for k in ticks])
    ax.minorticks_off()
    words = say("max_tasks ({urls:,} URLs, {latency_ms:.0f} ms latency)", lang)
    ax.set_xlabel(words.format(urls=c["urls"], latency_ms=c["latency"] * 1000))
    ax.set_ylabel(say("wall time / ideal", lang))
    ax.legend(loc="upper left", ncols=2)
    return fig


def memory_chart(results: dict[str, Any], lang: str) -> Any:
    """Return the chart of memory per in-flight fetch by crawler, or None."""
    import matplotlib.pyplot as plt

    if "memory" not in results:
        return None
    m = results["memory"]
    fig, ax = plt.subplots(figsize=FIGSIZE)
    crawlers = list(m["runs"])
    width = 0.8 / len(m["sizes"])
    for i, n in enumerate(m["sizes"]):
        kb = [med(values(m["runs"][name][n], "kb_per_fetch")) or 0 for name in crawlers]
        ax.bar([j + i * width for j in range(len(crawlers))], kb, width,
               label=say("{n:,} in flight", lang).format(n=n))  # fmt: skip
    ax.set_xticks([j + width * (len(m["sizes"]) - 1) / 2 for j in range(len(crawlers))])
    ax.set_xticklabels([label(name, lang) for name in crawlers])
    ax.set_ylabel(say("kB of RSS per in-flight fetch", lang))
    ax.legend()
    return fig


def scale_chart(results: dict[str, Any], lang: str) -> Any:
    """Return the chart of CPU and memory per URL by the site's size, or None."""
    import matplotlib.pyplot as plt

    if "scale" not in results:
        return None
    s = results["scale"]
    fig, (cpu, memory) = plt.subplots(1, 2, figsize=FIGSIZE)
    for stage in s["runs"]:
        for ax, key in ((cpu, "us_per_url"), (memory, "bytes_per_url")):
            figures = [scale_figure(s, stage, n, key) for n in s["sizes"]]
            ax.plot(s["sizes"], [math.nan if f is None else f for f in figures], marker="o",
                    linewidth=2, color=COLOURS.get(stage), label=label(stage, lang))  # fmt: skip
    memory.axhline(SCALE_BYTES, color=INK, linestyle="--", linewidth=1.5,
                   label=say("target: 300 bytes", lang))  # fmt: skip
    for ax, ylabel in ((cpu, "CPU µs per URL"), (memory, "bytes per URL (peak RSS)")):
        ax.set_xscale("log")
        ax.set_xticks(s["sizes"], [f"{n:,}" for n in s["sizes"]])
        ax.minorticks_off()
        ax.set_ylim(bottom=0)
        ax.set_xlabel(say("pages (log scale)", lang))
        ax.set_ylabel(say(ylabel, lang))
    cpu.legend(loc="lower left")
    memory.legend(loc="lower left")
    return fig


def save(fig: Any, path: Path) -> str:
    """Write ``fig`` to ``path`` (SVG, with no date in it), close it; return the file name."""
    import matplotlib.pyplot as plt

    fig.tight_layout()
    fig.savefig(path, format="svg", metadata={"Date": None})
    plt.close(fig)
    return path.name


# --- The summary --------------------------------------------------------------------


def summary(results: dict[str, Any], chart_names: list[str], lang: str = "en") -> str:
    """Return the Markdown summary of a benchmark run, in ``lang`` ("en" or "zh")."""
    machine = results["machine"]
    runs = say("median of {runs} runs", lang).format(runs=results["runs"])
    if results["quick"]:
        runs = say("a quick run, one run each and smaller scenarios: indicative only", lang)
    parts = [
        "<!-- Written by `python -m shared.bench`; do not edit by hand. -->",
        say("Measured on {date} ({runs}), commit `{commit}`.", lang).format(
            date=machine["date"], runs=runs, commit=machine["commit"]
        ),
        "",
    ]
    if "throughput" in results:
        t = results["throughput"]
        i = results.get("instructions", {})
        counted = i.get("counts") if "error" not in i else None
        parts += [heading("Throughput", lang), "", say(THROUGHPUT, lang).format(**t), "",
                  throughput_table(t, lang, counted), "", ceiling_table(t, lang), ""]  # fmt: skip
        parts += chart("throughput.svg", "Pages per second, by crawler", chart_names, lang)
    if "instructions" in results and "error" not in results["instructions"]:
        i = results["instructions"]
        small, big = i["pages"]
        text = say(INSTRUCTIONS, lang).format(small=small, big=big, max_tasks=i["max_tasks"])
        parts += [heading("Instructions per request", lang), "", text, "",
                  instructions_table(i, lang), ""]  # fmt: skip
    if "concurrency" in results:
        c = results["concurrency"]
        paid = any("server_cpu_per_request" in r for by in c["runs"].values()
                   for runs in by.values() for r in runs)  # fmt: skip
        words = CONCURRENCY_SERVER if paid else CONCURRENCY  # Older runs left the server out.
        text = say(words, lang).format(latency_ms=c["latency"] * 1000, **c)
        parts += [heading("Concurrency against the ideal", lang), "", text, "",
                  concurrency_table(c, lang), ""]  # fmt: skip
        parts += chart(
            "concurrency.svg", "Wall time over the ideal, by max_tasks", chart_names, lang
        )
    if "memory" in results:
        m = results["memory"]
        text = say(MEMORY_WARM, lang).format(**m) if "warm_up_pages" in m else say(MEMORY, lang)
        parts += [heading("Memory per in-flight fetch, and C10K", lang), "", text,
                  "", memory_table(m, lang), ""]  # fmt: skip
        parts += chart("memory.svg", "Memory per in-flight fetch", chart_names, lang)
    if "scale" in results:
        sc = results["scale"]
        parts += [heading("A million URLs", lang), "", say(SCALE, lang).format(**sc), "",
                  scale_table(sc, lang), ""]  # fmt: skip
        parts += chart(
            "scale.svg", "CPU and memory per URL, by the size of the site", chart_names, lang
        )
        parts += [heading("What the bytes of a URL are", lang), "",
                  say(SCALE_BREAKDOWN, lang).format(pages=sc["breakdown_pages"]), "",
                  breakdown_table(sc, lang), ""]  # fmt: skip
    if "servers" in results and "error" not in results["servers"]:
        v = results["servers"]
        parts += [heading("Stage 2's HTTP server beside aiohttp.web", lang), "",
                  say(SERVERS_KEEP_ALIVE if "wrk_seconds" in v else SERVERS, lang).format(**v),
                  "", servers_table(v, lang), ""]  # fmt: skip
    if "tracing" in results:
        r = results["tracing"]
        text = say(TRACING, lang).format(noop_ns=r["noop_call_s"] * 1e9, **r)
        parts += [heading("The cost of a trace", lang), "", text, "", tracing_table(r, lang), ""]
    if "parsers" in results:
        p = results["parsers"]
        parts += [heading("The link parser", lang), "", say(PARSERS, lang).format(**p), "",
                  parser_table(p, lang), ""]  # fmt: skip
    # How busy the machine was tells the maintainers whether to trust a run
    # (see targets.md); it says nothing to a reader about the crawlers.
    shown = [[say(k, lang) if k in MACHINE else k, str(v)]
             for k, v in machine.items() if k not in MACHINE_LOAD]  # fmt: skip
    parts += [heading("Machine", lang), "", table(["", ""], shown), ""]
    return "\n".join(parts)


def heading(title: str, lang: str) -> str:
    """Return a section's heading; in Chinese, with the English heading's anchor."""
    if lang == "en":
        return f"### {title}"
    anchor = re.sub(r"[-\s]+", "-", re.sub(r"[^\w\s-]", "", title).strip().lower())
    return f"### {say(title, lang)} {{ #{anchor} }}"


def chart(name: str, alt: str, chart_names: list[str], lang: str) -> list[str]:
    """Return the lines that show a chart in ``lang``, if it was drawn."""
    if name not in chart_names:
        return []
    return [f"![{say(alt, lang)}]({chart_file(name, lang)}){{ .chart }}", ""]


def targets(results: dict[str, Any]) -> str:
    """Return the Markdown of the project's targets, each with its verdict, and the load.

    For the maintainers: written beside summary.md, not part of the site.
    """
    rows = []
    if "throughput" in results:
        rows += throughput_targets(results["throughput"])
    if "concurrency" in results:
        rows += concurrency_targets(results["concurrency"])
    if "memory" in results:
        rows += memory_targets(results["memory"])
    if "servers" in results and "error" not in results["servers"]:
        rows += servers_targets(results["servers"])
    if "tracing" in results:
        rows += tracing.targets(results["tracing"])
    if "instructions" in results and "error" not in results["instructions"]:
        rows += instructions_targets(results["instructions"])
    if "scale" in results:
        rows += scale_targets(results["scale"])
    load = [[k, str(v)] for k, v in results["machine"].items() if k in MACHINE_LOAD]
    return "\n".join([
        "<!-- Written by `python -m shared.bench`; do not edit by hand. -->",
        "### Targets", "",
        table(["target", "measured", "verdict"], [list(r) for r in rows]), "",
        "### Load on the machine", "",
        table(["", ""], load), "",
    ])  # fmt: skip


def write(results: dict[str, Any], out: Path) -> Path:
    """Write results.json, the charts and the summaries into ``out``; return summary.md's path."""
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.json").write_text(json.dumps(results, indent=1, default=str) + "\n")
    try:
        names = charts(results, out)
    except ImportError:  # matplotlib comes with the bench extra; without it, tables only.
        names = []
    path = out / "summary.md"
    for lang in LANGUAGES:  # summary.md, then summary.zh.md.
        suffix = "" if lang == "en" else f".{lang}"
        (out / f"summary{suffix}.md").write_text(summary(results, names, lang))
    (out / "targets.md").write_text(targets(results))
    return path

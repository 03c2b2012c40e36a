"""Turn the scenarios' figures into ``summary.md``, PNG charts, ``results.json`` and ``targets.md``.

Every figure is the median of the runs; every ratio is the median of the
ratios taken run by run (run k of one crawler against run k of the other,
measured minutes apart in the same benchmark), so slow drifts of the
machine cancel out.  ``summary.md`` is for the reader (the docs include
it); ``targets.md`` is for the maintainers: each target of issue 7 with its
verdict (met, missed, or not measured when a crawler or tool was not
installed), and how busy the machine was during the run.
"""

from __future__ import annotations

import json
import math
import statistics
from pathlib import Path
from typing import Any

from shared.bench import tracing

LABELS = {
    "stage1": "stage 1 (callbacks)",
    "stage2": "stage 2 (generators)",
    "stage3": "stage 3 (asyncio)",
    "stage3-uvloop": "stage 3 on uvloop",
    "threads": "threads (blocking)",
    "scrapy": "Scrapy",
    "wget": "wget -r",
}
STAGES = ("stage1", "stage2", "stage3")


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


def throughput_targets(t: dict[str, Any]) -> list[tuple[str, str, str]]:
    """Return (target, measured, verdict) rows for scenario 1."""
    runs, rows = t["runs"], []
    for stage, goal in (("stage1", 1.4), ("stage2", 1.4), ("stage3", 1.25)):
        ratio = paired_ratio(runs.get(stage, []), runs.get("threads", []), "pages_per_s")
        rows.append(
            (f"{LABELS[stage]} ≥ {goal}× threads", fmt(ratio, 2, "×"), verdict(ratio, goal))
        )
    ratio = paired_ratio(runs.get("stage3", []), runs.get("scrapy", []), "pages_per_s")
    rows.append(("stage 3 ≥ 12× Scrapy", fmt(ratio, 2, "×"), verdict(ratio, 12)))
    for stage in STAGES:
        ratio = paired_ratio(runs.get(stage, []), runs.get("wget", []), "pages_per_s")
        rows.append((f"{LABELS[stage]} ≥ 1.3× wget -r", fmt(ratio, 2, "×"), verdict(ratio, 1.3)))
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
    for stage, goal in (("stage1", 0.2), ("stage2", 0.2), ("stage3", 0.75)):
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
    new = [[{"x": r["per_second"]} for r in s["runs"][name]["new"] if r["per_second"]]
           for name in ("generators", "aiohttp")]  # fmt: skip
    ratio = paired_ratio(new[0], new[1], "x")
    idle = s["idle"]["generators"]
    return [
        ("stage 2's server ≥ 0.5× aiohttp.web's requests/s, new connections",
         fmt(ratio, 2, "×"), verdict(ratio, 0.5)),
        (f"stage 2's server holds {idle['connections']:,} idle connections",
         f"{idle['held']:,} held", verdict(idle["held"], idle["connections"])),
    ]  # fmt: skip


# --- Tables -------------------------------------------------------------------------


def table(header: list[str], rows: list[list[str]]) -> str:
    """Return a Markdown table."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def throughput_table(t: dict[str, Any]) -> str:
    rows = []
    for name, runs in t["runs"].items():
        ok = [r for r in runs if "wall" in r]
        errors = len(runs) - len(ok)
        correct = {r.get("correct") for r in ok} - {None}
        rows.append([
            LABELS[name], fmt(med(values(ok, "pages_per_s"))), fmt(med(values(ok, "wall")), 2),
            fmt(med(values(ok, "requests"))),
            fmt(med([r["crawler_cpu"] / r["requests"] * 1e6 for r in ok if r.get("requests")])),
            fmt(med([r["server_cpu"] / r["requests"] * 1e6 for r in ok if r.get("requests")])),
            "yes" if correct == {True} else ("no" if correct else "–"),
            str(errors) if errors else "",
        ])  # fmt: skip
    header = ["crawler", "pages/s", "wall (s)", "requests", "crawler CPU µs/request",
              "server CPU µs/request", "same as oracle", "errors"]  # fmt: skip
    return table(header, rows)


def ceiling_table(t: dict[str, Any]) -> str:
    ceilings = t["ceilings"]
    tool = ceilings[0]["tool"] if ceilings else "–"
    rows = [["new connection per request", fmt(med([c.get("new_connections") for c in ceilings]))]]
    if any(c.get("keep_alive") for c in ceilings):
        rows.append(["keep-alive", fmt(med([c.get("keep_alive") for c in ceilings]))])
    return f"Measured with {tool}, GET /pages/1/.\n\n" + table(
        ["server ceiling", "requests/s"], rows
    )


def concurrency_table(c: dict[str, Any]) -> str:
    tasks_list = list(next(iter(c["runs"].values())).keys())
    header = ["max_tasks", "ideal, no CPU (s)"] + [LABELS[name] for name in c["runs"]]
    rows = []
    for tasks in tasks_list:
        row = [str(tasks), fmt(c["ideal"][tasks]["median"], 2)]
        for name in c["runs"]:
            runs = c["runs"][name][tasks]
            wall, ratio = med(values(runs, "wall")), med(values(runs, "ratio"))
            cpu, ideal = med(values(runs, "crawler_cpu")), med(values(runs, "ideal"))
            over = any(r.get("max_in_flight", 0) > tasks for r in runs)
            warning = " ⚠ over max_tasks" if over else ""
            row.append(
                f"{fmt(wall, 2)} s ({fmt(ratio, 2, '×')} its ideal of {fmt(ideal, 2)} s), "
                f"CPU {fmt(cpu, 2)} s{warning}"
            )
        rows.append(row)
    return table(header, rows)


def memory_table(m: dict[str, Any]) -> str:
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
        complete = sum(1 for r in runs if r["complete"])
        rows.append([
            LABELS[name], f"{med(values(runs, 'held')) or 0:,.0f}",
            fmt(megabytes(med(values(runs, "rss_before_kb"))), 1),
            fmt(megabytes(med(values(runs, "rss_held_kb"))), 1),
            fmt(med(values(runs, "kb_per_fetch")), 1), fmt(ratio, 2, "×"),
            fmt(med(values(runs, "seconds_to_hold_all")), 1),
            fmt(med(values(runs, "seconds_after_release")), 1),
            f"{complete} of {len(done)}" + (f" ({len(errors)} failed)" if errors else ""),
        ])  # fmt: skip
    return table(header, rows)


def servers_table(s: dict[str, Any]) -> str:
    """Return the servers scenario's table: rates, CPU, load and idle memory."""
    rows = []
    for name, label in (("aiohttp", "aiohttp.web"), ("generators", "stage 2's server")):
        runs, idle = s["runs"][name], s["idle"][name]
        rows.append([
            label,
            fmt(med([r["per_second"] for r in runs["new"]])),
            fmt(med([r["per_second"] for r in runs["keep_alive"]])),
            fmt(med([r["others"] for r in runs["new"] + runs["keep_alive"]]), 2),
            fmt(idle["kb_per_connection"], 1),
            f"{idle['held']:,} of {idle['connections']:,}",
            fmt(idle["machine_busy_cores"], 2),
        ])  # fmt: skip
    header = ["server", "requests/s, new connections", "requests/s, keep-alive",
              "other processes' CPU during ab (cores)", "kB per idle connection",
              "idle connections held", "machine busy while held (cores)"]  # fmt: skip
    return table(header, rows)


def parser_table(p: dict[str, Any]) -> str:
    def cost(run: dict[str, Any], key: str) -> str:
        return fmt(run[key], 1) if key in run else "–"  # link_path: absent in older results.

    stdlib = p["html.parser"]
    rows = [["html.parser (standard library)", cost(stdlib, "read"), cost(stdlib, "extract"),
             cost(stdlib, "link_path"), "–"]]  # fmt: skip
    if "selectolax" in p:
        s = p["selectolax"]
        rows.append(["selectolax (lexbor, C)", cost(s, "read"), cost(s, "extract"),
                     cost(s, "link_path"), "yes" if s["same_links"] else "no"])  # fmt: skip
    return table(["parser", "reading the page (µs)", "whole extract_links (µs)",
                  "link path: parse, resolve, normalize, filter (µs)", "same links"],
                 rows)  # fmt: skip


# --- Charts -------------------------------------------------------------------------


def charts(results: dict[str, Any], out: Path) -> list[str]:
    """Draw the charts into ``out``; return their file names."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = []
    if "throughput" in results:
        t = results["throughput"]
        fig, ax = plt.subplots(figsize=(7, 3.2), dpi=90)
        crawlers = [n for n in t["runs"] if med(values(t["runs"][n], "pages_per_s"))]
        speeds = [med(values(t["runs"][n], "pages_per_s")) or 0.0 for n in crawlers]
        ax.barh([LABELS[n] for n in crawlers], speeds, color="#3f51b5")
        ceiling = med([c.get("new_connections") for c in t["ceilings"]])
        if ceiling:
            ax.axvline(
                ceiling, color="#d32f2f", linestyle="--", label="server ceiling (new connections)"
            )
            ax.legend(loc="lower right", fontsize=8)
        ax.invert_yaxis()
        ax.set_xlabel(f"pages per second ({t['urls']:,} URLs, max_tasks {t['max_tasks']})")
        names.append(save(fig, out / "throughput.png"))
    if "concurrency" in results:
        c = results["concurrency"]
        fig, ax = plt.subplots(figsize=(7, 3.2), dpi=90)
        for name, by_tasks in c["runs"].items():
            tasks = list(by_tasks)
            ratios = [med(values(by_tasks[k], "ratio")) for k in tasks]
            ax.plot(tasks, [math.nan if r is None else r for r in ratios], marker="o",
                    label=LABELS[name])  # fmt: skip
        ax.axhline(1.10, color="#d32f2f", linestyle="--", label="target: 1.10× ideal")
        ax.axhline(1.0, color="grey", linewidth=0.8)
        ax.set_xscale("log")
        ticks = list(next(iter(c["runs"].values())))
        ax.set_xticks(ticks, [str(k) for k in ticks])
        ax.minorticks_off()
        ax.set_xlabel(f"max_tasks ({c['urls']:,} URLs, {c['latency'] * 1000:.0f} ms latency)")
        ax.set_ylabel("wall time / ideal")
        ax.legend(fontsize=8)
        names.append(save(fig, out / "concurrency.png"))
    if "memory" in results:
        m = results["memory"]
        fig, ax = plt.subplots(figsize=(7, 3.2), dpi=90)
        crawlers = list(m["runs"])
        width = 0.8 / len(m["sizes"])
        for i, n in enumerate(m["sizes"]):
            kb = [med(values(m["runs"][name][n], "kb_per_fetch")) or 0 for name in crawlers]
            ax.bar(
                [j + i * width for j in range(len(crawlers))], kb, width, label=f"{n:,} in flight"
            )
        ax.set_xticks([j + width * (len(m["sizes"]) - 1) / 2 for j in range(len(crawlers))])
        ax.set_xticklabels([LABELS[name] for name in crawlers], fontsize=8)
        ax.set_ylabel("kB of RSS per in-flight fetch")
        ax.legend(fontsize=8)
        names.append(save(fig, out / "memory.png"))
    return names


def save(fig: Any, path: Path) -> str:
    fig.tight_layout()
    fig.savefig(path)
    import matplotlib.pyplot as plt

    plt.close(fig)
    return path.name


# --- The summary --------------------------------------------------------------------


def summary(results: dict[str, Any], chart_names: list[str]) -> str:
    """Return the Markdown summary of a benchmark run."""
    machine = results["machine"]
    runs = f"median of {results['runs']} runs"
    if results["quick"]:
        runs = "a quick run, one run each and smaller scenarios: indicative only"
    parts = [
        "<!-- Written by `python -m shared.bench`; do not edit by hand. -->",
        f"Measured on {machine['date']} ({runs}), commit `{machine['commit']}`.",
        "",
    ]
    if "throughput" in results:
        t = results["throughput"]
        parts += [
            "### Throughput",
            "",
            f"A {t['pages']:,}-page site ({t['urls']:,} URLs, redirects included) with no "
            f"latency, max_tasks {t['max_tasks']}. Pages/s is the site's {t['urls']:,} URLs "
            "divided by the wall time of the whole crawl; requests are counted by the server "
            "(`wget -r` asks for some pages twice). CPU per request is measured from outside "
            "the processes.",
            "",
            throughput_table(t),
            "",
            ceiling_table(t),
            "",
        ]
        if "throughput.png" in chart_names:
            parts += ["![Pages per second, by crawler](throughput.png)", ""]
    if "concurrency" in results:
        c = results["concurrency"]
        parts += [
            "### Concurrency against the ideal",
            "",
            f"A {c['pages']:,}-page site ({c['urls']:,} URLs), {c['latency'] * 1000:.0f} ms "
            "latency per response. The ideal is a simulated work-conserving crawler on the "
            "site's own link graph, with the same number of slots, every fetch waiting "
            "exactly the latency, and then each page costing the CPU time the real crawler "
            "measured per URL in that run, on one core, one page at a time: the median over "
            "five orders of queuing each page's links. So the ratio counts time lost waiting, "
            "not the speed of the machine. The second column is the ideal without CPU. "
            f"No crawler can beat the graph's depth times the latency, {c['lower_bound']:.1f} s. "
            "Each cell: median wall time, its ratio to that crawler's own ideal, and the "
            "crawler's CPU time.",
            "",
            concurrency_table(c),
            "",
        ]
        if "concurrency.png" in chart_names:
            parts += ["![Wall time over the ideal, by max_tasks](concurrency.png)", ""]
    if "memory" in results:
        m = results["memory"]
        parts += [
            "### Memory per in-flight fetch, and C10K",
            "",
            "A slow local server holds every request until all of them are in flight; the "
            "crawler's RSS is read then. kB per fetch = (RSS held − RSS before the crawl) / "
            "fetches held; it includes the crawl's bookkeeping of each URL (a few hundred "
            "bytes). The thread crawler runs one thread per fetch, with the default stack size.",
            "",
            memory_table(m),
            "",
        ]
        if "memory.png" in chart_names:
            parts += ["![Memory per in-flight fetch](memory.png)", ""]
    if "servers" in results and "error" not in results["servers"]:
        v = results["servers"]
        parts += [
            "### Stage 2's HTTP server beside aiohttp.web",
            "",
            f"Both serve the test site from a process of their own, without a response cache. "
            f"`ab` asks for one content page, {v['concurrency']} at a time: "
            f"{v['requests']:,} requests with a new connection each, then "
            f"{v['keep_alive_requests']:,} with keep-alive (`-k`); the servers take turns, "
            "median of the runs. `ab` itself needs most of a core, and the machine is "
            "shared, so the other processes' CPU is shown beside. Idle connections: each "
            "client connects, asks for the page once and goes quiet; kB per idle "
            "connection = (server RSS with all of them open − RSS before) / connections; "
            "held = how many then answered a second request on the same connection.",
            "",
            servers_table(v),
            "",
        ]
    if "tracing" in results:
        r = results["tracing"]
        parts += [
            "### The cost of a trace",
            "",
            f"A {r['pages']:,}-page site with no latency, max_tasks {r['max_tasks']}, crawled "
            "with `trace=` and without, turn about. CPU per page is the crawl's own CPU time "
            "(writing the trace included) over the URLs it recorded. Without a trace the "
            "crawlers still call a recorder that does nothing; that cost is counted: the "
            "calls per page of the traced crawl times the cost of one call "
            f"({r['noop_call_s'] * 1e9:.0f} ns).",
            "",
            tracing.table(r),
            "",
        ]
    if "parsers" in results:
        p = results["parsers"]
        parts += [
            "### The link parser",
            "",
            f"Cost of finding the links of one page of the test site ({p['pages']} pages, "
            f"{p['bytes_per_page']:,.0f} bytes on average), best of five.",
            "",
            parser_table(p),
            "",
        ]
    # How busy the machine was tells the maintainers whether to trust a run
    # (see targets.md); it says nothing to a reader about the crawlers.
    shown = [[k, str(v)] for k, v in machine.items() if k not in MACHINE_LOAD]
    parts += ["### Machine", "", table(["", ""], shown), ""]
    return "\n".join(parts)


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
    load = [[k, str(v)] for k, v in results["machine"].items() if k in MACHINE_LOAD]
    return "\n".join([
        "<!-- Written by `python -m shared.bench`; do not edit by hand. -->",
        "### Targets", "",
        table(["target", "measured", "verdict"], [list(r) for r in rows]), "",
        "### Load on the machine", "",
        table(["", ""], load), "",
    ])  # fmt: skip


def write(results: dict[str, Any], out: Path) -> Path:
    """Write results.json, the charts and summary.md into ``out``; return the summary's path."""
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.json").write_text(json.dumps(results, indent=1, default=str) + "\n")
    try:
        names = charts(results, out)
    except ImportError:  # matplotlib comes with the bench extra; without it, tables only.
        names = []
    path = out / "summary.md"
    path.write_text(summary(results, names))
    (out / "targets.md").write_text(targets(results))
    return path

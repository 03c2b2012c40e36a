"""The four scenarios of issue 7, each returning plain data for ``report``.

Within a scenario the crawlers take turns, run after run (the order
rotates each run), so that every ratio compares figures taken under the
same conditions, and each figure is the median of ``runs`` runs.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import re
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from typing import Any

from shared.bench import others
from shared.bench.procs import PYTHON, ROOT, Server, last_json, process_cpu, timed_run
from shared.bench.run_one import proc_status
from shared.bench.simulate import depth, simulate
from shared.bench.sitegraph import Node, link_graph
from shared.testsite.site import expected_results

STAGES = ["stage1", "stage2", "stage3"]
PACKAGES = {"stage1": "stage1_callbacks", "stage2": "stage2_generators", "stage3": "stage3_asyncio"}
Log = Callable[[str], None]
WARM_UP_PAGES = 50  # The site a held crawl's crawler crawls first.


@dataclasses.dataclass(frozen=True)
class Config:
    """Sizes and repetitions of one benchmark run."""

    runs: int = 3
    throughput_pages: int = 10_000
    throughput_tasks: int = 100
    concurrency_pages: int = 2_000
    latency_ms: float = 100.0
    concurrency_tasks: tuple[int, ...] = (10, 100, 500, 1000)
    memory_sizes: tuple[int, ...] = (1_000, 10_000)
    c10k: int = 10_000
    ceiling_requests: int = 20_000
    seeds: int = 5  # Link orders simulated for the ideal.
    server_requests: int = 10_000  # ab requests on new connections, per server and run.
    server_keep_alive_requests: int = 20_000  # ab -k: HTTP/1.0 keep-alive.
    server_wrk_seconds: int = 5  # wrk: HTTP/1.1 keep-alive, for a fixed time.
    server_concurrency: int = 50
    idle_connections: int = 10_000
    tracing_pages: int = 2_000  # The site crawled with and without a trace.
    # The scale scenario: simulated sites of these sizes, each crawled this
    # many times by each stage; one more crawl says what the bytes are.
    scale_pages: tuple[int, ...] = (10_000, 100_000, 1_000_000)
    scale_runs: int = 1
    scale_breakdown_pages: int = 100_000
    scale_warm_up_pages: int = 1_000  # Crawled first in each process: the memory baseline.
    # Instructions per request: the two site sizes whose counts are differenced.
    instruction_pages: tuple[int, int] = (100, 400)


FULL = Config()
QUICK = Config(
    runs=1, throughput_pages=1_000, concurrency_pages=500, concurrency_tasks=(50, 500),
    memory_sizes=(1_000,), ceiling_requests=5_000, server_requests=2_000,
    server_keep_alive_requests=4_000, server_wrk_seconds=3, idle_connections=1_000,
    tracing_pages=500, scale_pages=(1_000, 10_000), scale_breakdown_pages=10_000,
    instruction_pages=(50, 150),
)  # fmt: skip


def installed(module: str) -> bool:
    """Tell whether ``module`` can be imported."""
    return importlib.util.find_spec(module) is not None


def crawlers(extras: bool) -> list[str]:
    """Return the crawlers that are installed; with ``extras``, uvloop, Scrapy and wget too."""
    names = [name for name in STAGES if installed(PACKAGES[name])]
    if extras and installed("uvloop") and "stage3" in names:
        names.append("stage3-uvloop")
    names.append("threads")
    if extras and installed("scrapy"):
        names.append("scrapy")
    if extras and others.have("wget"):
        names.append("wget")
    return names


def rotated(names: list[str], run: int) -> list[str]:
    """Return ``names`` rotated by ``run``, so no crawler always goes first."""
    k = run % len(names)
    return names[k:] + names[:k]


def median(values: list[float]) -> float | None:
    """Return the median, or None for no values."""
    return statistics.median(values) if values else None


def run_crawl(name: str, server: Server, max_tasks: int, **flags: Any) -> dict[str, Any]:
    """Crawl ``server``'s site with crawler ``name`` in a subprocess; return its figures."""
    if name == "scrapy":
        command = [PYTHON, "-m", "shared.bench.others", "scrapy", "--root", server.root,
                   "--max-tasks", str(max_tasks)]  # fmt: skip
    elif name == "wget":
        directory = tempfile.mkdtemp(prefix="bench-wget-")
        command = others.wget_command(server.root, directory)
    else:
        command = [PYTHON, "-m", "shared.bench.run_one", "--crawler", name,
                   "--root", server.root, "--max-tasks", str(max_tasks)]  # fmt: skip
        for flag, value in flags.items():
            command += [f"--{flag.replace('_', '-')}", str(value)]
    server.get_json("_bench/reset")
    outcome = timed_run(command, timeout=1200, server=server)
    stats = server.get_json("_bench/stats")
    figures = last_json(outcome["stdout"]) or {}
    if name == "wget":
        figures["wall"] = outcome["wall"]
        subprocess.run(["rm", "-rf", directory], check=False)
    ok = outcome["code"] == 0 or (name == "wget" and outcome["code"] == 8)  # 8: some 404s.
    if not ok or "wall" not in figures:
        return {"error": (outcome["stderr"] or outcome["stdout"])[-800:]}
    figures.update(
        requests=stats["requests"], max_in_flight=stats["max_in_flight"],
        # The crawl's own CPU time when the crawler reports it (not its start-up).
        crawler_cpu=figures.get("cpu", outcome["cpu"]),
        server_cpu=outcome["server_cpu"], others=outcome["others"],
    )  # fmt: skip
    return figures


# --- 1. Throughput ------------------------------------------------------------------


def throughput(config: Config, log: Log) -> dict[str, Any]:
    """Pages per second on the big site at no latency, and the server's ceiling."""
    names = crawlers(extras=True)
    runs: dict[str, list[dict[str, Any]]] = {name: [] for name in names}
    ceilings: list[dict[str, Any]] = []
    with Server("shared.bench.serve", "--cache", "--pages", str(config.throughput_pages)) as server:
        urls = len(expected_results(server.root, config.throughput_pages))
        for run in range(config.runs):
            for name in rotated(names, run):
                result = run_crawl(name, server, config.throughput_tasks,
                                   expect_pages=config.throughput_pages)  # fmt: skip
                if "wall" in result:
                    result["pages_per_s"] = urls / result["wall"]
                runs[name].append(result)
                log(f"throughput run {run + 1}/{config.runs} {name}: {brief(result)}")
            ceilings.append(ceiling(server, config.ceiling_requests, config.throughput_tasks))
            log(f"throughput run {run + 1}/{config.runs} server ceiling: {ceilings[-1]}")
    return {
        "pages": config.throughput_pages, "urls": urls, "max_tasks": config.throughput_tasks,
        "runs": runs, "ceilings": ceilings,
    }  # fmt: skip


def brief(result: dict[str, Any]) -> str:
    """Return a one-line account of a crawl for the progress log."""
    if "error" in result:
        return "ERROR " + str(result["error"]).strip().splitlines()[-1][:200]
    keys = ("wall", "pages_per_s", "urls", "requests", "correct", "crawler_cpu", "others")
    return " ".join(
        f"{key}={result[key]:.2f}" if isinstance(result[key], float) else f"{key}={result[key]}"
        for key in keys
        if key in result
    )


def ceiling(server: Server, requests: int, concurrency: int) -> dict[str, Any]:
    """Measure the server's requests per second on new connections (and kept alive)."""
    url = server.root + "pages/1/"
    if others.have("ab"):
        tool, result = "ab", {}
        for keep_alive in (False, True):
            done = timed_run(others.ab_command(url, requests, concurrency, keep_alive), 600)
            match = re.search(r"Requests per second:\s+([\d.]+)", done["stdout"])
            key = "keep_alive" if keep_alive else "new_connections"
            result[key] = float(match.group(1)) if match else None
    elif others.have("wrk"):
        tool = "wrk"
        command = ["wrk", "-t1", f"-c{concurrency}", "-d5s", "-H", "Connection: close", url]
        match = re.search(r"Requests/sec:\s+([\d.]+)", timed_run(command, 600)["stdout"])
        result = {"new_connections": float(match.group(1)) if match else None}
    else:
        tool = "raw-socket client (Python; a lower bound)"
        command = [PYTHON, "-m", "shared.bench.others", "load", "--url", url,
                   "--requests", str(requests), "--concurrency", str(concurrency)]  # fmt: skip
        figures = last_json(timed_run(command, 600)["stdout"]) or {}
        result = {"new_connections": figures.get("per_second")}
    return {"tool": tool, **result}


# --- 2. Concurrency -----------------------------------------------------------------


def concurrency(config: Config, log: Log) -> dict[str, Any]:
    """Wall time against the simulated ideal, per crawler and max_tasks, at 100 ms."""
    names = [name for name in crawlers(extras=False)]
    latency = config.latency_ms / 1000
    pages = config.concurrency_pages
    server = Server("shared.bench.serve", "--cache", "--pages", str(pages),
                    "--latency-ms", str(config.latency_ms))  # fmt: skip
    with server:
        graph = link_graph(server.root, pages)
        ideals, bound = {}, depth(graph, server.root) * latency
        for tasks in config.concurrency_tasks:
            spans = [simulate(graph, server.root, tasks, latency, seed).makespan
                     for seed in range(config.seeds)]  # fmt: skip
            ideals[tasks] = {"median": statistics.median(spans), "min": min(spans),
                             "max": max(spans)}  # fmt: skip
        log(f"concurrency: {len(graph)} URLs, ideal {ideals}, lower bound {bound:.2f} s")
        runs: dict[str, dict[int, list[dict[str, Any]]]] = {
            name: {tasks: [] for tasks in config.concurrency_tasks} for name in names
        }
        for run in range(config.runs):
            for tasks in config.concurrency_tasks:
                for name in rotated(names, run):
                    result = run_crawl(name, server, tasks, expect_pages=pages)
                    if "wall" in result:
                        add_ideal(result, graph, server.root, tasks, latency, config.seeds)
                        result["ratio_no_cpu"] = result["wall"] / ideals[tasks]["median"]
                    runs[name][tasks].append(result)
                    log(f"concurrency run {run + 1}/{config.runs} max_tasks={tasks} {name}: "
                        f"{brief(result)} ratio={result.get('ratio', 0):.3f}")  # fmt: skip
    return {"pages": pages, "urls": len(graph), "latency": latency, "ideal": ideals,
            "lower_bound": bound, "runs": runs}  # fmt: skip


def add_ideal(
    result: dict[str, Any],
    graph: dict[str, Node],
    root: str,
    tasks: int,
    latency: float,
    seeds: int,
) -> None:
    """Add the ideal that pays this run's own CPU per page, and the ratio to it.

    The crawler's CPU time is spread evenly over the URLs of the graph, and
    the simulated crawler pays it page by page on one core; the server's,
    spread over its requests, is paid answer by answer on another core (at
    hundreds of tasks the server can be what limits the crawl).  What the
    real crawl takes beyond that ideal is time lost waiting, not the
    machine's speed.
    """
    cpu = result["crawler_cpu"] / len(graph)
    server = result["server_cpu"] / result["requests"] if result.get("requests") else 0.0
    spans = [simulate(graph, root, tasks, latency, seed, cpu, server).makespan
             for seed in range(seeds)]  # fmt: skip
    result.update(cpu_per_page=cpu, server_cpu_per_request=server,
                  ideal=statistics.median(spans))  # fmt: skip
    result["ratio"] = result["wall"] / result["ideal"]


# --- 3 and 4. Memory and C10K -------------------------------------------------------


def memory(config: Config, log: Log) -> dict[str, Any]:
    """RSS per in-flight fetch with N fetches held at once by a slow server.

    The baseline is read after a warm-up crawl (see ``held_crawl``).

    The C10K check reads the runs with ``config.c10k`` fetches; when that is
    not one of the memory sizes (the quick run), the stages alone make it.
    """
    names = [name for name in crawlers(extras=False)]
    runs: dict[str, dict[int, list[dict[str, Any]]]] = {
        name: {n: [] for n in config.memory_sizes} for name in names
    }
    c10k_runs: dict[str, list[dict[str, Any]]] = {}
    for run in range(config.runs):
        for n in config.memory_sizes:
            for name in rotated(names, run):
                runs[name][n].append(held_crawl(name, n))
                progress = brief_held(runs[name][n][-1])
                log(f"memory run {run + 1}/{config.runs} n={n} {name}: {progress}")
        if config.c10k not in config.memory_sizes:
            for name in [name for name in names if name in STAGES]:
                c10k_runs.setdefault(name, []).append(held_crawl(name, config.c10k))
                log(f"C10K run {run + 1}/{config.runs} {name}: {brief_held(c10k_runs[name][-1])}")
    return {"sizes": list(config.memory_sizes), "c10k": config.c10k, "runs": runs,
            "c10k_runs": c10k_runs, "warm_up_pages": WARM_UP_PAGES}  # fmt: skip


def brief_held(result: dict[str, Any]) -> str:
    """Return a one-line account of a held crawl for the progress log."""
    if "error" in result:
        return "ERROR " + str(result["error"])[-300:]
    return ", ".join(f"{k}={v:.1f}" if isinstance(v, float) else f"{k}={v}"
                     for k, v in result.items())  # fmt: skip


def held_crawl(name: str, n: int) -> dict[str, Any]:
    """Crawl a slow site of ``n`` links with ``n`` tasks; read RSS while all are held.

    The crawler first crawls a small cached site (``--warm-up``), so that
    the RSS before leaves out what a process's first crawl sets up once.
    """
    warm_up = Server("shared.bench.serve", "--cache", "--pages", str(WARM_UP_PAGES))
    with warm_up, Server("shared.bench.slow", "--links", str(n), "--idle", "10") as slow:
        command = [PYTHON, "-m", "shared.bench.run_one", "--crawler", name, "--root", slow.root,
                   "--max-tasks", str(n), "--timeout", "300", "--count-retries",
                   "--warm-up", warm_up.root]  # fmt: skip
        child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                 text=True, cwd=ROOT)  # fmt: skip
        start = time.perf_counter()
        try:
            held = int(slow.expect("READY", 300).split()[1])
            status, cpu = proc_status(child.pid), process_cpu(child.pid)
            ready = time.perf_counter() - start
            slow.send("go")
            released = time.perf_counter()
            output, error = child.communicate(timeout=600)
            after_release = time.perf_counter() - released
            most = int(slow.expect("MOST", 30).split()[1])
        except (RuntimeError, subprocess.TimeoutExpired) as problem:
            child.kill()
            output, error = child.communicate()
            return {"error": f"{problem}; {error[-600:]}"}
    figures = last_json(output)
    if child.returncode != 0 or figures is None:
        return {"error": error[-800:]}
    rss_delta = status["VmRSS"] - figures["rss_before_kb"]
    return {
        "held": held, "most_held": most, "urls": figures["urls"], "failures": figures["failures"],
        "retries": figures["retries"], "rss_before_kb": figures["rss_before_kb"],
        "rss_held_kb": status["VmRSS"], "kb_per_fetch": rss_delta / max(held, 1),
        "threads": status["Threads"], "threads_started": figures["threads_started"],
        "seconds_to_hold_all": ready, "cpu_to_hold_all": cpu, "wall": figures["wall"],
        "seconds_after_release": after_release,
        "complete": figures["urls"] == n + 1 and figures["failures"] == 0 and held == n,
    }  # fmt: skip

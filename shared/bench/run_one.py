"""Run one crawl in this process and print what it measured, as JSON.

The benchmark starts this module in a fresh interpreter for every crawl,
so that memory, file descriptors and threads are the crawl's own:

    python -m shared.bench.run_one --crawler stage1 --root http://127.0.0.1:8000/ \\
        --max-tasks 100 --expect-pages 10000

``--crawler`` is a stage (``stage1``, ``stage2``, ``stage3``), stage 3 on
uvloop (``stage3-uvloop``) or the thread-pool crawler (``threads``).  The
JSON has the wall time of ``crawl()``, its CPU time, how many URLs were
recorded and failed, the RSS just before the crawl and at its peak (kB),
and with ``--expect-pages`` whether the results equal the site's oracle.
With ``--warm-up URL``, a crawl of URL comes first, so that the RSS before
leaves out what the first crawl of a process sets up once (imports done
on first use, caches, the loop's machinery): about a megabyte.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import importlib
import json
import logging
import resource
import sys
import time
from typing import Any

CRAWLERS = {
    "stage1": "stage1_callbacks",
    "stage2": "stage2_generators",
    "stage3": "stage3_asyncio",
    "stage3-uvloop": "stage3_asyncio",
    "threads": "shared.bench.threads",
    # The bare loops the stages are counted against (see shared.bench.instructions).
    "floor-selectors": "shared.bench.floor_selectors",
    "floor-aiohttp": "shared.bench.floor_aiohttp",
}
WARM_UP_TASKS = 10  # A warm-up crawl's max_tasks: a few of everything a crawl makes.


class CountRetries(logging.Handler):
    """Count the crawler's ``try N for URL raised`` log records."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.retries = 0

    def emit(self, record: logging.LogRecord) -> None:
        if record.getMessage().startswith("try ") and " raised " in record.getMessage():
            self.retries += 1


def proc_status(pid: int | str = "self") -> dict[str, int]:
    """Return the kB and counts of /proc/PID/status (VmRSS, VmHWM, Threads)."""
    out = {}
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            name, _, value = line.partition(":")
            if name in ("VmRSS", "VmHWM", "Threads"):
                out[name] = int(value.split()[0])
    return out


def raise_fd_limit() -> int:
    """Raise this process's soft limit on open files to the hard limit; return it."""
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return hard


def cpu_seconds() -> float:
    """Return this process's user plus system CPU time."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def load(name: str) -> Any:
    """Import the crawler module for ``name``; install uvloop for stage3-uvloop."""
    if name == "stage3-uvloop":
        import uvloop

        asyncio.set_event_loop_policy(uvloop.EventLoopPolicy())
    return importlib.import_module(CRAWLERS[name])


def measure(args: argparse.Namespace) -> dict[str, Any]:
    """Run the crawl and return its measurements."""
    module = load(args.crawler)
    counter = CountRetries()
    if args.count_retries:
        logger = logging.getLogger(
            module.__name__.split(".")[0] if "stage" in module.__name__ else module.__name__
        )
        logger.setLevel(logging.INFO)
        logger.addHandler(counter)
    options = {"max_tasks": args.max_tasks, "timeout": args.timeout, "trace": args.trace}
    if args.warm_up:  # Imports and caches filled: the baseline leaves them out.
        module.run(module.Crawler([args.warm_up], max_tasks=WARM_UP_TASKS, timeout=args.timeout))
        gc.collect()
    crawler = module.Crawler([args.root], **options)
    before, cpu0 = proc_status(), cpu_seconds()
    start = time.perf_counter()
    module.run(crawler)
    wall = time.perf_counter() - start
    cpu, after = cpu_seconds() - cpu0, proc_status()
    failures = sum(1 for stat in crawler.done if stat.status is None)
    result = {
        "crawler": args.crawler,
        "max_tasks": args.max_tasks,
        "wall": wall,
        "cpu": cpu,
        "urls": len(crawler.done),
        "failures": failures,
        "retries": counter.retries if args.count_retries else None,
        "rss_before_kb": before["VmRSS"],
        "rss_peak_kb": after["VmHWM"],
        "threads_started": getattr(crawler, "threads_started", None),
    }
    if args.expect_pages:
        from shared.testsite.site import expected_results

        got = {(stat.url, stat.status, stat.next_url) for stat in crawler.done}
        expected = expected_results(args.root, args.expect_pages)
        result["correct"] = got == expected and len(crawler.done) == len(expected)
    return result


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m shared.bench.run_one")
    parser.add_argument("--crawler", choices=sorted(CRAWLERS), required=True)
    parser.add_argument("--root", required=True)
    parser.add_argument("--max-tasks", type=int, default=100)
    parser.add_argument("--timeout", type=float, default=10.0)
    parser.add_argument("--expect-pages", type=int, default=0, help="check against the oracle")
    parser.add_argument("--count-retries", action="store_true", help="count retried fetches")
    parser.add_argument("--trace", metavar="FILE", help="record a trace of the crawl to FILE")
    parser.add_argument("--warm-up", metavar="URL", help="crawl URL first, then read the baseline")
    args = parser.parse_args(argv)
    raise_fd_limit()
    json.dump(measure(args), sys.stdout)
    print(flush=True)


if __name__ == "__main__":
    main()

"""One crawler process of the frontier benchmark (``shared.bench.frontier``).

It imports everything and builds its crawler, says ``READY``, then waits
for a line on its standard input before it crawls, so that the benchmark
can start several processes at the same moment.  It prints one line of
JSON: when its crawl started and ended (``time.time()``, comparable across
processes), its CPU time, and how many URLs it recorded.

    python -m shared.bench.frontier_one --root http://127.0.0.1:8000/ \\
        --frontier unix:///tmp/valkey.sock --max-tasks 20

Without ``--frontier`` it runs stage 3's plain crawler, the baseline.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

from shared.bench.run_one import cpu_seconds, raise_fd_limit
from stage3_asyncio.crawler import run


def build(args: argparse.Namespace) -> Any:
    """Return a crawler built from ``args``: stage 3's, its frontier in memory or not."""
    options = {"max_tasks": args.max_tasks, "timeout": args.timeout}
    if args.frontier:
        from stage3_asyncio import frontier

        return frontier.FrontierCrawler([args.root], frontier=args.frontier, **options)
    import stage3_asyncio

    return stage3_asyncio.Crawler([args.root], **options)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m shared.bench.frontier_one")
    parser.add_argument("--root", required=True)
    parser.add_argument("--frontier", help="the Valkey or Redis URL; none: in memory")
    parser.add_argument("--max-tasks", type=int, default=20)
    parser.add_argument("--timeout", type=float, default=10.0)
    args = parser.parse_args(argv)
    raise_fd_limit()
    crawler = build(args)
    print("READY", flush=True)
    sys.stdin.readline()  # The benchmark's signal to start.
    cpu0, start = cpu_seconds(), time.time()
    run(crawler)  # Stage 3's run: the frontier crawler runs with it too.
    end, cpu = time.time(), cpu_seconds() - cpu0
    failures = sum(1 for stat in crawler.done if stat.status is None)
    figures = {"start": start, "end": end, "cpu": cpu, "urls": len(crawler.done)}
    print(json.dumps({**figures, "failures": failures}), flush=True)


if __name__ == "__main__":
    main()

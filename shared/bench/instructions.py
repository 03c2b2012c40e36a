"""Instructions per request of one crawler, counted by callgrind: a busy machine does not blur them.

The CPU figures of ``python -m shared.bench`` are times, and time on a
shared machine depends on who else runs.  Valgrind's callgrind counts the
instructions a program executes instead: the same code on the same input
gives the same count, so a change can be judged on a busy machine.  It
counts user-space instructions only; system calls and thread switches
in the kernel are not seen (the thread crawler spends most of its time
there, so compare a crawler with itself, before and after a change).

Two crawls of the benchmark's cached site, a small and a bigger one, each
under callgrind; the difference of their counts over the difference of
their requests is the cost of one request, start-up and imports left out:

    python -m shared.bench.instructions stage3 --pages 100 400

Each crawl runs in valgrind about fifty times slower than alone: a few
minutes for the figure above.  Needs ``valgrind`` on the PATH.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from typing import Any

from shared.bench.procs import PYTHON, ROOT, Server, last_json
from shared.bench.run_one import CRAWLERS

COLLECTED = re.compile(r"Collected : (\d+)")


def instructions(stderr: str) -> int:
    """Return the instruction count callgrind reported in ``stderr``.  Raises ValueError if none."""
    found = COLLECTED.search(stderr)
    if found is None:
        raise ValueError(f"callgrind reported no count: {stderr[-300:]!r}")
    return int(found.group(1))


def counted_crawl(crawler: str, pages: int, max_tasks: int) -> dict[str, Any]:
    """Crawl a cached site of ``pages`` pages under callgrind; return its count and requests."""
    with Server("shared.bench.serve", "--cache", "--pages", str(pages)) as server:
        command = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
                   PYTHON, "-m", "shared.bench.run_one", "--crawler", crawler,
                   "--root", server.root, "--max-tasks", str(max_tasks), "--timeout", "120",
                   "--expect-pages", str(pages)]  # fmt: skip
        server.get_json("_bench/reset")
        done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT)
        requests = server.get_json("_bench/stats")["requests"]
    figures = last_json(done.stdout) or {}
    return {"instructions": instructions(done.stderr), "requests": requests,
            "correct": figures.get("correct")}  # fmt: skip


def per_request(small: dict[str, Any], big: dict[str, Any]) -> float:
    """Return the instructions of one request: the difference of two crawls over their requests.

    Raises ValueError when the two crawls made as many requests.
    """
    if big["requests"] == small["requests"]:
        raise ValueError("the two crawls made as many requests: choose two site sizes")
    extra = int(big["instructions"]) - int(small["instructions"])
    return extra / (int(big["requests"]) - int(small["requests"]))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m shared.bench.instructions")
    parser.add_argument("crawler", choices=sorted(CRAWLERS))
    parser.add_argument("--pages", type=int, nargs=2, default=[100, 400], metavar=("SMALL", "BIG"))
    parser.add_argument("--max-tasks", type=int, default=100)
    args = parser.parse_args(argv)
    small, big = (counted_crawl(args.crawler, pages, args.max_tasks) for pages in args.pages)
    if not (small["correct"] and big["correct"]):
        sys.exit(f"a crawl did not find the whole site: {small}, {big}")
    result = {"crawler": args.crawler, "small": small, "big": big,
              "per_request": round(per_request(small, big))}  # fmt: skip
    print(json.dumps(result))


if __name__ == "__main__":
    main()

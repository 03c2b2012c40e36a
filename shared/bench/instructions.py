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

The full benchmark counts every stage this way beside its floor, the bare
loop it is held against (``floor-selectors`` for stages 1 and 2,
``floor-aiohttp`` for stage 3): the CPU targets are set on these counts,
which repeat, not on times, which move with the machine's load.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
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


# What the full benchmark counts, each stage beside its floor (see floor_selectors.py,
# floor_aiohttp.py); the thread crawler's kernel time is not counted, but the rest is.
COUNTED = ("stage1", "stage2", "stage3", "threads", "floor-selectors", "floor-aiohttp")
FLOORS = {"stage1": "floor-selectors", "stage2": "floor-selectors", "stage3": "floor-aiohttp"}
FLOOR_RATIO = 1.25  # The most instructions per request a stage may run, over its floor's.


def count(crawler: str, pages: tuple[int, int], max_tasks: int = 100) -> dict[str, Any]:
    """Count ``crawler``'s instructions per request on two site sizes; see the module."""
    small, big = (counted_crawl(crawler, size, max_tasks) for size in pages)
    if not (small["correct"] and big["correct"]):
        return {"error": f"a crawl did not find the whole site: {small}, {big}"}
    return {"small": small, "big": big, "per_request": round(per_request(small, big))}


def measure(config: Any, log: Any) -> dict[str, Any]:
    """Count every crawler of COUNTED that is installed; the benchmark's scenario."""
    if shutil.which("valgrind") is None:
        return {"error": "valgrind is not installed (apt-get install valgrind)"}
    counts = {}
    for crawler in COUNTED:
        counts[crawler] = count(crawler, config.instruction_pages)
        log(f"instructions {crawler}: {counts[crawler]}")
    return {"pages": list(config.instruction_pages), "max_tasks": 100, "counts": counts}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m shared.bench.instructions")
    parser.add_argument("crawler", choices=sorted(CRAWLERS))
    parser.add_argument("--pages", type=int, nargs=2, default=[100, 400], metavar=("SMALL", "BIG"))
    parser.add_argument("--max-tasks", type=int, default=100)
    args = parser.parse_args(argv)
    result = count(args.crawler, tuple(args.pages), args.max_tasks)
    if "error" in result:
        sys.exit(result["error"])
    print(json.dumps({"crawler": args.crawler, **result}))


if __name__ == "__main__":
    main()

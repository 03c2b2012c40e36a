"""One crawl of the scale scenario, in this process: CPU and memory per URL of ``crawl``.

The benchmark starts this module in a fresh interpreter for each crawl:

    python -m shared.bench.scale_one --stage callbacks --pages 100000

It runs the ``crawl`` command itself, in this process: first a warm-up
crawl of a small simulated site, which imports and fills every cache a
crawl uses, then the crawl measured, ``crawl --stage S --simulate --pages
N -q --json FILE --stream``.  The memory baseline is read between the two,
and the peak (VmHWM) is reset there, so that the growth from baseline to
peak is what the crawl held for its URLs: the seen set, the queue, the
simulated site and the oracle's check, with no record kept (``--stream``
writes each one to FILE as it comes).  CPU time counts the whole command,
report and oracle check included.  It prints one JSON object.

With ``--breakdown``, the crawl runs under ``tracemalloc`` instead (two to
three times slower) and says what the bytes at its peak are: the memory
Python had allocated, by the line that allocated it, sorted into the
parts of a crawl in ``PARTS``.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import linecache
import os
import sys
import tempfile
import tracemalloc
from typing import Any

from shared.bench.run_one import cpu_seconds, proc_status
from shared.cli import main as cli
from shared.crawl.options import from_arguments
from shared.record.stats import FetchStatistic

WARM_UP_PAGES = 1_000
# What holds a crawl's bytes, told by the line that allocated them: the
# first part whose file ends the file's name and whose words are in the
# line (or no words) takes them.  The rest is "other".
PARTS = (
    ("URL strings, each held once by the seen set", "shared/web/urls.py", ""),
    ("URL strings, each held once by the seen set", "ada_url/ada_adapter.py", ""),
    ("the seen set's table", "shared/crawl/crawling.py", "seen_urls.add"),
    ("queue entries: (url, max_redirect) pairs", "shared/crawl/crawling.py", "return url,"),
    ("the queue's own list", "stage1_callbacks/crawler.py", "q.append"),
    ("the queue's own list", "stage2_generators/queues.py", "_queue.append"),
    ("the queue's own list", "asyncio/queues.py", ""),
    ("the oracle's check, a byte per URL", "shared/testsite/site.py", "bytearray"),
)
LOOKS = 100  # Looks at the memory traced in a crawl, about.


def crawl(stage: str, pages: int, path: str) -> int:
    """Run ``crawl`` on the simulated site of ``pages`` pages; return its exit status."""
    argv = ["--stage", stage, "--simulate", "--pages", str(pages), "-q", "--json", path]
    with open(os.devnull, "w") as quiet, contextlib.redirect_stdout(quiet):
        return cli.main([*argv, "--stream"])  # The report goes nowhere: it is not measured.


def reset_peak() -> None:
    """Make the kernel's peak RSS of this process (VmHWM) start again from now."""
    with open("/proc/self/clear_refs", "w") as clear:
        clear.write("5")


def measure(stage: str, pages: int, directory: str, warm_up: int) -> dict[str, Any]:
    """Warm up, then crawl ``pages`` pages; return the crawl's CPU, URLs and memory."""
    warmed = crawl(stage, warm_up, os.path.join(directory, "warm-up.jsonl"))
    gc.collect()
    baseline = proc_status()["VmRSS"]
    reset_peak()
    path = os.path.join(directory, "records.jsonl")
    cpu = cpu_seconds()
    status = crawl(stage, pages, path)
    cpu = cpu_seconds() - cpu
    peak = proc_status()["VmHWM"]
    with open(path, "rb") as records:
        urls = sum(1 for _ in records)
    return {
        "stage": stage, "pages": pages, "warm_up": warm_up, "urls": urls, "cpu": cpu,
        "us_per_url": cpu / urls * 1e6,
        "rss_baseline_kb": baseline, "rss_peak_kb": peak,
        "bytes_per_url": (peak - baseline) * 1024 / urls,
        "oracle_matched": status == cli.EXIT_OK and warmed == cli.EXIT_OK,
    }  # fmt: skip


class Peak:
    """Watch a crawl's records; keep what was traced at its most, by part."""

    def __init__(self, every: int) -> None:
        self.every = every
        self.most = 0
        self.records = 0
        self.parts: dict[str, int] = {}

    def look(self, stat: FetchStatistic) -> None:
        """Every ``every`` records, note the parts if more is traced than ever."""
        self.records += 1
        if self.records % self.every or tracemalloc.get_traced_memory()[0] <= self.most:
            return
        self.most = tracemalloc.get_traced_memory()[0]
        self.parts = {}
        for traced in tracemalloc.take_snapshot().statistics("lineno"):
            frame = traced.traceback[0]
            part = part_of(frame.filename, linecache.getline(frame.filename, frame.lineno))
            self.parts[part] = self.parts.get(part, 0) + traced.size


def breakdown(stage: str, pages: int, directory: str, warm_up: int) -> dict[str, Any]:
    """Crawl as ``crawl --stream`` does, under tracemalloc; return the bytes per URL of each part.

    The crawl is the command's own, made of its parts, with one more
    watcher of the records: ``Peak``.
    """
    crawl(stage, warm_up, os.path.join(directory, "warm-up.jsonl"))
    argv = ["--stage", stage, "--simulate", "--pages", str(pages), "-q", "--stream", "--json"]
    args = cli.build_parser().parse_args([*argv, os.path.join(directory, "records.jsonl")])
    module, world = cli.load_stage(stage), cli.simulated_world(args, [])
    peak = Peak(max(10, pages // LOOKS))  # Two URLs a page: some 200 looks.
    tracemalloc.start()
    with open(args.json, "w") as file, cli.bundled_site([], args, world) as roots:
        crawler = module.Crawler(roots, **from_arguments(args).keywords())
        crawler.simulate(world)
        check = cli.oracle_check(crawler, roots[0], pages)
        crawler.done = cli.stream_records(crawler, file, roots, set(), check)
        crawler.done.watchers.append(peak.look)
        module.run(crawler)
    tracemalloc.stop()
    if not peak.parts:
        raise ValueError(f"a crawl of {pages} pages recorded too few URLs to look at")
    urls = len(crawler.done)
    return {"stage": stage, "pages": pages, "urls": urls, "matched": check.matches(),
            "bytes_per_url": {part: size / urls for part, size in peak.parts.items()}}  # fmt: skip


def part_of(filename: str, line: str) -> str:
    """Return the part of the crawl (see PARTS) that a line of ``filename`` allocates for."""
    for part, ending, words in PARTS:
        if filename.endswith(ending) and words in line:
            return part
    return "other"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m shared.bench.scale_one")
    parser.add_argument("--stage", choices=sorted(cli.STAGES), required=True)
    parser.add_argument("--pages", type=int, required=True)
    parser.add_argument("--breakdown", action="store_true", help="what the bytes are, traced")
    parser.add_argument("--warm-up", type=int, default=WARM_UP_PAGES, metavar="PAGES")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench-scale-") as directory:
        measured = breakdown if args.breakdown else measure
        result = measured(args.stage, args.pages, directory, args.warm_up)
    json.dump(result, sys.stdout)
    print(flush=True)


if __name__ == "__main__":
    main()

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
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import os
import sys
import tempfile
from typing import Any

from shared.bench.run_one import cpu_seconds, proc_status
from shared.cli import main as cli

WARM_UP_PAGES = 1_000


def crawl(stage: str, pages: int, path: str) -> int:
    """Run ``crawl`` on the simulated site of ``pages`` pages; return its exit status."""
    argv = ["--stage", stage, "--simulate", "--pages", str(pages), "-q", "--json", path]
    with open(os.devnull, "w") as quiet, contextlib.redirect_stdout(quiet):
        return cli.main([*argv, "--stream"])  # The report goes nowhere: it is not measured.


def reset_peak() -> None:
    """Make the kernel's peak RSS of this process (VmHWM) start again from now."""
    with open("/proc/self/clear_refs", "w") as clear:
        clear.write("5")


def measure(stage: str, pages: int, directory: str) -> dict[str, Any]:
    """Warm up, then crawl ``pages`` pages; return the crawl's CPU, URLs and memory."""
    warm_up = crawl(stage, WARM_UP_PAGES, os.path.join(directory, "warm-up.jsonl"))
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
        "stage": stage, "pages": pages, "urls": urls, "cpu": cpu, "us_per_url": cpu / urls * 1e6,
        "rss_baseline_kb": baseline, "rss_peak_kb": peak,
        "bytes_per_url": (peak - baseline) * 1024 / urls,
        "oracle_matched": status == cli.EXIT_OK and warm_up == cli.EXIT_OK,
    }  # fmt: skip


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m shared.bench.scale_one")
    parser.add_argument("--stage", choices=sorted(cli.STAGES), required=True)
    parser.add_argument("--pages", type=int, required=True)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench-scale-") as directory:
        result = measure(args.stage, args.pages, directory)
    json.dump(result, sys.stdout)
    print(flush=True)


if __name__ == "__main__":
    main()

"""``python -m shared.bench``: run the benchmark and write its report.

python -m shared.bench            # the full run, about 70 minutes, into docs/bench
python -m shared.bench --quick    # a few minutes, into a new scratch directory
python -m shared.bench --only memory --runs 1
python -m shared.bench --only scale --out /tmp/scale   # a million pages per stage
python -m shared.bench --quick --only tracing   # CPU per page with a trace and without
python -m shared.bench --render docs/bench/results.json   # redraw from saved figures
python -m shared.bench --only servers --out docs/bench/servers   # stage 2's server

The servers have a run and a folder of their own, shown in the server
chapter, so the full run leaves them out: one measurement, on one page.

Stage 3 on several processes sharing a frontier in Valkey has a run of its
own, which needs a valkey-server: python -m shared.bench.frontier.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import importlib.metadata
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from shared.bench import instructions, parsers, report, scale, scenarios, servers, tracing
from shared.bench.procs import ROOT, other_cpu, too_busy

# Memory runs last: its 10,000 threads leave the machine busy for a while
# after they end, which slowed the link parser and the servers measured after it.
SCENARIOS = (
    "throughput", "concurrency", "parsers", "servers", "tracing", "instructions", "scale",
    "memory",
)  # fmt: skip
FULL_RUN = tuple(name for name in SCENARIOS if name != "servers")  # See the docstring.


def machine_info() -> dict[str, Any]:
    """Return what a reader needs to know about where the figures come from."""
    cpu = "unknown"
    with open("/proc/cpuinfo") as info:
        for line in info:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    with open("/proc/meminfo") as info:
        memory = int(info.readline().split()[1]) / 2**20
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT,
                            capture_output=True, text=True).stdout.strip() or "unknown"  # fmt: skip
    versions = []
    for package in ("aiohttp", "uvloop", "scrapy", "selectolax", "matplotlib"):
        try:
            versions.append(f"{package} {importlib.metadata.version(package)}")
        except importlib.metadata.PackageNotFoundError:
            versions.append(f"{package} not installed")
    tools = []
    for tool, flag in (("ab", "-V"), ("wrk", "-v"), ("wget", "--version")):
        try:
            done = subprocess.run([tool, flag], capture_output=True, text=True, timeout=10)
            tools.append((done.stdout + done.stderr).strip().splitlines()[0])
        except (OSError, IndexError, subprocess.TimeoutExpired):
            tools.append(f"{tool} not installed")
    return {
        "date": datetime.datetime.now().strftime("%Y-%m-%d %H:%M"),
        "commit": commit,
        "cpu": f"{cpu}, {os.cpu_count()} cores",
        "memory": f"{memory:.1f} GiB",
        "system": platform.platform(),
        "python": sys.version.split()[0],
        "packages": ", ".join(versions),
        "tools": "; ".join(tools),
        "load average at start": " ".join(f"{x:.2f}" for x in os.getloadavg()),
    }


def run(args: argparse.Namespace, log: Any) -> dict[str, Any]:
    """Run the chosen scenarios and return every figure."""
    config = scenarios.QUICK if args.quick else scenarios.FULL
    if args.runs:
        config = dataclasses.replace(config, runs=args.runs)
    results: dict[str, Any] = {"quick": args.quick, "runs": config.runs, "machine": machine_info()}
    results["config"] = dataclasses.asdict(config)
    for name in args.only or FULL_RUN:
        start = time.perf_counter()
        if name == "parsers":
            results[name] = parsers.measure()
        elif name == "servers":
            results[name] = servers.measure(config, log)
        elif name == "tracing":
            results[name] = tracing.measure(config, log)
        elif name == "instructions":
            results[name] = instructions.measure(config, log)
        elif name == "scale":
            results[name] = scale.measure(config, log)
        else:
            results[name] = getattr(scenarios, name)(config, log)
        log(f"{name} done in {time.perf_counter() - start:.0f} s")
    others = other_cpu(results)
    if others:
        results["machine"]["CPU used by other processes (cores, median / max)"] = (
            f"{sorted(others)[len(others) // 2]:.2f} / {max(others):.2f}"
        )
    # The load average is read at the start only: at the end it still counts
    # the thread crawler's 10,000 threads, which says nothing of the others.
    return results


def load(path: Path) -> dict[str, Any]:
    """Read saved results back, turning numeric keys into ints again."""

    def keys(obj: dict[str, Any]) -> dict[Any, Any]:
        return {int(k) if k.isdigit() else k: v for k, v in obj.items()}

    results: dict[str, Any] = json.loads(path.read_text(), object_hook=keys)
    return results


def output_directory(quick: bool, out: Path | None) -> Path:
    """Return where to write: docs/bench for a full run, a new scratch directory for a quick one.

    Raises ValueError when a quick run is told to write into docs/bench.
    """
    committed = ROOT / "docs" / "bench"
    if out is None:
        return Path(tempfile.mkdtemp(prefix="crawler-bench-quick-")) if quick else committed
    if quick and out.resolve() == committed.resolve():
        raise ValueError("--quick never writes docs/bench, which holds a full run's figures")
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m shared.bench", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--quick", action="store_true", help="a one-minute version, one run each")
    parser.add_argument("--runs", type=int, default=0, help="runs per figure (default 3, quick 1)")
    parser.add_argument("--only", nargs="+", choices=SCENARIOS, help="run only these scenarios")
    parser.add_argument(
        "--out",
        type=Path,
        help="where to write summary.md and the charts (default: docs/bench, or a new "
        "scratch directory for --quick, whose figures must not replace a full run's)",
    )
    parser.add_argument("--render", type=Path, help="only redraw the report from a results.json")
    args = parser.parse_args(argv)
    try:
        out = output_directory(args.quick, args.out)
    except ValueError as error:
        parser.error(str(error))
    begin = time.perf_counter()

    def log(message: str) -> None:
        print(f"[{time.perf_counter() - begin:6.0f} s] {message}", file=sys.stderr, flush=True)

    results = load(args.render) if args.render else run(args, log)
    committed = ROOT / "docs" / "bench"
    if not args.render and out.resolve() == committed.resolve() and (busy := too_busy(results)):
        out = Path(tempfile.mkdtemp(prefix="crawler-bench-busy-"))
        log(f"not writing docs/bench: {busy}; writing to {out} instead")
    path = report.write(results, out)
    log(f"wrote {path} and charts in {out}")


if __name__ == "__main__":
    main()

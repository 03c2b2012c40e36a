"""The scale scenario: CPU and memory per URL as the site grows to a million pages.

Each stage crawls the simulated site (``crawl --simulate --pages N
--stream``, records streamed to a file) at each size of
``config.scale_pages``, in a fresh process (``shared.bench.scale_one``):
no network and no waiting, so the figures are the crawler's own, the
simulated site and the oracle's check included.  CPU per URL should stay
flat as the site grows, and the memory per URL should stay small.  Then,
once per stage, a crawl of ``config.scale_breakdown_pages`` pages under
tracemalloc says what those bytes are.
"""

from __future__ import annotations

from typing import Any

from shared.bench.procs import PYTHON, last_json, timed_run

# The benchmark's names of the stages, and the crawl command's.
STAGES = {"stage1": "callbacks", "stage2": "generators", "stage3": "asyncio"}
Log = Any  # Callable[[str], None]


def scale_crawl(stage: str, pages: int, warm_up: int, *flags: str) -> dict[str, Any]:
    """Run one crawl of ``shared.bench.scale_one`` in a subprocess; return its figures."""
    command = [PYTHON, "-m", "shared.bench.scale_one", "--stage", STAGES[stage],
               "--pages", str(pages), "--warm-up", str(warm_up), *flags]  # fmt: skip
    outcome = timed_run(command, timeout=6 * 3600)
    figures = last_json(outcome["stdout"])
    if outcome["code"] != 0 or figures is None:
        return {"error": (outcome["stderr"] or outcome["stdout"])[-800:]}
    return {**figures, "others": outcome["others"], "wall": outcome["wall"]}


def measure(config: Any, log: Log) -> dict[str, Any]:
    """Crawl each size with each stage, ``config.scale_runs`` times; then the breakdowns."""
    sizes = list(config.scale_pages)
    runs: dict[str, dict[int, list[dict[str, Any]]]] = {
        stage: {pages: [] for pages in sizes} for stage in STAGES
    }
    for run in range(config.scale_runs):
        for pages in sizes:
            for stage in STAGES:
                result = scale_crawl(stage, pages, config.scale_warm_up_pages)
                runs[stage][pages].append(result)
                log(f"scale run {run + 1}/{config.scale_runs} {pages:,} pages {stage}: {result}")
    breakdowns = {}
    for stage in STAGES:
        pages, warm_up = config.scale_breakdown_pages, config.scale_warm_up_pages
        breakdowns[stage] = scale_crawl(stage, pages, warm_up, "--breakdown")
        log(f"scale breakdown {stage}: {breakdowns[stage]}")
    return {"sizes": sizes, "runs": runs, "warm_up": config.scale_warm_up_pages,
            "breakdown_pages": config.scale_breakdown_pages, "breakdowns": breakdowns}  # fmt: skip

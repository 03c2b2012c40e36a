"""What a recrawl saves: body bytes of a first crawl against a second one.

Each stage crawls the bundled test site, writes its records as ``crawl
--json`` does, and crawls it again with ``since=`` those records: an
unchanged site, then the site's next edition, in which every 25th content
page is revised.  The table gives the body bytes each crawl read (the sum
of ``size``: a 304 answer has no body) and how many answers were 200 and
304.  The documentation's build runs it, so the figures on the
measurements page are this code's, on the machine that built them.

    python -m shared.bench.recrawl --pages 300
"""

from __future__ import annotations

import argparse
import importlib
import tempfile
from pathlib import Path
from typing import Any

from shared.record.report import write_jsonl
from shared.testsite.server import SITE, ServerThread, make_app
from shared.testsite.site import changed_urls

STAGES = ("stage1_callbacks", "stage2_generators", "stage3_asyncio")


def body_bytes(crawler: Any) -> int:
    """Return the body bytes a crawl read."""
    return sum(stat.size for stat in crawler.done)


def count(crawler: Any, status: int) -> int:
    """Return how many answers of the crawl had ``status``."""
    return sum(1 for stat in crawler.done if stat.status == status)


def measure(stage_name: str, pages: int, directory: Path) -> list[str]:
    """Crawl, recrawl unchanged, recrawl changed; return the table's three rows."""
    stage = importlib.import_module(stage_name)
    since = directory / f"{stage_name}.jsonl"
    with ServerThread(make_app(pages)) as server:
        first = stage.crawl([server.url], max_tasks=10)
        with since.open("w", encoding="utf-8") as file:
            write_jsonl(first, file)
        unchanged = stage.crawl([server.url], max_tasks=10, since=since)
        server.app[SITE].edition = 2
        changed = stage.crawl([server.url], max_tasks=10, since=since)
    revised = {stat.url for stat in changed.done if stat.status == 200}
    if revised != changed_urls(server.url, pages):
        raise RuntimeError(f"{stage_name}: the recrawl did not fetch exactly the revised pages")
    total = body_bytes(first)
    rows = []
    for name, crawler in [("first", first), ("unchanged", unchanged), ("edition 2", changed)]:
        size = body_bytes(crawler)
        rows.append(
            f"{stage_name:<18} {name:<10} {size:>9,} {size / total:>7.2%}"
            f" {count(crawler, 200):>5} {count(crawler, 304):>5}"
        )
    return rows


def main(argv: list[str] | None = None) -> None:
    """Print the table for every stage."""
    parser = argparse.ArgumentParser(prog="python -m shared.bench.recrawl", description=__doc__)
    parser.add_argument("--pages", type=int, default=300, help="content pages (default: 300)")
    args = parser.parse_args(argv)
    print(f"{'stage':<18} {'crawl':<10} {'bytes':>9} {'share':>7} {'200':>5} {'304':>5}")
    with tempfile.TemporaryDirectory() as directory:
        for stage_name in STAGES:
            print("\n".join(measure(stage_name, args.pages, Path(directory))))


if __name__ == "__main__":
    main()

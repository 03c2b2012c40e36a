"""The frontier's memory per URL: what a Valkey server holds for each URL of a crawl.

    python -m shared.bench.frontier_memory            # 500,000 pages, about a million URLs
    python -m shared.bench.frontier_memory --pages 2000 --out /tmp/memory

A crawl through the frontier (``stage3_asyncio/frontier.py``) leaves in
the server, for every URL: a member of the seen set (``crawl:seen``), a
record in the records hash (``crawl:records``, URL → the record as JSON,
with the page's links) and an item of the log (``crawl:log``); while the
URL waits, an entry in the queue (``crawl:queue``).  This module writes
those keys for a whole crawl, in the frontier's own formats (``PREFIX``,
``entry_of``, the JSON of ``stat_to_json``), into a fresh valkey-server,
one kind at a time, and reads ``used_memory`` (``INFO memory``) after
each: the bytes per URL of each key.  The records are those of a
simulated crawl of the site (``crawl --simulate --stream``), so each is
the size a real crawl of it writes.  Writing them directly, pipelined,
takes a minute where a crawl through the frontier would take an hour.

The beyond chapter's capacity table is worked out from these figures
(``capacity``), and written with them into ``docs/bench/frontier``
(``memory.json``, ``capacity.md`` and ``capacity.zh.md``).  The figures
depend on the server's version, not on how busy the machine is.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from shared.bench.frontier import valkey
from shared.bench.procs import PYTHON, ROOT
from stage3_asyncio.frontier import PREFIX, entry_of

BATCH = 10_000  # Commands sent in one pipeline.
# How the keys are written: the part of each URL's record that goes where.
KINDS = ("seen", "records", "log", "queue")


def simulated_records(pages: int, path: str) -> None:
    """Write the records of a simulated crawl of ``pages`` pages to ``path`` (JSON Lines)."""
    command = [PYTHON, "-m", "shared.cli", "--stage", "callbacks", "--simulate", "--pages",
               str(pages), "-q", "--json", path, "--stream"]  # fmt: skip
    subprocess.run(command, check=True, cwd=ROOT, stdout=subprocess.DEVNULL)


def records(path: str) -> Iterator[tuple[str, str]]:
    """Yield each record's URL and its JSON as the frontier stores it (ASCII, no newline)."""
    with open(path, encoding="utf-8") as lines:
        for line in lines:
            record = json.loads(line)
            yield record["url"], json.dumps(record)


def queue_write(pipe: Any, kind: str, url: str, record: str) -> None:
    """Queue on ``pipe`` the command that writes ``url``'s part of ``kind``, as the frontier."""
    if kind == "seen":
        pipe.sadd(PREFIX + "seen", url)
    elif kind == "records":
        pipe.hset(PREFIX + "records", url, record)
    elif kind == "log":
        pipe.rpush(PREFIX + "log", url)
    else:
        pipe.rpush(PREFIX + "queue", entry_of(url, 10, 0))


def used_memory(client: Any) -> int:
    """Return the server's ``used_memory``, in bytes."""
    return int(client.info("memory")["used_memory"])


def measure(pages: int, directory: str) -> dict[str, Any]:
    """Write a crawl of ``pages`` pages into a fresh server, kind by kind; return the bytes."""
    import redis

    path = os.path.join(directory, "records.jsonl")
    simulated_records(pages, path)
    urls = sum(1 for _ in records(path))
    result: dict[str, Any] = {"pages": pages, "urls": urls, "bytes_per_url": {}}
    with valkey() as (url, process):
        client = redis.Redis.from_url(url)
        result["server"] = client.info("server")["valkey_version"]
        before = used_memory(client)
        for kind in KINDS:
            start = used_memory(client)
            pipe = client.pipeline(transaction=False)
            for n, (address, record) in enumerate(records(path), 1):
                queue_write(pipe, kind, address, record)
                if n % BATCH == 0:
                    pipe.execute()
            pipe.execute()
            result["bytes_per_url"][kind] = (used_memory(client) - start) / urls
        result["used_memory"] = used_memory(client) - before
        memory = client.info("memory")
        result["allocator"] = memory.get("mem_allocator")
        result["rss"] = int(memory["used_memory_rss"])
        client.close()
    return result


# --- What a bigger crawl would need ------------------------------------------------

SIZES = (10**7, 10**8, 10**9)
NODE_GB = 64  # A cluster node's memory.
USABLE = 0.75  # Of it, what maxmemory may take: a fork for persistence needs room.


def capacity(bytes_per_url: dict[str, float], queued: float = 0.5) -> list[dict[str, Any]]:
    """Return, for each size of SIZES, the memory it needs and the nodes that holds it.

    Every URL is seen, recorded and logged; ``queued`` is the share of
    the URLs in the queue at its longest (half of them, on the test site).
    """
    per_url = sum(bytes_per_url[k] for k in ("seen", "records", "log"))
    per_url += queued * bytes_per_url["queue"]
    without_records = per_url - bytes_per_url["records"] - bytes_per_url["log"]
    rows = []
    for urls in SIZES:
        needed = urls * per_url / 2**30
        lean = urls * without_records / 2**30
        rows.append({"urls": urls, "gb": needed, "nodes": nodes(needed),
                     "gb_without_records": lean, "nodes_without_records": nodes(lean)})  # fmt: skip
    return rows


def nodes(gigabytes: float) -> int:
    """Return how many nodes of NODE_GB hold ``gigabytes`` within USABLE of their memory."""
    return max(1, -int(-gigabytes // (NODE_GB * USABLE)))


WORDS: dict[str, dict[str, Any]] = {
    "en": {
        "intro": "Measured with valkey-server {server} ({allocator} malloc): the keys of a "
        "crawl of the {pages:,}-page simulated site ({urls:,} URLs), written in the "
        "frontier's formats, `used_memory` (`INFO memory`) read after each kind.",
        "kinds": ["key", "bytes per URL"],
        "kind": {"seen": "`crawl:seen`, the seen set", "records": "`crawl:records`, the "
                 "records (JSON, with the links)", "log": "`crawl:log`, the records' order",
                 "queue": "`crawl:queue`, an entry waiting"},
        "sizes": ["URLs", "one server", f"nodes of {NODE_GB} GB", "records kept in files",
                  f"nodes of {NODE_GB} GB"],
        "assume": "Every URL seen, recorded and logged; half of them queued at once, as on "
        "the test site at its busiest. A node gives {usable:.0%} of its memory to the data: "
        "the rest is room for the fork that writes a snapshot, and for the allocator.",
    },
    "zh": {
        "intro": "用 valkey-server {server}（{allocator} malloc）测得：把 {pages:,} 页模拟站点"
        "一次爬取（{urls:,} 个 URL）的各个键，按边界队列的格式写进去，每写完一种就读一次 "
        "`used_memory`（`INFO memory`）。",
        "kinds": ["键", "每个 URL 的字节数"],
        "kind": {"seen": "`crawl:seen`，已见集合", "records": "`crawl:records`，记录（JSON，"
                 "带链接）", "log": "`crawl:log`，记录的先后", "queue": "`crawl:queue`，"
                 "一个等着的条目"},
        "sizes": ["URL 数", "一台服务器", f"{NODE_GB} GB 的节点数", "记录另存文件",
                  f"{NODE_GB} GB 的节点数"],
        "assume": "每个 URL 都见过、记录过、记进日志；同时有一半在队列里，和测试站点最忙时一样。"
        "一个节点把 {usable:.0%} 的内存给数据：其余留给写快照时派生的子进程，以及内存分配器。",
    },
}  # fmt: skip


def table(header: list[str], rows: list[list[str]]) -> str:
    """Return a Markdown table."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return "\n".join(lines + ["| " + " | ".join(row) + " |" for row in rows])


def size(gigabytes: float) -> str:
    """Return a size for the table: GB below a thousand, else TB."""
    return f"{gigabytes:,.1f} GB" if gigabytes < 1000 else f"{gigabytes / 1024:,.1f} TB"


def summary(results: dict[str, Any], lang: str = "en") -> str:
    """Return the bytes per URL and the capacity table as Markdown, in ``lang``."""
    words = WORDS[lang]
    kinds = [[words["kind"][k], f"{v:,.0f}"] for k, v in results["bytes_per_url"].items()]
    rows = [[f"10<sup>{len(str(r['urls'])) - 1}</sup>", size(r["gb"]), str(r["nodes"]),
             size(r["gb_without_records"]), str(r["nodes_without_records"])]
            for r in results["capacity"]]  # fmt: skip
    return "\n".join([
        "<!-- Written by `python -m shared.bench.frontier_memory`; do not edit by hand. -->",
        words["intro"].format(**results), "", table(words["kinds"], kinds), "",
        table(words["sizes"], rows), "", words["assume"].format(usable=USABLE), "",
    ])  # fmt: skip


def write(results: dict[str, Any], out: Path) -> None:
    """Write memory.json and the capacity table in both languages into ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    (out / "memory.json").write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    for lang, suffix in (("en", ""), ("zh", ".zh")):
        (out / f"capacity{suffix}.md").write_text(summary(results, lang), encoding="utf-8")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m shared.bench.frontier_memory")
    parser.add_argument("--pages", type=int, default=500_000)
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "bench" / "frontier")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench-frontier-memory-") as directory:
        result = measure(args.pages, directory)
    result["capacity"] = capacity(result["bytes_per_url"])
    write(result, args.out)
    json.dump(result, sys.stdout)
    print(flush=True)


if __name__ == "__main__":
    main()

"""The frontier's memory per URL: what a Valkey server holds for each URL of a crawl.

    python -m shared.bench.frontier_memory --pages 500000    # about a million URLs

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
(``capacity``).  It prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
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


def write(pipe: Any, kind: str, url: str, record: str) -> None:
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
                write(pipe, kind, address, record)
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


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m shared.bench.frontier_memory")
    parser.add_argument("--pages", type=int, default=500_000)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench-frontier-memory-") as directory:
        result = measure(args.pages, directory)
    result["capacity"] = capacity(result["bytes_per_url"])
    json.dump(result, sys.stdout)
    print(flush=True)


if __name__ == "__main__":
    main()

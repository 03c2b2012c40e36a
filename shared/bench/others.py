"""What the stages are compared with: Scrapy, ``wget -r`` and the server's ceiling.

Each runs in a process of its own, like the crawlers:

    python -m shared.bench.others scrapy --root URL --max-tasks 100
    python -m shared.bench.others load --url URL --requests 20000 --concurrency 100

``scrapy`` crawls the site with a CrawlSpider under the crawler's settings
(concurrency, retries, redirect limit, timeout, size limit; no robots.txt,
no cookies) and prints its wall time and response count.  ``load`` is the
fallback when neither ``ab`` nor ``wrk`` is installed: a minimal client on
raw non-blocking sockets that keeps ``concurrency`` requests in flight, each
on a new connection, and prints the requests per second it got through.
``wget_command`` and ``ab_command`` build the command lines the benchmark runs.
"""

from __future__ import annotations

import argparse
import json
import re
import selectors
import shutil
import socket
import sys
import time
from typing import Any

from shared.web.http import build_request, request_target


def scrapy_crawl(root: str, max_tasks: int) -> dict[str, Any]:
    """Crawl ``root`` with a Scrapy CrawlSpider; return wall time and responses."""
    import urllib.parse

    from scrapy.crawler import CrawlerProcess
    from scrapy.linkextractors import LinkExtractor
    from scrapy.spiders import CrawlSpider, Rule

    parts = urllib.parse.urlsplit(root)
    # Only the root's own origin, like the crawler's policy (allow_domains
    # would compare "127.0.0.1" with "127.0.0.1:PORT" and match nothing).
    same_origin = "^" + re.escape(f"{parts.scheme}://{parts.netloc}/")

    class SiteSpider(CrawlSpider):  # type: ignore[misc, unused-ignore]  # Typed only when Scrapy is installed.
        name = "bench"
        allowed_domains = [parts.hostname]  # Redirects off the site are dropped.
        start_urls = [root]
        rules = (
            Rule(
                LinkExtractor(allow=same_origin, tags=("a", "area", "link"), deny_extensions=[]),
                follow=True,
            ),
        )

    settings = {
        "CONCURRENT_REQUESTS": max_tasks,
        "CONCURRENT_REQUESTS_PER_DOMAIN": max_tasks,
        "DOWNLOAD_DELAY": 0,
        "ROBOTSTXT_OBEY": False,
        "COOKIES_ENABLED": False,
        "RETRY_TIMES": 3,  # max_tries=4
        "RETRY_HTTP_CODES": [],  # Retry network failures only, as the crawler does.
        "REDIRECT_MAX_TIMES": 10,
        "DOWNLOAD_TIMEOUT": 10,
        "DOWNLOAD_MAXSIZE": 10 * 2**20,
        "TELNETCONSOLE_ENABLED": False,
        "LOG_LEVEL": "ERROR",
        "USER_AGENT": "crawler-tutorial-bench/1.0 (Scrapy)",
    }
    process = CrawlerProcess(settings)
    crawler = process.create_crawler(SiteSpider)
    process.crawl(crawler)
    start = time.perf_counter()
    process.start()
    wall = time.perf_counter() - start
    stats = crawler.stats.get_stats()
    return {"wall": wall, "responses": stats.get("downloader/response_count", 0)}


def raw_load(url: str, requests: int, concurrency: int) -> dict[str, Any]:
    """Send ``requests`` GETs, ``concurrency`` at a time, each on a new connection."""
    host, port, _ = request_target(url)
    request = build_request(url)
    selector = selectors.DefaultSelector()
    started = finished = failed = 0

    def start_one() -> None:
        nonlocal started
        sock = socket.socket()
        sock.setblocking(False)
        sock.connect_ex((host, port))
        selector.register(sock, selectors.EVENT_WRITE)
        started += 1

    begin = time.perf_counter()
    for _ in range(min(concurrency, requests)):
        start_one()
    while finished < requests:
        for key, _ in selector.select():
            sock: socket.socket = key.fileobj  # type: ignore[assignment]
            if key.events == selectors.EVENT_WRITE:
                try:
                    sock.send(request)
                    selector.modify(sock, selectors.EVENT_READ)
                    continue
                except OSError:
                    data, failed = b"", failed + 1
            else:
                try:
                    data = sock.recv(65536)
                except OSError:
                    data, failed = b"", failed + 1
                if data:
                    continue
            selector.unregister(sock)
            sock.close()
            finished += 1
            if started < requests:
                start_one()
    selector.close()
    wall = time.perf_counter() - begin
    return {"requests": requests, "failed": failed, "per_second": requests / wall}


def ab_command(url: str, requests: int, concurrency: int, keep_alive: bool = False) -> list[str]:
    """Return the ``ab`` command line for a load test of ``url``."""
    return ["ab", "-q", *(["-k"] if keep_alive else []), "-n", str(requests),
            "-c", str(concurrency), url]  # fmt: skip


def wget_command(root: str, directory: str) -> list[str]:
    """Return the ``wget -r`` command line that mirrors the site into ``directory``.

    wget follows a redirect to any host, so it skips ``/redirect/`` (ten of
    the site's URLs): one of them leads off the machine, to example.com.
    """
    return [
        "wget", "-r", "-l", "inf", "-nv", "-e", "robots=off", "--delete-after", "-X", "/redirect",
        "--tries", "4", "--timeout", "10", "-P", directory, root,
    ]  # fmt: skip


def have(tool: str) -> bool:
    """Tell whether a command-line tool is installed."""
    return shutil.which(tool) is not None


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m shared.bench.others")
    sub = parser.add_subparsers(dest="command", required=True)
    scrapy = sub.add_parser("scrapy", help="crawl with a Scrapy CrawlSpider")
    scrapy.add_argument("--root", required=True)
    scrapy.add_argument("--max-tasks", type=int, default=100)
    load = sub.add_parser("load", help="a minimal raw-socket load client")
    load.add_argument("--url", required=True)
    load.add_argument("--requests", type=int, default=20_000)
    load.add_argument("--concurrency", type=int, default=100)
    args = parser.parse_args(argv)
    if args.command == "scrapy":
        result = scrapy_crawl(args.root, args.max_tasks)
    else:
        result = raw_load(args.url, args.requests, args.concurrency)
    json.dump(result, sys.stdout)
    print(flush=True)


if __name__ == "__main__":
    main()

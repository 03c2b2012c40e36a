"""The ``crawl`` command's frontier options: one crawl shared through Valkey or Redis.

``--frontier URL`` runs stage 3's crawler with its state in a server
(``stage3_asyncio.frontier``), so several processes share one crawl and the
crawl outlives them.  ``--report`` prints the whole crawl from the server
(and with ``--json`` writes all its records); ``--forget`` removes a
finished crawl's keys.  This module only reads the command line and runs
the right thing: the Redis client is imported when a frontier is asked for,
so plain crawls never load it (nor asyncio).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import sys
from typing import IO, Any

from shared.cli.progress import progress
from shared.crawl.options import (
    DEFAULT_LEASE,
    DEFAULT_MAX_ATTEMPTS,
    CrawlOptions,
    check_frontier_url,
)
from shared.record.report import report, write_jsonl

EXIT_OK, EXIT_FAILED, EXIT_INTERRUPTED = 0, 1, 130  # As in shared.cli.main.
EXIT_LOST = 4  # The crawl is gone from the server (flushed, forgotten, evicted, rolled back).


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add --frontier, --lease, --max-attempts, --report and --forget."""
    add = parser.add_argument
    add("--frontier", metavar="URL",
        help="keep the crawl in Valkey or Redis at URL (redis://HOST:PORT/DB, "
        "rediss://, unix://PATH), shared by every process given the same URL; "
        "--stage asyncio only")  # fmt: skip
    add("--lease", type=float, default=DEFAULT_LEASE, metavar="SECS",
        help="with --frontier: seconds before the URLs of a process that died "
        "go back to the queue (default: %(default)s)")  # fmt: skip
    add("--max-attempts", type=int, default=DEFAULT_MAX_ATTEMPTS, metavar="N",
        help="with --frontier: leases of one URL that may run out (its process died) "
        "before it is recorded as failed (default: %(default)s)")  # fmt: skip
    add("--report", action="store_true",
        help="with --frontier and no root: print the report of the whole crawl "
        "(and write all its records to --json FILE)")  # fmt: skip
    add("--forget", action="store_true",
        help="with --frontier and no root: remove a finished crawl from the server "
        "(not while a process works on it)")  # fmt: skip


def requested(args: argparse.Namespace) -> bool:
    """Tell whether the command line asks for a frontier (or a frontier's action)."""
    return bool(args.frontier or args.report or args.forget)


def check(args: argparse.Namespace, roots: list[str]) -> None:
    """Check the frontier options before anything starts; raises ValueError saying why."""
    if not args.frontier:
        raise ValueError("--report and --forget need --frontier URL")
    check_frontier_url(args.frontier)
    if args.stage != "asyncio":
        raise ValueError(f"--frontier works with --stage asyncio only, not {args.stage} "
                         "(stages 1 and 2 keep their frontier in memory)")  # fmt: skip
    if args.sitemaps:
        raise ValueError("--sitemaps cannot be used with --frontier yet")
    if (args.report or args.forget) and roots:
        raise ValueError("--report and --forget take no root: they act on the crawl in the server")
    if importlib.util.find_spec("redis") is None:
        raise ValueError("--frontier needs the redis package: pip install redis")
    if not (args.lease > 0 and args.lease < float("inf")):
        raise ValueError(f"--lease must be more than 0 seconds, not {args.lease!r}")
    if args.max_attempts < 1:
        raise ValueError(f"--max-attempts must be at least 1, not {args.max_attempts}")


def run(
    args: argparse.Namespace,
    roots: list[str],
    options: CrawlOptions,
    json_file: IO[str] | None,
    on_page: Any,
) -> int:
    """Crawl, report or forget, as asked; return the exit status."""
    # Imported here: only a frontier needs asyncio and the Redis client
    # (stages 1 and 2 run without either).
    import asyncio

    from stage3_asyncio import frontier

    try:
        asyncio.run(probe(frontier, args.frontier))
        if args.report or args.forget:
            return asyncio.run(act(frontier, args, options, json_file))
    except frontier.FrontierError as error:
        print(f"crawl: {error}", file=sys.stderr)
        return EXIT_FAILED
    crawler = frontier.FrontierCrawler(
        roots,
        frontier=args.frontier,
        lease=args.lease,
        max_attempts=args.max_attempts,
        **options.keywords(),
    )
    crawler.on_page = on_page
    return crawl(frontier, crawler, json_file, quiet=args.level == 0)


async def probe(frontier: Any, url: str) -> None:
    """Check that the server at ``url`` answers; raises FrontierError saying why not."""
    server = frontier.Frontier(url)
    await server.connect()
    await server.close()


def crawl(frontier: Any, crawler: Any, json_file: IO[str] | None, *, quiet: bool) -> int:
    """Run this process's part of the crawl, then report what it fetched."""
    from stage3_asyncio.crawler import run as run_stage3  # Stage 3's run, as it is.

    status, message = EXIT_OK, ""
    with progress(crawler) if not quiet else contextlib.nullcontext():
        try:
            run_stage3(crawler)
        except KeyboardInterrupt:
            status, message = EXIT_INTERRUPTED, "\nInterrupted"
        except frontier.CrawlLost as error:
            status, message = EXIT_LOST, f"crawl: {error}"
        except frontier.FrontierError as error:  # Each says what the server still holds.
            status, message = EXIT_FAILED, f"crawl: {error}"
    report(crawler)
    if json_file is not None:
        write_jsonl(crawler, json_file)
    if message:
        print(message, file=sys.stderr)
    return status


async def act(
    frontier: Any,
    args: argparse.Namespace,
    options: CrawlOptions,
    json_file: IO[str] | None,
) -> int:
    """Print the report of the crawl in the server, and forget it, as asked."""
    server = frontier.Frontier(args.frontier, args.lease)
    try:
        if args.report:
            stored = await frontier.load_crawl(server, options.max_tasks)
            report(stored)
            if json_file is not None:
                write_jsonl(stored, json_file)
        if args.forget:
            # One step in the server: no process starts or steps in between.
            queued, leased, working, removed = await server.forget()
            if queued or leased or working:
                state = f"{queued} queued, {leased} leased, {working} processes at work"
                print(f"crawl: the crawl is not finished ({state}): not forgetting it",
                      file=sys.stderr)  # fmt: skip
                return EXIT_FAILED
            print(f"Forgot the crawl: {removed} keys removed.", file=sys.stderr)
        return EXIT_OK
    finally:
        await server.close()

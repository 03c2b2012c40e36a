"""The ``crawl`` command: run any stage's crawler and print its report.

It takes the options of the 500 Lines crawler's ``crawl.py`` (with either
``--max_tasks`` or ``--max-tasks`` spelling), built from the one definition
in ``shared.crawl.options``, plus ``--stage``, ``--json``, ``--save`` and
``--journal`` (``--trace`` is an option of the crawl itself, written by the
stage; the journal is stage 2's loop's alone, so the command makes it).  With no
root URL it starts the bundled test site and crawls that, then checks the
result against the site's oracle.  The report is printed at the end, and
also after Ctrl-C, so what was done is never lost.

Everything given is checked before anything starts: a root that is not an
http or https URL, a bad option or an unwritable output is one line on
stderr and exit status 2, with no name looked up.  The exit statuses are
the ``EXIT_`` constants below.
"""

from __future__ import annotations

import argparse
import contextlib
import heapq
import importlib
import logging
import math
import os
import re
import sys
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any, NoReturn

from shared.cli import frontier as frontier_cli
from shared.cli.progress import progress
from shared.crawl.options import add_arguments, from_arguments
from shared.record.report import PrintableFormatter, StreamedRecords, report, write_jsonl
from shared.record.save import PageSaver
from shared.record.stats import FetchStatistic
from shared.testsite.site import DEFAULT_PAGES, MIN_PAGES, Site
from shared.web.recrawl import read_since
from shared.web.urls import CRAWLABLE_SCHEMES, normalize_url

STAGES = {
    "callbacks": "stage1_callbacks",
    "generators": "stage2_generators",
    "asyncio": "stage3_asyncio",
}
# What can serve the bundled site: aiohttp.web, or the HTTP server on stage
# 2's loop.  Chosen here, as the stage is: shared/ below the CLI imports no stage.
SERVERS = ("aiohttp", "generators")
LOG_LEVELS = [logging.ERROR, logging.WARNING, logging.INFO, logging.DEBUG]
# Exit statuses: 0 when at least one root was fetched (its server answered,
# whatever the status) or the bundled site was crawled as it should be.
EXIT_OK = 0
EXIT_NOTHING_FETCHED = 1  # No root could be fetched: refused, unreachable, every try failed.
EXIT_USAGE = 2  # Bad arguments: nothing was started.
EXIT_MISMATCH = 3  # The crawl of the bundled site differs from what the site expects.
# 4: with --frontier, the crawl was lost from its server (shared.cli.frontier.EXIT_LOST).
EXIT_INTERRUPTED = 130  # Ctrl-C, as a shell reports SIGINT: 128 + 2.
SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:")  # What starts a URL, or host:port.


class OneLineParser(argparse.ArgumentParser):
    """An argument parser whose errors are one line, not usage plus a line."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see --help)\n")


def build_parser(prog: str = "crawl", stage: str | None = None) -> OneLineParser:
    """Return the parser of the crawl command's arguments."""
    parser = OneLineParser(
        prog=prog,
        description="Crawl web sites from the given roots and print a report. "
        "With no root, crawl the bundled local test site.",
        epilog="exit status: 0 when at least one root was fetched (or the bundled site "
        "crawled as expected), 1 when no root could be fetched, 2 for a usage error, "
        "3 when the bundled site's crawl differs from what it expects, 130 after Ctrl-C",
    )
    parser.add_argument("roots", nargs="*", metavar="ROOT", help="root URL (http:// if no scheme)")
    parser.add_argument(
        "--stage", choices=list(STAGES), default=stage or "asyncio",
        help="which crawler to run (default: %(default)s)",
    )  # fmt: skip
    add_arguments(parser)  # --max-tasks and every other option of a Crawler.
    add = parser.add_argument
    add("--json", metavar="FILE", help="also write one JSON object per URL to FILE")
    add("--stream", action="store_true",
        help="with --json: write each record to FILE as it is made and keep none in "
        "memory, for a crawl of millions of URLs; the report then counts the URLs "
        "without a line for each")  # fmt: skip
    add("--save", metavar="DIR", help="save each HTML page under DIR, mirrored by URL path")
    add("--journal", metavar="FILE",
        help="with --stage generators: write every turn of the event loop to FILE, for a "
        "replay (python -m shared.record.journal FILE makes the player)")  # fmt: skip
    frontier_cli.add_arguments(parser)  # --frontier, --lease, --report, --forget.
    add("--pages", type=int, default=DEFAULT_PAGES, metavar="N",
        help="size of the bundled site when no root is given (default: %(default)s)")  # fmt: skip
    add("--server", choices=SERVERS, default="aiohttp",
        help="what serves the bundled site: aiohttp.web, or stage 2's own HTTP server "
        "(default: %(default)s)")  # fmt: skip
    add("--simulate", action="store_true",
        help="crawl the bundled site in a simulated world: an in-memory network and a "
        "virtual clock, so waits take no real time (no root, no --frontier)")  # fmt: skip
    add("--seed", type=int, metavar="N",
        help="with --simulate: the seed that orders what happens at once and draws each "
        "connection's fate; the same seed gives the same crawl (default: 0)")  # fmt: skip
    add("--latency", type=float, metavar="MS",
        help="with --simulate: milliseconds each answer takes (default: 0)")  # fmt: skip
    add("--loss", type=float, metavar="P",
        help="with --simulate: the chance, from 0 to 1, that a connection's answer is "
        "lost, so that the crawler's timeout ends it (default: 0)")  # fmt: skip
    add("-v", "--verbose", action="count", dest="level", default=1,
        help="log more (repeat for more)")  # fmt: skip
    add("-q", "--quiet", action="store_const", const=0, dest="level",
        help="stderr shows errors only: no notices, no progress line "
        "(the report still prints)")  # fmt: skip
    return parser


def root_url(text: str) -> str:
    """Return the normalized URL of a root given on the command line.

    A root without a scheme is a host (``example.com``, ``localhost:8000/``)
    and gets ``http://``.  Raises ValueError, saying why, for anything that
    is not an http or https URL with a host; looks nothing up on the network.
    """
    url = text.strip()
    scheme = SCHEME.match(url)
    if not scheme or url[scheme.end() :][:1].isdigit():  # A host, maybe with a port.
        url = "http://" + url
    try:
        url = normalize_url(url)  # As a browser parses it: WHATWG's rules.
    except ValueError:
        raise ValueError(f"root {text!r} is not a valid URL") from None
    # WHATWG gives every http or https URL a host: no need to check for one.
    if urllib.parse.urlsplit(url).scheme not in CRAWLABLE_SCHEMES:
        raise ValueError(f"root {text!r} is not an http or https URL")
    return url


def main(argv: list[str] | None = None, *, stage: str | None = None) -> int:
    """Run the crawl command; return the exit status."""
    prog = f"python -m {STAGES[stage]}" if stage else "crawl"
    parser = build_parser(prog, stage)
    args = parser.parse_args(argv)
    try:  # Every check before any work: a usage error starts nothing.
        roots = [root_url(root) for root in args.roots]
        options = from_arguments(args)
        world = simulated_world(args, roots)  # None unless --simulate.
        if args.stream and not args.json:
            raise ValueError("--stream goes with --json FILE: the records must go somewhere")
        if frontier_cli.requested(args):
            if args.stream:  # A process drops the records another one wrote first.
                raise ValueError("--stream cannot be used with --frontier")
            frontier_cli.check(args, roots)
        elif not roots and args.pages < MIN_PAGES:
            raise ValueError(f"the test site needs at least {MIN_PAGES} pages, not {args.pages}")
        if options.since is not None:  # Readable, and JSON Lines?
            check_since(options.since)
        module = load_stage(args.stage)
        saver = make_saver(args.save) if args.save else None
        json_file = open_output(args.json) if args.json else None
        if args.trace:  # Written at the end of the crawl; can it be?
            open_output(args.trace).close()
        if args.journal:  # The same; and only stage 2's loop keeps one.
            check_journal(args)
    except (ValueError, OutputError) as error:
        parser.error(str(error))
    level = LOG_LEVELS[min(args.level, len(LOG_LEVELS) - 1)]
    handler = logging.StreamHandler()  # To stderr; a server's text is escaped.
    handler.setFormatter(PrintableFormatter("%(levelname)s %(name)s: %(message)s"))
    logging.basicConfig(level=level, handlers=[handler])
    if frontier_cli.requested(args):  # The crawl's state lives in a server.
        with json_file or contextlib.nullcontext():
            return frontier_cli.run(args, roots, options, json_file, saver)
    with json_file or contextlib.nullcontext(), bundled_site(roots, args, world) as crawl_roots:
        crawler = module.Crawler(crawl_roots, **options.keywords())
        crawler.on_page = saver
        if world is not None:
            crawler.simulate(world)
        oracle, answered = None, set[str]()  # Streamed records are checked as they come.
        if json_file is not None and args.stream:
            if not roots:
                oracle = oracle_check(crawler, crawl_roots[0], args.pages)
            crawler.done = stream_records(crawler, json_file, crawl_roots, answered, oracle)
        journal = make_journal(crawler) if args.journal else None
        status = run_and_report(module, crawler, json_file, quiet=args.level == 0, journal=journal)
        if journal is not None:
            journal.write(args.journal)
        if world is not None and args.level > 0:
            print(f"Simulated: {world.time():.3f} s of virtual time.", file=sys.stderr)
        if status == EXIT_OK and not roots:
            status = check_oracle(crawler, crawl_roots[0], args.pages, oracle)
        elif status == EXIT_OK:
            status = check_roots(crawler, crawl_roots, answered)
    return status


def stream_records(
    crawler: Any, file: IO[str], roots: list[str], answered: set[str], oracle: Any
) -> StreamedRecords:
    """Return the records of --stream: each to ``file`` as it comes, and kept nowhere.

    Each record adds its URL to ``answered`` if it is a root that was
    answered, and goes to the ``oracle``'s check if there is one.
    """
    wanted = set(roots)

    def note_root(stat: FetchStatistic) -> None:
        if stat.status is not None and stat.url in wanted:
            answered.add(stat.url)

    watchers = [note_root]
    if oracle is not None:
        watchers.append(lambda stat: oracle.see(stat.url, stat.status, stat.next_url))
    return StreamedRecords(file, crawler.page_links, watchers)


def check_since(path: str | os.PathLike[str]) -> None:
    """Check that an earlier crawl's records can be read; raises ValueError."""
    try:
        read_since(path)
    except OSError as error:
        raise ValueError(f"cannot read {os.fspath(path)}: {reason(error)}") from None


def check_journal(args: argparse.Namespace) -> None:
    """Check that --journal can be kept and written; raises ValueError or OutputError."""
    if args.stage != "generators":
        raise ValueError("--journal needs --stage generators: only stage 2's loop keeps one")
    if frontier_cli.requested(args):
        raise ValueError("--journal cannot be used with --frontier")
    open_output(args.journal).close()


def make_journal(crawler: Any) -> Any:
    """Return a journal of stage 2's loop that also shows ``crawler``'s queue."""
    from shared.record.journal import Journal  # Only --journal needs it.

    journal = Journal()
    journal.watch_queue(crawler.q)
    return journal


class OutputError(Exception):
    """A file or directory given on the command line cannot be written."""


def load_stage(name: str) -> Any:
    """Import a stage's package; raises ValueError when it cannot be loaded."""
    try:
        return importlib.import_module(STAGES[name])
    except ImportError as error:
        raise ValueError(f"stage {name!r} cannot be loaded: {error}") from None


def make_saver(directory: str) -> PageSaver:
    """Return the saver of --save, which creates ``directory`` and its missing parents.

    Raises OutputError saying why it cannot.
    """
    try:
        return PageSaver(directory)
    except OSError as error:
        raise OutputError(f"cannot save pages in {directory}: {reason(error)}") from None


def open_output(path: str) -> IO[str]:
    """Open ``path`` for writing, creating its missing parent directories as --save does.

    Raises OutputError saying why it cannot.
    """
    try:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        return open(path, "w", encoding="utf-8")  # Closed by main().
    except OSError as error:
        raise OutputError(f"cannot write {path}: {reason(error)}") from None


def reason(error: OSError) -> str:
    """Say why a file or directory could not be made, the same way for both."""
    if isinstance(error, FileExistsError):  # mkdir() met a file where a directory goes.
        return "Not a directory"
    return error.strerror or str(error)


def check_roots(crawler: Any, roots: list[str], answered: set[str] | None = None) -> int:
    """Return EXIT_OK if the server of at least one root answered, else EXIT_NOTHING_FETCHED.

    ``answered`` holds the URLs answered when the records were streamed;
    otherwise they are read from ``crawler.done``.
    """
    if not isinstance(crawler.done, StreamedRecords):
        answered = {stat.url for stat in crawler.done if stat.status is not None}
    if answered and answered.intersection(roots):
        return EXIT_OK
    print("No root could be fetched (see the report).", file=sys.stderr)
    return EXIT_NOTHING_FETCHED


def simulated_world(args: argparse.Namespace, roots: list[str]) -> Any:
    """Return the World that --simulate asks for, or None without it.

    Raises ValueError for a simulation option without --simulate, a root or
    --frontier with it, or a value out of range.
    """
    extras = [name for name in ("seed", "latency", "loss") if getattr(args, name) is not None]
    if not args.simulate:
        if extras:
            raise ValueError(f"--{extras[0]} goes with --simulate")
        return None
    if roots or frontier_cli.requested(args):
        raise ValueError("--simulate crawls the bundled test site: no root, no --frontier")
    if args.latency is not None and not 0 <= args.latency < math.inf:
        raise ValueError(f"--latency must be at least 0 ms, not {args.latency}")
    # Imported here: a crawl on real sockets needs none of it.
    from shared.sim import Conditions, World

    latency = (args.latency or 0.0) / 1000
    conditions = Conditions(latency=latency, loss=args.loss or 0.0)
    # No note of each request heard: the tests read it, a crawl of millions
    # of URLs would hold a few hundred bytes for each of them.
    return World(args.seed or 0, conditions, keep_heard=False)


@contextlib.contextmanager
def bundled_site(
    roots: list[str], args: argparse.Namespace, world: Any = None
) -> Iterator[list[str]]:
    """Yield the roots to crawl, serving the bundled site when none were given.

    With a simulated ``world``, the site is served on its network instead.
    """
    if roots:
        yield roots
        return
    if world is not None:  # Nothing reads its requests by path: it keeps only their total.
        root = world.serve(Site(args.pages, count_paths=False))
        if args.level > 0:
            print(
                f"No root given: crawling the bundled test site at {root} in a simulated "
                f"world (seed {world.seed}), with no socket and no real wait",
                file=sys.stderr,
            )
        yield [root]
        return
    with site_server(args.server, args.pages) as server:
        if args.level > 0:
            by = "stage 2's server" if args.server == "generators" else args.server
            print(
                f"No root given: crawling the bundled test site at {server.url}, served by {by}",
                file=sys.stderr,
            )
        yield [server.url]


def site_server(server: str, pages: int, latency: float = 0.0) -> Any:
    """Return a context manager serving the test site from a thread, with ``.url`` and ``.site``.

    ``server`` is one of SERVERS.  Raises ValueError for a bad site size or
    latency, or an unknown server.
    """
    # Imported here: only the bundled site needs asyncio and aiohttp, so
    # ``python -m stage1_callbacks URL`` runs without them; and only stage
    # 2's server needs stage 2 (and httptools).
    if server == "aiohttp":
        from shared.testsite.server import ServerThread, make_app

        return ServerThread(make_app(pages, latency))
    if server == "generators":
        from stage2_generators.server.http_server import SiteServerThread

        return SiteServerThread(Site(pages, latency))
    raise ValueError(f"unknown server {server!r}: choose from {', '.join(SERVERS)}")


def run_and_report(
    module: Any,
    crawler: Any,
    json_file: IO[str] | None,
    *,
    quiet: bool = False,
    journal: Any = None,
) -> int:
    """Run the crawl, then print the report (also after Ctrl-C).

    A ``journal`` (stage 2 only) is handed to the stage's ``run``.
    """
    status = EXIT_OK
    with progress(crawler) if not quiet else contextlib.nullcontext():
        try:
            module.run(crawler) if journal is None else module.run(crawler, journal=journal)
        except KeyboardInterrupt:
            status = EXIT_INTERRUPTED
    if status == EXIT_INTERRUPTED:
        print("\nInterrupted", file=sys.stderr)
    report(crawler)
    if json_file is not None:
        write_jsonl(crawler, json_file)
    return status


def oracle_check(crawler: Any, root: str, pages: int) -> Any:
    """Return the check of a crawl of the bundled site against its oracle, or None.

    None when --max-pages or --max-depth leave a part of the site out.
    """
    # Only the bundled site needs the oracle.
    from shared.testsite.site import Oracle, OracleCheck

    if crawler.max_pages is not None or crawler.max_depth is not None:
        return None
    options = (crawler.max_redirect, crawler.obey_robots, crawler.sitemaps)
    return OracleCheck(Oracle(root, pages, *options))


def check_oracle(crawler: Any, root: str, pages: int, check: Any = None) -> int:
    """Compare a crawl of the bundled site with what the site says it must record.

    ``check`` is an ``OracleCheck`` that has seen every record as it came
    (--stream); without one, the records are read from ``crawler.done``.
    """
    if check is None:
        check = oracle_check(crawler, root, pages)
        for stat in crawler.done if check is not None else ():
            check.see(stat.url, stat.status, stat.next_url)
    if check is None:
        print("Oracle: not checked: --max-pages and --max-depth leave part of the site out.")
        return EXIT_OK
    expected = len(check.oracle)
    if check.matches():
        print(f"Oracle: all {expected} urls match the test site's expected results.")
        return EXIT_OK
    print(
        f"Oracle: MISMATCH: {check.seen.count(0)} expected results missing, "
        f"{check.unexpected} unexpected, {check.recorded} recorded for {expected}."
    )
    for line in heapq.nsmallest(10, check.missing()):
        print("  missing:", line)
    for line in check.shown:
        print("  unexpected:", line)
    return EXIT_MISMATCH

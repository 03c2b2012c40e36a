"""The ``crawl`` command: run any stage's crawler and print its report.

It takes the options of the 500 Lines crawler's ``crawl.py`` (with either
``--max_tasks`` or ``--max-tasks`` spelling), plus ``--stage``,
``--timeout``, ``--max-size``, ``--json`` and ``--save``.  With no root URL
it starts the bundled test site and crawls that, then checks the result
against the site's oracle.  The report is printed at the end, and also
after Ctrl-C, so what was done is never lost.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import logging
import sys
import threading
import time
from collections.abc import Iterator
from typing import IO, Any, NoReturn

from shared.options import add_arguments, from_arguments
from shared.report import report, write_jsonl
from shared.save import PageSaver
from shared.server import ServerThread
from shared.site import DEFAULT_PAGES, MIN_PAGES, expected_results, make_app

STAGES = {
    "callbacks": "stage1_callbacks",
    "generators": "stage2_generators",
    "asyncio": "stage3_asyncio",
}
LOG_LEVELS = [logging.ERROR, logging.WARNING, logging.INFO, logging.DEBUG]
EXIT_OK, EXIT_MISMATCH, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130


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
    )
    parser.add_argument("roots", nargs="*", metavar="ROOT", help="root URL (http:// if no scheme)")
    parser.add_argument(
        "--stage", choices=list(STAGES), default=stage or "asyncio",
        help="which crawler to run (default: %(default)s)",
    )  # fmt: skip
    add_arguments(parser)  # --max-tasks and every other option of a Crawler.
    add = parser.add_argument
    add("--json", metavar="FILE", help="also write one JSON object per URL to FILE")
    add("--save", metavar="DIR", help="save each HTML page under DIR, mirrored by URL path")
    add("--pages", type=int, default=DEFAULT_PAGES, metavar="N",
        help="size of the bundled site when no root is given (default: %(default)s)")  # fmt: skip
    add("-v", "--verbose", action="count", dest="level", default=1,
        help="log more (repeat for more)")  # fmt: skip
    add("-q", "--quiet", action="store_const", const=0, dest="level", help="log errors only")
    return parser


def fix_url(url: str) -> str:
    """Prefix a URL that has no scheme with ``http://``."""
    return url if "://" in url else "http://" + url


def main(argv: list[str] | None = None, *, stage: str | None = None) -> int:
    """Run the crawl command; return the exit status."""
    prog = f"python -m {STAGES[stage]}" if stage else "crawl"
    parser = build_parser(prog, stage)
    args = parser.parse_args(argv)
    if not args.roots and args.pages < MIN_PAGES:
        parser.error(f"the test site needs at least {MIN_PAGES} pages, not --pages {args.pages}")
    level = LOG_LEVELS[min(args.level, len(LOG_LEVELS) - 1)]
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s")
    try:
        module = importlib.import_module(STAGES[args.stage])
    except ImportError as error:
        parser.error(f"stage {args.stage!r} cannot be loaded: {error}")
    try:
        options = from_arguments(args)  # Checked before any work.
    except ValueError as error:
        parser.error(str(error))
    try:
        saver = PageSaver(args.save) if args.save else None
    except OSError as error:
        parser.error(f"cannot save pages in {args.save}: {error.strerror}")
    try:
        json_file = open(args.json, "w", encoding="utf-8") if args.json else None  # noqa: SIM115
    except OSError as error:
        parser.error(f"cannot write {args.json}: {error.strerror}")
    with json_file or contextlib.nullcontext(), bundled_site(args) as roots:
        crawler = module.Crawler(roots, **options.keywords())
        crawler.on_page = saver
        status = run_and_report(module, crawler, json_file)
        if not args.roots and status == EXIT_OK:
            status = check_oracle(crawler, roots[0], args.pages)
    return status


@contextlib.contextmanager
def bundled_site(args: argparse.Namespace) -> Iterator[list[str]]:
    """Yield the roots to crawl, serving the bundled site when none were given."""
    if args.roots:
        yield [fix_url(root) for root in args.roots]
        return
    try:
        app = make_app(args.pages)
    except ValueError as error:
        sys.exit(f"crawl: error: {error}")
    with ServerThread(app) as server:
        print(f"No root given: crawling the bundled test site at {server.url}", file=sys.stderr)
        yield [server.url]


def run_and_report(module: Any, crawler: Any, json_file: IO[str] | None) -> int:
    """Run the crawl, then print the report (also after Ctrl-C)."""
    status = EXIT_OK
    with progress(crawler):
        try:
            module.run(crawler)
        except KeyboardInterrupt:
            status = EXIT_INTERRUPTED
    if status == EXIT_INTERRUPTED:
        print("\nInterrupted", file=sys.stderr)
    report(crawler)
    if json_file is not None:
        write_jsonl(crawler, json_file)
    return status


def check_oracle(crawler: Any, root: str, pages: int) -> int:
    """Compare a crawl of the bundled site with what the site says it must record."""
    expected = expected_results(root, pages, crawler.max_redirect)
    got = {(stat.url, stat.status, stat.next_url) for stat in crawler.done}
    if got == expected and len(crawler.done) == len(expected):
        print(f"Oracle: all {len(expected)} urls match the test site's expected results.")
        return EXIT_OK
    print(
        f"Oracle: MISMATCH: {len(expected - got)} expected results missing, "
        f"{len(got - expected)} unexpected, {len(crawler.done)} recorded for {len(expected)}."
    )
    for line in sorted(expected - got)[:10]:
        print("  missing:", line)
    for line in sorted(got - expected)[:10]:
        print("  unexpected:", line)
    return EXIT_MISMATCH


@contextlib.contextmanager
def progress(crawler: Any, interval: float = 0.25) -> Iterator[None]:
    """Show a live one-line progress display on stderr, if it is a terminal."""
    if not sys.stderr.isatty():
        yield
        return
    stop = threading.Event()

    def show() -> None:
        while not stop.wait(interval):
            sys.stderr.write("\r" + progress_line(crawler) + "\033[K")
            sys.stderr.flush()

    thread = threading.Thread(target=show, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()
        sys.stderr.write("\r\033[K")


def progress_line(crawler: Any) -> str:
    """Return 'done / queued / in flight / rate' for a running crawl."""
    done, in_flight = len(crawler.done), crawler.in_flight
    queued = max(len(crawler.seen_urls) - done - in_flight, 0)
    elapsed = max(time.time() - crawler.t0, 1e-9)
    return f"done {done} | queued {queued} | in flight {in_flight} | {done / elapsed:.1f} urls/s"


if __name__ == "__main__":
    sys.exit(main())

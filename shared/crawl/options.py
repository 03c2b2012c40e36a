"""The options of a crawl, defined once: names, types, defaults, checks, help.

Each option is one field of ``CrawlOptions``.  Every stage's ``Crawler``
is a ``CrawlOptions`` (through ``shared.crawl.crawling.CrawlerBase``), so
``Crawler(roots, max_tasks=5)`` gets its default and its check here and
reads it back as ``crawler.max_tasks``, as in the 500 Lines crawler.  The
``crawl`` command builds its options from the same fields
(``add_arguments``), so the command line and the Python API cannot drift
apart.  Adding an option is adding one field below, with ``option()``.

The command line may default to another value than the Python API when
it has a reason to (the chapter's ``crawl.py`` runs 100 tasks where its
``Crawler`` defaults to 10); ``crawl --help`` then gives the reason.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import os
import re
import typing
from collections.abc import Callable
from typing import Any

from shared.web.http import USER_AGENT

Check = Callable[[str, Any], None]  # Raises ValueError naming the option.
SAME = object()  # The command line's default is the Python default.


# --- Checks: each raises ValueError for a value the option cannot take ------


def whole_number(minimum: int) -> Check:
    """Return a check for an int (not a bool) of at least ``minimum``."""

    def check(name: str, value: Any) -> None:
        if not isinstance(value, int) or isinstance(value, bool) or value < minimum:
            raise ValueError(f"{name} must be a whole number of at least {minimum}, not {value!r}")

    return check


def seconds(*, zero_allowed: bool) -> Check:
    """Return a check for a number of seconds: above 0, or from 0 if ``zero_allowed``."""

    def check(name: str, value: Any) -> None:
        number = isinstance(value, int | float) and not isinstance(value, bool)
        if number and (value >= 0 if zero_allowed else value > 0) and not math.isnan(value):
            return
        bound = "at least 0" if zero_allowed else "more than 0"
        raise ValueError(f"{name} must be {bound} seconds, not {value!r}")

    return check


def optional(check: Check) -> Check:
    """Return a check that lets None through (no limit) and ``check``s the rest."""

    def check_optional(name: str, value: Any) -> None:
        if value is not None:
            check(name, value)

    return check_optional


def finite(check: Check) -> Check:
    """Return ``check``, also refusing infinity (a wait that would never end)."""

    def check_finite(name: str, value: Any) -> None:
        check(name, value)
        if math.isinf(value):
            raise ValueError(f"{name} must be a finite number of seconds, not {value!r}")

    return check_finite


def header_text(name: str, value: Any) -> None:
    """Check that ``value`` is text that can stand in an HTTP header."""
    if not isinstance(value, str) or not value.strip() or not value.isprintable():
        raise ValueError(f"{name} must be printable text, not {value!r}")
    if not value.isascii():
        raise ValueError(f"{name} must be ASCII text, not {value!r}")


def file_name(name: str, value: Any) -> None:
    """Check that ``value`` is the name of a file: a non-empty string or a path."""
    if not isinstance(value, str | os.PathLike) or not str(value):
        raise ValueError(f"{name} must be a file name, not {value!r}")


def file_path(name: str, value: Any) -> None:
    """Check that ``value`` is a file's path (text, or a path object)."""
    if not isinstance(value, str | os.PathLike) or not os.fspath(value):
        raise ValueError(f"{name} must be the path of a file, not {value!r}")


def flag(name: str, value: Any) -> None:
    """Check that ``value`` is True or False."""
    if not isinstance(value, bool):
        raise ValueError(f"{name} must be True or False, not {value!r}")


def pattern(name: str, value: Any) -> None:
    """Check that ``value`` is None or a valid regular expression."""
    if value is None:
        return
    if not isinstance(value, str):
        raise ValueError(f"{name} must be a regular expression, not {value!r}")
    try:
        re.compile(value)
    except re.error as error:
        raise ValueError(f"invalid {name} pattern {value!r}: {error}") from None


# --- The options -------------------------------------------------------------


def option(
    default: Any,
    check: Check,
    help_text: str,
    *,
    metavar: str | None = None,
    cli_default: Any = SAME,
    why: str = "",
    off: str = "",
) -> Any:
    """Declare one option: its default, its check and its command-line help.

    ``cli_default`` and ``why``: the command line's own default, and the
    reason it differs.  ``off``: for an option that is True by default, the
    flag (and its help, after ``=``) that turns it off.
    """
    cli = {"help": help_text, "metavar": metavar, "default": cli_default, "why": why, "off": off}
    return dataclasses.field(default=default, metadata={"check": check, "cli": cli})


@dataclasses.dataclass(frozen=True, kw_only=True, eq=False)
class CrawlOptions:
    """The options of one crawl, checked when made.

    Raises ValueError for a value out of range or of the wrong type, or an
    invalid ``exclude`` regular expression.  Frozen: the URL policy is built
    from the options once, so changing one later would go unnoticed.
    """

    exclude: str | None = option(
        None, pattern, "skip URLs that match this regular expression", metavar="REGEX"
    )
    strict: bool = option(
        True,
        flag,
        "a host matches a root host exactly or modulo www.",
        off="--lenient=a host matches a root host on its last two labels",
    )
    max_redirect: int = option(10, whole_number(0), "limit redirect chains", metavar="N")
    max_tries: int = option(4, whole_number(1), "limit tries on network errors", metavar="N")
    max_tasks: int = option(
        10,
        whole_number(1),
        "limit requests in flight",
        metavar="N",
        cli_default=100,
        why="Crawler() keeps 10, the chapter's crawling.py default; the command, "
        "like the chapter's crawl.py, runs 100 to crawl a whole site quickly",
    )
    timeout: float = option(
        10.0, seconds(zero_allowed=False), "seconds for one whole request", metavar="SECS"
    )
    max_size: int = option(
        10 * 2**20, whole_number(0), "cut bodies longer than this", metavar="BYTES"
    )

    # Politeness (shared/crawl/polite.py).  The command line is polite by default;
    # Python callers (the tests, the benchmark) ask for it.
    obey_robots: bool = option(
        False,
        flag,
        "fetch each host's robots.txt first and skip the URLs it disallows",
        cli_default=True,
        why="Crawler() leaves it to the caller, as Scrapy's settings do",
        off="--ignore-robots=do not fetch or obey robots.txt",
    )
    delay: float = option(
        0.0,
        finite(seconds(zero_allowed=True)),
        "seconds between two requests to one host; a longer robots.txt Crawl-delay wins",
        metavar="SECS",
    )
    max_per_host: int | None = option(
        None,
        optional(whole_number(1)),
        "limit requests in flight to one host",
        metavar="N",
        cli_default=8,
        why="Scrapy's default per domain; Crawler() sets no limit but max_tasks",
    )
    max_retry_after: float = option(
        120.0,
        finite(seconds(zero_allowed=True)),
        "wait at most this long when a 429 or 503 answer asks to (Retry-After); "
        "a longer wait gives up on the URL",
        metavar="SECS",
    )
    sitemaps: bool = option(
        False,
        flag,
        "also crawl the pages each root host lists in its sitemaps "
        "(robots.txt Sitemap: lines, else /sitemap.xml)",
    )
    since: str | os.PathLike[str] | None = option(
        None,
        optional(file_path),
        "recrawl: ask only for what changed since the crawl whose --json output is FILE",
        metavar="FILE",
    )
    max_pages: int | None = option(
        None,
        optional(whole_number(1)),
        "fetch at most N URLs; the rest are recorded as not fetched",
        metavar="N",
    )
    max_depth: int | None = option(
        None,
        optional(whole_number(0)),
        "fetch only URLs at most N links from a root; deeper ones are not fetched",
        metavar="N",
    )
    user_agent: str = option(
        USER_AGENT,
        header_text,
        "the User-Agent sent, and the name robots.txt rules are read for",
        metavar="TEXT",
    )

    # A record of the crawl (shared/record/trace.py); without it, nothing is recorded.
    trace: str | None = option(
        None,
        optional(file_name),
        "write a timeline of the crawl to FILE, in the Trace Event Format "
        "(Perfetto and chrome://tracing open it)",
        metavar="FILE",
    )

    def __post_init__(self) -> None:
        for field in dataclasses.fields(CrawlOptions):
            field.metadata["check"](field.name, getattr(self, field.name))

    def keywords(self) -> dict[str, Any]:
        """Return the options as keyword arguments for a Crawler or crawl()."""
        return {field.name: getattr(self, field.name) for field in dataclasses.fields(self)}


# What a Crawler refuses to change (see CrawlerBase.__setattr__).
OPTION_NAMES = frozenset(field.name for field in dataclasses.fields(CrawlOptions))


# --- The command line --------------------------------------------------------


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add one command-line option per field, spelled ``--max-tasks`` or ``--max_tasks``."""
    hints = typing.get_type_hints(CrawlOptions)
    for field in dataclasses.fields(CrawlOptions):
        cli = field.metadata["cli"]
        default = field.default if cli["default"] is SAME else cli["default"]
        spellings = dict.fromkeys([f"--{field.name.replace('_', '-')}", f"--{field.name}"])
        shown = f" (default: {default})" if default is not None else ""
        if cli["why"]:
            shown = f" (default: {default}; {cli['why']})"
        kind = value_type(hints[field.name])
        if kind is bool:
            parser.add_argument(
                *spellings, action="store_true", dest=field.name, default=default,
                help=f"{cli['help']} ({'default' if default else 'off by default'}"
                + (f"; {cli['why']})" if cli["why"] else ")"),
            )  # fmt: skip
            if cli["off"]:
                off_flag, _, off_help = cli["off"].partition("=")
                parser.add_argument(off_flag, action="store_false", dest=field.name, help=off_help)
            continue
        parser.add_argument(
            *spellings, type=kind, dest=field.name, default=default, metavar=cli["metavar"],
            help=cli["help"] + shown,
        )  # fmt: skip


def value_type(hint: Any) -> type:
    """Return the type a command-line value converts to: ``int`` for ``int | None``."""
    kinds = [kind for kind in typing.get_args(hint) if kind is not type(None)] or [hint]
    return typing.cast(type, kinds[0])


def from_arguments(args: argparse.Namespace) -> CrawlOptions:
    """Return the options given on the command line; raises ValueError when one is bad."""
    names = [field.name for field in dataclasses.fields(CrawlOptions)]
    return CrawlOptions(**{name: getattr(args, name) for name in names})


# --- The shared frontier's options (crawl --frontier; stage3_asyncio/frontier.py) ---

DEFAULT_LEASE = 30.0  # Seconds before a dead process's URLs go back to the queue.
DEFAULT_MAX_ATTEMPTS = 3  # Leases of one URL that may run out before it is given up.
FRONTIER_SCHEMES = ("redis", "rediss", "unix")  # What redis-py connects to.


def check_frontier_url(url: str) -> str:
    """Return ``url`` if it names a Valkey or Redis server; raises ValueError otherwise."""
    scheme = url.partition("://")[0] if "://" in url else ""
    if scheme.lower() not in FRONTIER_SCHEMES:
        schemes = ", ".join(f"{name}://" for name in FRONTIER_SCHEMES)
        raise ValueError(f"--frontier must be a {schemes} URL, not {url!r}")
    return url

"""The crawl report, as text for people and as JSON Lines for tools.

The text report follows the 500 Lines crawler's ``reporting.py``: one line
per URL sorted by URL, a summary line, counters, ``Todo:`` and ``Done:``.
It reads only ``done``, ``seen_urls``, ``t0``, ``t1`` and ``max_tasks``
(and ``waits``, the waits 429 and 503 answers asked for, when there is
one), so it works for the crawler of every stage, also in the middle of a
crawl.

Text that came from the network (a Content-Type, an error's message) is
printed through ``printable``: a server must not be able to write to the
reader's terminal, nor split one URL's line in two.  The JSON Lines file
keeps each value exactly as it came.
"""

from __future__ import annotations

import collections
import json
import logging
import re
import time
from collections.abc import Callable, Iterable, Iterator
from typing import IO, Any, Protocol

from shared.record.stats import FetchStatistic, Skipped

# What a terminal acts on instead of showing: the C0 controls (ESC starts a
# command, BEL rings, CR and LF move the cursor), DEL, the C1 controls, and
# Unicode's line and paragraph separators.
CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def printable(text: str) -> str:
    """Return ``text`` with each control character written as an escape (``\\x1b``)."""
    return CONTROL.sub(lambda match: match.group().encode("unicode_escape").decode(), text)


class PrintableFormatter(logging.Formatter):
    """A log formatter that escapes control characters (see ``printable``).

    A message stays on its line; a traceback keeps its line breaks, and
    only what is inside its lines is escaped.
    """

    def formatMessage(self, record: logging.LogRecord) -> str:
        return printable(super().formatMessage(record))

    def formatException(self, ei: Any) -> str:
        lines = super().formatException(ei).split("\n")
        return "\n".join(printable(line) for line in lines)


class CrawlRecord(Protocol):
    """What the report needs from a crawler."""

    done: list[FetchStatistic]
    seen_urls: set[str]
    max_tasks: int
    t0: float
    t1: float | None


def report(crawler: CrawlRecord, file: IO[str] | None = None) -> None:
    """Print the report of every URL the crawler has recorded so far.

    Records streamed to a file (``StreamedRecords``) are not kept: the
    report says where they are instead of listing them, and counts them.
    """
    elapsed = (crawler.t1 or time.time()) - crawler.t0
    speed = len(crawler.done) / elapsed / crawler.max_tasks if elapsed > 0 else 0.0
    counts: collections.Counter[str] = collections.Counter()
    print("*** Report ***", file=file)
    if isinstance(crawler.done, StreamedRecords):
        counts.update(crawler.done.counts)
        print(f"(one record per URL in {crawler.done.name}, written as each came)", file=file)
    else:
        for stat in sorted(crawler.done, key=lambda stat: stat.url):
            print(url_report(stat, counts), file=file)
    print(
        f"Finished {len(crawler.done)} urls in {elapsed:.3f} secs",
        f"(max_tasks={crawler.max_tasks}) ({speed:.3f} urls/sec/task)",
        file=file,
    )
    # The waits 429 and 503 answers asked for (shared.web.retry), if the crawler kept any.
    for kind, count in getattr(crawler, "waits", {}).items():
        counts[f"wait_{kind}"] += count
    for key, count in sorted(counts.items()):
        print(f"{count:10d} {key}", file=file)
    print("Todo:", len(crawler.seen_urls) - len(crawler.done), file=file)
    print("Done:", len(crawler.done), file=file)
    print("Date:", time.ctime(), "local time", file=file)


def url_report(stat: FetchStatistic, counts: collections.Counter[str]) -> str:
    """Return the report line of one URL and add it to the counters.

    Control characters are escaped (see ``printable``): one line, whatever
    the server sent.
    """
    return printable(_url_line(stat, counts))


def _url_line(stat: FetchStatistic, counts: collections.Counter[str]) -> str:
    """Return the report line of one URL, as recorded, and add it to the counters."""
    if isinstance(stat.exception, Skipped):  # Not fetched on purpose: no failure.
        counts["skipped"] += 1
        counts["skipped_" + type(stat.exception).__name__] += 1
        return f"{stat.url} skipped {stat.exception}"
    if stat.exception is not None:
        counts["fail"] += 1
        counts["fail_" + type(stat.exception).__name__] += 1
        return f"{stat.url} error {stat.exception}"
    if stat.next_url:
        counts["redirect"] += 1
        return f"{stat.url} {stat.status} redirect {stat.next_url}"
    if stat.status == 304:  # A recrawl's page that did not change: no body came.
        counts["not_modified"] += 1
        return f"{stat.url} 304 not modified {stat.num_new_urls}/{stat.num_urls}"
    line = f"{stat.url} {stat.status} {stat.content_type} {stat.encoding} {stat.size}"
    if stat.status == 200 and stat.content_type == "text/html":
        counts["html"] += 1
        counts["html_bytes"] += stat.size
        return f"{line} {stat.num_new_urls}/{stat.num_urls}"
    if stat.status == 200:
        counts["other"] += 1
        counts["other_bytes"] += stat.size
    else:
        counts["error"] += 1
        counts["error_bytes"] += stat.size
        counts[f"status_{stat.status}"] += 1
    return line


def stat_to_json(stat: FetchStatistic, links: Iterable[str] = ()) -> dict[str, Any]:
    """Return one statistic as a JSON-ready dict; the exception becomes text.

    ``skipped`` is true for a URL the crawl chose not to fetch (robots.txt, a
    limit): its exception says why, and it is not a failure.  ``links`` are
    the page's allowed links, sorted: a recrawl (``--since``) goes on with
    them past a page that did not change.
    """
    record = stat._asdict()
    error = stat.exception
    record["exception"] = None if error is None else f"{type(error).__name__}: {error}"
    record["skipped"] = isinstance(error, Skipped)
    record["links"] = sorted(links)
    return record


def write_jsonl(crawler: CrawlRecord, file: IO[str]) -> None:
    """Write one JSON object per recorded URL, in completion order.

    Records streamed to ``file`` as they came are there already.
    """
    if not isinstance(crawler.done, StreamedRecords):
        page_links: dict[str, Iterable[str]] = getattr(crawler, "page_links", {})
        for stat in crawler.done:
            file.write(json_line(stat, page_links.get(stat.url, ())))
    file.flush()


def json_line(stat: FetchStatistic, links: Iterable[str] = ()) -> str:
    """Return the line of the JSON Lines file for one statistic."""
    return json.dumps(stat_to_json(stat, links), ensure_ascii=False) + "\n"


class StreamedRecords:
    """A crawl's records, each written to a JSON Lines file as it comes, and kept nowhere.

    A crawler keeps its records in ``done``, a list, for the report at the
    end: a few hundred bytes a URL, gigabytes for a crawl of millions.  An
    object of this class takes the list's place (``crawler.done =
    StreamedRecords(...)``) and the crawler appends to it as to the list.
    Each record goes to ``file`` at once, with its page's links, taken out
    of ``page_links``; what stays is the count and the report's counters.
    Each of ``watchers`` is called with every record (the ``crawl`` command
    checks the site's oracle so).  Iterating raises TypeError: the records
    are in the file, not here.
    """

    def __init__(
        self,
        file: IO[str],
        page_links: dict[str, tuple[str, ...]],
        watchers: Iterable[Callable[[FetchStatistic], None]] = (),
    ) -> None:
        self.file = file
        self.name = getattr(file, "name", "the file")
        self.page_links = page_links
        self.watchers = list(watchers)
        self.counts: collections.Counter[str] = collections.Counter()
        self.recorded = 0

    def append(self, stat: FetchStatistic) -> None:
        """Write one record, count it, and show it to the watchers."""
        self.file.write(json_line(stat, self.page_links.pop(stat.url, ())))
        _url_line(stat, self.counts)  # The report's counters; the line itself is in the file.
        self.recorded += 1
        for watch in self.watchers:
            watch(stat)

    def __len__(self) -> int:
        return self.recorded

    def __iter__(self) -> Iterator[FetchStatistic]:
        raise TypeError(f"streamed records are not kept: read them from {self.name}")

"""Recrawling what changed: conditional requests from an earlier crawl's records.

A crawler that comes back to a site need not download every page again.
The first crawl keeps each answer's validators, its ``ETag`` and its
``Last-Modified`` (``FetchStatistic.etag`` and ``last_modified``, written to
the ``--json`` file with the page's links).  ``crawl --since FILE`` reads
that file and sends them back as ``If-None-Match`` and ``If-Modified-Since``
(RFC 9110, section 13.1); a server whose page has not changed answers
``304 Not Modified`` with no body, and the crawler goes on with the links
it found there the first time.

This module reads the earlier file and builds the headers, free of any
I/O but the reading.  A value that could not stand in a header (a line
break, which would let a file inject headers into the request) is dropped.

Left out compared with a production crawler: ``Cache-Control`` and
``Expires`` (not asking at all while a page is fresh), and ``ETag``s of
sitemaps (a sitemap is always fetched whole).
"""

from __future__ import annotations

import json
import os
from typing import Any, NamedTuple

MAX_VALIDATOR = 1024  # Characters; a longer ETag is not worth sending back.


class Earlier(NamedTuple):
    """What a recrawl knows of a page from the earlier crawl."""

    etag: str | None
    last_modified: str | None
    content_type: str | None
    encoding: str | None
    links: tuple[str, ...]


def header_safe(value: Any) -> str | None:
    """Return ``value`` if it can be sent as a header value, else None."""
    if not isinstance(value, str) or not value or len(value) > MAX_VALIDATOR:
        return None
    return value if value.isascii() and value.isprintable() else None


def earlier_record(record: Any) -> tuple[str, Earlier] | None:
    """Return the URL and what a recrawl needs of one JSON record, or None."""
    if not isinstance(record, dict) or not isinstance(record.get("url"), str):
        return None
    if record.get("status") not in (200, 304) or record.get("exception") is not None:
        return None
    etag, last_modified = header_safe(record.get("etag")), header_safe(record.get("last_modified"))
    if etag is None and last_modified is None:
        return None
    links = record.get("links") or []
    if not isinstance(links, list) or not all(isinstance(link, str) for link in links):
        links = []
    content_type, encoding = record.get("content_type"), record.get("encoding")
    return record["url"], Earlier(
        etag=etag,
        last_modified=last_modified,
        content_type=content_type if isinstance(content_type, str) else None,
        encoding=encoding if isinstance(encoding, str) else None,
        links=tuple(links),
    )


# --8<-- [start:read_since]
def read_since(path: str | os.PathLike[str]) -> dict[str, Earlier]:
    """Return, by URL, the pages of an earlier ``--json`` file that have validators.

    Raises OSError when the file cannot be read, ValueError (naming the
    line) when a line is not JSON.
    """
    earlier: dict[str, Earlier] = {}
    with open(path, encoding="utf-8", errors="replace") as file:
        for number, line in enumerate(file, 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except ValueError:
                raise ValueError(f"{os.fspath(path)}, line {number}: not a JSON record") from None
            found = earlier_record(record)
            if found is not None:
                earlier[found[0]] = found[1]
    return earlier


def conditional_headers(page: Earlier) -> dict[str, str]:
    """Return the headers that ask for ``page`` only if it changed."""
    headers = {}
    if page.etag is not None:
        headers["If-None-Match"] = page.etag
    if page.last_modified is not None:
        headers["If-Modified-Since"] = page.last_modified
    return headers


# --8<-- [end:read_since]

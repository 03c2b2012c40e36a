"""The steps' common plumbing: helpers every stage's steps use, and no lesson.

The chapters grow each stage in steps (``stage1_callbacks/steps/`` and the
others), small programs that each add one idea.  What they all need but
none of them teaches lives here, once: where to crawl (the URL on the
command line, or the local test site's), the bytes of a GET request, the
first line and the parts of a response, the test site's first pages,
which links of a page to follow, and the line printed for each page (with
the time since the start and the fetches in flight, so that a step shows
how concurrent it is).  A reader typing the steps outside this
repository copies this file and the shared modules it imports (the link
parser and what it needs); the reference page lists, for each step, the
files and packages it needs ("Running a step outside this repository").
"""

import re
import sys
import time
import urllib.parse
from collections.abc import Mapping

from shared.web.links import page_links

DEFAULT_URL = "http://127.0.0.1:8000/"  # Where ``python -m shared.testsite`` serves.


def url_from_argv() -> str:
    """Return the URL given on the command line, or the test site's."""
    return sys.argv[1] if len(sys.argv) > 1 else DEFAULT_URL


def http_request(url: str) -> bytes:
    """Return an HTTP/1.0 GET request for ``url``: the server closes at the end."""
    parts = urllib.parse.urlsplit(url)
    target = urllib.parse.quote(parts.path or "/", safe="/%") + "?" * bool(parts.query)
    target += parts.query
    return f"GET {target} HTTP/1.0\r\nHost: {parts.netloc}\r\n\r\n".encode()


def address(url: str) -> tuple[str, int]:
    """Return the (host, port) to connect to for ``url``."""
    parts = urllib.parse.urlsplit(url)
    return parts.hostname or "", parts.port or 80


def status_line(response: bytes) -> str:
    """Return the first line of an HTTP response, such as ``HTTP/1.0 200 OK``."""
    return response.split(b"\r\n")[0].decode()


def some_pages(url: str, count: int = 10) -> list[str]:
    """Return ``url`` and the test site's first content pages: ``count`` URLs."""
    return [url] + [urllib.parse.urljoin(url, f"pages/{n}/") for n in range(1, count)]


def parse(response: bytes) -> tuple[int, dict[str, str], bytes]:
    """Split a whole HTTP/1.0 response into its status, headers and body."""
    head, _, body = response.partition(b"\r\n\r\n")
    status_line, *lines = head.decode("latin-1").split("\r\n")
    headers = {}
    for line in lines:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    return int(status_line.split()[1]), headers, body


def links_to_follow(url: str, status: int, headers: Mapping[str, str], body: bytes) -> set[str]:
    """Return the links of a page (or its redirect target) on the same site as ``url``."""
    content_type = headers.get("content-type", "")
    if "location" in headers:
        links = {urllib.parse.urljoin(url, headers["location"])}
    elif status == 200 and re.search(r"html|xml", content_type):
        links = page_links(body, content_type, url)  # Decoded as a browser decodes it.
    else:
        links = set()
    site = urllib.parse.urlsplit(url)[:2]  # The scheme and the host:port.
    return {link for link in links if urllib.parse.urlsplit(link)[:2] == site}


class Progress:
    """What a step prints for each page: the time, and the fetches in flight."""

    def __init__(self) -> None:
        self.start = time.perf_counter()
        self.in_flight: set[str] = set()  # The URLs being fetched.

    def begin(self, url: str) -> None:
        """Count ``url`` in flight."""
        self.in_flight.add(url)

    def end(self, url: str, outcome: str) -> None:
        """Print ``outcome`` for ``url``, and how many are in flight with it."""
        seconds, count = self.seconds(), len(self.in_flight)
        print(f"{seconds:6.3f} s {count:3} in flight  {outcome} {url}")
        self.in_flight.discard(url)

    def seconds(self) -> float:
        """Return the seconds since the start."""
        return time.perf_counter() - self.start

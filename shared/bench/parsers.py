"""What the link parser costs per page, with each of its two HTML parsers.

``shared.web.links.extract_links`` reads a page with selectolax's lexbor HTML5
parser (C) when it is installed, else with the standard library's
``html.parser``, then resolves and normalizes each href (with ada, or ``quick_join``).  This
module times both on the test site's own pages (content pages, archive
pages, the home page): the reading alone, the whole of ``extract_links``,
and the link path a crawler runs per page (``link_path``: parse, resolve,
normalize, and keep the links the crawl's policy allows).
"""

from __future__ import annotations

import contextlib
import importlib.util
import time
from collections.abc import Callable, Iterator

import shared.web.links
from shared.bench.sitegraph import page_bodies
from shared.web.links import extract_links
from shared.web.urls import UrlPolicy

ROOT = "http://127.0.0.1:8000/"


def sample_pages(pages: int = 10_000) -> list[tuple[str, str]]:
    """Return ``(url, text)`` for 200 content pages, 20 archive pages and the home page."""
    paths = [f"/pages/{n}/" for n in range(1, 201)]
    paths += [f"/archive/{k}/" for k in range(1, 21)] + ["/"]
    return page_bodies(ROOT, pages, paths)


@contextlib.contextmanager
def standard_library_only() -> Iterator[None]:
    """Make ``extract_links`` use html.parser, as it does without selectolax."""
    saved = shared.web.links.LexborHTMLParser
    shared.web.links.LexborHTMLParser = None  # type: ignore[misc, assignment]
    try:
        yield
    finally:
        shared.web.links.LexborHTMLParser = saved  # type: ignore[misc]


def per_page(function: Callable[[str, str], object], pages: list[tuple[str, str]]) -> float:
    """Return the best of five timings of ``function(text, url)`` over ``pages``, in µs per page."""
    best = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        for url, text in pages:
            function(text, url)
        best = min(best, time.perf_counter() - start)
    return best / len(pages) * 1e6


def link_path(pages: list[tuple[str, str]]) -> float:
    """Return what finding a page's allowed links costs, in µs per page.

    The same steps as ``CrawlerBase.parse_links`` once the body is text.
    """
    policy = UrlPolicy([ROOT])

    def allowed_links(text: str, url: str) -> set[str]:
        return {link for link in extract_links(text, url) if policy.normal_url_allowed(link)}

    return per_page(allowed_links, pages)


def measure() -> dict[str, object]:
    """Time both parsers on the site's pages; µs per page, best of five."""
    pages = sample_pages()
    with standard_library_only():
        stdlib = {
            "read": per_page(lambda text, url: shared.web.links._read_with_tokenizer(text), pages),
            "extract": per_page(extract_links, pages),
            "link_path": link_path(pages),
        }
        expected = [extract_links(text, url) for url, text in pages]
    result: dict[str, object] = {
        "pages": len(pages),
        "bytes_per_page": sum(len(text) for _, text in pages) / len(pages),
        "html.parser": stdlib,
    }
    if importlib.util.find_spec("selectolax") is not None:
        result["selectolax"] = {
            "read": per_page(lambda text, url: shared.web.links._read_with_lexbor(text), pages),
            "extract": per_page(extract_links, pages),
            "link_path": link_path(pages),
            "same_links": [extract_links(text, url) for url, text in pages] == expected,
        }
    return result

"""What the link parser costs per page, and what a C-backed parser would cost.

``shared.links.extract_links`` tokenizes with the standard library's
``html.parser``, then resolves and normalizes each href.  This module times
that on the test site's own pages (content pages, archive pages, the home
page) and, when selectolax is installed, times the same job done with its
lexbor HTML5 parser, keeping the same resolution code, so the difference is
the tokenizer alone.
"""

from __future__ import annotations

import importlib.util
import time
from collections.abc import Callable

from shared.bench.sitegraph import page_bodies
from shared.links import _join, _LinkCollector, extract_links

ROOT = "http://127.0.0.1:8000/"


def sample_pages(pages: int = 10_000) -> list[tuple[str, str]]:
    """Return ``(url, text)`` for 200 content pages, 20 archive pages and the home page."""
    paths = [f"/pages/{n}/" for n in range(1, 201)]
    paths += [f"/archive/{k}/" for k in range(1, 21)] + ["/"]
    return page_bodies(ROOT, pages, paths)


def selectolax_links(text: str, page_url: str) -> set[str]:
    """Do ``extract_links``'s job with selectolax's lexbor parser (a candidate)."""
    from selectolax.lexbor import LexborHTMLParser

    tree = LexborHTMLParser(text)
    base = page_url
    for node in tree.css("base[href]"):
        if node.attributes.get("href"):
            base = _join(page_url, node.attributes["href"]) or page_url
            break
    links = set()
    for node in tree.css("a[href], area[href], link[href]"):
        href = node.attributes.get("href")
        url = _join(base, href) if href is not None else None
        if url is not None:
            links.add(url)
    return links


def stdlib_tokenize(text: str, page_url: str) -> None:
    """Only the tokenizer part of ``extract_links``."""
    collector = _LinkCollector()
    collector.feed(text)
    collector.close()


def selectolax_tokenize(text: str, page_url: str) -> None:
    """Only the tokenizer part of ``selectolax_links``."""
    from selectolax.lexbor import LexborHTMLParser

    tree = LexborHTMLParser(text)
    [node.attributes.get("href") for node in tree.css("a[href], area[href], link[href]")]


def per_page(function: Callable[[str, str], object], pages: list[tuple[str, str]]) -> float:
    """Return the best of five timings of ``function`` over ``pages``, in µs per page."""
    best = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        for url, text in pages:
            function(text, url)
        best = min(best, time.perf_counter() - start)
    return best / len(pages) * 1e6


def measure() -> dict[str, object]:
    """Time both parsers on the site's pages; µs per page, best of five."""
    pages = sample_pages()
    result: dict[str, object] = {
        "pages": len(pages),
        "bytes_per_page": sum(len(text) for _, text in pages) / len(pages),
        "html.parser": {
            "extract": per_page(extract_links, pages),
            "tokenize": per_page(stdlib_tokenize, pages),
        },  # fmt: skip
    }
    if importlib.util.find_spec("selectolax") is not None:
        same = all(selectolax_links(text, url) == extract_links(text, url) for url, text in pages)
        result["selectolax"] = {
            "extract": per_page(selectolax_links, pages),
            "tokenize": per_page(selectolax_tokenize, pages),
            "same_links": same,
        }
    return result

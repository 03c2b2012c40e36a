"""The link parser shared by all three stages.

The 500 Lines crawler found links with a regular expression, which also
"finds" links inside comments and scripts and misses unquoted attributes.
This parser reads the page as HTML instead: it reports the ``href`` of
``<a>``, ``<area>`` and ``<link>`` elements, honours ``<base href>``, and
never looks inside comments, ``<script>`` or ``<style>`` (an HTML parser
treats the last two as raw text, so tags in them are not tags).  Every link
comes back absolute and normalized.

Two HTML parsers can do the reading, and both pass the same tests: the
HTML5 parser of selectolax (lexbor, written in C) when it is installed, and
otherwise the standard library's tokenizer.  Finding the links is most of
a crawler's work per page, and the C parser does it about seven times
faster (``python -m shared.bench`` measures both).
"""

from __future__ import annotations

import html.parser
import urllib.parse

from shared.urls import normalize_url

try:
    from selectolax.lexbor import LexborHTMLParser
except ImportError:  # Not installed: the standard library's tokenizer does the job.
    LexborHTMLParser = None

LINK_TAGS = frozenset({"a", "area", "link"})
LINK_SELECTOR = "a[href], area[href], link[href]"


class _LinkCollector(html.parser.HTMLParser):
    """Collect raw ``href`` values and the first ``<base href>`` of a page."""

    def __init__(self) -> None:
        # Character references in attribute values are still decoded;
        # convert_charrefs=False only spares work on the text between tags.
        super().__init__(convert_charrefs=False)
        self.hrefs: list[str] = []
        self.base: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in LINK_TAGS:
            for name, value in attrs:
                if name == "href" and value is not None:
                    self.hrefs.append(value)
                    break
        elif tag == "base" and self.base is None:
            self.base = next((v for n, v in attrs if n == "href" and v), None)

    handle_startendtag = handle_starttag  # <link href="..." /> is a link too.


def extract_links(text: str, page_url: str) -> set[str]:
    """Return the normalized absolute URLs that the page ``text`` links to.

    Relative links are resolved against ``page_url``, or against the page's
    ``<base href>`` when it has one.  An href that cannot be resolved (a bad
    port, a broken IPv6 literal) is skipped; this function never raises for
    any input text.
    """
    if LexborHTMLParser is not None:
        hrefs, base_href = _read_with_lexbor(text)
    else:
        hrefs, base_href = _read_with_tokenizer(text)
    base = page_url
    if base_href is not None:
        base = _join(page_url, base_href) or page_url
    links = set()
    for href in hrefs:
        url = _join(base, href)
        if url is not None:
            links.add(url)
    return links


def _read_with_lexbor(text: str) -> tuple[list[str], str | None]:
    """Return the raw hrefs and the first ``<base href>`` of a page, with lexbor."""
    tree = LexborHTMLParser(text)
    base_href = None
    for base in tree.css("base[href]"):
        if base.attributes.get("href"):
            base_href = base.attributes["href"]
            break
    hrefs = [node.attributes.get("href") for node in tree.css(LINK_SELECTOR)]
    return [href for href in hrefs if href is not None], base_href


def _read_with_tokenizer(text: str) -> tuple[list[str], str | None]:
    """Return the raw hrefs and the first ``<base href>`` of a page, with html.parser."""
    collector = _LinkCollector()
    try:
        collector.feed(text)
        collector.close()
    except AssertionError:
        # The tokenizer gives up on a few malformed declarations such as
        # '<![ ]]>'; keep the links found before that point.
        pass
    return collector.hrefs, collector.base


def _join(base: str, href: str) -> str | None:
    """Resolve ``href`` against ``base`` and normalize it; None if unparseable."""
    try:
        return normalize_url(urllib.parse.urljoin(base, href.strip()))
    except ValueError:
        return None

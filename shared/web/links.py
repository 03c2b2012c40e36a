"""The link parser shared by all three stages.

The 500 Lines crawler found links with a regular expression, which also
"finds" links inside comments and scripts and misses unquoted attributes.
This parser reads the page as HTML instead: it reports the ``href`` of
``<a>``, ``<area>`` and ``<link>`` elements, honours ``<base href>``, and
never looks inside comments, ``<script>`` or ``<style>`` (an HTML parser
treats the last two as raw text, so tags in them are not tags).  Every link
comes back absolute and in the normal form of ``shared.web.urls``: the URL a
browser would request for it.

Two HTML parsers can do the reading, and both pass the same tests: the
HTML5 parser of selectolax (lexbor, written in C) when it is installed, and
otherwise the standard library's tokenizer.  Finding the links is most of
a crawler's work per page, and the C parser does it several times faster
(``python -m shared.bench`` measures both).
"""

from __future__ import annotations

import codecs
import html.parser

from shared.web.encoding import decode_body, find_encoding
from shared.web.http import parse_content_type
from shared.web.urls import normalize_url, quick_join

try:
    from selectolax.lexbor import LexborHTMLParser as LexborHTMLParser  # Tests swap it.
except ImportError:  # Not installed: the standard library's tokenizer does the job.
    LexborHTMLParser = None  # type: ignore[misc, assignment]

LINK_TAGS = ("a", "area", "link")
# Pages in these encodings have their query strings sent in UTF-8 anyway.
UTF_ENCODINGS = frozenset({"utf-8", "utf-16-le", "utf-16-be", "utf-16", "utf-32"})


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


# --8<-- [start:extract_links]
def extract_links(text: str, page_url: str, encoding: str = "utf-8") -> set[str]:
    """Return the normalized absolute URLs that the page ``text`` links to.

    Relative links are resolved against ``page_url``, or against the page's
    ``<base href>`` when it has one.  ``encoding`` is the page's: a browser
    sends the non-ASCII characters of a query in it (of a path, always in
    UTF-8).  An href that cannot be resolved (a bad port, a broken IPv6
    literal) is skipped; this function never raises for any input text.
    """
    if LexborHTMLParser is not None:
        hrefs, base_href = _read_with_lexbor(text)
    else:
        hrefs, base_href = _read_with_tokenizer(text)
    encode_query = encoding.lower() not in UTF_ENCODINGS
    base = page_url
    if base_href is not None:
        base = _join(page_url, base_href, encoding, encode_query) or page_url
    links = set()
    for href in set(hrefs):  # A link repeated on a page is resolved once.
        url = _join(base, href, encoding, encode_query)
        if url is not None:
            links.add(url)
    return links


# --8<-- [end:extract_links]


def page_links(body: bytes, content_type: str | None, page_url: str) -> set[str]:
    """Return the links of an HTML page's bytes, read in the encoding a browser would pick.

    ``content_type`` is the page's Content-Type header (None when absent);
    see ``shared.web.encoding`` for how the encoding is found.
    """
    charset = parse_content_type(content_type)[1].get("charset")
    encoding = find_encoding(charset, body, sniff=True)
    return extract_links(decode_body(body, encoding), page_url, encoding)


def _read_with_lexbor(text: str) -> tuple[list[str], str | None]:
    """Return the raw hrefs and the first ``<base href>`` of a page, with lexbor."""
    tree = LexborHTMLParser(text)
    base_href = None
    for base in tree.tags("base"):
        base_href = base.attrs.get("href")
        if base_href:
            break
    hrefs = []
    # tags() walks the tree in C; a CSS selector for the same would cost twice as much.
    for tag in LINK_TAGS:
        for node in tree.tags(tag):
            href = node.attrs.get("href")
            if href is not None:
                hrefs.append(href)
    return hrefs, base_href or None


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


def _join(base: str, href: str, encoding: str, encode_query: bool) -> str | None:
    """Resolve ``href`` against ``base`` and normalize it; None if unparseable."""
    url = quick_join(base, href)
    if url is not None:
        return url
    if encode_query and not href.isascii():
        href = encode_query_in(href, encoding)
    try:
        return normalize_url(href, base)
    except ValueError:
        return None


# --8<-- [start:encode_query_in]
def encode_query_in(href: str, encoding: str) -> str:
    """Percent-encode the non-ASCII characters of ``href``'s query in ``encoding``.

    The WHATWG URL parser does this with the page's encoding before it
    encodes the rest in UTF-8; ada knows only UTF-8, so it is done here
    first.  A character the encoding cannot write is sent as ``&#N;``, as
    browsers do.  An unknown encoding leaves ``href`` unchanged.
    """
    before, mark, rest = href.partition("?")
    query, hash_mark, fragment = rest.partition("#")
    if not mark or query.isascii():
        return href
    try:
        codecs.lookup(encoding)
    except LookupError:
        return href
    pieces = []
    for char in query:
        if char.isascii():
            pieces.append(char)  # Left for the URL parser, as for any page.
            continue
        try:
            data = char.encode(encoding)
        except UnicodeEncodeError:
            pieces.append(f"%26%23{ord(char)}%3B")
            continue
        # Only the bytes above ASCII: a trail byte in the ASCII range is a character too.
        pieces.append("".join(f"%{byte:02X}" if byte > 0x7F else chr(byte) for byte in data))
    return before + mark + "".join(pieces) + hash_mark + fragment


# --8<-- [end:encode_query_in]

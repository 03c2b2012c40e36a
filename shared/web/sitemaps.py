"""Sitemaps: the pages a site lists for crawlers, read once for all stages.

A site can list its pages in a sitemap (sitemaps.org): an XML ``urlset`` of
``<url><loc>`` entries, or a ``sitemapindex`` of ``<sitemap><loc>`` entries
that point to more sitemaps, either of them possibly gzip-compressed.  Its
robots.txt names them on ``Sitemap:`` lines; without any, ``/sitemap.xml``
is the usual place.  With ``--sitemaps`` the crawler starts from those
lists as well as from its roots, so a page no link reaches is found too.

A sitemap is someone else's file, so this module reads it defensively:

- its size is bounded like a page's (``max_size``), also once unzipped: a
  small ``.gz`` that would unzip to gigabytes (a "gzip bomb") is cut there,
  by the same ``BodyDecoder`` that bounds compressed pages;
- the XML is read by the standard library's expat parser, which fetches
  nothing from the network, and a document that declares a DOCTYPE is
  refused: no DOCTYPE, no entities of its own, so no "billion laughs"
  entity expansion;
- at most ``MAX_SITEMAP_URLS`` entries are taken from one file, as the
  protocol allows, and at most ``MAX_SITEMAPS`` files are read in a crawl;
- whatever is wrong is a ``BadSitemap``, recorded with the sitemap's URL.

Left out compared with a production crawler: ``<lastmod>`` (a recrawl asks
the server instead, see ``--since``), text and RSS sitemaps, and the rule
that a sitemap may only list URLs under its own directory.
"""

from __future__ import annotations

import xml.parsers.expat

from shared.web.http import BadResponse, BodyDecoder

MAX_SITEMAP_URLS = 50_000  # The protocol's limit for one file.
MAX_SITEMAPS = 100  # Sitemap files read in one crawl, index files included.
GZIP_MAGIC = b"\x1f\x8b"
GZIP_TYPES = frozenset({"application/gzip", "application/x-gzip"})


class BadSitemap(Exception):
    """A sitemap that could not be read: not gzip, not XML, or not a sitemap."""


class SitemapTooLarge(BadSitemap):
    """A sitemap longer than ``max_size`` once unzipped: cut, and not read."""


def unzip(body: bytes, url: str, media_type: str | None, max_size: int) -> bytes:
    """Return a sitemap's XML: ``body``, unzipped if it is a gzip file.

    Raises SitemapTooLarge past ``max_size`` bytes, BadSitemap for bad gzip.
    """
    gzipped = media_type in GZIP_TYPES or url.endswith(".gz")
    if not (gzipped and body.startswith(GZIP_MAGIC)):
        return body
    decoder = BodyDecoder("gzip", max_size + 1)
    try:
        xml = decoder.decode(body) + decoder.finish()
    except BadResponse as error:
        raise BadSitemap(f"not a gzip file: {error}") from None
    if len(xml) > max_size:
        raise SitemapTooLarge(f"longer than {max_size} bytes once unzipped, cut there")
    return xml


# --8<-- [start:parse]
class SitemapParser:
    """Read the ``<loc>`` entries of one sitemap, with expat and no DOCTYPE.

    After ``parse``, ``index`` tells a sitemap index (its entries are more
    sitemaps) from a list of pages, and ``locations`` holds the entries.
    """

    def __init__(self) -> None:
        self.index = False
        self.locations: list[str] = []
        self.path: list[str] = []  # The open elements, without namespaces.
        self.text: list[str] = []  # The text of the <loc> being read.

    def parse(self, xml_bytes: bytes) -> None:
        """Read a whole document; raises BadSitemap."""
        parser = xml.parsers.expat.ParserCreate(namespace_separator=" ")
        parser.StartDoctypeDeclHandler = self.refuse_doctype
        parser.StartElementHandler = self.start
        parser.EndElementHandler = self.end
        parser.CharacterDataHandler = self.text.append
        try:
            parser.Parse(xml_bytes, True)
        except xml.parsers.expat.ExpatError as error:
            raise BadSitemap(f"not well-formed XML: {error}") from None

    def refuse_doctype(self, *declaration: object) -> None:
        """Refuse a DOCTYPE: where entities (and entity bombs) are declared."""
        raise BadSitemap("a DOCTYPE is not allowed in a sitemap")

    def start(self, name: str, attributes: dict[str, str]) -> None:
        """Open an element; the root says which kind of sitemap this is."""
        local = name.rpartition(" ")[2]
        if not self.path:
            if local not in ("urlset", "sitemapindex"):
                raise BadSitemap(f"not a sitemap: the root element is <{local}>")
            self.index = local == "sitemapindex"
        self.path.append(local)
        self.text.clear()

    def end(self, name: str) -> None:
        """Close an element; a ``<loc>`` inside ``<url>`` or ``<sitemap>`` is an entry."""
        entry = self.path[-2:] in (["url", "loc"], ["sitemap", "loc"])
        if entry and len(self.locations) < MAX_SITEMAP_URLS:
            self.locations.append("".join(self.text).strip())
        self.path.pop()


# --8<-- [end:parse]


def read_sitemap(
    body: bytes, url: str, media_type: str | None, max_size: int
) -> tuple[bool, list[str]]:
    """Return whether a sitemap is an index, and its entries as written.

    Raises BadSitemap (SitemapTooLarge for a gzip bomb).
    """
    parser = SitemapParser()
    parser.parse(unzip(body, url, media_type, max_size))
    return parser.index, parser.locations

"""Tests of shared.web.sitemaps: reading a sitemap's entries, defensively."""

from __future__ import annotations

import gzip

import pytest

from shared.web.sitemaps import MAX_SITEMAP_URLS, BadSitemap, SitemapTooLarge, read_sitemap

NS = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"'


def read(body: bytes, url: str = "http://a/sitemap.xml", media_type: str | None = None) -> tuple:
    """Return what read_sitemap finds in ``body``, with a 1 MB limit."""
    return read_sitemap(body, url, media_type, 1_000_000)


def test_urlset_entries_in_order_whitespace_stripped() -> None:
    body = f"<urlset {NS}><url><loc> http://a/1 </loc><lastmod>2024</lastmod></url>"
    body += "<url><loc>/2</loc></url></urlset>"
    assert read(body.encode()) == (False, ["http://a/1", "/2"])


def test_sitemap_index() -> None:
    body = f"<sitemapindex {NS}><sitemap><loc>http://a/s.xml.gz</loc></sitemap></sitemapindex>"
    assert read(body.encode()) == (True, ["http://a/s.xml.gz"])


def test_without_namespace_and_with_entities_and_cdata() -> None:
    body = b"<urlset><url><loc>/a?x=1&amp;y=2</loc></url><url><loc><![CDATA[/b]]></loc></url>"
    assert read(body + b"</urlset>") == (False, ["/a?x=1&y=2", "/b"])


def test_loc_outside_an_entry_is_ignored() -> None:
    assert read(b"<urlset><loc>/stray</loc><url><other>/x</other></url></urlset>") == (False, [])


@pytest.mark.parametrize(
    "url,media_type", [("http://a/s.xml.gz", None), ("http://a/s", "application/gzip")]
)
def test_gzip_sitemap_by_name_or_type(url: str, media_type: str) -> None:
    body = gzip.compress(b"<urlset><url><loc>/z</loc></url></urlset>")
    assert read(body, url, media_type) == (False, ["/z"])


def test_gzip_bomb_is_cut_at_the_limit() -> None:
    bomb = gzip.compress(b"<urlset>" + b" " * 50_000_000 + b"</urlset>")
    assert len(bomb) < 100_000
    with pytest.raises(SitemapTooLarge, match="longer than 1000000 bytes once unzipped"):
        read(bomb, "http://a/s.xml.gz")


def test_entries_past_the_protocol_limit_are_dropped() -> None:
    body = b"<urlset>" + b"<url><loc>/p</loc></url>" * (MAX_SITEMAP_URLS + 10) + b"</urlset>"
    assert len(read_sitemap(body, "http://a/s.xml", None, 10**8)[1]) == MAX_SITEMAP_URLS


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b"", "not well-formed XML"),
        (b"<urlset><url>", "not well-formed XML"),
        (b"<rss><channel/></rss>", "not a sitemap: the root element is <rss>"),
        (b'<!DOCTYPE urlset SYSTEM "http://evil/x.dtd"><urlset/>', "a DOCTYPE is not allowed"),
        (
            b'<!DOCTYPE r [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]>'
            b"<urlset><url><loc>&b;</loc></url></urlset>",
            "a DOCTYPE is not allowed",
        ),
    ],
)
def test_bad_sitemaps_raise_bad_sitemap(body: bytes, message: str) -> None:
    with pytest.raises(BadSitemap, match=message):
        read(body)


def test_bad_gzip_raises_bad_sitemap() -> None:
    with pytest.raises(BadSitemap, match="not a gzip file"):
        read(b"\x1f\x8b\x08 broken", "http://a/s.xml.gz")

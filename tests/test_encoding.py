"""Examples for shared.web.encoding: which encoding a page is read with, as browsers pick it."""

from __future__ import annotations

import pytest

from shared.web.encoding import decode_body, find_encoding

GBK_META = '<meta charset="gbk"><a href="/\u4e2d">\u4e2d\u6587</a>'.encode("gbk")


@pytest.mark.parametrize(
    ("charset", "body", "sniff", "encoding"),
    [
        (None, b"<p>plain</p>", True, "utf-8"),  # Nothing said: UTF-8.
        ("utf-8", b"<p>x</p>", True, "utf-8"),
        ("UTF8", b"<p>x</p>", True, "utf-8"),
        ("ISO-8859-1", b"<p>x</p>", True, "cp1252"),  # The standard's mapping.
        ("ascii", b"<p>x</p>", True, "cp1252"),
        ("gbk", b"<p>x</p>", True, "gb18030"),
        ("Shift_JIS", b"<p>x</p>", True, "cp932"),
        ("windows-1251", b"<p>x</p>", True, "cp1251"),
        ("utf-16", b"x\x00", True, "utf-16-le"),
        # A byte order mark beats the header.
        ("cp1251", b"\xef\xbb\xbf<p>x</p>", True, "utf-8"),
        (None, b"\xff\xfe<\x00", True, "utf-16-le"),
        # The header beats a <meta>; an unknown charset is ignored.
        ("windows-1251", GBK_META, True, "cp1251"),
        ("no-such-codec", GBK_META, True, "gb18030"),
        ("utf-7", b"<p>x</p>", True, "utf-8"),  # Refused: it can hide markup.
        # A <meta> in the first bytes, either form; only when sniffing is allowed.
        (None, GBK_META, True, "gb18030"),
        (None, GBK_META, False, "utf-8"),
        (None, b'<meta http-equiv="Content-Type" content="text/html; charset=Shift_JIS">',
         True, "cp932"),
        (None, b'<?xml version="1.0" encoding="windows-1251"?><html>', True, "cp1251"),
        (None, b'<meta charset="utf-16">', True, "utf-8"),  # Read as ASCII: cannot be 16-bit.
        (None, b"<p>" + b"x" * 5000 + b'<meta charset="gbk">', True, "utf-8"),  # Too late.
    ],
)  # fmt: skip
def test_find_encoding(charset: str | None, body: bytes, sniff: bool, encoding: str) -> None:
    assert find_encoding(charset, body, sniff=sniff) == encoding


@pytest.mark.parametrize(
    ("body", "encoding", "text"),
    [
        (b"caf\xc3\xa9", "utf-8", "caf\xe9"),
        (b"caf\xe9", "cp1252", "caf\xe9"),
        (b"\xef\xbb\xbfcaf\xc3\xa9", "utf-8", "caf\xe9"),  # Without its byte order mark.
        (b"bad \xff byte", "utf-8", "bad \ufffd byte"),
        ("\u4e2d\u6587".encode("gbk"), "gb18030", "\u4e2d\u6587"),
        (b"\x80", "cp1252", "\u20ac"),
    ],
)
def test_decode_body(body: bytes, encoding: str, text: str) -> None:
    assert decode_body(body, encoding) == text

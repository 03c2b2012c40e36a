"""How the bytes of a page become text: the encoding a browser would pick.

A page does not always say its encoding where a client looks first.  A
browser tries, in order: a byte order mark at the start of the body, the
``charset`` of the Content-Type header, a ``<meta charset>`` or ``<meta
http-equiv="Content-Type">`` near the top of an HTML page, and a default
(UTF-8 here).  Names are mapped as the WHATWG Encoding Standard maps them:
``iso-8859-1`` and ``ascii`` mean windows-1252, ``gb2312`` and ``gbk``
mean gb18030, ``shift_jis`` means Microsoft's cp932.

The steps are w3lib's, the library Scrapy reads pages with; this module only
puts them in the order above and feeds them the charset that
``shared.web.http.parse_content_type`` found.
"""

from __future__ import annotations

from w3lib.encoding import html_body_declared_encoding, read_bom, resolve_encoding, to_unicode

DEFAULT_ENCODING = "utf-8"


# --8<-- [start:find_encoding]
def find_encoding(charset: str | None, body: bytes, *, sniff: bool) -> str:
    """Return the Python name of the encoding to decode ``body`` with.

    ``charset`` is the Content-Type's parameter (None when absent); an
    unknown name is ignored.  ``sniff`` allows looking for a declaration in
    the first 4 KB of the body, which only HTML and XML pages have.
    """
    bom_encoding, _ = read_bom(body)
    if bom_encoding is not None:
        return bom_encoding
    if charset is not None:
        encoding = whatwg_name(resolve_encoding(charset))
        if encoding == "utf-16":
            return "utf-16-le"  # The standard's meaning of the bare label.
        if encoding is not None:
            return encoding
    if sniff:
        declared = whatwg_name(html_body_declared_encoding(body))
        # A declaration read as ASCII cannot be in UTF-16: the standard takes UTF-8.
        if declared is not None and not declared.startswith(("utf-16", "utf-32")):
            return declared
    return DEFAULT_ENCODING


# --8<-- [end:find_encoding]

# The standard decodes GBK, and its older name gb2312, as gb18030, of which
# Python's gbk codec knows only a part.  w3lib 2.6 names them gbk.
GB18030_LABELS = frozenset({"gbk", "gb2312"})


def whatwg_name(encoding: str | None) -> str | None:
    """Return the codec the WHATWG standard decodes ``encoding`` with (gbk: gb18030)."""
    return "gb18030" if encoding in GB18030_LABELS else encoding


def decode_body(body: bytes, encoding: str) -> str:
    """Decode ``body`` with ``encoding``, without its byte order mark; bad bytes become U+FFFD."""
    bom_encoding, bom = read_bom(body)
    if bom is not None and bom_encoding == encoding:
        body = body[len(bom) :]
    return to_unicode(body, encoding)

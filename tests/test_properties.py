"""Property tests of what every stage trusts: link parser, URLs, HTTP parser.

The web sends anything.  These tests let hypothesis send anything too, and
check the promises each docstring makes: ``extract_links`` never raises
(and its shortcut resolves a link as the URL parser does),
``normalize_url`` raises only ValueError and is idempotent, an allowed URL
never leaves the root hosts (also as aiohttp and the raw-socket stages
would connect to it), and ``ResponseParser`` raises only BadResponse and
parses a response the same however the network splits it.
"""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import unittest.mock
import urllib.parse
import zlib

import aiohttp
import pytest
import yarl
from hypothesis import example, given, settings
from hypothesis import strategies as st

import shared.web.http
import shared.web.links
from shared.crawl.polite import origin_of
from shared.web.http import BadResponse, BodyDecoder, ResponseParser, request_target
from shared.web.links import extract_links
from shared.web.urls import UrlPolicy, is_ip_literal, lenient_host, normalize_url, quick_join

# Hypothesis fails an example that takes over 200 ms by default: a timed
# assertion, which a loaded machine trips.  These examples have no deadline.
settings.register_profile("no-deadline", deadline=None)
settings.load_profile("no-deadline")

# --- Strategies ----------------------------------------------------------------

ROOT_HOSTS = ["example.com", "www.example.com", "a.b.example.com", "example.org", "127.0.0.1"]
ROOT_HOSTS += ["[::1]", "EXAMPLE.COM", "xn--caf-dma.fr", "localhost"]
HOSTS = [*ROOT_HOSTS, "caf\xe9.fr", ""]
NETLOC_PIECES = ["@", ":", ":80", ":443", ":8080", ":99999", ":x", "[", "]", "\\", "%40", "."]
NETLOC_PIECES += ["user:pass@", "evil.com@", "evil.com\\@", "www.", "\x00", " ", "\t", "\xe9"]
# Characters that IDNA maps to others: a full stop, a digit, a letter, 'ss', '1.'.
NETLOC_PIECES += ["\uff61", "\u3002", "\xb2", "\uff45", "\xdf", "\u0130", "\u2488"]
PATH_PIECES = ["/", "//", "..", ".", "%2e%2e", "%2F", "\\", "?", "#", "&", "=", "%", "%zz"]
PATH_PIECES += ["a", "b c", "\xe9", "\u2603", "\x00", "\n", "\r", "\t", ";", "@", ":"]
SCHEMES = ["http://", "https://", "HTTP://", "ftp://", "mailto:", "javascript:", "//", "", "http:"]

pieces = st.one_of(st.sampled_from(HOSTS + NETLOC_PIECES + PATH_PIECES), st.text(max_size=5))
urls = st.one_of(
    st.text(),
    st.builds(
        lambda scheme, parts: scheme + "".join(parts),
        st.sampled_from(SCHEMES),
        st.lists(pieces, max_size=8),
    ),
)

HTML_PIECES = ["<a href=", "<a href='", '<a href="', "<A HREF=", "<area href=", "<link href="]
HTML_PIECES += ['<base href="', '">', "'>", ">", "</a>", "<!--", "-->", "<script>", "</script>"]
HTML_PIECES += ["<style>", "</style>", "<![", "]]>", "<!DOCTYPE", "&amp;", "&#", "&#x", "<", "/>"]
HTML_PIECES += ["<?", "</", "=", '"', "'", " ", "\x00", '<a href="http://[oops/">']
html_text = st.one_of(
    st.text(),
    st.lists(st.one_of(st.sampled_from(HTML_PIECES), urls), max_size=20).map("".join),
)


# --- The link parser -------------------------------------------------------------


@given(html_text, urls)
@example("<![ ]]><a href='/x'>", "http://example.com/")
@example("<a href='x'>", "http://[oops/")
def test_extract_links_never_raises_and_returns_normal_urls(text: str, page_url: str) -> None:
    for lexbor in (shared.web.links.LexborHTMLParser, None):  # Both HTML parsers.
        with unittest.mock.patch.object(shared.web.links, "LexborHTMLParser", lexbor):
            for link in extract_links(text, page_url):
                assert normalize_url(link) == link


# Links the shortcut may take: absolute paths, queries, fragments, near misses.
HREF_PIECES = ["/", "//", "/.", "/..", ".", "?", "??", "#", "#x", "a", "Z9", "-._~", "!$&()*+,;="]
HREF_PIECES += [":@", "%20", "%2e", "\\", " ", "\t", "\n", "'", '"', "^", "`", "{", "\xe9", "\x00"]
hrefs = st.one_of(
    urls,
    st.lists(st.sampled_from(HREF_PIECES), max_size=8).map("".join),
    st.lists(st.sampled_from(HREF_PIECES), min_size=1, max_size=8).map(lambda p: "/" + "".join(p)),
)


BASES = [
    "http://example.com/",
    "https://u:p@Example.COM:8443/a/b?q#f",
    "http://[::1]/x/",
    "http://h",
]
BASES += ["ftp://h/a", "mailto:a@b", "http://[oops/"]  # The shortcut refuses these.


@settings(max_examples=1000)  # The shortcut is on the path of every link of every page.
@given(st.one_of(st.sampled_from(BASES), urls), hrefs)
@example("http://u:p@Example.COM:80/a?b#c", "/x?q=1#f")
@example("https://h/", "#top")
@example("http://h/", "/a??")
@example("http://h/", "/a?")  # Each near miss below must be left to the URL parser.
@example("http://h/", "/a/../b")
@example("http://h/", "/a%2e%2e/b")
@example("http://h/", "/\\h2/x")
@example("http://h/", "//h2/x")
@example("http://h/", "/a b")
@example("http://h/", "/caf\xe9")
@example("http://h/", "/a^b")
@example("http://h/", "/a?b'c")
def test_the_link_shortcut_resolves_as_the_url_parser_does(base: str, href: str) -> None:
    try:
        expected: str | None = normalize_url(href, base)
    except ValueError:
        expected = None
    resolved = quick_join(base, href)
    assert resolved is None or resolved == expected


# --- URL normalization and policy ------------------------------------------------


@given(urls)
@example("HTTP://Example.COM:80")
@example("http://a\\@b/")  # Raises: browsers would connect to a, urllib to b.
@example("http://h/a #x")  # Normalized to http://h/a%20, not http://h/a then.
@example("A:////[")  # An empty authority, then a path that looks like one.
def test_normalize_url_raises_only_value_error_and_is_idempotent(url: str) -> None:
    try:
        normal = normalize_url(url)
    except ValueError:
        return
    assert normalize_url(normal) == normal


@given(urls)
@example("http://h\t/x")  # urlsplit drops the tab.
@example("http://h?q=/x")  # The authority ends at the '?'.
def test_origin_of_reads_a_url_as_the_general_parser_does(url: str) -> None:
    for candidate in (url, *normal_forms(url)):
        try:
            parts = urllib.parse.urlsplit(candidate)
        except ValueError:
            continue  # A broken IPv6 literal: origin_of is given only normal URLs.
        assert origin_of(candidate) == f"{parts.scheme}://{parts.netloc.rpartition('@')[2]}"


@given(urls)
@example("http://h?q=/x")  # The authority ends at the '?'.
@example("http://h/a?#b")  # An empty query is no query.
@example("http://[::1/x")  # A broken IPv6 literal.
@example("http://h:0/")  # Port 0 is a port.
def test_the_request_shortcut_splits_a_url_as_urlsplit_does(url: str) -> None:
    for candidate in (url, *normal_forms(url)):
        try:
            general: object = shared.web.http._split_any_url(candidate)
        except ValueError as error:
            general = type(error)
        try:
            short: object = shared.web.http._split_url(candidate)
        except ValueError as error:
            short = type(error)
        assert short == general


def normal_forms(url: str) -> list[str]:
    """Return ``url`` in normal form, or nothing when it has none."""
    try:
        return [normalize_url(url)]
    except ValueError:
        return []


def connected_hosts(url: str) -> list[str]:
    """Return the hosts the stages would connect to for ``url``, as ASCII.

    Stages 1 and 2 look the host up with Python's IDNA codec; stage 3 asks
    yarl, which applies UTS 46.  A host either one refuses is never reached.
    """
    hosts = []
    host = request_target(url)[0]
    with contextlib.suppress(UnicodeError):
        hosts.append(host.encode("idna").decode("ascii"))
    with contextlib.suppress(ValueError):
        hosts.append(yarl.URL(url).raw_host or "")
    return hosts


@given(st.lists(st.sampled_from(ROOT_HOSTS), min_size=1, max_size=3), urls, st.booleans())
@example(["example.com"], "http://evil.com\\@example.com/", True)
@example(["example.com"], "http://example.com@evil.com/", True)
@example(["example.com"], "http://example.com.evil.com/", False)
@example(["example.com"], "http://evil\uff61example.com/", False)  # IDNA: evil.example.com
def test_an_allowed_url_never_leaves_the_root_hosts(
    hosts: list[str], url: str, strict: bool
) -> None:
    policy = UrlPolicy([f"http://{host}/" for host in hosts], strict=strict)
    assert policy.url_allowed(url) in (True, False)  # Never raises, normalized or not.
    try:
        url = normalize_url(url)  # The crawler checks normalized URLs only.
    except ValueError:
        return
    if not policy.url_allowed(url):
        return
    host = urllib.parse.urlsplit(url).hostname
    assert host and policy.root_hosts
    if is_ip_literal(host):
        assert host in policy.root_hosts
    elif strict:
        assert host.removeprefix("www.") in {h.removeprefix("www.") for h in policy.root_hosts}
    else:
        assert lenient_host(host) in policy.root_hosts
    # Where the stages would really connect (IDNA maps '\uff61' to '.'): a root host too.
    for connected in connected_hosts(url):
        assert policy.host_allowed(connected), connected


@given(st.lists(st.sampled_from(ROOT_HOSTS), min_size=1, max_size=3), urls, st.booleans())
def test_the_link_filter_agrees_with_url_allowed(hosts: list[str], url: str, strict: bool) -> None:
    policy = UrlPolicy([f"http://{host}/" for host in hosts], strict=strict)
    try:
        normal = normalize_url(url)
    except ValueError:
        return
    # The link parser's links are normalized; the crawler filters them without parsing again.
    answer = policy.normal_url_allowed(normal)
    assert answer == policy.url_allowed(normal)
    # The answer kept for the URL's scheme and authority is the one for the whole URL.
    assert answer == policy.origin_allowed(normal) == policy.normal_url_allowed(normal)


# --- Compressed bodies ---------------------------------------------------------------


@given(
    st.binary(max_size=3000),
    st.sampled_from(["gzip", "deflate", "raw deflate"]),
    st.lists(st.integers(min_value=0)),
    st.integers(min_value=0, max_value=4000),
)
def test_body_decoder_gives_back_the_body_however_it_is_split(
    body: bytes, coding: str, cuts: list[int], limit: int
) -> None:
    if coding == "gzip":
        payload = gzip.compress(body)
    else:
        packer = zlib.compressobj(wbits=zlib.MAX_WBITS if coding == "deflate" else -zlib.MAX_WBITS)
        payload = packer.compress(body) + packer.flush()
    decoder = BodyDecoder("gzip" if coding == "gzip" else "deflate", limit)
    decoded = b"".join(decoder.decode(piece) for piece in split(payload, cuts))
    assert decoded + decoder.finish() == body[:limit]


@given(st.sampled_from(["gzip", "deflate"]), st.binary(max_size=200), st.lists(st.integers(0)))
def test_body_decoder_raises_only_bad_response(coding: str, data: bytes, cuts: list[int]) -> None:
    decoder = BodyDecoder(coding, 1000)
    try:
        for piece in split(data, cuts):
            assert len(decoder.decode(piece)) <= 1000
        decoder.finish()
    except BadResponse:
        pass


# --- The HTTP response parser ------------------------------------------------------

HTTP_PIECES = [b"HTTP/1.1 200 OK", b"HTTP/1.0 302 Found", b"HTTP/1.1 100 Continue", b"\r\n"]
HTTP_PIECES += [b"\n", b"\r", b":", b" ", b"Content-Length: 5", b"Content-Length: 0"]
HTTP_PIECES += [b"Content-Length: x", b"Transfer-Encoding: chunked", b"Location: /", b"5"]
HTTP_PIECES += [b"0", b"ffffffffffffffffff", b";ext", b"hello", b"\x00", b"\xff", b"\r\n\r\n"]
raw_bytes = st.one_of(
    st.binary(max_size=2000),
    st.lists(st.one_of(st.sampled_from(HTTP_PIECES), st.binary(max_size=8)), max_size=40).map(
        b"".join
    ),
)


def split(data: bytes, cuts: list[int]) -> list[bytes]:
    """Return ``data`` cut at the given offsets (taken modulo its length)."""
    offsets = sorted({cut % (len(data) + 1) for cut in cuts} | {0, len(data)})
    return [data[start:end] for start, end in zip(offsets, offsets[1:], strict=False)]


def parse(data: bytes, cuts: list[int], max_size: int) -> tuple:
    """Feed ``data`` in pieces, then the end; return the response as a tuple."""
    parser = ResponseParser(max_size)
    for piece in split(data, cuts):
        parser.feed_data(piece)
    parser.feed_eof()
    response = parser.response()
    return response.status, response.headers, response.body, response.truncated


@given(raw_bytes, st.lists(st.integers(min_value=0)), st.integers(min_value=0, max_value=100))
@example(b"HTTP/1.1 200 OK\r\nContent-Length: 5, 5\r\n\r\nhello", [], 100)
@example(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffffffff\r\n", [], 9)
def test_response_parser_raises_only_bad_response(
    data: bytes, cuts: list[int], max_size: int
) -> None:
    try:
        status, _, body, truncated = parse(data, cuts, max_size)
    except BadResponse:
        return
    assert 0 <= status <= 999 and not 100 <= status <= 199  # Interim ones are skipped.
    assert len(body) <= max_size and (truncated or len(body) < max_size or max_size == 0)


TOKEN_CHARS = "!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
header_names = st.text(TOKEN_CHARS, min_size=1, max_size=12).filter(
    lambda name: name.lower() not in ("content-length", "transfer-encoding")
)
header_values = st.text(
    st.characters(blacklist_categories=["Cs"], blacklist_characters="\r\n\x00"), max_size=30
)


header_lines = st.lists(
    st.one_of(
        st.builds(lambda n, v: f"{n}:{v}", header_names, header_values),
        st.sampled_from(["Content-Length: 1", " folded", "\tfolded", "", "no colon", "a:\r"]),
        st.text(max_size=10),
    ),
    min_size=1,
    max_size=6,
)


@given(header_lines)
@example(["Content-Length: 1", "content-length: 1"])
@example(["A: b", " c", "A: d"])
def test_the_header_shortcut_reads_as_the_line_by_line_parser(lines: list[str]) -> None:
    block = "\n".join(lines).encode("utf-8", "surrogateescape")
    outcomes: list[dict[str, str] | str] = []
    for parse_block in (
        shared.web.http._parse_headers,
        lambda block: shared.web.http._parse_header_lines(block.split(b"\n")),
    ):
        try:
            outcomes.append(parse_block(block))
        except BadResponse as error:
            outcomes.append(str(error))
    assert outcomes[0] == outcomes[1]


@st.composite
def responses(draw: st.DrawFn) -> tuple[bytes, int, dict[str, str], bytes]:
    """Draw a well-formed response: its bytes, status, headers and body."""
    status = draw(st.sampled_from([200, 204, 301, 304, 404, 500, 599, 999]))
    headers = draw(st.lists(st.tuples(header_names, header_values), max_size=8))
    body = b"" if status in (204, 304) else draw(st.binary(max_size=300))
    framing = draw(st.sampled_from(["length", "chunked", "close"]))
    newline = draw(st.sampled_from([b"\r\n", b"\n"]))
    lines = [b"HTTP/1.1 %d %s" % (status, draw(st.sampled_from([b"OK", b"", b"X Y"])))]
    lines += [f"{name}: {value}".encode() for name, value in headers]
    if framing == "length":
        lines.append(b"Content-Length: %d" % len(body))
        payload = body
    elif framing == "chunked":
        lines.append(b"Transfer-Encoding: chunked")
        cuts = draw(st.lists(st.integers(min_value=0, max_value=len(body))))
        chunks = [chunk for chunk in split(body, cuts) if chunk]
        payload = b"".join(b"%x\r\n%s\r\n" % (len(chunk), chunk) for chunk in chunks)
        payload += b"0\r\n\r\n"
    else:
        payload = body
    if draw(st.booleans()):
        lines.insert(0, b"HTTP/1.1 100 Continue" + newline)  # An interim response first.
    expected: dict[str, str] = {}
    for name, value in headers:
        expected.setdefault(name.lower(), value.strip(" \t"))
    framing_header = {"length": "content-length", "chunked": "transfer-encoding"}
    if framing in framing_header:
        expected[framing_header[framing]] = lines[-1].split(b": ")[1].decode()
    data = newline.join(lines) + newline + newline + payload
    return data, status, expected, body


@given(responses(), st.lists(st.integers(min_value=0)), st.integers(min_value=0, max_value=400))
def test_a_well_formed_response_parses_the_same_however_it_is_split(
    response: tuple[bytes, int, dict[str, str], bytes], cuts: list[int], max_size: int
) -> None:
    data, status, headers, body = response
    truncated = len(body) > max_size
    expected = (status, headers, body[:max_size], truncated)
    assert parse(data, [], max_size) == expected
    assert parse(data, cuts, max_size) == expected


# --- Doubtful responses: the shared parser decides as aiohttp does -------------------

DOUBTFUL = {
    "header line of 8190 bytes": b"X-Long: " + b"a" * 8184,
    "header line of 8191 bytes": b"X-Long: " + b"a" * 8185,
    "128 headers": b"\r\n".join(b"X-%d: v" % n for n in range(127)),
    "129 headers": b"\r\n".join(b"X-%d: v" % n for n in range(128)),
    "non-ASCII value": "X-Name: caf\xe9 \u2603".encode() + b" \xff",
    "non-ASCII name": b"X-N\xe9: v",
    "space in a name": b"X Y: v",
    "NUL in a value": b"X-A: a\x00b",
    "CR in a value": b"X-A: a\rb",
    "control character in a value": b"X-A: a\x01b\x7f",
    "Content-Length twice, equal": b"Content-Length: 2\r\nContent-Length: 2",
    "Content-Length twice, different": b"Content-Length: 2\r\nContent-Length: 3",
    "Content-Length and Transfer-Encoding": b"Content-Length: 2\r\nTransfer-Encoding: chunked",
    "chunked, not the last coding": b"Transfer-Encoding: chunked, gzip",
    "Content-Type twice": b"Content-Type: text/html\r\nContent-Type: text/plain",
    "Location twice": b"Location: /a\r\nLocation: /b",
    "folded header line": b"X-A: a\r\n b",
    "folded with tabs": b"X-A: a \r\n\t\tb\r\n c",
    "Content-Type folded": b"Content-Type: text/html;\r\n charset=gbk",
}


async def aiohttp_parse(answer: bytes) -> tuple | None:
    """Return (status, headers, body) as aiohttp reads ``answer``; None if it refuses."""

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(answer)
        writer.close()
        await writer.wait_closed()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    url = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/"
    try:
        async with aiohttp.ClientSession() as session, session.get(url) as response:
            headers = {
                name.lower(): value for name, value in reversed(list(response.headers.items()))
            }
            return response.status, headers, await response.read()
    except aiohttp.ClientError:
        return None
    finally:
        server.close()
        await server.wait_closed()


@pytest.mark.parametrize("head", DOUBTFUL.values(), ids=DOUBTFUL.keys())
def test_the_shared_parser_decides_doubtful_responses_as_aiohttp(head: bytes) -> None:
    answer = b"HTTP/1.1 200 OK\r\n" + head + b"\r\nConnection: close\r\n\r\nok"
    try:
        ours = parse(answer, [], 100)[:3]
    except BadResponse:
        ours = None
    assert ours == asyncio.run(aiohttp_parse(answer))

"""Examples for shared.web.http: request bytes and the sans-IO response parser."""

from __future__ import annotations

import gzip
import zlib

import pytest

from shared.web import http
from shared.web.http import (
    MAX_HEAD_SIZE,
    MAX_INTERIM_RESPONSES,
    USER_AGENT,
    BadResponse,
    BodyDecoder,
    Response,
    ResponseParser,
    build_request,
    parse_content_type,
    request_target,
)

# --- Requests -----------------------------------------------------------------------


def request_lines(url: str) -> list[str]:
    """Return the lines of the request head for ``url``, checking its framing."""
    data = build_request(url)
    assert data.endswith(b"\r\n\r\n") and data.count(b"\r\n\r\n") == 1
    return data.decode("ascii")[: -len("\r\n\r\n")].split("\r\n")


def test_build_request_is_an_http_1_0_get() -> None:
    assert request_lines("http://example.com/a?b=1") == [
        "GET /a?b=1 HTTP/1.0",
        "Host: example.com",
        f"User-Agent: {USER_AGENT}",
        "Accept: */*",
        "Accept-Encoding: gzip, deflate",
        "Connection: close",
    ]


@pytest.mark.parametrize(
    ("url", "host"),
    [
        ("http://example.com/", "example.com"),
        ("http://example.com:80/", "example.com"),
        ("http://example.com:8080/", "example.com:8080"),
        ("http://example.com:443/", "example.com:443"),
        ("https://example.com/", "example.com"),
        ("https://example.com:443/", "example.com"),
        ("https://example.com:80/", "example.com:80"),
        ("HTTPS://example.com/", "example.com"),
        ("http://Example.COM/", "example.com"),
        ("http://[::1]/", "[::1]"),
        ("http://[::1]:8080/", "[::1]:8080"),
        ("http://b\xfccher.de/", "xn--bcher-kva.de"),
        ("http://B\xdcCHER.de:8000/", "xn--bcher-kva.de:8000"),
        ("http://user:pw@example.com/", "example.com"),
    ],
)
def test_host_header(url: str, host: str) -> None:
    assert request_lines(url)[1] == f"Host: {host}"


@pytest.mark.parametrize(
    ("url", "target"),
    [
        ("http://example.com", "/"),
        ("http://example.com/", "/"),
        ("http://example.com/#fragment", "/"),
        ("http://example.com/a b", "/a%20b"),
        ("http://example.com/caf\xe9/", "/caf%C3%A9/"),
        ("http://example.com/?q=x y&z=\xe9", "/?q=x%20y&z=%C3%A9"),
        ("http://example.com/?a=%20b", "/?a=%20b"),  # Existing escapes stay.
        ("http://example.com/p%2Fq", "/p%2Fq"),
        # A normalized URL goes out exactly as stored: no %7e made '~', no re-quoting.
        ("http://example.com/%7e/%7E/~/a|b^c?d\\e", "/%7e/%7E/~/a|b^c?d\\e"),
        ("http://example.com/a;b=c/@x:y!$'()*+,-._~", "/a;b=c/@x:y!$'()*+,-._~"),
        ("http://example.com/?b=2&a=1", "/?b=2&a=1"),
        ("http://example.com/search?q=1&lang=en", "/search?q=1&lang=en"),
    ],
)
def test_request_target_is_sent_as_stored(url: str, target: str) -> None:
    assert request_lines(url)[0] == f"GET {target} HTTP/1.0"


@pytest.mark.parametrize(
    ("url", "parts"),
    [
        ("http://example.com/x?y", ("example.com", 80, "/x?y")),
        ("https://example.com/", ("example.com", 443, "/")),
        ("http://example.com:8080", ("example.com", 8080, "/")),
        ("http://[::1]:81/", ("::1", 81, "/")),
    ],
)
def test_request_target(url: str, parts: tuple[str, int, str]) -> None:
    assert request_target(url) == parts


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("http:///path", "no host"),
        ("not-a-host", "no host"),
        ("mailto:a@example.com", "no host"),
        ("http://example.com:bad/", "Port"),
        ("http://example.com:99999/", "Port"),
    ],
)
def test_request_target_errors(url: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        request_target(url)
    with pytest.raises(ValueError, match=message):
        build_request(url)


def test_build_request_sends_extra_headers_and_refuses_unsafe_ones() -> None:
    data = build_request("http://h/", headers={"If-None-Match": '"v1"'})
    assert b'\r\nIf-None-Match: "v1"\r\n\r\n' in data
    for value in ['"v1"\r\nX-Injected: 1', "caf\xe9"]:
        with pytest.raises(ValueError, match="not printable ASCII"):
            build_request("http://h/", headers={"If-None-Match": value})


def test_build_request_rejects_an_unencodable_host() -> None:
    with pytest.raises(ValueError):  # UnicodeError is a ValueError.
        build_request("http://\xe9..example/")


# --- Responses ----------------------------------------------------------------------


def parse(
    data: bytes, *, max_size: int = 1000, eof: bool = False, bytewise: bool = False
) -> Response:
    """Feed ``data`` (whole, or one byte at a time) and return the response."""
    parser = ResponseParser(max_size)
    pieces = [data[i : i + 1] for i in range(len(data))] if bytewise else [data]
    for piece in pieces:
        parser.feed_data(piece)
    if eof:
        parser.feed_eof()
    assert parser.done
    return parser.response()


def parse_error(data: bytes, *, eof: bool = False, bytewise: bool = False) -> str:
    """Feed ``data`` and return the message of the BadResponse it raises."""
    with pytest.raises(BadResponse) as info:
        parse(data, eof=eof, bytewise=bytewise)
    return str(info.value)


@pytest.fixture(params=[False, True], ids=["whole", "bytewise"])
def bytewise(request: pytest.FixtureRequest) -> bool:
    """Feed the response all at once, or split at every byte."""
    return request.param


def test_content_length_body(bytewise: bool) -> None:
    data = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 5\r\n\r\nhello"
    assert parse(data, bytewise=bytewise) == Response(
        200, {"content-type": "text/html", "content-length": "5"}, b"hello", False
    )


def test_content_length_body_ignores_bytes_after_it() -> None:
    data = b"HTTP/1.0 200 OK\r\nContent-Length: 5\r\n\r\nhelloEXTRA BYTES"
    assert parse(data).body == b"hello"


def test_content_length_zero_is_done_after_the_head() -> None:
    parser = ResponseParser(100)
    parser.feed_data(b"HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n")
    assert parser.done
    assert parser.response().body == b""


def test_response_is_not_done_before_the_body_is_complete() -> None:
    parser = ResponseParser(100)
    parser.feed_data(b"HTTP/1.0 200 OK\r\nContent-Length: 5\r\n\r\nhell")
    assert not parser.done
    parser.feed_data(b"o")
    assert parser.done


def test_close_delimited_body(bytewise: bool) -> None:
    data = b"HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\nuntil the end"
    response = parse(data, eof=True, bytewise=bytewise)
    assert (response.status, response.body) == (200, b"until the end")


def test_close_delimited_body_is_not_done_before_eof() -> None:
    parser = ResponseParser(100)
    parser.feed_data(b"HTTP/1.0 200 OK\r\n\r\nbody")
    assert not parser.done
    parser.feed_eof()
    assert parser.done and parser.response().body == b"body"


def test_empty_close_delimited_body_without_a_reason_phrase() -> None:
    assert parse(b"HTTP/1.0 200\r\n\r\n", eof=True) == Response(200, {}, b"")


CHUNKED = (
    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
    b"5;name=value\r\nhello\r\n"
    b"6 ; another\r\n world\r\n"
    b"a\r\n, chunks!!\r\n"
    b"0\r\nTrailer: ignored\r\n\r\n"
)


def test_chunked_body(bytewise: bool) -> None:
    response = parse(CHUNKED, bytewise=bytewise)
    assert response.body == b"hello world, chunks!!"
    assert response.headers == {"transfer-encoding": "chunked"}


def test_chunked_body_split_at_every_possible_point() -> None:
    for split in range(1, len(CHUNKED)):
        parser = ResponseParser(1000)
        parser.feed_data(CHUNKED[:split])
        parser.feed_data(CHUNKED[split:])
        assert parser.response().body == b"hello world, chunks!!", split


def test_chunked_body_with_bare_line_feeds() -> None:
    data = b"HTTP/1.1 200 OK\nTransfer-Encoding: chunked\n\n3\nabc\n2\nde\n0\n\n"
    assert parse(data, bytewise=True).body == b"abcde"


@pytest.mark.parametrize("status", [204, 304])
def test_no_body_statuses(status: int) -> None:
    parser = ResponseParser(100)
    parser.feed_data(f"HTTP/1.1 {status} X\r\nContent-Length: 5\r\n\r\n".encode())
    assert parser.done
    assert parser.response() == Response(status, {"content-length": "5"}, b"")


@pytest.mark.parametrize("count", [MAX_INTERIM_RESPONSES + 1, 1000])
def test_too_many_interim_responses_are_bad(count: int) -> None:
    """Skipped in a loop, not one call deeper each: a thousand raise no RecursionError."""
    data = b"HTTP/1.1 100 Continue\r\n\r\n" * count
    data += b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
    assert parse_error(data) == f"more than {MAX_INTERIM_RESPONSES} interim responses"


def test_interim_responses_up_to_the_limit_are_skipped(bytewise: bool) -> None:
    data = b"HTTP/1.1 102 Processing\r\n\r\n" * MAX_INTERIM_RESPONSES
    data += b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
    assert parse(data, bytewise=bytewise).body == b"ok"


def test_a_head_sent_byte_by_byte_is_searched_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each search for the blank line starts near the new bytes, not at the buffer's start.

    A counting wrapper adds up the bytes each search looks at: fed one byte
    at a time, a head of n bytes must cost about n, not n * n / 2.
    """
    searched = []
    real = http._find_blank_line

    def counting(buffer: bytearray, *start: int) -> tuple[int, int]:
        searched.append(len(buffer) - (start[0] if start else 0))
        return real(buffer, *start)

    monkeypatch.setattr(http, "_find_blank_line", counting)
    head = b"HTTP/1.1 200 OK\r\n" + b"X-Filler: %s\r\n" % (b"x" * 400) * 100 + b"\r\n"
    assert len(head) > 40_000
    parser = ResponseParser(10)
    for index in range(len(head)):
        parser.feed_data(head[index : index + 1])
    parser.feed_eof()
    assert parser.response().status == 200
    assert sum(searched) <= 4 * len(head)


def test_interim_responses_are_skipped(bytewise: bool) -> None:
    data = (
        b"HTTP/1.1 100 Continue\r\n\r\n"
        b"HTTP/1.1 102 Processing\r\nX-Interim: yes\r\n\r\n"
        b"HTTP/1.1 404 Not Found\r\nContent-Length: 4\r\n\r\ngone"
    )
    assert parse(data, bytewise=bytewise) == Response(404, {"content-length": "4"}, b"gone")


def test_max_size_truncates_a_content_length_body() -> None:
    data = b"HTTP/1.0 200 OK\r\nContent-Length: 20\r\n\r\n" + b"x" * 20
    response = parse(data, max_size=10)
    assert (response.truncated, response.body) == (True, b"x" * 10)


def test_max_size_truncates_a_close_delimited_body_without_eof() -> None:
    parser = ResponseParser(10)
    parser.feed_data(b"HTTP/1.0 200 OK\r\n\r\n" + b"y" * 6)
    assert not parser.done
    parser.feed_data(b"y" * 6)
    assert parser.done  # No need to wait for the end of an endless body.
    assert parser.response() == Response(200, {}, b"y" * 10, True)


def test_max_size_truncates_a_chunked_body() -> None:
    data = b"HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n14\r\n" + b"z" * 20
    response = parse(data, max_size=10, bytewise=True)
    assert (response.truncated, response.body) == (True, b"z" * 10)


def test_body_of_exactly_max_size_is_not_truncated() -> None:
    data = b"HTTP/1.0 200 OK\r\nContent-Length: 10\r\n\r\n" + b"x" * 10
    assert parse(data, max_size=10) == Response(200, {"content-length": "10"}, b"x" * 10, False)
    assert parse(data[:-10] + b"x" * 10, max_size=10, eof=True).truncated is False


def test_max_size_zero() -> None:
    response = parse(b"HTTP/1.0 200 OK\r\n\r\nx", max_size=0)
    assert (response.truncated, response.body) == (True, b"")


def test_bare_line_feed_head(bytewise: bool) -> None:
    data = b"HTTP/1.0 200 OK\nContent-Length: 2\nX-Other: 1\n\nhi"
    assert parse(data, bytewise=bytewise) == Response(
        200, {"content-length": "2", "x-other": "1"}, b"hi"
    )


def test_a_blank_line_feed_pair_in_the_body_does_not_end_a_crlf_head() -> None:
    data = b"HTTP/1.0 200 OK\r\nContent-Length: 6\r\n\r\na\n\nb\r\n"
    assert parse(data).body == b"a\n\nb\r\n"


def test_header_names_are_lower_case_and_values_stripped() -> None:
    data = b"HTTP/1.0 200 OK\r\nContent-TYPE:   text/html  \r\nX-Empty:\r\n\r\n"
    assert parse(data, eof=True).headers == {"content-type": "text/html", "x-empty": ""}


def test_duplicate_headers_keep_the_first() -> None:
    data = b"HTTP/1.0 301 Moved\r\nLocation: /first\r\nlocation: /second\r\n\r\n"
    assert parse(data, eof=True).headers == {"location": "/first"}


@pytest.mark.parametrize("digits", [19, 5000])
def test_a_content_length_of_too_many_digits_is_bad(digits: int) -> None:
    """Thousands of digits are more than int() reads: a bad response, not a ValueError."""
    head = b"HTTP/1.0 200 OK\r\nContent-Length: " + b"9" * digits + b"\r\n\r\n"
    assert parse_error(head).startswith("bad Content-Length")


def test_a_content_length_of_18_digits_is_read() -> None:
    parser = ResponseParser(10)
    parser.feed_data(b"HTTP/1.0 200 OK\r\nContent-Length: 000000000000000003\r\n\r\nabc")
    assert parser.response().body == b"abc"


@pytest.mark.parametrize("digits", [17, 5000])
def test_a_chunk_size_of_too_many_digits_is_bad(digits: int) -> None:
    data = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + b"f" * digits + b"\r\n"
    assert parse_error(data).startswith("bad chunk size")


def test_conflicting_content_length_is_bad() -> None:
    data = b"HTTP/1.0 200 OK\r\nContent-Length: 2\r\ncontent-length: 3\r\n\r\nhi"
    with pytest.raises(BadResponse, match="Content-Length"):
        parse(data)


@pytest.mark.parametrize("value", [b"abc", b"-1", b"+5", b"1.0", b"", b"\xb2", b"0x10"])
def test_bad_content_length(value: bytes) -> None:
    message = parse_error(b"HTTP/1.0 200 OK\r\nContent-Length: " + value + b"\r\n\r\n")
    assert message.startswith("bad Content-Length")


@pytest.mark.parametrize(
    "line",
    [
        b"HTTP/2 200 OK",
        b"HTTP/1.1 20 OK",
        b"HTTP/1.1 2000 OK",
        b"HTTP/1.1  200 OK",
        b"http/1.1 200 OK",
        b"ICY 200 OK",
        b"THIS IS NOT HTTP",
        b"",
    ],
)
def test_bad_status_line(line: bytes) -> None:
    assert parse_error(line + b"\r\nContent-Length: 0\r\n\r\n").startswith("bad status line")


@pytest.mark.parametrize(
    "line", [b"No colon here", b": no name", b" Folded: value", b"Name : space before colon"]
)
def test_bad_header_line(line: bytes) -> None:
    message = parse_error(b"HTTP/1.0 200 OK\r\n" + line + b"\r\n\r\n")
    assert message.startswith("bad header line")


def test_head_too_long() -> None:
    parser = ResponseParser(100)
    line = b"X-Filler: " + b"f" * 90 + b"\r\n"
    parser.feed_data(b"HTTP/1.0 200 OK\r\n")
    with pytest.raises(BadResponse, match="response head longer than"):
        for _ in range(MAX_HEAD_SIZE // len(line) + 2):
            parser.feed_data(line)


def test_head_of_exactly_the_limit_is_accepted() -> None:
    head = b"HTTP/1.0 200 OK"
    while len(head) < MAX_HEAD_SIZE:  # Headers of 4 KB each, the last one shorter.
        line = b"\r\nX-Filler: "
        head += line + b"f" * min(4096, MAX_HEAD_SIZE - len(head) - len(line))
    assert len(head) == MAX_HEAD_SIZE
    assert parse(head + b"\r\n\r\nok", eof=True).body == b"ok"


@pytest.mark.parametrize("data", [b"", b"HTTP/1.0 200 OK\r\n", b"HTTP/1.0 200 OK\r\nX: y\r\n"])
def test_eof_before_the_head_ends(data: bytes) -> None:
    message = parse_error(data, eof=True)
    assert message == "connection closed before the end of the response head"


def test_eof_in_a_content_length_body() -> None:
    message = parse_error(b"HTTP/1.0 200 OK\r\nContent-Length: 5\r\n\r\nhi", eof=True)
    assert message == "connection closed after 2 of 5 body bytes"


def test_eof_in_a_chunked_body() -> None:
    data = b"HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhi"
    assert parse_error(data, eof=True) == "connection closed after 2 body bytes"


@pytest.mark.parametrize("size", [b"zz", b"-1", b"", b"0x5", b"1" * 17, b"\xb2"])
def test_bad_chunk_size(size: bytes) -> None:
    data = b"HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + size + b"\r\n"
    assert parse_error(data).startswith("bad chunk size")


def test_chunk_size_line_too_long() -> None:
    data = b"HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + b"1" * 2000
    assert parse_error(data) == "chunk size line too long"


def test_missing_line_break_after_a_chunk() -> None:
    data = b"HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nhiX\r\n"
    assert parse_error(data, bytewise=True) == "missing line break after a chunk"


@pytest.mark.parametrize("coding", [None, "gzip"])
def test_bytes_after_a_complete_response_in_the_same_piece_are_not_ours(
    coding: str | None,
) -> None:
    body = b"hi" if coding is None else gzip.compress(b"hi")
    head = b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n" % len(body)
    if coding is not None:
        head += b"Content-Encoding: gzip\r\n"
    parser = ResponseParser(100)
    parser.feed_data(head + b"\r\n" + body + b"junk HTTP/1.1 200 OK\r\n\r\nunasked")
    assert parser.done and parser.response().body == b"hi"


def test_feeding_after_done_is_ignored() -> None:
    parser = ResponseParser(100)
    parser.feed_data(b"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nhi")
    parser.feed_data(b"garbage that is not ours")
    parser.feed_data(b"HTTP/1.0 500 Oops\r\n\r\n")
    parser.feed_eof()
    assert parser.response() == Response(200, {"content-length": "2"}, b"hi")


def test_response_before_done_is_an_error() -> None:
    parser = ResponseParser(100)
    parser.feed_data(b"HTTP/1.0 200 OK\r\n")
    with pytest.raises(AssertionError):
        parser.response()


# --- Content-Type ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "parsed"),
    [
        (None, (None, {})),
        ("", (None, {})),
        ("   ", (None, {})),
        ("text/html", ("text/html", {})),
        ("TEXT/HTML", ("text/html", {})),
        ("text/html; charset=ascii", ("text/html", {"charset": "ascii"})),
        ("text/html;charset=ISO-8859-1; foo=bar",
         ("text/html", {"charset": "ISO-8859-1", "foo": "bar"})),
        ('text/html; charset="utf-8"', ("text/html", {"charset": "utf-8"})),
        ("text/html ; CHARSET = latin-1 ", ("text/html", {"charset": "latin-1"})),
        ("text/html; charset=first; CharSet=second", ("text/html", {"charset": "first"})),
        ("text/html; charset=", ("text/html", {})),
        ('text/html; charset=""', ("text/html", {})),
        ("text/html; charset; x=y", ("text/html", {"x": "y"})),
        ("text/html; charsetx=big5", ("text/html", {"charsetx": "big5"})),
        ("; charset=latin-1", (None, {"charset": "latin-1"})),
        ("foo", ("foo", {})),
        # Quoted values: ';', '=', 'charset=' and escaped quotes inside them are text.
        ('text/html; title="a;charset=gbk"; charset=utf-8',
         ("text/html", {"title": "a;charset=gbk", "charset": "utf-8"})),
        ('text/html; t="x\\"y;charset=a"; charset=b',
         ("text/html", {"t": 'x"y;charset=a', "charset": "b"})),
        ('text/html; charset="gbk" junk; x=1', ("text/html", {"charset": "gbk", "x": "1"})),
        ('text/html; charset="no end', ("text/html", {"charset": "no end"})),
    ],
)  # fmt: skip
def test_parse_content_type(value: str | None, parsed: tuple[str | None, dict]) -> None:
    assert parse_content_type(value) == parsed


# --- Statuses and headers every stage reads alike -------------------------------------


@pytest.mark.parametrize("status", [0, 99, 600, 999])
def test_a_status_outside_100_to_599_is_a_response_with_its_code(status: int) -> None:
    response = parse_all(b"HTTP/1.1 %03d Odd\r\nContent-Length: 2\r\n\r\nok" % status)
    assert (response.status, response.body) == (status, b"ok")


def test_early_hints_are_skipped_too() -> None:
    data = b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </s>\r\n\r\n"
    data += b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
    response = parse_all(data)
    assert (response.status, response.headers, response.body) == (
        200,
        {"content-length": "2"},
        b"ok",
    )


def test_a_101_nobody_asked_for_is_a_bad_response() -> None:
    data = b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n"
    assert "101" in parse_error(data + b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")


def test_folded_header_lines_are_joined_to_the_line_before() -> None:
    data = b"HTTP/1.1 200 OK\r\nContent-Type: text/html;\r\n \t charset=gbk\r\n"
    data += b"X-Long: a\r\n\tb\r\n c\r\nContent-Length: 0\r\n\r\n"
    headers = parse_all(data).headers
    assert headers["content-type"] == "text/html; \t charset=gbk"
    assert headers["x-long"] == "a\tb c"


# --- Compressed bodies -----------------------------------------------------------------

TEXT = b"<p>" + b"compressible " * 500 + b"</p>"


def compressed(coding: str, data: bytes = TEXT) -> bytes:
    """Return ``data`` in a content coding: gzip, zlib-wrapped deflate or raw deflate."""
    if coding == "gzip":
        return gzip.compress(data)
    wbits = zlib.MAX_WBITS if coding == "deflate" else -zlib.MAX_WBITS
    packer = zlib.compressobj(wbits=wbits)
    return packer.compress(data) + packer.flush()


def parse_all(data: bytes, max_size: int = 100_000, pieces: int = 1) -> Response:
    """Parse a whole response fed in ``pieces`` parts, then the end of the connection."""
    parser = ResponseParser(max_size)
    step = max(1, len(data) // pieces)
    for start in range(0, len(data), step):
        parser.feed_data(data[start : start + step])
    parser.feed_eof()
    return parser.response()


@pytest.mark.parametrize("pieces", [1, 7, 1000])
@pytest.mark.parametrize(
    ("header", "coding"),
    [("gzip", "gzip"), ("x-gzip", "gzip"), ("deflate", "deflate"), ("DEFLATE", "raw")],
)
@pytest.mark.parametrize("framing", ["length", "chunked", "close"])
def test_compressed_bodies_are_decoded(header: str, coding: str, framing: str, pieces: int) -> None:
    payload = compressed(coding)
    head = b"HTTP/1.1 200 OK\r\nContent-Encoding: %s\r\n" % header.encode()
    if framing == "length":
        head += b"Content-Length: %d\r\n" % len(payload)
    elif framing == "chunked":
        head += b"Transfer-Encoding: chunked\r\n"
        payload = b"%x\r\n%s\r\n0\r\n\r\n" % (len(payload), payload)
    response = parse_all(head + b"\r\n" + payload, pieces=pieces)
    assert (response.body, response.truncated) == (TEXT, False)


def test_a_gzip_bomb_is_cut_at_max_size_of_decoded_bytes() -> None:
    payload = compressed("gzip", b"\0" * 50_000_000)  # About 50 KB that expand 1000 times.
    head = b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: %d\r\n\r\n"
    response = parse_all(head % len(payload) + payload, max_size=1000, pieces=10)
    assert (len(response.body), response.truncated) == (1000, True)


def test_body_decoder_never_returns_more_than_its_limit() -> None:
    decoder = BodyDecoder("gzip", 10_000)
    payload = compressed("gzip", b"x" * 10_000_000)
    sizes = [len(decoder.decode(payload[start : start + 512])) for start in range(0, 4096, 512)]
    assert sum(sizes) == 10_000 and decoder.produced == 10_000


GZIP_MEMBERS = gzip.compress(b"one ") + gzip.compress(b"two ") + gzip.compress(b"three")


@pytest.mark.parametrize("split", range(len(GZIP_MEMBERS) + 1))
def test_gzip_members_are_one_body_wherever_a_read_ends(split: int) -> None:
    """A member may end where a read does, and a read may hold one byte of the next."""
    decoder = BodyDecoder("gzip", 100)
    body = decoder.decode(GZIP_MEMBERS[:split]) + decoder.decode(GZIP_MEMBERS[split:])
    assert body + decoder.finish() == b"one two three"


@pytest.mark.parametrize("split", range(len(GZIP_MEMBERS) + 1))
def test_gzip_members_are_one_response_body_wherever_a_read_ends(split: int) -> None:
    data = b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\n\r\n" + GZIP_MEMBERS
    offset = len(data) - len(GZIP_MEMBERS)
    parser = ResponseParser(100)
    parser.feed_data(data[: offset + split])
    parser.feed_data(data[offset + split :])
    parser.feed_eof()
    assert parser.response().body == b"one two three"


@pytest.mark.parametrize("coding", ["gzip", "deflate", "raw"])
def test_bytes_after_the_compressed_data_end_the_body_unkept(coding: str) -> None:
    """Junk after the end: the body is complete at once, and no junk is kept."""
    payload = compressed(coding)
    decoder = BodyDecoder("gzip" if coding == "gzip" else "deflate", 100_000)
    assert decoder.decode(payload) == TEXT and not decoder.ended
    assert decoder.decode(b"junk" * 1000) == b"" and decoder.ended
    assert decoder.decode(b"more junk" * 1000) == b""
    assert decoder._pending == b""  # Nothing after the end is held.
    assert decoder.finish() == b""


@pytest.mark.parametrize("framing", ["length", "chunked", "close"])
def test_a_response_ends_with_its_compressed_data(framing: str) -> None:
    """A body announced as 64 MiB, but junk after a small gzip stream: done at the junk."""
    payload = compressed("gzip") + b"junk"
    head = b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\n"
    if framing == "length":
        head += b"Content-Length: %d\r\n" % (64 * 2**20)
    elif framing == "chunked":
        head += b"Transfer-Encoding: chunked\r\n"
        payload = b"%x\r\n%s\r\n" % (len(payload), payload)
    parser = ResponseParser(100_000)
    parser.feed_data(head + b"\r\n" + payload)
    assert parser.done
    assert (parser.response().body, parser.response().truncated) == (TEXT, False)


def test_gzip_members_in_a_row_are_one_body_and_trailing_bytes_are_ignored() -> None:
    decoder = BodyDecoder("gzip", 100)
    data = gzip.compress(b"one ") + gzip.compress(b"two") + b"\0\0junk"
    assert decoder.decode(data) + decoder.finish() == b"one two"


@pytest.mark.parametrize("header", [None, "identity", "br", "gzip, gzip", "compress"])
def test_other_codings_pass_through_as_sent(header: str | None) -> None:
    decoder = BodyDecoder(header, 5)
    assert decoder.decode(b"\x1f\x8bnot") + decoder.decode(b" decoded") + decoder.finish() == (
        b"\x1f\x8bnot"
    )


@pytest.mark.parametrize(
    "payload",
    [b"not gzip at all", gzip.compress(TEXT)[:-30]],
    ids=["garbage", "cut short"],
)
def test_a_body_not_in_its_coding_is_a_bad_response(payload: bytes) -> None:
    head = b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: %d\r\n\r\n"
    with pytest.raises(BadResponse):
        parse_all(head % len(payload) + payload)


def test_an_empty_body_with_a_coding_is_empty() -> None:
    response = parse_all(b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: 0\r\n\r\n")
    assert response.body == b""

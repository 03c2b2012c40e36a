"""HTTP/1.0 requests and a sans-IO response parser, for stages 1 and 2.

Stages 1 and 2 talk to servers over raw sockets.  Neither the format of a
request nor the parsing of a response is what those stages teach, so both
live here, free of any I/O: a stage sends the bytes of ``build_request`` and
feeds whatever it receives to a ``ResponseParser`` until the parser says it
is done.  Stage 3 lets aiohttp do this work but hands its result to the
crawler in the same ``Response`` shape.  Two pieces serve all three stages:
``BodyDecoder``, which undoes gzip and deflate within ``max_size`` (stage 3
feeds it what aiohttp reads, with aiohttp's own decompression off), and
``parse_content_type``.

The parser accepts what real servers send to an HTTP/1.0 client: a body
delimited by Content-Length, by chunked transfer coding, or by the end of
the connection.  Anything else (a bad status line, a header block without
an end, a body shorter than announced) raises ``BadResponse``.  Where a
response is doubtful, it decides as aiohttp's parser does, so that the
three stages record the same thing: the same limits on the head (about
8 KB per line, 128 headers), header values decoded as UTF-8 with
``surrogateescape``, a folded header line joined to the one before, and a
Content-Length that is repeated or comes with a Transfer-Encoding is an
error.  Interim 1xx answers are skipped, up to ``MAX_INTERIM_RESPONSES``;
a 101 is an error, since no stage asks to switch protocols.  After the end
of compressed data the body is complete: bytes that follow are not read.
"""

from __future__ import annotations

import dataclasses
import functools
import re
import urllib.parse
import zlib
from collections.abc import Mapping

from shared.web.urls import before_path

USER_AGENT = "crawler-tutorial/1.0"
# No stage sends an Upgrade header, so a 101 answers nothing that was asked.
UNASKED_UPGRADE = "101 Switching Protocols, but no upgrade was asked for"
# Every stage asks for these codings and decodes them (see BodyDecoder).
ACCEPT_ENCODING = "gzip, deflate"
MAX_HEAD_SIZE = 64 * 1024  # Bytes before the blank line; more is an error.
# aiohttp's limits (its max_line_size, max_field_size and max_headers).
MAX_LINE_SIZE = 8190  # Bytes in the status line, and in a header's name and value.
MAX_HEADERS = 128
# Interim (1xx) responses skipped before the final one; more is an error.  A
# server sends one or two (100 Continue, 103 Early Hints); a stream of them
# without end would hold the crawl until its timeout.
MAX_INTERIM_RESPONSES = 10
# Digits in a Content-Length: 18 is up to an exabyte less one byte.  Python
# refuses to read numbers of thousands of digits (ValueError), and no body
# needs more: a longer one is an error.
MAX_LENGTH_DIGITS = 18
TOKEN = re.compile(rb"[!#$%&'*+.^_`|~0-9A-Za-z-]+")  # A header name (RFC 9110).
FORBIDDEN_IN_VALUE = re.compile(rb"[\0\r\n]")
# A block of well-formed header lines, and one line of it: name, value.
# (Possessive quantifiers, '*+', never backtrack: linear time on any input.)
HEADER_LINE = r"([!#$%&'*+.^_`|~0-9A-Za-z-]++):[ \t]*+([^\0\r\n]*+)"
HEADER_BLOCK = re.compile(rf"{HEADER_LINE}(?:\n{HEADER_LINE})*+")
HEADER_LINES = re.compile(HEADER_LINE)
# Any three digits: a code outside 100-599 is the server's error, recorded as sent.
STATUS_LINE = re.compile(rb"HTTP/1\.[01] ([0-9][0-9][0-9])(?: [^\r\n]*)?\Z")
CHUNK_SIZE = re.compile(rb"[0-9A-Fa-f]{1,16}")
# Bytes a request target may not hold as they are: controls, space, non-ASCII.
NOT_IN_TARGET = re.compile("[^\x21-\x7e]")


class BadResponse(Exception):
    """The server's answer is not a complete, well-formed HTTP response."""


@dataclasses.dataclass
class Response:
    """One HTTP response: status, headers with lower-case names, and body.

    ``headers`` keeps the first value of a header sent more than once.  Its
    values are decoded from UTF-8 with ``surrogateescape``, as aiohttp does:
    a byte that is not UTF-8 becomes a lone surrogate (see
    ``shared.crawl.crawling.header_text``).
    """

    status: int
    headers: dict[str, str]
    body: bytes
    truncated: bool = False  # The body was longer than max_size and was cut.


def request_target(url: str) -> tuple[str, int, str]:
    """Split an http URL into ``(host, port, target)`` for a request line.

    Raises ValueError for a URL without a host or with a bad port.
    """
    _, host, port, target = _split_url(url)
    return host, port, target


# A stage asks for a URL's parts twice in a row (to connect, to build the
# request): the second time they are remembered.
@functools.lru_cache(maxsize=64)
def _split_url(url: str) -> tuple[str, str, int, str]:
    """Return the scheme, host, port and request target of an http URL; raises ValueError."""
    # A crawl's URLs take a short way, at half the instructions of urlsplit:
    # the part before the path is parsed once per host (_origin_parts), the
    # target is cut off the URL as it is.  Only URLs made of characters that
    # a request line may hold, whose authority ends at the first '/', take it.
    origin = before_path(url)
    path_start = len(origin)
    if path_start == len(url) or "?" in origin or "#" in origin or NOT_IN_TARGET.search(url):
        return _split_any_url(url)
    scheme, host, port = _origin_parts(origin)
    if not host:
        raise ValueError(f"URL has no host: {url!r}")
    # What urlsplit would make the target: no fragment, no empty query.
    path, mark, query = url[path_start:].partition("#")[0].partition("?")
    return scheme, host, port, path + mark + query if query else path


@functools.lru_cache(maxsize=256)  # A crawl asks for a few hosts, again and again.
def _origin_parts(origin: str) -> tuple[str, str, int]:
    """Return the scheme, host ('' if none) and port of a ``scheme://authority``."""
    parts = urllib.parse.urlsplit(origin)
    port = parts.port  # Raises ValueError for a bad port.
    if port is None:
        port = 443 if parts.scheme == "https" else 80
    return parts.scheme, parts.hostname or "", port


def _split_any_url(url: str) -> tuple[str, str, int, str]:
    """Return the scheme, host, port and request target of any URL; raises ValueError."""
    parts = urllib.parse.urlsplit(url)
    if not parts.hostname:
        raise ValueError(f"URL has no host: {url!r}")
    port = parts.port
    if port is None:
        port = 443 if parts.scheme == "https" else 80
    # A normalized URL is sent as it is (no %7e made '~', no '|' made '%7C'):
    # the target is the URL the crawl stored.  Only what no request line may
    # hold is percent-encoded, which a normalized URL never has.
    target = parts.path or "/"
    if parts.query:
        target += "?" + parts.query
    return parts.scheme, parts.hostname, port, NOT_IN_TARGET.sub(_percent_encode, target)


def _percent_encode(match: re.Match[str]) -> str:
    """Return the UTF-8 bytes of the matched character as %XX."""
    return "".join(f"%{byte:02X}" for byte in match.group().encode("utf-8", "surrogatepass"))


def build_request(
    url: str, user_agent: str = USER_AGENT, headers: Mapping[str, str] | None = None
) -> bytes:
    """Return the bytes of an HTTP/1.0 GET request for ``url``.

    ``headers`` are sent too (a recrawl's conditional ones).  Raises
    ValueError for a URL without a host or with a bad port, or a header
    that is not printable ASCII.
    """
    scheme, host, port, target = _split_url(url)
    if ":" in host:
        host = f"[{host}]"  # An IPv6 literal.
    elif not host.isascii():
        host = host.encode("idna").decode("ascii")  # An internationalized name.
    default_port = 443 if scheme == "https" else 80
    host_header = host if port == default_port else f"{host}:{port}"
    lines = [
        f"GET {target} HTTP/1.0",
        f"Host: {host_header}",
        f"User-Agent: {user_agent}",
        "Accept: */*",
        f"Accept-Encoding: {ACCEPT_ENCODING}",
        "Connection: close",
    ]
    for name, value in (headers or {}).items():
        if not (f"{name}{value}".isascii() and f"{name}{value}".isprintable()):
            raise ValueError(f"header {name!r} is not printable ASCII")
        lines.append(f"{name}: {value}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("ascii")


# --8<-- [start:parse_content_type]
def parse_content_type(value: str | None) -> tuple[str | None, dict[str, str]]:
    """Split a Content-Type value into its media type and its parameters.

    The media type is lower-cased, None when the value is missing or empty.
    Parameter names are lower-cased; of a parameter given twice the first
    counts; a quoted value may hold ``;``, ``=`` and backslash escapes
    (``charset="a\\"b"`` is ``a"b``).  Spaces around names and values are
    ignored, a parameter without ``=`` or without a value is skipped.
    Never raises.
    """
    if not value:
        return None, {}
    media_type, _, rest = value.partition(";")
    params: dict[str, str] = {}
    while rest:
        name, equals, rest = _split_parameter_name(rest)
        if not equals:
            continue  # 'text/html; charset; x=y': no value to take.
        if rest.lstrip(" \t").startswith('"'):
            param_value, rest = _quoted_string(rest.lstrip(" \t"))
            rest = rest.partition(";")[2]  # Whatever follows the closing quote is junk.
        else:
            param_value, _, rest = rest.partition(";")
            param_value = param_value.strip(" \t")
        if name and param_value and name not in params:
            params[name] = param_value
    return media_type.strip(" \t").lower() or None, params


def _split_parameter_name(text: str) -> tuple[str, str, str]:
    """Return a parameter's lower-case name, '=' (or '' if none), and the text after it."""
    for index, char in enumerate(text):
        if char in ";=":
            name = text[:index].strip(" \t").lower()
            if char == ";":
                return name, "", text[index + 1 :]
            return name, "=", text[index + 1 :]
    return text.strip(" \t").lower(), "", ""


def _quoted_string(text: str) -> tuple[str, str]:
    """Read the quoted string ``text`` starts with; return its value and the rest."""
    value: list[str] = []
    index = 1
    while index < len(text):
        char = text[index]
        if char == '"':
            return "".join(value), text[index + 1 :]
        if char == "\\" and index + 1 < len(text):
            index += 1  # A backslash takes the next character as it is.
            char = text[index]
        value.append(char)
        index += 1
    return "".join(value), ""  # No closing quote: the value runs to the end.


# --8<-- [end:parse_content_type]


# --8<-- [start:body_decoder]
class BodyDecoder:
    """Undo a body's content coding (gzip or deflate) as its bytes arrive.

    ``limit`` bounds the decoded bytes returned in all: a small compressed
    body that would expand to gigabytes (a "zip bomb") costs no more memory
    than ``limit`` and one network read, because zlib is asked for no more
    than what is left.  Without a coding, with ``identity`` or with a coding
    this class does not decode, bytes pass through as they came.  Once
    ``ended`` is true, bytes came after the end of the compressed data: the
    body is complete, and they are neither kept nor decoded.  ``decode``
    and ``finish`` raise BadResponse for data that is not in its coding.
    """

    def __init__(self, content_encoding: str | None, limit: int) -> None:
        coding = (content_encoding or "").strip().lower()
        self.coding = CODINGS.get(coding)  # None: passed through.
        self.limit = limit
        self.produced = 0  # Decoded bytes returned so far.
        self.ended = False  # Bytes came after the compressed data: the body is complete.
        self._zlib: zlib._Decompress | None = None  # Set while inside a stream.
        self._pending = b""  # Compressed bytes not yet given to zlib.
        self._streams = 0  # Compressed streams (gzip members) complete so far.

    def decode(self, data: bytes) -> bytes:
        """Return the decoded bytes that ``data`` adds, within the limit."""
        room = self.limit - self.produced
        if self.coding is None or room <= 0:
            out = data[: max(room, 0)]
            self.produced += len(out)
            return out
        if self.ended:
            return b""  # After the compressed data: not kept, not decoded.
        self._pending += data
        pieces = []
        while self._pending and not self.ended and self.produced < self.limit:
            if self._zlib is None and not self._start():
                break  # Too few bytes to tell what comes next yet.
            assert self._zlib is not None
            try:
                # max_length: never more than the limit allows (0 would mean no limit).
                piece = self._zlib.decompress(self._pending, self.limit - self.produced)
            except zlib.error as error:
                raise BadResponse(f"body is not valid {self.coding}: {error}") from None
            self.produced += len(piece)
            pieces.append(piece)
            self._pending = self._zlib.unconsumed_tail or self._zlib.unused_data
            if self._zlib.eof:
                self._zlib, self._streams = None, self._streams + 1
        return b"".join(pieces)

    def finish(self) -> bytes:
        """Note the end of the body; raises BadResponse if the compressed data stops early."""
        cut = self.produced >= self.limit
        if self.coding is not None and not cut and self._zlib is not None:
            raise BadResponse(f"{self.coding} body ends before its compressed data does")
        return b""

    def _start(self) -> bool:
        """Make the zlib decompressor for the next stream; False until the format is known.

        After a complete stream, only a gzip member may follow; anything
        else ends the body (``ended``), as browsers ignore it too.
        """
        if self._streams:  # The first bytes after a complete stream.
            if self.coding != "gzip" or not GZIP_MAGIC.startswith(self._pending[:2]):
                self.ended, self._pending = True, b""
                return False
            if len(self._pending) < 2:
                return False  # b"\x1f": the next member, or not?  The next read tells.
        if self.coding == "gzip":
            self._zlib = zlib.decompressobj(16 + zlib.MAX_WBITS)
        elif len(self._pending) < 2:
            return False
        else:
            # 'deflate' should be a zlib stream, but many servers send raw
            # deflate: a zlib header is two bytes whose value is a multiple of 31.
            first, second = self._pending[0], self._pending[1]
            wrapped = first & 0x0F == 8 and (first << 8 | second) % 31 == 0
            self._zlib = zlib.decompressobj(zlib.MAX_WBITS if wrapped else -zlib.MAX_WBITS)
        return True


# The codings decoded, by the names a Content-Encoding header uses for them.
CODINGS = {"gzip": "gzip", "x-gzip": "gzip", "deflate": "deflate"}
GZIP_MAGIC = b"\x1f\x8b"  # The first two bytes of every gzip member.


# --8<-- [end:body_decoder]


class ResponseParser:
    """Build one ``Response`` from the bytes of a server's answer.

    Feed it every piece the socket returns with ``feed_data`` and call
    ``feed_eof`` when the server closes the connection; once ``done`` is
    true, ``response()`` returns the result.  A body longer than
    ``max_size`` bytes ends the response early with ``truncated`` set.
    Both feed methods raise ``BadResponse`` for a malformed response.
    """

    def __init__(self, max_size: int) -> None:
        self.max_size = max_size
        self.done = False
        self._buffer = bytearray()  # Received bytes not yet parsed.
        # Where the search for the blank line that ends the head goes on:
        # bytes before it were searched already, and the blank line may
        # begin in the last three of them.
        self._searched = 0
        self._interim = 0  # Interim (1xx) responses skipped so far.
        self._status: int | None = None
        self._headers: dict[str, str] = {}
        self._body = bytearray()
        self._truncated = False
        self._length: int | None = None  # Content-Length, when given.
        self._received = 0  # Body bytes received as sent, before decoding.
        self._decoder = BodyDecoder(None, max_size + 1)
        self._chunked = False
        # Bytes left in the current chunk; -1: a size line comes next,
        # -2: the line break that ends a chunk's data comes next.
        self._chunk_left = -1

    # --8<-- [start:feed_data]
    def feed_data(self, data: bytes) -> None:
        """Parse the next piece of the response."""
        if self.done:
            return  # Whatever follows a complete response is not ours.
        self._buffer += data
        while self._status is None and self._parse_head():
            pass  # An interim response was skipped: another head follows.
        if self._status is not None and not self.done:
            self._parse_body()

    # --8<-- [end:feed_data]

    def feed_eof(self) -> None:
        """Note that the server closed the connection.

        Raises BadResponse when the response is not complete yet.
        """
        if self.done:
            return
        if self._status is None:
            raise BadResponse("connection closed before the end of the response head")
        if self._chunked or self._length is not None:
            expected = "" if self._chunked else f" of {self._length}"
            raise BadResponse(f"connection closed after {self._received}{expected} body bytes")
        self._end_body()  # Without a length, the body ends with the connection.

    def response(self) -> Response:
        """Return the parsed response; only valid once ``done`` is true."""
        assert self.done and self._status is not None, "response is not complete"
        return Response(self._status, self._headers, bytes(self._body), self._truncated)

    def _parse_head(self) -> bool:
        """Parse a head once its blank line has arrived; True if it was an interim one.

        Searches only the bytes that arrived since the last search (and the
        three before them), so a head sent a few bytes at a time costs no
        more than one sent at once.
        """
        end, separator = _find_blank_line(self._buffer, max(self._searched - 3, 0))
        self._searched = len(self._buffer)
        if end < 0 or end > MAX_HEAD_SIZE:
            if len(self._buffer) > MAX_HEAD_SIZE:
                raise BadResponse(f"response head longer than {MAX_HEAD_SIZE} bytes")
            return False
        head = bytes(self._buffer[:end]).replace(b"\r\n", b"\n")
        del self._buffer[: end + separator]
        self._searched = 0  # What is left has not been searched for the next head.
        status_line, line_break, header_lines = head.partition(b"\n")
        status = _parse_status_line(status_line)
        if head.count(b"\n") > MAX_HEADERS:
            raise BadResponse(f"more than {MAX_HEADERS} headers")
        headers = _parse_headers(header_lines) if line_break else {}
        # --8<-- [start:interim]
        if status == 101:
            # Only an answer to a request with an Upgrade header, which no stage sends;
            # what follows it would not be HTTP.
            raise BadResponse(UNASKED_UPGRADE)
        if 100 <= status < 200:  # An interim response; the real one follows.
            self._interim += 1
            if self._interim > MAX_INTERIM_RESPONSES:
                raise BadResponse(f"more than {MAX_INTERIM_RESPONSES} interim responses")
            return True
        # --8<-- [end:interim]
        self._status, self._headers = status, headers
        self._choose_framing(status, headers)
        return False

    def _choose_framing(self, status: int, headers: dict[str, str]) -> None:
        """Work out from the headers where the body will end."""
        transfer_coding = headers.get("transfer-encoding")
        if status in (204, 304):
            self.done = True  # These responses never have a body.
        elif transfer_coding is not None and "content-length" in headers:
            # Which one frames the body?  A classic trick of response splitting.
            raise BadResponse("both Transfer-Encoding and Content-Length")
        elif transfer_coding is not None:
            # Chunked only if it is the last coding; else the body ends at close.
            self._chunked = transfer_coding.lower().split(",")[-1].strip() == "chunked"
        elif "content-length" in headers:
            value = headers["content-length"].strip()
            # Not '²', a digit to isdigit; not thousands of digits, too long for int().
            digits = value.isascii() and value.isdigit() and len(value) <= MAX_LENGTH_DIGITS
            if not digits:
                raise BadResponse(f"bad Content-Length {value[:40]!r}")
            self._length = int(value)
        self._decoder = BodyDecoder(headers.get("content-encoding"), self.max_size + 1)

    def _parse_body(self) -> None:
        """Move received bytes into the body, as the framing allows."""
        if self._chunked:
            self._parse_chunks()
            return
        data = self._buffer
        if self._length is not None:
            data = data[: self._length - self._received]  # Bytes past the body are not ours.
        self._append(bytes(data))
        self._buffer.clear()
        if self._length is not None and self._received >= self._length and not self.done:
            self._end_body()

    def _parse_chunks(self) -> None:
        """Decode as many chunks of a chunked body as have arrived."""
        while not self.done:
            if self._chunk_left == -1:  # A line with the chunk's size in hex.
                line_end = self._buffer.find(b"\n")
                if line_end < 0:
                    if len(self._buffer) > 1024:
                        raise BadResponse("chunk size line too long")
                    return
                self._chunk_left = _parse_chunk_size(self._buffer[:line_end])
                del self._buffer[: line_end + 1]
                if self._chunk_left == 0:
                    self._end_body()  # The last chunk; trailers are ignored.
            elif self._chunk_left > 0:  # The chunk's data.
                piece = self._buffer[: self._chunk_left]
                del self._buffer[: len(piece)]
                self._chunk_left -= len(piece)
                self._append(piece)
                if self._chunk_left > 0:
                    return
                self._chunk_left = -2  # The line break after the data is next.
            else:
                if not _skip_line_break(self._buffer):
                    return
                self._chunk_left = -1

    def _append(self, data: bytes | bytearray) -> None:
        """Decode body bytes and add them, ending the response once it exceeds max_size."""
        self._received += len(data)
        self._keep(self._decoder.decode(bytes(data)))
        if self._decoder.ended and not self.done:
            # Bytes after the end of the compressed data: the body is complete,
            # and the rest (however much a server sends) is not read.
            self._end_body()

    def _end_body(self) -> None:
        """End the body where its framing says; raises BadResponse for cut-off compressed data."""
        self._keep(self._decoder.finish())
        self.done = True

    def _keep(self, decoded: bytes) -> None:
        """Add decoded bytes to the body; past max_size, cut it there and end the response."""
        self._body += decoded
        if len(self._body) > self.max_size:
            del self._body[self.max_size :]
            self._truncated = True
            self.done = True


def _find_blank_line(buffer: bytearray, start: int = 0) -> tuple[int, int]:
    """Return where the head ends and the length of the blank line (-1 if none).

    The search starts at ``start``.
    """
    crlf, lf = buffer.find(b"\r\n\r\n", start), buffer.find(b"\n\n", start)
    if lf >= 0 and (crlf < 0 or lf < crlf):
        return lf, 2  # A server that ends lines with a bare LF.
    return crlf, 4


def _parse_status_line(line: bytes) -> int:
    """Return the status code of a status line; raises BadResponse."""
    if len(line) > MAX_LINE_SIZE:
        raise BadResponse(f"status line longer than {MAX_LINE_SIZE} bytes")
    match = STATUS_LINE.match(line)
    if match is None:
        raise BadResponse(f"bad status line {line[:100]!r}")
    return int(match.group(1))


def _parse_headers(block: bytes) -> dict[str, str]:
    """Return the headers of the lines of ``block``, as ``_parse_header_lines`` does.

    Raises BadResponse as ``_parse_header_lines`` does.
    """
    # The usual head, short and well formed, is checked and split by two
    # regular expressions instead of line by line: it saves a third of
    # the instructions of a response head.  Anything else takes the line
    # by line way, which says what is wrong.
    text = block.decode("utf-8", "surrogateescape")
    if len(block) > MAX_LINE_SIZE or not HEADER_BLOCK.fullmatch(text):
        return _parse_header_lines(block.split(b"\n"))
    headers: dict[str, str] = {}
    for name, value in HEADER_LINES.findall(text):
        key = name.lower()
        if key not in headers:
            headers[key] = value.rstrip(" \t")
        elif key == "content-length":
            raise BadResponse("Content-Length sent twice")
    return headers


def _parse_header_lines(lines: list[bytes]) -> dict[str, str]:
    """Return the headers by lower-case name, keeping the first of duplicates.

    Raises BadResponse for a line that is not ``Name: value`` (a name that
    is not a token, a NUL or CR in the value), for a line over the size
    limit and for a second Content-Length, equal or not.
    """
    headers: dict[str, str] = {}
    for line in _unfold(lines):
        name, colon, value = line.partition(b":")
        value = value.lstrip(b" \t")
        if not colon or not TOKEN.fullmatch(name) or FORBIDDEN_IN_VALUE.search(value):
            raise BadResponse(f"bad header line {line[:100]!r}")
        if len(name) + len(value) > MAX_LINE_SIZE:
            raise BadResponse(f"header line longer than {MAX_LINE_SIZE} bytes")
        key = name.decode("ascii").lower()
        if key == "content-length" and key in headers:
            raise BadResponse("Content-Length sent twice")
        headers.setdefault(key, value.rstrip(b" \t").decode("utf-8", "surrogateescape"))
    return headers


def _unfold(lines: list[bytes]) -> list[bytes]:
    """Join each folded line (one starting with a space or tab) to the line before it.

    Folding a header over several lines is obsolete (RFC 9112, section 5.2),
    but a client may still accept it.  The line break goes and the spaces
    or tabs after it stay, as in aiohttp.  Raises BadResponse when the
    first header line is folded: it has nothing to continue.
    """
    unfolded: list[bytes] = []
    for line in lines:
        if line[:1] in (b" ", b"\t"):
            if not unfolded:
                raise BadResponse(f"bad header line {line[:100]!r}: folded, but first")
            unfolded[-1] += line
        else:
            unfolded.append(line)
    return unfolded


def _parse_chunk_size(line: bytes | bytearray) -> int:
    """Return the size announced by a chunk-size line; raises BadResponse."""
    text = bytes(line).split(b";")[0].strip()
    if not CHUNK_SIZE.fullmatch(text):
        raise BadResponse(f"bad chunk size {text[:20]!r}")
    return int(text, 16)


def _skip_line_break(buffer: bytearray) -> bool:
    """Remove the CRLF (or LF) that ends a chunk; False if it has not arrived."""
    if buffer[:2] == b"\r\n":
        del buffer[:2]
    elif buffer[:1] == b"\n":
        del buffer[:1]
    elif len(buffer) < 2 and bytes(buffer[:1]) in (b"", b"\r"):
        return False
    else:
        raise BadResponse("missing line break after a chunk")
    return True

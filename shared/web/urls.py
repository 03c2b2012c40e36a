"""URL normalization and the crawl policy: which URLs a crawl may fetch.

Every stage stores, queues, fetches and reports URLs in one normal form, so
that two spellings of the same address (``HTTP://Host:80`` and
``http://host/``) are one entry in ``seen_urls``.  This module is the only
place that decides what that form is and which hosts belong to a crawl.

The normal form is the one a browser requests: the WHATWG URL Standard's
parser and serializer, as implemented in C++ by ada (the ``ada_url``
package), with the fragment removed.  Python's ``urllib.parse`` follows
older RFCs and leaves many cases open (a backslash, a host in Unicode, a
space in the path), where the browser's algorithm settles each one.  In a
page (the docs' Run buttons, on Pyodide) ada cannot be loaded, and the
browser's own parser of the same standard does the work (``jsurl``).
"""

from __future__ import annotations

import functools
import ipaddress
import re
from collections.abc import Iterable

try:
    import ada_url as whatwg
except ImportError:  # In a page: the browser's parser (Pyodide cannot load ada's C++).
    from shared.web import jsurl as whatwg  # type: ignore[no-redef]

CRAWLABLE_SCHEMES = ("http", "https")
MAX_ORIGINS_KEPT = 10_000  # Answers UrlPolicy keeps, one per scheme and authority.


# --8<-- [start:normalize_url]
def normalize_url(url: str, base: str | None = None) -> str:
    """Return ``url``, resolved against ``base`` if given, in the crawler's normal form.

    The form is the WHATWG URL serialization without its fragment: scheme
    and host lower-cased (a Unicode host in its ASCII ``xn--`` form), the
    scheme's default port dropped, an empty path made ``/``, dot segments
    resolved, spaces and non-ASCII characters percent-encoded as UTF-8, and
    existing ``%XX`` kept as written, an empty query dropped.  Raises
    ValueError for what a browser
    could not parse either (a bad port, a broken host, a relative URL
    without a base).
    """
    href = whatwg.normalize_url(url) if base is None else whatwg.join_url(base, url)
    # A serialized URL writes every '#' of its path and query as %23, and
    # every '?' of its path as %3F: the first '#' left starts the fragment,
    # the first '?' the query.  An empty query (a lone '?') is one yarl
    # (stage 3) cannot send: the normal form drops it.  A query that only
    # ends with '?' is kept whole.
    before, mark, query = href.partition("#")[0].partition("?")
    return before + mark + query if query else before


# --8<-- [end:normalize_url]


# An absolute path whose every character stays as written in a normal URL:
# no '%', '\\', space or non-ASCII character to encode, no '//' that would
# start a host, no dot segment to resolve, no empty query to drop.
NORMAL_PATH = re.compile(r"/(?!/)[\w\-.~!$&()*+,;=:@/]*(?:\?[\w\-.~!$&()*+,;=:@/?]+)?", re.ASCII)


def quick_join(base: str, href: str) -> str | None:
    """Return ``normalize_url(href, base)`` for the commonest links, without the URL parser.

    Most links of a site are absolute paths already in normal form
    (``/pages/2/``, ``/search?q=1``) or fragments (``#top``).  Against an
    http or https base, the first resolve to the base's scheme and authority
    followed by the path, the second to the base itself: exactly what the
    WHATWG parser returns (a property test checks that), in a fraction of
    its time.  Returns None for every other link: it takes the URL parser.
    """
    normal_base, prefix = _base_and_prefix(base)
    if not normal_base:
        return None
    path = href.partition("#")[0]  # The fragment is dropped anyway.
    if not path:
        return normal_base
    if "/." in path or not NORMAL_PATH.fullmatch(path):
        return None
    return prefix + path


@functools.lru_cache(maxsize=64)  # A page's links share one base.
def _base_and_prefix(base: str) -> tuple[str, str]:
    """Return an http(s) base's normal form and its part before the path; else two ''."""
    try:
        normal = normalize_url(base)
    except ValueError:
        return "", ""
    scheme, separator, rest = normal.partition("://")
    if not separator or scheme not in CRAWLABLE_SCHEMES:
        return "", ""
    return normal, normal[: len(scheme) + 3 + rest.index("/")]  # A '/' follows the host.


def url_host(url: str) -> str | None:
    """Return the host of ``url`` as the crawler compares it, or None when it has none.

    That is the normalized host, without the brackets of an IPv6 literal.
    """
    try:
        normal = normalize_url(url)
    except ValueError:
        return None
    return _special_host(normal) or None


def before_path(url: str) -> str:
    """Return the part of a URL before its path: ``scheme://authority``.

    The whole URL comes back when it has no path, or no ``://``.  Cut with
    two finds, at a fraction of the instructions of parsing the URL: the
    crawl's per-host answers are kept by this part.
    """
    scheme_end = url.find("://")
    path_start = url.find("/", scheme_end + 3) if scheme_end >= 0 else -1
    return url if path_start < 0 else url[:path_start]


def _special_host(normal_url: str) -> str:
    """Return the host of a normalized ``scheme://host/...`` URL ('' if it has none)."""
    scheme, separator, rest = normal_url.partition("://")
    if not separator or "/" in scheme or ":" in scheme:
        return ""  # Not an authority-based URL, such as mailto:a@b.
    # In a serialized URL the authority ends at the first '/', and an '@'
    # inside the user name or password is written %40.
    authority = rest.partition("/")[0].rpartition("@")[2]
    if authority.startswith("["):
        return authority[1 : authority.find("]")]
    return authority.partition(":")[0]


def is_ip_literal(host: str) -> bool:
    """Tell whether ``host`` is an IPv4 or IPv6 address rather than a name."""
    if ":" not in host and not host[-1:].isdigit():
        return False  # The common case, told without raising an exception.
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


class PrivateAddress(Exception):
    """The URL's host is in the crawling machine's own network, where this crawl may not go.

    A refusal, not a network failure: a stage records it at once, without
    another try.
    """


def is_public_address(address: str) -> bool:
    """Tell whether an IP address is one the public internet routes to.

    Loopback (127.0.0.1, ::1), private (10/8, 192.168/16, fc00::/7...),
    link-local (169.254/16, where cloud machines keep their secrets) and the
    other special ranges are not.  An IPv6 form of an IPv4 address counts
    as that address.  Raises ValueError for what is not an address.
    """
    ip = ipaddress.ip_address(address.partition("%")[0])  # No IPv6 zone ('%eth0').
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped  # ::ffff:127.0.0.1 is 127.0.0.1.
    return ip.is_global


def lenient_host(host: str) -> str:
    """Return the last two labels of a host name: ``a.b.example.com`` -> ``example.com``."""
    return ".".join(host.split(".")[-2:])


class UrlPolicy:
    """Decide which URLs belong to a crawl started at ``roots``.

    A URL is allowed when its scheme is http or https, its host is one of the
    roots' hosts (see ``host_allowed``), and ``exclude`` does not match it.
    Raises ValueError when ``exclude`` is not a valid regular expression.
    """

    def __init__(
        self, roots: Iterable[str], *, exclude: str | None = None, strict: bool = True
    ) -> None:
        self.strict = strict
        try:
            self.exclude = re.compile(exclude) if exclude else None
        except re.error as error:
            raise ValueError(f"invalid exclude pattern {exclude!r}: {error}") from None
        self.root_hosts: set[str] = set()
        self.named_hosts: set[str] = set()  # The roots' hosts, exactly as given.
        for root in roots:
            host = url_host(root)
            if host is None:
                continue  # Like 'not-a-host': nothing to match against.
            self.named_hosts.add(host)
            if not is_ip_literal(host) and not strict:
                host = lenient_host(host)
            self.root_hosts.add(host)
        # A crawl of the machine's own network (the bundled site on 127.0.0.1)
        # may go anywhere in it.
        self.private_roots = any(
            host == "localhost" or (is_ip_literal(host) and not is_public_address(host))
            for host in self.named_hosts
        )
        # normal_url_allowed's answers, by the part of a URL before its path;
        # the last one, by that part and the '/' after it (no URL starts
        # with a NUL: nothing matches before the first answer).
        self.allowed_origins: dict[str, bool] = {}
        self.last_origin, self.last_allowed = "\x00", False

    def host_allowed(self, host: str) -> bool:
        """Tell whether ``host`` (normalized, see ``url_host``) is one of the roots' hosts."""
        host = host.lower()
        if host in self.root_hosts:
            return True
        if is_ip_literal(host):
            return False  # Addresses only ever match exactly.
        if self.strict:
            # Equal modulo one leading 'www.': example.com ~ www.example.com.
            other = host[4:] if host.startswith("www.") else "www." + host
            return other in self.root_hosts
        return lenient_host(host) in self.root_hosts

    # --8<-- [start:address_allowed]
    def allowed_addresses(self, host: str, addresses: list[str]) -> list[str]:
        """Return those of ``addresses``, found for ``host``, that the crawl may connect to.

        A public address is always allowed.  A loopback, private or
        link-local one only in a crawl with such a root (an address, or
        ``localhost``), or for a host a root names: a crawl of public sites
        follows no redirect, robots.txt or link into the crawling machine's
        own network, whether by address or by a name that resolves there.
        Raises PrivateAddress when none of ``addresses`` is allowed.
        """
        if self.private_roots or host.lower() in self.named_hosts:
            return addresses
        allowed = [address for address in addresses if is_public_address(address)]
        if addresses and not allowed:
            raise PrivateAddress(f"{host} is at {addresses[0]}, not a public address")
        return allowed

    # --8<-- [end:address_allowed]

    def url_allowed(self, url: str) -> bool:
        """Tell whether the crawl may fetch ``url``; never raises, does no I/O."""
        if self.exclude and self.exclude.search(url):
            return False
        try:
            normal = normalize_url(url)
        except ValueError:
            return False
        return self.normal_url_allowed(normal)

    def normal_url_allowed(self, normal_url: str) -> bool:
        """Tell whether the crawl may fetch ``normal_url``, already in normal form.

        The same answer as ``url_allowed`` without parsing the URL again: the
        link parser calls it for every link it finds.
        """
        if self.exclude and self.exclude.search(normal_url):
            return False
        # Past the exclude pattern, the answer depends only on the scheme
        # and authority, which most links of a crawl share: it is worked
        # out once for each (half the instructions per link).  A URL that
        # starts with the last one's and a '/' has the same: one startswith
        # instead of cutting the URL (a tenth of a link's instructions).
        if normal_url.startswith(self.last_origin):
            return self.last_allowed
        if "://" not in normal_url:
            return False  # Not an authority-based URL, such as mailto:a@b.
        origin = before_path(normal_url)
        allowed = self.allowed_origins.get(origin)
        if allowed is None:
            if len(self.allowed_origins) >= MAX_ORIGINS_KEPT:
                self.allowed_origins.clear()  # A crawl of the whole web stays bounded.
            allowed = self.allowed_origins[origin] = self.origin_allowed(origin)
        self.last_origin, self.last_allowed = origin + "/", allowed
        return allowed

    def origin_allowed(self, origin: str) -> bool:
        """Tell whether the crawl may fetch URLs of ``origin`` (``scheme://authority``)."""
        scheme = origin.partition(":")[0]
        if scheme not in CRAWLABLE_SCHEMES:
            return False
        host = _special_host(origin)
        return bool(host) and self.host_allowed(host)

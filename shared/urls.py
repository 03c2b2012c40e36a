"""URL normalization and the crawl policy: which URLs a crawl may fetch.

Every stage stores, queues, fetches and reports URLs in one normal form, so
that two spellings of the same address (``HTTP://Host:80`` and
``http://host/``) are one entry in ``seen_urls``.  This module is the only
place that decides what that form is and which hosts belong to a crawl.
"""

from __future__ import annotations

import ipaddress
import re
import urllib.parse
from collections.abc import Iterable

DEFAULT_PORTS = {"http": 80, "https": 443}
CRAWLABLE_SCHEMES = ("http", "https")


def normalize_url(url: str) -> str:
    """Return ``url`` in the crawler's normal form.

    Lower-cases the scheme and host, drops the scheme's default port, turns
    an empty path into ``/``, removes the fragment and keeps the query as it
    is.  Raises ValueError for a URL that cannot be parsed (a bad port, an
    unbalanced ``[`` in the host) or whose host parsers disagree on (a
    backslash in the authority: browsers end the host there, urllib does not).
    """
    parts = urllib.parse.urlsplit(url.strip())
    if "\\" in parts.netloc:
        raise ValueError(f"backslash in the authority of {url!r}")
    scheme = parts.scheme.lower()
    netloc = parts.netloc
    if netloc:
        netloc = _normalize_netloc(scheme, parts)
    path = parts.path or ("/" if netloc else "")
    if not netloc and path.startswith("//"):
        path = "//" + path  # Keep the empty authority, or the path would become one.
    return _quote_ends(urllib.parse.urlunsplit((scheme, netloc, path, parts.query, "")))


def _quote_ends(url: str) -> str:
    """Percent-encode whitespace at either end of ``url``.

    Spaces that ended a path before a dropped ``#`` or empty ``?`` end the
    URL; stripped by the next normalization, they would make it another URL.
    """
    lead = len(url) - len(url.lstrip())
    core = url[lead:].rstrip()
    tail = url[lead + len(core) :]
    if lead or tail:
        url = urllib.parse.quote(url[:lead]) + core + urllib.parse.quote(tail)
    return url


def _normalize_netloc(scheme: str, parts: urllib.parse.SplitResult) -> str:
    """Rebuild the authority with a lower-case host and no default port."""
    port = parts.port  # Raises ValueError for a port that is not a number.
    host = parts.hostname or ""
    if ":" in host:  # An IPv6 literal keeps its brackets.
        host = f"[{host}]"
    userinfo, _, _ = parts.netloc.rpartition("@")
    netloc = f"{userinfo}@{host}" if userinfo else host
    if port is not None and port != DEFAULT_PORTS.get(scheme):
        netloc = f"{netloc}:{port}"
    return netloc


def url_host(url: str) -> str | None:
    """Return the lower-case host of ``url``, or None when it has none."""
    try:
        return urllib.parse.urlsplit(url.strip()).hostname or None
    except ValueError:
        return None


def is_ip_literal(host: str) -> bool:
    """Tell whether ``host`` is an IPv4 or IPv6 address rather than a name."""
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


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
        for root in roots:
            host = url_host(root)
            if host is None:
                continue  # Like 'not-a-host': nothing to match against.
            if not is_ip_literal(host) and not strict:
                host = lenient_host(host)
            self.root_hosts.add(host)

    def host_allowed(self, host: str) -> bool:
        """Tell whether ``host`` is one of the roots' hosts."""
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

    def url_allowed(self, url: str) -> bool:
        """Tell whether the crawl may fetch ``url``; never raises, does no I/O."""
        if self.exclude and self.exclude.search(url):
            return False
        try:
            parts = urllib.parse.urlsplit(url)
            host = parts.hostname
            parts.port  # noqa: B018 - raises ValueError for a bad port
        except ValueError:
            return False
        if parts.scheme.lower() not in CRAWLABLE_SCHEMES or not host:
            return False
        return self.host_allowed(host)

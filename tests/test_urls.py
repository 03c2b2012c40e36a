"""Examples for shared.web.urls: the normal form of a URL and the crawl policy."""

from __future__ import annotations

import socket

import pytest

from shared.web.resolver import Resolver
from shared.web.urls import (
    PrivateAddress,
    UrlPolicy,
    is_ip_literal,
    is_public_address,
    lenient_host,
    normalize_url,
    url_host,
)

# --- normalize_url -------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "normal"),
    [
        ("HTTP://Example.COM/Path", "http://example.com/Path"),  # Path case is kept.
        ("http://example.com:80/", "http://example.com/"),
        ("https://example.com:443/", "https://example.com/"),
        ("http://example.com:8080/", "http://example.com:8080/"),
        ("http://127.0.0.1:8080", "http://127.0.0.1:8080/"),
        ("https://example.com:80/", "https://example.com:80/"),  # Not https's default.
        ("http://example.com:443/", "http://example.com:443/"),  # Not http's default.
        ("http://example.com", "http://example.com/"),
        ("http://example.com/a#frag", "http://example.com/a"),
        ("http://example.com/#", "http://example.com/"),
        ("http://example.com/a?b=2&a=1", "http://example.com/a?b=2&a=1"),
        ("http://example.com/?q=%2F+x%20y#f", "http://example.com/?q=%2F+x%20y"),
        ("http://example.com/?Q=UPPER", "http://example.com/?Q=UPPER"),
        ("http://example.com:/", "http://example.com/"),  # An empty port is no port.
        ("  http://example.com/  ", "http://example.com/"),
        # The browser's rules (WHATWG URL Standard), where urllib had none:
        ("http://example.com/a/./b/../c", "http://example.com/a/c"),
        ("http://example.com/%7e/%7E/~", "http://example.com/%7e/%7E/~"),  # %XX kept.
        ("http://example.com/a b?c d", "http://example.com/a%20b?c%20d"),
        ("http://example.com/caf\xe9?caf\xe9", "http://example.com/caf%C3%A9?caf%C3%A9"),
        ("http://caf\xe9.example/", "http://xn--caf-dma.example/"),  # IDN host to ASCII.
        ("http://EXAMPLE.com\\path\\x", "http://example.com/path/x"),  # '\\' is '/'.
        ("http://0x7f.1/", "http://127.0.0.1/"),  # An IPv4 address in any notation.
        ("http:example.com/x", "http://example.com/x"),
        ("http://example.com/a\tb\n", "http://example.com/ab"),  # Tabs, newlines dropped.
        ("http://example.com/a?", "http://example.com/a"),  # An empty query is dropped.
        ("http://example.com/a%3F?#x", "http://example.com/a%3F"),
        # A query that ends with '?' is not empty: it is kept whole.
        ("http://example.com/a??", "http://example.com/a??"),
        ("http://example.com/a?q=why?", "http://example.com/a?q=why?"),
        ("A:??", "a:??"),  # Found by the property test: 'a:?' once came back as 'a:'.
    ],
)
def test_normalize_url(url: str, normal: str) -> None:
    assert normalize_url(url) == normal


@pytest.mark.parametrize(
    ("url", "normal"),
    [
        ("http://[::1]/", "http://[::1]/"),
        ("http://[::1]:80/", "http://[::1]/"),
        ("http://[2001:DB8::1]:8080/p", "http://[2001:db8::1]:8080/p"),
        ("https://[2001:db8::1]", "https://[2001:db8::1]/"),
    ],
)
def test_normalize_url_keeps_brackets_of_ipv6_literals(url: str, normal: str) -> None:
    assert normalize_url(url) == normal


@pytest.mark.parametrize(
    ("url", "normal"),
    [
        ("http://User:Secret@Example.com:80/", "http://User:Secret@example.com/"),
        ("http://user@example.com:8080", "http://user@example.com:8080/"),
    ],
)
def test_normalize_url_keeps_userinfo_as_written(url: str, normal: str) -> None:
    assert normalize_url(url) == normal


@pytest.mark.parametrize(
    ("url", "normal"),
    [
        ("mailto:reader@example.com", "mailto:reader@example.com"),
        ("FTP://Example.com/pub", "ftp://example.com/pub"),
        # An empty authority before a path that starts with // (3.13 once doubled it).
        ("A:////[", "a:////["),
        ("x:////p?q#f", "x:////p?q"),
    ],
)
def test_normalize_url_without_an_http_host(url: str, normal: str) -> None:
    assert normalize_url(url) == normal


def test_normalize_url_is_idempotent_on_examples() -> None:
    for url in ["HTTP://A.com:80", "http://[::1]:8080", "http://u@H/x?y#z"]:
        once = normalize_url(url)
        assert normalize_url(once) == once


@pytest.mark.parametrize(
    "url",
    [
        "http://example.com:bad/",
        "http://example.com:99999/",
        "http://[oops/",
        "http://h:-1/",
        "not-a-host",  # Relative: nothing to resolve it against.
        "/relative/path",
        "http://a b/",
    ],
)
def test_normalize_url_rejects_a_bad_port_or_host(url: str) -> None:
    with pytest.raises(ValueError):
        normalize_url(url)


@pytest.mark.parametrize(
    ("href", "url"),
    [
        ("../b/./c#x", "http://example.com/b/c"),
        ("?q", "http://example.com/a/page?q"),
        ("//Other.example:80", "http://other.example/"),
        ("\\x", "http://example.com/x"),
    ],
)
def test_normalize_url_resolves_against_a_base(href: str, url: str) -> None:
    assert normalize_url(href, "http://example.com/a/page") == url


# --- Helpers ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "host"),
    [
        ("http://Example.COM:8080/x", "example.com"),
        ("http://[::1]/", "::1"),
        ("not-a-host", None),
        ("http:///path", "path"),  # A browser reads it as http://path/.
        ("http://", None),
        ("mailto:a@example.com", None),
        ("http://caf\xe9.fr/", "xn--caf-dma.fr"),
        ("http://[oops/", None),  # Unparseable: no host, and no exception.
    ],
)
def test_url_host(url: str, host: str | None) -> None:
    assert url_host(url) == host


@pytest.mark.parametrize(
    ("host", "literal"),
    [
        ("127.0.0.1", True),
        ("::1", True),
        ("2001:db8::1", True),
        ("example.com", False),
        ("localhost", False),
        ("256.0.0.1", False),
        ("", False),
    ],
)
def test_is_ip_literal(host: str, literal: bool) -> None:
    assert is_ip_literal(host) is literal


@pytest.mark.parametrize(
    ("host", "lenient"),
    [
        ("a.b.example.com", "example.com"),
        ("example.com", "example.com"),
        ("localhost", "localhost"),
    ],
)
def test_lenient_host(host: str, lenient: str) -> None:
    assert lenient_host(host) == lenient


# --- UrlPolicy ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "allowed"),
    [
        ("http://example.com/", True),
        ("https://example.com/secure", True),
        ("HTTP://EXAMPLE.COM/upper", True),
        ("http://example.com:8080/", True),  # Hosts match, ports do not matter.
        ("http://www.example.com/", True),
        ("http://sub.example.com/", False),
        ("http://www.sub.example.com/", False),
        ("http://example.org/", False),
        ("http://notexample.com/", False),
        ("ftp://example.com/", False),
        ("mailto:someone@example.com", False),
        ("javascript:void(0)", False),
        ("/relative", False),
        ("", False),
    ],
)
def test_strict_policy(url: str, allowed: bool) -> None:
    assert UrlPolicy(["http://example.com/"]).url_allowed(url) is allowed


def test_strict_policy_from_a_www_root_allows_the_bare_host() -> None:
    policy = UrlPolicy(["http://www.example.com/"])
    assert policy.url_allowed("http://example.com/")
    assert policy.url_allowed("http://www.example.com/")
    assert not policy.url_allowed("http://sub.example.com/")


@pytest.mark.parametrize(
    ("url", "allowed"),
    [
        ("http://example.com/", True),
        ("http://www.example.com/", True),
        ("http://deep.sub.example.com/", True),
        ("http://example.org/", False),
        ("http://example.com.evil.org/", False),
    ],
)
def test_lenient_policy_matches_the_last_two_labels(url: str, allowed: bool) -> None:
    policy = UrlPolicy(["http://a.b.example.com/"], strict=False)
    assert policy.root_hosts == {"example.com"}
    assert policy.url_allowed(url) is allowed


@pytest.mark.parametrize("strict", [True, False])
@pytest.mark.parametrize(
    ("url", "allowed"),
    [
        ("http://127.0.0.1/", True),
        ("http://127.0.0.1:9999/x", True),
        ("http://127.0.0.2/", False),
        ("http://0.0.1/", False),  # Not trimmed to its last two labels.
        ("http://1.0.0.1/", False),
        ("http://[::1]:8080/", True),
        ("http://[::2]/", False),
    ],
)
def test_ip_literal_roots_match_exactly(url: str, allowed: bool, strict: bool) -> None:
    policy = UrlPolicy(["http://127.0.0.1:8080/", "http://[::1]/"], strict=strict)
    assert policy.url_allowed(url) is allowed


@pytest.mark.parametrize("strict", [True, False])
def test_roots_without_a_host_add_no_root_host(strict: bool) -> None:
    policy = UrlPolicy(["not-a-host", "http://", "http://[oops/", ""], strict=strict)
    assert policy.root_hosts == set()
    assert not policy.url_allowed("http://not-a-host/")
    assert not policy.url_allowed("http://example.com/")


def test_roots_without_a_host_do_not_hide_the_others() -> None:
    policy = UrlPolicy(["not-a-host", "http://Example.com/"])
    assert policy.root_hosts == {"example.com"}
    assert policy.url_allowed("http://example.com/a")


def test_exclude_uses_search_anywhere_in_the_url() -> None:
    policy = UrlPolicy(["http://example.com/"], exclude=r"\.png|/private/")
    assert not policy.url_allowed("http://example.com/logo.png")
    assert not policy.url_allowed("http://example.com/logo.png?size=2")
    assert not policy.url_allowed("http://example.com/private/x")
    assert policy.url_allowed("http://example.com/public/x")


def test_empty_exclude_excludes_nothing() -> None:
    policy = UrlPolicy(["http://example.com/"], exclude="")
    assert policy.exclude is None
    assert policy.url_allowed("http://example.com/")


def test_invalid_exclude_is_a_value_error() -> None:
    with pytest.raises(ValueError, match=r"invalid exclude pattern '\('"):
        UrlPolicy(["http://example.com/"], exclude="(")


@pytest.mark.parametrize(
    "url",
    [
        "http://[oops/",
        "http://example.com:bad/",
        "http://example.com:99999/",
        "http://[::1",
        "http://ex ample.com/",
        "http://\udcff/",
        "\x00",
        "://",
        "http://" + "a" * 10_000 + "/",
    ],
)
@pytest.mark.parametrize("strict", [True, False])
def test_url_allowed_never_raises(url: str, strict: bool) -> None:
    policy = UrlPolicy(["http://example.com/"], exclude="nothing-matches", strict=strict)
    assert policy.url_allowed(url) is False


def test_host_allowed_is_case_insensitive() -> None:
    policy = UrlPolicy(["http://example.com/"])
    assert policy.host_allowed("WWW.Example.COM")
    assert not policy.host_allowed("other.com")


# --- Addresses of the crawling machine's own network -------------------------------


@pytest.mark.parametrize(
    ("address", "public"),
    [
        ("93.184.215.14", True),
        ("2606:2800:21f:cb07:6820:80da:af6b:8b2c", True),
        ("127.0.0.1", False),
        ("127.8.9.10", False),
        ("::1", False),
        ("10.1.2.3", False),
        ("172.16.0.1", False),
        ("192.168.1.1", False),
        ("169.254.169.254", False),  # Where a cloud machine's metadata and secrets are.
        ("fe80::1%eth0", False),
        ("fd00::1", False),
        ("0.0.0.0", False),  # Connecting to it reaches this machine.
        ("::ffff:127.0.0.1", False),
        ("::ffff:169.254.169.254", False),
    ],
)
def test_is_public_address(address: str, public: bool) -> None:
    assert is_public_address(address) is public


def test_a_crawl_of_public_roots_connects_to_no_private_address() -> None:
    policy = UrlPolicy(["http://example.com/", "https://93.184.215.14/"])
    assert not policy.private_roots
    assert policy.allowed_addresses("cdn.example.com", ["10.0.0.1", "1.1.1.1"]) == ["1.1.1.1"]
    with pytest.raises(PrivateAddress, match="evil.test is at 169.254.169.254, not a public"):
        policy.allowed_addresses("evil.test", ["169.254.169.254"])
    with pytest.raises(PrivateAddress):
        policy.allowed_addresses("127.0.0.1", ["127.0.0.1"])


def test_a_host_a_root_names_may_be_private() -> None:
    policy = UrlPolicy(["http://intranet.example/"])
    assert policy.allowed_addresses("intranet.example", ["10.0.0.5"]) == ["10.0.0.5"]
    with pytest.raises(PrivateAddress):
        policy.allowed_addresses("www.intranet.example", ["10.0.0.5"])


@pytest.mark.parametrize(
    "root", ["http://127.0.0.1:8080/", "http://[::1]/", "http://localhost/", "http://10.0.0.1/"]
)
def test_a_crawl_with_a_private_root_may_go_anywhere(root: str) -> None:
    policy = UrlPolicy(["http://example.com/", root])
    assert policy.private_roots
    assert policy.allowed_addresses("other.test", ["169.254.169.254"]) == ["169.254.169.254"]


def test_the_resolver_returns_only_the_addresses_its_policy_allows(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def getaddrinfo(host: object, port: int, **kwargs: object) -> list[tuple[object, ...]]:
        pairs = {b"mixed.test": ["127.0.0.1", "1.1.1.1"], b"inside.test": ["192.168.0.9"]}
        inet, stream = socket.AF_INET, socket.SOCK_STREAM
        return [(inet, stream, 6, "", (address, port)) for address in pairs[host]]  # type: ignore[index]

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    resolver = Resolver(UrlPolicy(["http://example.com/"]))
    assert [address[2] for address in resolver.resolve("mixed.test", 80)] == [("1.1.1.1", 80)]
    with pytest.raises(PrivateAddress):
        resolver.resolve("inside.test", 80)
    assert len(Resolver().resolve("inside.test", 80)) == 1  # No policy: every address.

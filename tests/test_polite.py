"""Examples for shared.crawl.polite: robots.txt rules, the robots.txt answers, the delays."""

from __future__ import annotations

import socket
import urllib.parse

import pytest

from shared.crawl.polite import (
    MAX_CRAWL_DELAY,
    MAX_ROBOTS_REDIRECTS,
    MAX_ROBOTS_SIZE,
    Politeness,
    RobotsFetch,
    RobotsRules,
    is_name_error,
    origin_of,
)
from shared.record.stats import RobotsDisallowed
from shared.web.http import USER_AGENT, Response

ROBOTS = b"""# A comment
User-agent: *
Disallow: /private/
Allow: /private/open/
Disallow: /*?print=
Disallow: /*.pdf$

User-agent: crawler-tutorial
Disallow: /not-for-tutorials/
Crawl-delay: 2.5

User-agent: other-bot
Disallow: /
"""


def answer(status: int, body: bytes = b"", **headers: str) -> Response:
    """Return a response as a stage hands it to RobotsFetch."""
    return Response(status, {name.lower(): value for name, value in headers.items()}, body)


# --- RobotsRules ------------------------------------------------------------------


def test_the_group_of_the_crawlers_own_token_applies() -> None:
    rules = RobotsRules.parse(ROBOTS)
    assert not rules.allowed("http://h/not-for-tutorials/x")
    assert rules.allowed("http://h/private/")  # The '*' group is not ours any more.
    assert rules.crawl_delay() == 2.5


def test_another_user_agent_gets_the_star_group() -> None:
    rules = RobotsRules.parse(ROBOTS, "SomeBrowser/1.0")
    assert not rules.allowed("http://h/private/a")
    assert rules.allowed("http://h/private/open/a")  # The longer Allow wins.
    assert not rules.allowed("http://h/pages/1/?print=1")  # A wildcard.
    assert not rules.allowed("http://h/paper.pdf")
    assert rules.allowed("http://h/paper.pdf?download")  # '$' anchors the end.
    assert rules.allowed("http://h/")
    assert rules.crawl_delay() == 0.0


def test_robots_txt_itself_is_always_allowed() -> None:
    rules = RobotsRules.parse(b"User-agent: *\nDisallow: /\n")
    assert not rules.allowed("http://h/")
    assert rules.allowed("http://h/robots.txt")


def test_only_the_first_500_kib_are_read_and_a_cut_line_is_dropped() -> None:
    head = b"User-agent: *\nDisallow: /early/\n"
    padding = b"# padding\n" * ((MAX_ROBOTS_SIZE - len(head)) // 10)
    cut_rule = b"Disallow: /cut-in-two/\n"
    body = head + padding + cut_rule + b"Disallow: /late/\n"
    assert len(head + padding) < MAX_ROBOTS_SIZE < len(head + padding + cut_rule)
    rules = RobotsRules.parse(body)
    assert not rules.allowed("http://h/early/")
    assert rules.allowed("http://h/late/")
    assert rules.allowed("http://h/cut-in-two/")
    assert rules.allowed("http://h/c")  # The cut rule is not read as 'Disallow: /c'.


@pytest.mark.parametrize(
    "body",
    [
        b"\x00\xff\xfe binary \x89PNG\r\n\x1a\n",
        b"<html><body>Not Found</body></html>",
        b"Disallow /nothing-before-a-user-agent\nUser-agent\n: :\n",
        b"User-agent: *\nCrawl-delay: soon\nCrawl-delay: nan\nCrawl-delay: -3\n",
        b"\xef\xbb\xbfUser-agent: *\nCrawl-delay: inf\n",
    ],
    ids=["binary", "html", "no-user-agent", "bad-delays", "bom-and-inf"],
)
def test_malformed_robots_txt_allows_everything_without_delay(body: bytes) -> None:
    rules = RobotsRules.parse(body)
    assert rules.allowed("http://h/anything")
    assert rules.crawl_delay() == 0.0


def test_a_byte_order_mark_does_not_hide_the_first_line() -> None:
    rules = RobotsRules.parse(b"\xef\xbb\xbfUser-agent: *\nDisallow: /x\n")
    assert not rules.allowed("http://h/x")


def test_a_huge_crawl_delay_is_capped() -> None:
    rules = RobotsRules.parse(b"User-agent: *\nCrawl-delay: 86400\n")
    assert rules.crawl_delay() == MAX_CRAWL_DELAY


def test_allow_all_and_disallow_all() -> None:
    assert RobotsRules.allow_all().allowed("http://h/x")
    rules = RobotsRules.disallow_all("robots.txt answered 503")
    assert not rules.allowed("http://h/x")
    assert rules.refusal == "robots.txt answered 503"


# --- RobotsFetch ------------------------------------------------------------------


def test_robots_fetch_asks_the_origin() -> None:
    assert RobotsFetch("http://h:8080").url == "http://h:8080/robots.txt"


@pytest.mark.parametrize("status", [200, 203])
def test_a_2xx_answer_is_parsed(status: int) -> None:
    robots = RobotsFetch("http://h")
    robots.received(answer(status, ROBOTS))
    assert robots.rules is not None
    assert not robots.rules.allowed("http://h/not-for-tutorials/")


@pytest.mark.parametrize("status", [400, 401, 403, 404, 410, 451, 300, 304, 204])
def test_a_4xx_answer_or_one_without_rules_allows_everything(status: int) -> None:
    robots = RobotsFetch("http://h")
    robots.received(answer(status, b"User-agent: *\nDisallow: /\n" if status != 204 else b""))
    assert robots.rules is not None and robots.rules.allowed("http://h/x")


@pytest.mark.parametrize("status", [500, 502, 503, 599, 429])
def test_a_5xx_or_429_answer_disallows_everything(status: int) -> None:
    robots = RobotsFetch("http://h")
    robots.received(answer(status, b"User-agent: *\nAllow: /\n"))
    assert robots.rules is not None and not robots.rules.allowed("http://h/x")
    assert robots.rules.refusal == f"robots.txt answered {status}"


def test_an_unreachable_robots_txt_disallows_everything() -> None:
    robots = RobotsFetch("http://h")
    robots.failed(ConnectionRefusedError("refused"))
    assert robots.rules is not None and not robots.rules.allowed("http://h/")
    assert robots.rules.refusal == "robots.txt unreachable (ConnectionRefusedError: refused)"


def test_a_robots_txt_whose_host_does_not_resolve_keeps_the_lookup_error() -> None:
    robots = RobotsFetch("http://h")
    error = socket.gaierror(socket.EAI_NONAME, "Name or service not known")
    robots.failed(error)
    assert robots.rules is not None and robots.rules.name_error is error
    refused = RobotsFetch("http://h")
    refused.failed(ConnectionRefusedError("refused"))
    assert refused.rules is not None and refused.rules.name_error is None


def test_a_lookup_error_is_found_among_the_causes() -> None:
    lookup = socket.gaierror(socket.EAI_NONAME, "no such name")
    try:
        raise OSError("cannot connect") from lookup  # As aiohttp wraps it.
    except OSError as wrapped:
        assert is_name_error(wrapped)
    assert not is_name_error(ConnectionRefusedError("refused"))
    assert not is_name_error(TimeoutError())
    assert not is_name_error(None)


def test_redirects_are_followed_to_the_rules() -> None:
    robots = RobotsFetch("http://h")
    robots.received(answer(301, location="/real-robots.txt"))
    assert (robots.rules, robots.url) == (None, "http://h/real-robots.txt")
    robots.received(answer(302, location="HTTPS://Other.Example/robots.txt"))
    assert (robots.rules, robots.url) == (None, "https://other.example/robots.txt")
    robots.received(answer(200, b"User-agent: *\nDisallow: /private/\n"))
    assert robots.rules is not None and not robots.rules.allowed("http://h/private/")


def test_past_five_redirects_there_are_no_rules() -> None:
    robots = RobotsFetch("http://h")
    for hop in range(MAX_ROBOTS_REDIRECTS):
        robots.received(answer(302, location=f"/robots-{hop}.txt"))
        assert robots.rules is None
    robots.received(answer(302, location="/robots-again.txt"))
    assert robots.rules is not None and robots.rules.allowed("http://h/x")
    assert robots.url == f"http://h/robots-{MAX_ROBOTS_REDIRECTS - 1}.txt"


@pytest.mark.parametrize("location", ["ftp://h/robots.txt", "http://[oops/", "mailto:x@h"])
def test_a_redirect_to_nowhere_fetchable_means_no_rules(location: str) -> None:
    robots = RobotsFetch("http://h")
    robots.received(answer(301, location=location))
    assert robots.rules is not None and robots.rules.allowed("http://h/x")


# --- Politeness -------------------------------------------------------------------


def test_origin_is_scheme_host_and_port() -> None:
    assert origin_of("http://h:8080/a/b?q") == "http://h:8080"
    assert origin_of("https://user:pw@h/") == "https://h"


@pytest.mark.parametrize(
    "url",
    [
        "http://h/", "https://[::1]:8443/a?b#c", "http://u:p@h:81/x", "http://h",
        "http://h?q=/x", "http://h#/x", "HTTP://H/", "http://h\t/x", "ftp://h/x", "h/x",
    ],
)  # fmt: skip
def test_origin_is_what_the_general_parser_reads(url: str) -> None:
    parts = urllib.parse.urlsplit(url)
    assert origin_of(url) == f"{parts.scheme}://{parts.netloc.rpartition('@')[2]}"


def test_hosts_are_told_apart_by_port_and_scheme() -> None:
    polite = Politeness(obey_robots=True)
    hosts = {polite.host(url).origin for url in ["http://h/", "http://h:81/", "https://h/x"]}
    assert hosts == {"http://h", "http://h:81", "https://h"}
    assert polite.host("http://h/other") is polite.host("http://h/")


def test_robots_rules_are_unknown_until_fetched_unless_ignored() -> None:
    assert Politeness(obey_robots=True).host("http://h/").rules is None
    ignoring = Politeness(obey_robots=False)
    assert ignoring.refusal("http://h/private/") is None


def test_refusal_says_why() -> None:
    polite = Politeness(obey_robots=True)
    polite.host("http://h/").rules = RobotsRules.parse(b"User-agent: *\nDisallow: /p\n")
    refusal = polite.refusal("http://h/p")
    assert isinstance(refusal, RobotsDisallowed)
    assert str(refusal) == "disallowed by robots.txt"
    assert polite.refusal("http://h/q") is None


def test_requests_to_one_host_wait_for_the_delay() -> None:
    polite = Politeness(delay=0.5)
    assert polite.wait_before("http://h/a", now=10.0) == 0.0  # Started at 10.0.
    assert polite.wait_before("http://h/b", now=10.2) == pytest.approx(0.3)
    assert polite.wait_before("http://other/", now=10.2) == 0.0  # Hosts do not wait.
    assert polite.wait_before("http://h/b", now=10.5) == 0.0  # Started at 10.5.
    assert polite.wait_before("http://h/c", now=10.5) == 0.5  # Counted from 10.5.
    assert polite.host("http://h/").requests == 2


def test_crawl_delay_counts_when_longer_than_the_delay() -> None:
    polite = Politeness(obey_robots=True, delay=0.5)
    assert polite.wait_before("http://h/robots.txt", now=0.0) == 0.0
    polite.host("http://h/").rules = RobotsRules.parse(b"User-agent: *\nCrawl-delay: 3\n")
    assert polite.wait_before("http://h/a", now=1.0) == 2.0  # Three seconds after robots.txt.
    slower = Politeness(obey_robots=True, delay=5)
    slower.host("http://h/").rules = RobotsRules.parse(b"User-agent: *\nCrawl-delay: 3\n")
    assert slower.delay_of(slower.host("http://h/")) == 5.0


def test_without_a_delay_every_request_may_start_at_once() -> None:
    polite = Politeness()
    assert [polite.wait_before("http://h/", now=1.0) for _ in range(3)] == [0.0, 0.0, 0.0]


def test_default_user_agent_names_the_project() -> None:
    assert Politeness().user_agent == USER_AGENT
    assert USER_AGENT.startswith("crawler-tutorial/")


def test_robots_read_for_sitemaps_but_not_obeyed() -> None:
    polite = Politeness(read_robots=True, delay=0.5)
    url = "http://a.test/private/x"
    assert polite.host(url).rules is None  # To be fetched, for its Sitemap: lines.
    polite.host(url).rules = RobotsRules.parse(b"User-agent: *\nDisallow: /\nCrawl-delay: 9\n")
    assert polite.refusal(url) is None
    assert polite.delay_of(polite.host(url)) == 0.5  # The Crawl-delay is not obeyed either.

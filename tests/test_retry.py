"""Tests of shared.web.retry: reading Retry-After and deciding on a 429 or 503."""

from __future__ import annotations

import email.utils
import math

import pytest

from shared.crawl.polite import Politeness
from shared.web.http import Response
from shared.web.retry import BACKOFF_BASE, RetryAfterTooLong, backoff, retry_after_seconds

NOW = 1_700_000_000.0  # A wall-clock time to read dates against.


def busy(status: int = 503, value: str | None = None) -> Response:
    """Return a busy answer, with a Retry-After of ``value`` if given."""
    headers = {} if value is None else {"retry-after": value}
    return Response(status, headers, b"")


@pytest.mark.parametrize(
    ("value", "seconds"),
    [("0", 0.0), ("120", 120.0), (" 7 ", 7.0), ("0003", 3.0), ("9" * 13, math.inf)],
)
def test_delay_seconds(value: str, seconds: float) -> None:
    assert retry_after_seconds(value, NOW) == seconds


def test_huge_number_is_forever_not_an_error() -> None:
    # int() refuses more than 4300 digits; the parser never gets that far.
    assert retry_after_seconds("1" * 10_000, NOW) == math.inf


@pytest.mark.parametrize(
    "value",
    [
        email.utils.formatdate(NOW + 30, usegmt=True),  # IMF-fixdate.
        email.utils.format_datetime(
            email.utils.parsedate_to_datetime(email.utils.formatdate(NOW + 30, usegmt=True))
        ),
    ],
)
def test_http_date_is_read_against_now(value: str) -> None:
    assert retry_after_seconds(value, NOW) == 30.0


def test_the_obsolete_date_forms_are_read() -> None:
    rfc850, asctime = "Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994"
    when = email.utils.parsedate_to_datetime("Sun, 06 Nov 1994 08:49:37 GMT").timestamp()
    assert retry_after_seconds(rfc850, when - 5) == 5.0
    assert retry_after_seconds(asctime, when - 5) == 5.0  # No zone: GMT.


def test_date_in_the_past_is_no_wait() -> None:
    assert retry_after_seconds(email.utils.formatdate(NOW - 60, usegmt=True), NOW) == 0.0


@pytest.mark.parametrize("value", ["-5", "1.5", "soon", "", "１２", "Mon, 99 Foo 2020 99:99 GMT"])
def test_unreadable_values_raise_value_error(value: str) -> None:
    with pytest.raises(ValueError, match="Retry-After is neither seconds nor a date"):
        retry_after_seconds(value, NOW)


def test_backoff_is_none_for_other_statuses() -> None:
    for status in (200, 404, 500, 502):
        assert backoff(busy(status, "1"), 0, 4, 120.0, NOW) is None


def test_retry_after_is_waited_for() -> None:
    decision = backoff(busy(429, "3"), 0, 4, 120.0, NOW)
    assert decision is not None
    assert (decision.seconds, decision.kind, decision.problem) == (3.0, "retry_after", None)


def test_retry_after_over_the_cap_keeps_the_answer_with_a_reason() -> None:
    decision = backoff(busy(503, "121"), 0, 4, 120.0, NOW)
    assert decision is not None and decision.seconds is None
    assert isinstance(decision.problem, RetryAfterTooLong)
    assert str(decision.problem) == "503 with Retry-After 121 s, over max_retry_after=120"
    forever = backoff(busy(503, "9" * 40), 0, 4, 120.0, NOW)
    assert forever is not None and "Retry-After forever" in str(forever.problem)


def test_the_last_try_keeps_the_answer_without_a_problem() -> None:
    decision = backoff(busy(503, "1"), 3, 4, 120.0, NOW)
    assert decision is not None and (decision.seconds, decision.problem) == (None, None)


def test_backoff_doubles_with_jitter_and_stops_at_the_cap() -> None:
    for attempt in range(4):
        decision = backoff(busy(503), attempt, 10, 120.0, NOW)
        assert decision is not None and decision.kind == "backoff"
        longest = BACKOFF_BASE * 2**attempt
        assert decision.seconds is not None and longest / 2 <= decision.seconds <= longest
    capped = backoff(busy(503), 50, 100, 2.0, NOW)
    assert capped is not None and capped.seconds is not None and 1.0 <= capped.seconds <= 2.0


def test_unreadable_retry_after_backs_off() -> None:
    decision = backoff(busy(429, "garbage"), 0, 4, 120.0, NOW)
    assert decision is not None and decision.kind == "bad_retry_after"
    assert decision.seconds is not None and decision.seconds <= BACKOFF_BASE


def test_hold_keeps_the_whole_host_back() -> None:
    polite = Politeness()
    assert polite.wait_before("http://a.test/1", 10.0) == 0.0
    polite.hold("http://a.test/1", 15.0)
    assert polite.wait_before("http://a.test/2", 11.0) == 4.0  # Another URL, same host.
    assert polite.wait_before("http://b.test/", 11.0) == 0.0  # Another host.
    polite.hold("http://a.test/1", 12.0)  # A shorter hold does not shorten it.
    assert polite.wait_before("http://a.test/3", 15.0) == 0.0

"""Examples for shared.record.stats: the FetchStatistic record and its helpers."""

from __future__ import annotations

import shared
from shared.record.stats import FetchStatistic, ResponseTooLarge, failure, redirect


def test_fetch_statistic_fields_in_the_contract_order() -> None:
    assert FetchStatistic._fields == (
        "url",
        "next_url",
        "status",
        "exception",
        "size",
        "content_type",
        "encoding",
        "num_urls",
        "num_new_urls",
        "etag",
        "last_modified",
    )


def test_fetch_statistic_is_a_tuple_built_by_position() -> None:
    stat = FetchStatistic("http://h/", None, 200, None, 10, "text/html", "utf-8", 3, 2)
    assert tuple(stat)[:9] == ("http://h/", None, 200, None, 10, "text/html", "utf-8", 3, 2)
    assert (stat.etag, stat.last_modified) == (None, None)  # The recrawl's two, at the end.
    assert (stat.size, stat.num_urls, stat.num_new_urls) == (10, 3, 2)
    assert stat[:3] == ("http://h/", None, 200)


def test_shared_package_exports() -> None:
    assert shared.FetchStatistic is FetchStatistic
    assert shared.ResponseTooLarge is ResponseTooLarge
    assert issubclass(ResponseTooLarge, Exception)


def test_failure() -> None:
    error = ConnectionResetError("reset")
    assert failure("http://h/", error) == FetchStatistic(
        "http://h/", None, None, error, 0, None, None, 0, 0
    )


def test_redirect() -> None:
    assert redirect("http://h/a", "http://h/b", 301) == FetchStatistic(
        "http://h/a", "http://h/b", 301, None, 0, None, None, 0, 0
    )

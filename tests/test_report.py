"""Examples for shared.record.report: the text report and the JSON Lines output."""

from __future__ import annotations

import collections
import io
import json
import logging
import re
import sys
import time
import types

import pytest

from shared.record.report import (
    PrintableFormatter,
    StreamedRecords,
    report,
    stat_to_json,
    url_report,
    write_jsonl,
)
from shared.record.stats import (
    CrawlLimitReached,
    FetchStatistic,
    ResponseTooLarge,
    RobotsDisallowed,
    failure,
    skipped,
)

ROOT = "http://h/"

DONE = [
    FetchStatistic(
        url="http://h/z",
        next_url=None,
        status=200,
        exception=None,
        size=500,
        content_type="text/html",
        encoding="utf-8",
        num_urls=4,
        num_new_urls=3,
    ),
    FetchStatistic(
        url="http://h/",
        next_url=None,
        status=200,
        exception=None,
        size=1000,
        content_type="text/html",
        encoding="utf-8",
        num_urls=10,
        num_new_urls=7,
    ),
    FetchStatistic(
        url="http://h/moved",
        next_url="http://h/z",
        status=301,
        exception=None,
        size=0,
        content_type=None,
        encoding=None,
        num_urls=0,
        num_new_urls=0,
    ),
    FetchStatistic(
        url="http://h/logo.png",
        next_url=None,
        status=200,
        exception=None,
        size=70,
        content_type="image/png",
        encoding="utf-8",
        num_urls=0,
        num_new_urls=0,
    ),
    FetchStatistic(
        url="http://h/missing",
        next_url=None,
        status=404,
        exception=None,
        size=14,
        content_type="text/plain",
        encoding="utf-8",
        num_urls=0,
        num_new_urls=0,
    ),
    FetchStatistic(
        url="http://h/gone",
        next_url=None,
        status=404,
        exception=None,
        size=6,
        content_type="text/html",
        encoding="utf-8",
        num_urls=0,
        num_new_urls=0,
    ),
    FetchStatistic(
        url="http://h/boom",
        next_url=None,
        status=500,
        exception=None,
        size=22,
        content_type="text/plain",
        encoding="utf-8",
        num_urls=0,
        num_new_urls=0,
    ),
    FetchStatistic(
        url="http://h/refused",
        next_url=None,
        status=None,
        exception=ConnectionRefusedError("refused"),
        size=0,
        content_type=None,
        encoding=None,
        num_urls=0,
        num_new_urls=0,
    ),
    FetchStatistic(
        url="http://h/big",
        next_url=None,
        status=200,
        exception=ResponseTooLarge("cut at 100"),
        size=100,
        content_type="text/html",
        encoding="utf-8",
        num_urls=0,
        num_new_urls=0,
    ),
    FetchStatistic(
        url="http://h/x.xhtml",
        next_url=None,
        status=200,
        exception=None,
        size=30,
        content_type="application/xhtml+xml",
        encoding="utf-8",
        num_urls=1,
        num_new_urls=0,
    ),
]


def fake_crawler(
    done: list[FetchStatistic] = DONE,
    seen: set[str] | None = None,
    t0: float = 100.0,
    t1: float | None = 104.0,
    max_tasks: int = 5,
) -> types.SimpleNamespace:
    """Return an object with just the attributes the report reads."""
    seen = {stat.url for stat in done} if seen is None else seen
    return types.SimpleNamespace(done=list(done), seen_urls=seen, t0=t0, t1=t1, max_tasks=max_tasks)


def report_text(crawler: object) -> str:
    """Return the text report of ``crawler``."""
    file = io.StringIO()
    report(crawler, file)  # type: ignore[arg-type]
    return file.getvalue()


def test_report_layout() -> None:
    lines = report_text(fake_crawler()).splitlines()
    assert lines[0] == "*** Report ***"
    assert lines[1:11] == [
        "http://h/ 200 text/html utf-8 1000 7/10",
        "http://h/big error cut at 100",
        "http://h/boom 500 text/plain utf-8 22",
        "http://h/gone 404 text/html utf-8 6",
        "http://h/logo.png 200 image/png utf-8 70",
        "http://h/missing 404 text/plain utf-8 14",
        "http://h/moved 301 redirect http://h/z",
        "http://h/refused error refused",
        "http://h/x.xhtml 200 application/xhtml+xml utf-8 30",
        "http://h/z 200 text/html utf-8 500 3/4",
    ]
    assert lines[11] == "Finished 10 urls in 4.000 secs (max_tasks=5) (0.500 urls/sec/task)"
    assert lines[12:-3] == [
        "         3 error",
        "        42 error_bytes",
        "         2 fail",
        "         1 fail_ConnectionRefusedError",
        "         1 fail_ResponseTooLarge",
        "         2 html",
        "      1500 html_bytes",
        "         2 other",
        "       100 other_bytes",
        "         1 redirect",
        "         2 status_404",  # One counter per distinct status.
        "         1 status_500",
    ]
    assert lines[-3:-1] == ["Todo: 0", "Done: 10"]
    assert re.fullmatch(r"Date: .+ local time", lines[-1])


def test_report_lines_are_sorted_by_url_not_completion_order() -> None:
    done = [DONE[0], DONE[1], DONE[2]]  # Completed z, /, moved.
    lines = report_text(fake_crawler(done)).splitlines()
    assert [line.split()[0] for line in lines[1:4]] == ["http://h/", "http://h/moved", "http://h/z"]


def test_report_todo_counts_seen_urls_not_done_yet() -> None:
    seen = {stat.url for stat in DONE} | {"http://h/queued", "http://h/in-flight"}
    text = report_text(fake_crawler(seen=seen))
    assert "\nTodo: 2\nDone: 10\n" in text


@pytest.mark.parametrize(
    ("done", "t0", "t1", "max_tasks", "line"),
    [
        (
            DONE[:3],
            10.0,
            13.0,
            1,
            "Finished 3 urls in 3.000 secs (max_tasks=1) (1.000 urls/sec/task)",
        ),
        (
            DONE[:2],
            10.0,
            10.5,
            8,
            "Finished 2 urls in 0.500 secs (max_tasks=8) (0.500 urls/sec/task)",
        ),
        ([], 10.0, 12.0, 10, "Finished 0 urls in 2.000 secs (max_tasks=10) (0.000 urls/sec/task)"),
        (
            DONE[:1],
            10.0,
            10.0,
            3,
            "Finished 1 urls in 0.000 secs (max_tasks=3) (0.000 urls/sec/task)",
        ),
    ],
)
def test_finished_line(
    done: list[FetchStatistic], t0: float, t1: float, max_tasks: int, line: str
) -> None:
    text = report_text(fake_crawler(done, t0=t0, t1=t1, max_tasks=max_tasks))
    assert line in text.splitlines()


def test_report_in_the_middle_of_a_crawl_uses_the_time_so_far() -> None:
    crawler = fake_crawler(DONE[:2], seen={"http://h/", "http://h/z", "http://h/q"})
    crawler.t0, crawler.t1 = time.time() - 1000.0, None
    text = report_text(crawler)
    match = re.search(r"^Finished 2 urls in ([\d.]+) secs \(max_tasks=5\)", text, re.M)
    assert match and 1000.0 <= float(match.group(1)) < 100_000.0
    assert "\nTodo: 1\nDone: 2\n" in text


def test_empty_report() -> None:
    lines = report_text(fake_crawler([], seen=set())).splitlines()
    assert lines[:2] == [
        "*** Report ***",
        "Finished 0 urls in 4.000 secs (max_tasks=5) (0.000 urls/sec/task)",
    ]
    assert lines[2:4] == ["Todo: 0", "Done: 0"]


def test_report_prints_to_stdout_by_default(capsys: pytest.CaptureFixture[str]) -> None:
    report(fake_crawler(DONE[:1]))  # type: ignore[arg-type]
    assert "http://h/z 200 text/html utf-8 500 3/4" in capsys.readouterr().out


def test_url_report_counts() -> None:
    counts: collections.Counter[str] = collections.Counter()
    assert url_report(DONE[2], counts) == "http://h/moved 301 redirect http://h/z"
    assert url_report(DONE[7], counts) == "http://h/refused error refused"
    assert url_report(DONE[4], counts) == "http://h/missing 404 text/plain utf-8 14"
    assert counts == {
        "redirect": 1,
        "fail": 1,
        "fail_ConnectionRefusedError": 1,
        "error": 1,
        "error_bytes": 14,
        "status_404": 1,
    }


# --- JSON Lines --------------------------------------------------------------------


def test_write_jsonl_one_object_per_url_in_completion_order() -> None:
    file = io.StringIO()
    write_jsonl(fake_crawler(), file)  # type: ignore[arg-type]
    lines = file.getvalue().splitlines()
    assert len(lines) == len(DONE)
    records = [json.loads(line) for line in lines]
    assert [record["url"] for record in records] == [stat.url for stat in DONE]
    for record in records:
        assert list(record) == [*FetchStatistic._fields, "skipped", "links"]


def test_write_jsonl_values() -> None:
    file = io.StringIO()
    write_jsonl(fake_crawler([DONE[1], DONE[2], DONE[7], DONE[8]]), file)  # type: ignore[arg-type]
    records = [json.loads(line) for line in file.getvalue().splitlines()]
    assert records[0] == {
        "url": "http://h/",
        "next_url": None,
        "status": 200,
        "exception": None,
        "size": 1000,
        "content_type": "text/html",
        "encoding": "utf-8",
        "num_urls": 10,
        "num_new_urls": 7,
        "etag": None,
        "last_modified": None,
        "skipped": False,
        "links": [],
    }
    assert (records[1]["next_url"], records[1]["status"]) == ("http://h/z", 301)
    assert records[2]["exception"] == "ConnectionRefusedError: refused"
    assert records[2]["status"] is None
    assert records[3]["exception"] == "ResponseTooLarge: cut at 100"
    assert (records[3]["status"], records[3]["size"]) == (200, 100)


def test_write_jsonl_keeps_non_ascii_urls() -> None:
    stat = FetchStatistic(
        url="http://h/caf\xe9/",
        next_url=None,
        status=200,
        exception=None,
        size=1,
        content_type="text/html",
        encoding="utf-8",
        num_urls=0,
        num_new_urls=0,
    )
    file = io.StringIO()
    write_jsonl(fake_crawler([stat]), file)  # type: ignore[arg-type]
    assert "http://h/caf\xe9/" in file.getvalue()
    assert json.loads(file.getvalue())["url"] == "http://h/caf\xe9/"


def test_write_jsonl_of_nothing_writes_nothing() -> None:
    file = io.StringIO()
    write_jsonl(fake_crawler([]), file)  # type: ignore[arg-type]
    assert file.getvalue() == ""


def test_stat_to_json_does_not_change_the_statistic() -> None:
    error = ValueError("bad root")
    stat = FetchStatistic(
        url="x",
        next_url=None,
        status=None,
        exception=error,
        size=0,
        content_type=None,
        encoding=None,
        num_urls=0,
        num_new_urls=0,
    )
    assert stat_to_json(stat)["exception"] == "ValueError: bad root"
    assert stat.exception is error


# --- Skipped URLs ------------------------------------------------------------------


def test_a_skipped_url_is_reported_apart_from_failures() -> None:
    stats = [
        skipped("http://h/private/", RobotsDisallowed("disallowed by robots.txt")),
        skipped("http://h/far/", CrawlLimitReached("max_pages=1 reached")),
        failure("http://h/down", ConnectionRefusedError("refused")),
    ]
    file = io.StringIO()
    report(fake_crawler(stats), file)  # type: ignore[arg-type]
    text = file.getvalue()
    assert "http://h/private/ skipped disallowed by robots.txt\n" in text
    assert "http://h/far/ skipped max_pages=1 reached\n" in text
    counters = {key: n for n, key in re.findall(r"^ +(\d+) (\S+)$", text, re.M)}
    assert counters["skipped"] == "2" and counters["fail"] == "1"
    assert counters["skipped_RobotsDisallowed"] == counters["skipped_CrawlLimitReached"] == "1"


def test_a_skipped_url_is_marked_in_json_lines() -> None:
    stat = skipped("http://h/private/", RobotsDisallowed("disallowed by robots.txt"))
    record = stat_to_json(stat)
    assert record["skipped"] is True and record["status"] is None
    assert record["exception"] == "RobotsDisallowed: disallowed by robots.txt"
    assert stat_to_json(failure("http://h/", OSError("x")))["skipped"] is False


def test_write_jsonl_keeps_each_page_s_links_sorted_for_a_recrawl() -> None:
    crawler = fake_crawler([DONE[1]])
    crawler.page_links = {"http://h/": ("http://h/z", "http://h/a")}
    file = io.StringIO()
    write_jsonl(crawler, file)  # type: ignore[arg-type]
    assert json.loads(file.getvalue())["links"] == ["http://h/a", "http://h/z"]


def test_a_304_is_reported_as_not_modified() -> None:
    stat = FetchStatistic(
        url="http://h/",
        next_url=None,
        status=304,
        exception=None,
        size=0,
        content_type="text/html",
        encoding="utf-8",
        num_urls=3,
        num_new_urls=1,
    )
    counts: collections.Counter[str] = collections.Counter()
    assert url_report(stat, counts) == "http://h/ 304 not modified 1/3"
    assert counts == {"not_modified": 1}


# --- Text from the network, printed --------------------------------------------------

HOSTILE = FetchStatistic(
    url="http://h/x", next_url=None, status=200, exception=None, size=5,
    content_type="text/html\x1b[2j\x07", encoding="utf-8", num_urls=0, num_new_urls=0,
)  # fmt: skip
MULTILINE = failure("http://h/y", ValueError("400, message:\n  Bad status line\r\n  ^\x9b"))


def test_control_characters_from_a_server_are_escaped_in_the_report() -> None:
    counts: collections.Counter[str] = collections.Counter()
    assert url_report(HOSTILE, counts) == "http://h/x 200 text/html\\x1b[2j\\x07 utf-8 5"
    assert url_report(MULTILINE, counts) == (
        "http://h/y error 400, message:\\n  Bad status line\\r\\n  ^\\x9b"
    )


def test_one_report_line_per_url_whatever_an_error_says() -> None:
    lines = report_text(fake_crawler([HOSTILE, MULTILINE])).splitlines()
    assert [line.split()[0] for line in lines[1:3]] == ["http://h/x", "http://h/y"]
    assert lines[3].startswith("Finished 2 urls")
    assert not any(re.search("[\x00-\x1f\x7f-\x9f]", line) for line in lines)


def test_json_lines_keep_the_exact_value() -> None:
    out = io.StringIO()
    write_jsonl(fake_crawler([HOSTILE, MULTILINE]), out)  # type: ignore[arg-type]
    first, second = (json.loads(line) for line in out.getvalue().splitlines())
    assert first["content_type"] == "text/html\x1b[2j\x07"
    assert second["exception"] == "ValueError: 400, message:\n  Bad status line\r\n  ^\x9b"


def test_log_lines_escape_control_characters_but_keep_a_traceback_s_lines() -> None:
    formatter = PrintableFormatter("%(levelname)s %(message)s")
    record = logging.LogRecord("x", logging.ERROR, __file__, 1, "type %s", ("a\x1b[2Jb\n",), None)
    assert formatter.format(record) == "ERROR type a\\x1b[2Jb\\n"
    try:
        raise ValueError("bad\x07 value")
    except ValueError:
        record.exc_info = sys.exc_info()
    lines = formatter.format(record).split("\n")
    assert lines[0] == "ERROR type a\\x1b[2Jb\\n" and lines[1].startswith("Traceback")
    assert lines[-1] == "ValueError: bad\\x07 value"


def test_streamed_records_go_to_the_file_as_they_come_and_are_not_kept() -> None:
    kept, file = fake_crawler(), io.StringIO()
    kept.page_links = {"http://h/": ("http://h/z", "http://h/a")}
    watched: list[str] = []
    streamed = fake_crawler([])
    streamed.page_links = dict(kept.page_links)
    streamed.done = StreamedRecords(
        file, streamed.page_links, [lambda stat: watched.append(stat.url)]
    )
    for stat in DONE:
        streamed.done.append(stat)
        assert file.getvalue().count("\n") == len(watched)  # Written at once.
    streamed.seen_urls = set(kept.seen_urls)
    assert watched == [stat.url for stat in DONE] and len(streamed.done) == len(DONE)
    assert streamed.page_links == {}  # Each page's links leave with its record.
    everything = io.StringIO()
    write_jsonl(kept, everything)  # type: ignore[arg-type]
    write_jsonl(streamed, file)  # type: ignore[arg-type]
    assert file.getvalue() == everything.getvalue()  # Nothing written twice.
    # The report counts the same, without the lines of the URLs.
    lines, counted = report_text(kept).splitlines(), report_text(streamed).splitlines()
    assert counted[1] == "(one record per URL in the file, written as each came)"
    assert counted[2:-1] == lines[1 + len(DONE) : -1]  # All but the date.
    with pytest.raises(TypeError, match="not kept"):
        list(streamed.done)

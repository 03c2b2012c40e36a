"""Tests of shared.web.recrawl: reading an earlier crawl and asking only for changes."""

from __future__ import annotations

import json
import pathlib

import pytest

from shared.web.recrawl import Earlier, conditional_headers, read_since

DATE = "Mon, 02 Nov 2026 08:00:00 GMT"


def record(url: str, **fields: object) -> str:
    """Return one JSON line as write_jsonl writes it, with ``fields`` changed."""
    base = {"url": url, "status": 200, "exception": None, "etag": '"e"', "last_modified": DATE}
    base |= {"content_type": "text/html", "encoding": "utf-8", "links": ["http://h/a"]}
    return json.dumps(base | fields) + "\n"


def write(tmp_path: pathlib.Path, *lines: str) -> pathlib.Path:
    """Write ``lines`` to a file and return its path."""
    path = tmp_path / "earlier.jsonl"
    path.write_text("".join(lines), encoding="utf-8")
    return path


def test_pages_with_validators_are_kept(tmp_path: pathlib.Path) -> None:
    path = write(tmp_path, record("http://h/"), "\n", record("http://h/b", etag=None))
    assert read_since(path) == {
        "http://h/": Earlier(
            etag='"e"',
            last_modified=DATE,
            content_type="text/html",
            encoding="utf-8",
            links=("http://h/a",),
        ),
        "http://h/b": Earlier(
            etag=None,
            last_modified=DATE,
            content_type="text/html",
            encoding="utf-8",
            links=("http://h/a",),
        ),
    }


def test_a_recrawl_s_own_304_records_chain(tmp_path: pathlib.Path) -> None:
    assert "http://h/" in read_since(write(tmp_path, record("http://h/", status=304)))


@pytest.mark.parametrize(
    "line",
    [
        record("http://h/", status=404),
        record("http://h/", exception="ResponseTooLarge: cut"),
        record("http://h/", etag=None, last_modified=None),
        record("http://h/", etag="\u00e9", last_modified="a\nb"),  # Neither can be sent.
        json.dumps(["not", "a", "record"]) + "\n",
        json.dumps({"status": 200, "etag": '"e"'}) + "\n",  # No URL.
    ],
)
def test_records_a_recrawl_cannot_use_are_left_out(tmp_path: pathlib.Path, line: str) -> None:
    assert read_since(write(tmp_path, line)) == {}


def test_bad_links_are_dropped_not_fatal(tmp_path: pathlib.Path) -> None:
    earlier = read_since(write(tmp_path, record("http://h/", links=[1, 2])))
    assert earlier["http://h/"].links == ()


def test_a_line_that_is_not_json_is_named(tmp_path: pathlib.Path) -> None:
    path = write(tmp_path, record("http://h/"), "{oops\n")
    with pytest.raises(ValueError, match=r"earlier.jsonl, line 2: not a JSON record"):
        read_since(path)


def test_conditional_headers() -> None:
    assert conditional_headers(
        Earlier(etag='"e"', last_modified=DATE, content_type=None, encoding=None, links=())
    ) == {
        "If-None-Match": '"e"',
        "If-Modified-Since": DATE,
    }
    assert conditional_headers(
        Earlier(etag=None, last_modified=DATE, content_type=None, encoding=None, links=())
    ) == {"If-Modified-Since": DATE}

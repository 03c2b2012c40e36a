"""``crawl --save DIR``: pages mirrored by URL path, never outside DIR.

Two URLs never share a file, even where the file system ignores case, and
every name is one Windows, macOS and Linux all accept.
"""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path, PurePosixPath

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from shared.cli.main import main
from shared.record.save import DEVICES, INDEX, MAX_NAME_BYTES, MOVED, PageSaver, relative_path
from shared.web.urls import normalize_url
from tests.servers import PageServer

NASTY = ["..", "%2e%2e", "%2E%2e", ".", "%2e", "\\", "%5c", "/", "%2f", "//", "\x00", "%00"]
NASTY += ["?", "#", "a", "b", "index.html", "\xe9", "%c3%a9", "\ud800", "%ff", "~", "C:", " "]
HOSTS = ["http://h", "http://h:8080", "http://u@h", "http://..", "http://%2e%2e", "http:", ""]
nasty_urls = st.one_of(
    st.text(),
    st.builds(
        lambda host, parts: host + "".join(parts),
        st.sampled_from(HOSTS),
        st.lists(st.one_of(st.sampled_from(NASTY), st.text(max_size=300)), max_size=12),
    ),
)


def plain_name(part: str) -> bool:
    """Tell whether ``part`` is a file name Windows, macOS and Linux all accept.

    Not empty, not a dot, none of the characters Windows refuses (nor a
    separator, nor a control character), no final dot or space, no device
    name, at most MAX_NAME_BYTES; and lower-case ASCII, so that no file
    system that ignores case or normalizes Unicode can merge two names.
    """
    return (
        part not in ("", ".", "..")
        and not re.search(r'[<>:"/\\|?*\x00-\x1f\x7f]', part)
        and not part.endswith((".", " "))
        and part.partition(".")[0] not in DEVICES
        and part.isascii()
        and part == part.lower()
        and len(part.encode("utf-8")) <= MAX_NAME_BYTES
    )


@given(nasty_urls)
@example("http://h/../../../../etc/passwd")
@example("http://h/%2e%2e/%2e%2e/etc/passwd")
@example("http://h/..\\..\\windows\\win.ini")
@example("http://h//etc/passwd")
@example("http://h/a%00b")
@example("http://h/" + "x" * 5000)
@example("http://h/" + "x/" * 5000)
def test_relative_path_is_plain_names_inside_the_directory(url: str) -> None:
    relative = relative_path(url)
    assert not relative.is_absolute()
    assert all(plain_name(part) for part in relative.parts), relative.parts
    root = Path("/save/dir")
    assert (root / relative).resolve().is_relative_to(root)


@settings(max_examples=50, deadline=None)
@given(st.lists(nasty_urls, min_size=1, max_size=8))
@example(["http://h/a", "http://h/a/b", "http://h/a/b/c", "http://h/a/"])
@example(["http://h/a/b/c", "http://h/a/b", "http://h/a"])
@example(["http://h/a/index.html/x", "http://h/a"])
def test_saving_never_writes_outside_the_directory(urls: list[str]) -> None:
    with tempfile.TemporaryDirectory() as sandbox:
        directory = Path(sandbox, "out")
        saver = PageSaver(directory)
        for url in urls:
            saver(url, url.encode("utf-8", "surrogatepass"))
        assert os.listdir(sandbox) == ["out"]
        assert saver.saved == len(urls), "a page could not be saved"
        last = urls[-1]
        path = directory / relative_path(last)
        if path.is_dir():  # Its name is a directory now: the page is in it.
            path = path / MOVED
        assert path.read_bytes() == last.encode("utf-8", "surrogatepass")


@pytest.mark.parametrize(
    ("url", "path"),
    [
        ("http://127.0.0.1:8080/", "http/127.0.0.1%3a8080/index.html"),
        ("http://example.com/a/b.html", "http/example.com/a/b.html"),
        ("https://example.com/a/b.html", "https/example.com/a/b.html"),
        ("http://example.com/a/", "http/example.com/a/index.html"),
        ("http://example.com/a/index.html", "http/example.com/a/%69ndex.html"),
        ("http://example.com/search?q=1&x=/y", "http/example.com/search@q=1&x=%2fy"),
        ("http://example.com/caf%C3%A9/", "http/example.com/caf%c3%a9/index.html"),
        ("http://example.com/About", "http/example.com/%41bout"),
        ("http://example.com/a:b", "http/example.com/a%3ab"),
        ("http://example.com/a%3Ab", "http/example.com/a%253ab"),
        ("http://example.com/con", "http/example.com/%63on"),
        ("http://example.com/nul.html", "http/example.com/%6eul.html"),
        ("http://example.com/a.", "http/example.com/a%2e"),
        ("http://example.com/a/../b/./c", "http/example.com/b/c"),
        ("http://example.com/%2e%2e/%2e%2e/etc/passwd", "http/example.com/etc/passwd"),
        ("http://example.com/..\\..\\x", "http/example.com/x"),
        ("http://example.com//x", "http/example.com/%/x"),
        ("http://example.com/a%00b/c%0Ad", "http/example.com/a%00b/c%0ad"),
        ("http://../x", "http/.%2e/x"),
    ],
)
def test_layout_follows_wget(url: str, path: str) -> None:
    assert relative_path(url) == PurePosixPath(path)


@pytest.mark.parametrize(
    "pair",
    [
        ("http://h/s?q=%83e", "http://h/s?q=%84e"),  # Both were s?q=\ufffde.
        ("http://h/About", "http://h/about"),  # One file where case is ignored.
        ("http://h/a:b", "http://h/a%3Ab"),
        ("http://h/a", "https://h/a"),
        ("http://h/a", "http://user@h/a"),
        ("http://h/a/", "http://h/a/index.html"),
        ("http://h/a", "http://h/a?"),
        ("http://h/a?b", "http://h/a%3Fb"),
        ("http://h/a?b", "http://h/a@b"),
        ("http://h/a/b", "http://h/a%2Fb"),
        ("http://h/a/b", "http://h/a//b"),
        ("http://h/a.", "http://h/a"),
        ("http://h/nul", "http://h/%6Eul"),
    ],
)
def test_two_urls_never_share_a_file(pair: tuple[str, str]) -> None:
    first, second = (str(relative_path(url)).lower() for url in pair)
    assert first != second


URL_PIECES = ["a", "A", "b", "/", ".", "..", "%83", "%84", "%41", "%3A", ":", "?", "@", "#"]
URL_PIECES += ["%25", "%", "~", "con", "nul.", " ", "\xe9", "index.html", "%2e", "%2F", "="]


def same_url(url: str) -> str:
    """Return the form of a normalized URL two equivalent spellings share.

    Escapes are read without regard to case (%c3 is %C3), as RFC 3986 says.
    """
    return re.sub(r"%[0-9a-fA-F]{2}", lambda m: m.group().upper(), url)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(st.sampled_from(URL_PIECES), max_size=8), min_size=2, max_size=2))
def test_different_urls_get_different_files_whatever_the_case(paths: list[list[str]]) -> None:
    urls = set()
    for pieces in paths:
        try:
            urls.add(same_url(normalize_url("http://h/" + "".join(pieces))))
        except ValueError:
            continue  # Not a URL the crawler would fetch.
    files = {str(relative_path(url)).lower() for url in urls}
    assert len(files) == len(urls), urls
    for url in urls:
        assert all(plain_name(part) for part in relative_path(url).parts)


def test_a_very_long_name_is_cut_and_stays_distinct() -> None:
    first, second = relative_path("http://h/" + "x" * 300), relative_path("http://h/" + "x" * 301)
    assert first != second
    assert len(first.name.encode()) <= MAX_NAME_BYTES


def test_a_page_where_a_directory_is_needed_moves_into_it(tmp_path: Path) -> None:
    saver = PageSaver(tmp_path)
    saver("http://h/a", b"page a")
    saver("http://h/a/b", b"page a/b")
    assert (tmp_path / "http/h/a" / MOVED).read_bytes() == b"page a"
    assert (tmp_path / "http/h/a/b").read_bytes() == b"page a/b"
    saver("http://h/a/b/c", b"page a/b/c")
    saver("http://h/a", b"page a again")
    saver("http://h/a/", b"page a/")
    assert (tmp_path / "http/h/a/b" / MOVED).read_bytes() == b"page a/b"
    assert (tmp_path / "http/h/a" / MOVED).read_bytes() == b"page a again"
    assert (tmp_path / "http/h/a" / INDEX).read_bytes() == b"page a/"  # Not page a's file.
    assert saver.saved == 5


def test_a_symbolic_link_out_of_the_directory_is_not_followed(tmp_path: Path) -> None:
    outside, directory = tmp_path / "outside", tmp_path / "out"
    outside.mkdir()
    directory.mkdir()
    (directory / "http").mkdir()
    (directory / "http/h").symlink_to(outside)
    saver = PageSaver(directory)
    saver("http://h/a/b", b"page")
    saver("http://h/", b"home")
    assert list(outside.iterdir()) == []
    assert saver.saved == 0


def test_crawl_save_stores_html_pages_only(tmp_path: Path, capsys) -> None:
    with PageServer() as pages:
        root = pages.add_page("/", ["/a/", "/b", "/logo.png", "/moved", "/missing"])
        pages.add_page("/a/", ["/a/deeper/page.html"])
        pages.add_page("/a/deeper/page.html", body=b"<p>deep</p>")
        pages.add_page("/b", body=b"<p>b</p>", content_type="application/xhtml+xml")
        pages.add_page("/logo.png", body=b"\x89PNG", content_type="image/png")
        pages.add_redirect("/moved", "/a/")
        status = main([root, "--save", str(tmp_path / "mirror"), "-q"])
        host = f"http/127.0.0.1%3a{pages.port}"
    assert status == 0
    saved = {
        str(path.relative_to(tmp_path / "mirror" / host))
        for path in (tmp_path / "mirror").rglob("*")
        if path.is_file()
    }
    assert saved == {"index.html", "a/index.html", "a/deeper/page.html", "b"}
    assert (tmp_path / "mirror" / host / "a/deeper/page.html").read_bytes() == b"<p>deep</p>"
    assert "Finished 7 urls" in capsys.readouterr().out


def test_crawl_save_to_a_directory_it_cannot_create(tmp_path: Path, capsys) -> None:
    (tmp_path / "file").write_text("not a directory")
    with pytest.raises(SystemExit) as exit_info:
        main(["http://127.0.0.1:9/", "--save", str(tmp_path / "file" / "dir")])
    assert exit_info.value.code == 2
    assert "cannot save pages in" in capsys.readouterr().err

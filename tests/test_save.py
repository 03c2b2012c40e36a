"""``crawl --save DIR``: pages mirrored by URL path, never outside DIR."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path, PurePosixPath

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from shared.cli import main
from shared.save import INDEX, MAX_NAME_BYTES, PageSaver, relative_path
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
    """Tell whether ``part`` is one ordinary file name: no separator, no NUL, not a dot."""
    return (
        part not in ("", ".", "..")
        and not {"/", "\\", "\x00"} & set(part)
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
        while path.is_dir():
            path = path / INDEX
        assert path.read_bytes() == last.encode("utf-8", "surrogatepass")


@pytest.mark.parametrize(
    ("url", "path"),
    [
        ("http://127.0.0.1:8080/", "127.0.0.1:8080/index.html"),
        ("http://example.com/a/b.html", "example.com/a/b.html"),
        ("http://example.com/a/", "example.com/a/index.html"),
        ("http://example.com/search?q=1&x=/y", "example.com/search?q=1&x=%2Fy"),
        ("http://example.com/caf%C3%A9/", "example.com/caf\xe9/index.html"),
        ("http://user:secret@example.com/a", "example.com/a"),
        ("http://example.com/a/../b/./c", "example.com/b/c"),
        ("http://example.com/%2e%2e/%2e%2e/etc/passwd", "example.com/etc/passwd"),
        ("http://example.com/..\\..\\x", "example.com/x"),
        ("http://example.com/a%00b/c%0Ad", "example.com/a%00b/c%0Ad"),
        ("http://../x", "%2E%2E/x"),
    ],
)
def test_layout_follows_wget(url: str, path: str) -> None:
    assert relative_path(url) == PurePosixPath(path)


def test_a_very_long_name_is_cut_and_stays_distinct() -> None:
    first, second = relative_path("http://h/" + "x" * 300), relative_path("http://h/" + "x" * 301)
    assert first != second
    assert len(first.name.encode()) <= MAX_NAME_BYTES


def test_a_page_where_a_directory_is_needed_moves_into_it(tmp_path: Path) -> None:
    saver = PageSaver(tmp_path)
    saver("http://h/a", b"page a")
    saver("http://h/a/b", b"page a/b")
    assert (tmp_path / "h/a/index.html").read_bytes() == b"page a"
    assert (tmp_path / "h/a/b").read_bytes() == b"page a/b"
    saver("http://h/a/b/c", b"page a/b/c")
    saver("http://h/a", b"page a again")
    assert (tmp_path / "h/a/b/index.html").read_bytes() == b"page a/b"
    assert (tmp_path / "h/a/index.html").read_bytes() == b"page a again"
    assert saver.saved == 4


def test_a_symbolic_link_out_of_the_directory_is_not_followed(tmp_path: Path) -> None:
    outside, directory = tmp_path / "outside", tmp_path / "out"
    outside.mkdir()
    directory.mkdir()
    (directory / "h").symlink_to(outside)
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
        host = f"127.0.0.1:{pages.port}"
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

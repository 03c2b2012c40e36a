"""Examples for shared.web.links: which hrefs the link parser finds, and how."""

from __future__ import annotations

import pytest

import shared.web.links
from shared.web.links import encode_query_in, extract_links

PAGE = "http://example.com/dir/page.html"


@pytest.fixture(autouse=True, params=["lexbor", "html.parser"])
def html_parser(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Run every test with each HTML parser that extract_links can read pages with."""
    if request.param == "html.parser":
        monkeypatch.setattr(shared.web.links, "LexborHTMLParser", None)
    else:
        assert shared.web.links.LexborHTMLParser is not None, "selectolax is a dependency"
    return request.param


def links(html: str, page_url: str = PAGE) -> set[str]:
    """Return the links of ``html`` as found on ``page_url``."""
    return extract_links(html, page_url)


# --- Which elements --------------------------------------------------------------


def test_a_area_and_link_hrefs() -> None:
    html = '<a href="/a">a</a><map><area href="/area"></map><link rel=x href="/style.css">'
    assert links(html) == {
        "http://example.com/a",
        "http://example.com/area",
        "http://example.com/style.css",
    }


def test_self_closing_link_and_a() -> None:
    assert links('<link href="/feed"/><a href="/b" />') == {
        "http://example.com/feed",
        "http://example.com/b",
    }


def test_other_elements_and_attributes_are_not_links() -> None:
    html = (
        '<img src="/img.png"><script src="/s.js"></script><iframe src="/f"></iframe>'
        '<form action="/form"></form><div href="/div"></div><a name="x">no href</a>'
        '<a data-href="/data">x</a>'
    )
    assert links(html) == set()


def test_an_href_without_a_value_is_ignored() -> None:
    assert links("<a href>x</a><a href=/ok>ok</a>") == {"http://example.com/ok"}


def test_upper_case_tags_and_attributes() -> None:
    html = '<A HREF="/upper">x</A><LINK HREF=/style /><AREA Href="/mixed">'
    assert links(html) == {
        "http://example.com/upper",
        "http://example.com/style",
        "http://example.com/mixed",
    }


def test_unquoted_and_single_quoted_attributes() -> None:
    assert links("<a href=/unquoted>x</a><a href='/single'>y</a>") == {
        "http://example.com/unquoted",
        "http://example.com/single",
    }


def test_first_href_of_an_element_wins() -> None:
    assert links('<a href="/first" href="/second">x</a>') == {"http://example.com/first"}


# --- Resolution ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("href", "url"),
    [
        ("sibling", "http://example.com/dir/sibling"),
        ("../up", "http://example.com/up"),
        ("/absolute", "http://example.com/absolute"),
        ("?q=1", "http://example.com/dir/page.html?q=1"),
        ("//other.org", "http://other.org/"),
        ("https://other.org:443/x", "https://other.org/x"),
        ("HTTP://EXAMPLE.COM:80/Case#frag", "http://example.com/Case"),
        ("#top", PAGE),
        ("", PAGE),
        ("/q?b=2&a=1", "http://example.com/q?b=2&a=1"),
    ],
)
def test_hrefs_are_resolved_and_normalized(href: str, url: str) -> None:
    assert links(f'<a href="{href}">x</a>') == {url}


def test_non_http_links_are_returned_for_the_policy_to_reject() -> None:
    assert links('<a href="mailto:a@example.com">m</a><a href="ftp://Example.com/f">f</a>') == {
        "mailto:a@example.com",
        "ftp://example.com/f",
    }


def test_base_href_replaces_the_page_url() -> None:
    html = '<head><base href="http://other.org/root/"></head><a href="x">x</a>'
    assert links(html) == {"http://other.org/root/x"}


def test_relative_base_href_is_resolved_against_the_page() -> None:
    assert links('<base href="sub/"><a href="x">x</a>') == {"http://example.com/dir/sub/x"}
    assert links('<base href="/pages/"><a href="2/">x</a>') == {"http://example.com/pages/2/"}


def test_base_href_applies_to_links_before_it() -> None:
    assert links('<a href="x">x</a><base href="/b/">') == {"http://example.com/b/x"}


def test_only_the_first_base_href_counts() -> None:
    html = '<base href="/one/"><base href="/two/"><a href="x">x</a>'
    assert links(html) == {"http://example.com/one/x"}


def test_base_without_href_is_ignored() -> None:
    html = '<base target="_top"><base href="/b/"><a href="x">x</a>'
    assert links(html) == {"http://example.com/b/x"}


def test_unparseable_base_href_falls_back_to_the_page_url() -> None:
    assert links('<base href="http://[bad/"><a href="x">x</a>') == {"http://example.com/dir/x"}


def test_base_href_is_not_a_link() -> None:
    assert links('<base href="/b/">') == set()


# --- What is not a link, and what is skipped ---------------------------------------


def test_comments_scripts_and_styles_are_ignored() -> None:
    html = (
        '<!-- <a href="/comment">c</a> -->'
        "<script>document.write('<a href=\"/script\">');</script>"
        '<style>/* <a href="/style"> */</style>'
        '<SCRIPT type="text/javascript"><a href="/upper-script"></SCRIPT>'
        '<a href="/real">real</a>'
    )
    assert links(html) == {"http://example.com/real"}


def test_whitespace_around_an_href_is_stripped() -> None:
    html = '<a href="  /padded  ">x</a><a href="\n\t/tabbed\r\n">y</a>'
    assert links(html) == {"http://example.com/padded", "http://example.com/tabbed"}


@pytest.mark.parametrize("bad", ["http://[oops/", "http://example.com:99x/", "http://h:99999/"])
def test_unparseable_hrefs_are_skipped_not_fatal(bad: str) -> None:
    html = f'<a href="/before">b</a><a href="{bad}">bad</a><a href="/after">a</a>'
    assert links(html) == {"http://example.com/before", "http://example.com/after"}


def test_entities_in_hrefs_are_decoded() -> None:
    html = '<a href="/s?a=1&amp;b=2&#38;c=3&#x26;d=4">x</a><a href="/caf&eacute;/">y</a>'
    assert links(html) == {
        "http://example.com/s?a=1&b=2&c=3&d=4",
        "http://example.com/caf%C3%A9/",  # Then percent-encoded, as a browser sends it.
    }


def test_repeated_links_are_one() -> None:
    assert links('<a href="/x">x</a>' * 100 + '<a href="/x#f">y</a>') == {"http://example.com/x"}


def test_page_without_links() -> None:
    assert links("<p>No links here.</p>") == set()
    assert links("") == set()


def test_malformed_declaration_does_not_raise() -> None:
    # The standard tokenizer raises AssertionError on this marked section.
    html = '<a href="/before">b</a><![ ]]><a href="/after">a</a>'
    assert "http://example.com/before" in links(html)


@pytest.mark.parametrize(
    "html",
    ["<![ ]]>", "<!", "<a href=", '<a href="/x', "</", "<![if !supportLists]>", "&#xffffffff;"],
)
def test_broken_markup_never_raises(html: str) -> None:
    assert isinstance(links(html), set)


def test_unterminated_tag_at_the_end_is_not_a_link() -> None:
    assert links('<a href="/ok">ok</a><a href="/cut"') == {"http://example.com/ok"}


def test_results_are_absolute_normalized_urls() -> None:
    html = '<a href="../A/#x">1</a><a href="HTTP://Other.ORG:80">2</a><a href="//[::1]:80">3</a>'
    assert links(html, "HTTP://Example.COM:80/dir/page") == {
        "http://example.com/A/",
        "http://other.org/",
        "http://[::1]/",
    }


# --- Non-ASCII links: what a browser would request -----------------------------------


@pytest.mark.parametrize(
    ("href", "encoding", "url"),
    [
        ("/\u4e2d\u6587/\u9875", "utf-8", "http://example.com/%E4%B8%AD%E6%96%87/%E9%A1%B5"),
        # The path is always UTF-8; the query is in the page's encoding.
        ("/\u4e2d?q=\u4e2d", "gb18030", "http://example.com/%E4%B8%AD?q=%D6%D0"),
        # Its second byte is '\\', which a query keeps as it is.
        ("/\u30bd?q=\u30bd", "cp932", "http://example.com/%E3%82%BD?q=%83\\"),
        ("/\u0436?q=\u0436", "cp1251", "http://example.com/%D0%B6?q=%E6"),
        ("/?q=\u0436", "cp1252", "http://example.com/?q=%26%231078%3B"),  # Not in cp1252.
        ("/?q=\u0436#\u0436", "utf-8", "http://example.com/?q=%D0%B6"),
        ("http://b\xfccher.example/\xe4", "utf-8", "http://xn--bcher-kva.example/%C3%A4"),
    ],
)
def test_non_ascii_links_become_what_a_browser_requests(href: str, encoding: str, url: str) -> None:
    assert extract_links(f'<a href="{href}">x</a>', PAGE, encoding) == {url}


def test_the_query_of_a_base_href_is_encoded_too() -> None:
    html = '<base href="/b/?\u0436"><a href="x">x</a><a href="">self</a>'
    assert extract_links(html, PAGE, "cp1251") == {
        "http://example.com/b/x",
        "http://example.com/b/?%E6",
    }


@pytest.mark.parametrize(
    ("href", "encoding", "encoded"),
    [
        ("/p?a=\u4e2d#\u4e2d", "gb18030", "/p?a=%D6%D0#\u4e2d"),  # Not the fragment.
        ("/\u4e2d", "gb18030", "/\u4e2d"),  # No query: nothing to do.
        ("/?\u4e2d", "no-such-codec", "/?\u4e2d"),
        ("/?\u30bd", "cp932", "/?%83\\"),  # An ASCII trail byte stays a character.
    ],
)
def test_encode_query_in(href: str, encoding: str, encoded: str) -> None:
    assert encode_query_in(href, encoding) == encoded

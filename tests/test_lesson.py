"""The lesson is as long as the 500 Lines chapter, in both languages (tests/lesson.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests import lesson

pytestmark = pytest.mark.slow  # The docs site is built first.


def test_the_lesson_is_no_longer_than_the_chapter(built_site: Path) -> None:
    size = lesson.total(lesson.lesson(built_site))
    assert size.words <= lesson.CHAPTER_WORDS, lesson.lesson(built_site)


def test_the_lesson_shows_little_more_code_than_the_chapter(built_site: Path) -> None:
    size = lesson.total(lesson.lesson(built_site))
    assert size.code_lines <= 1.2 * lesson.CHAPTER_CODE_LINES, lesson.lesson(built_site)


def test_the_lesson_collapses_little(built_site: Path) -> None:
    size = lesson.total(lesson.lesson(built_site))
    assert size.collapsed_words <= 1000, lesson.lesson(built_site)


def test_the_chinese_lesson_is_no_longer_than_the_translation(built_site: Path) -> None:
    size = lesson.total(lesson.lesson(built_site, "zh"))
    assert size.han <= lesson.TRANSLATION_CHARACTERS, lesson.lesson(built_site, "zh")


def test_every_lesson_page_is_measured(built_site: Path) -> None:
    """Each page has prose and code, so a page the measure cannot read fails here."""
    for language in ("", "zh"):
        for page, size in lesson.lesson(built_site, language).items():
            assert size.code_lines > 0, (language, page)
            assert (size.han if language else size.words) > 100, (language, page)


def test_the_measure_leaves_out_code_and_collapsed_blocks() -> None:
    page = (
        '<article class="md-content__inner"><h1>Title<a class="headerlink" href="#t">¶</a>'
        "</h1><p>One two <code>three</code>.</p><pre><code>a = 1\n\nb = 2\n</code></pre>"
        "<details><summary>More</summary><p>four five</p></details>"
        "<details open><summary>Open</summary><p>六七</p></details></article>"
    )
    assert lesson.measure(page) == lesson.Size(
        words=6,
        code_lines=2,
        collapsed_words=3,
        han=2,  # 六七 is a word too.
    )


def test_the_measure_leaves_out_the_controls_of_a_runnable_listing() -> None:
    page = (
        '<article class="md-content__inner"><div data-run="m"><pre><code>x = 1\n</code></pre>'
        '<div class="run-bar"><button>Run</button><span class="run-status"></span></div>'
        '<p class="run-note">Run it here: Python in your browser.</p>'
        '<div class="run-output" hidden></div></div><p>One two.</p></article>'
    )
    assert lesson.measure(page) == lesson.Size(words=2, code_lines=1, collapsed_words=0, han=0)

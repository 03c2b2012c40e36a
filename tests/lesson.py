"""How long the lesson is, measured on the built site as a reader sees it.

The lesson is the first part of the nav: the pages a reader goes through in
one sitting, on the 500 Lines chapter's route.  Its length is held against
the chapter's (tests/test_lesson.py):

- prose words: the words of the page's article outside ``<pre>`` blocks
  and outside collapsed ``<details>``, a word being a run of letters,
  digits, ``_``, ``'`` and ``-`` that holds a letter or a digit;
- code lines: the non-empty lines inside ``<pre>`` blocks (listings,
  sessions, command outputs and diagrams alike), outside collapsed blocks;
- collapsed words: the prose and code words inside ``<details>`` that are
  closed when the page opens;
- Chinese characters: the Han characters of the prose (the same parts of
  the page as the English prose words).

The controls that docs/hooks/run_in_page.py adds under a runnable listing
(its buttons, its one-line note, its output) are the page's furniture, the
same under every listing, and are not counted.

Run ``python -m tests.lesson SITE`` on a built site for a table of each
lesson page in both languages.
"""

from __future__ import annotations

import html
import re
import sys
from dataclasses import dataclass
from pathlib import Path

# The lesson's pages, in the nav's order (mkdocs.yml).
LESSON = ("index", "threads", "callbacks", "generators", "coroutines", "asyncio")

# The 500 Lines chapter, measured the same way: its prose words and the
# lines of code it shows; the Chinese translation readers know, in Han
# characters (issue 49's figures).
CHAPTER_WORDS = 6079
CHAPTER_CODE_LINES = 501
TRANSLATION_CHARACTERS = 10468

ARTICLE = re.compile(r"<article\b[^>]*>(.*?)</article>", re.S)
PRE = re.compile(r"<pre\b[^>]*>(.*?)</pre>", re.S)
# A closed <details>: no `open` attribute.  Blocks do not nest on our pages.
COLLAPSED = re.compile(r"<details\b(?![^>]*\bopen\b)[^>]*>(.*?)</details>", re.S)
# What a reader does not read as text: scripts, styles, the permalinks' ¶,
# and the controls of a listing that runs in the page.
HIDDEN = re.compile(
    r"<(script|style)\b.*?</\1>|<a\b[^>]*class=\"headerlink\"[^>]*>.*?</a>"
    r"|<div class=\"run-(?:bar|output)\"[^>]*>.*?</div>|<p class=\"run-note\"[^>]*>.*?</p>",
    re.S,
)
TAG = re.compile(r"<[^>]+>")
WORD = re.compile(r"[\w'’-]*[^\W_][\w'’-]*")
HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")


@dataclass(frozen=True)
class Size:
    """What one built page shows its reader."""

    words: int
    code_lines: int
    collapsed_words: int
    han: int


def text(fragment: str) -> str:
    """Return the text a browser shows for an HTML fragment."""
    return html.unescape(TAG.sub(" ", fragment))


def measure(page_html: str) -> Size:
    """Measure the article of one built page."""
    found = ARTICLE.search(page_html)
    article = HIDDEN.sub(" ", found.group(1) if found else page_html)
    collapsed = " ".join(text(block) for block in COLLAPSED.findall(article))
    shown = COLLAPSED.sub(" ", article)
    code = [text(block) for block in PRE.findall(shown)]
    prose = text(PRE.sub(" ", shown))
    return Size(
        words=len(WORD.findall(prose)),
        code_lines=sum(1 for block in code for line in block.splitlines() if line.strip()),
        collapsed_words=len(WORD.findall(collapsed)),
        han=len(HAN.findall(prose)),
    )


def page_file(site: Path, page: str, language: str = "") -> Path:
    """Return the built file of a page: the home page is the site's index."""
    folder = site / language if language else site
    return folder / "index.html" if page == "index" else folder / page / "index.html"


def lesson(site: Path, language: str = "") -> dict[str, Size]:
    """Measure every lesson page of a built site in one language."""
    return {
        page: measure(page_file(site, page, language).read_text(encoding="utf-8"))
        for page in LESSON
    }


def total(sizes: dict[str, Size]) -> Size:
    """Add up the pages' figures."""
    return Size(
        words=sum(size.words for size in sizes.values()),
        code_lines=sum(size.code_lines for size in sizes.values()),
        collapsed_words=sum(size.collapsed_words for size in sizes.values()),
        han=sum(size.han for size in sizes.values()),
    )


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m tests.lesson SITE", file=sys.stderr)
        return 2
    site = Path(argv[0])
    english, chinese = lesson(site), lesson(site, "zh")
    print(f"{'page':12} {'words':>6} {'code':>5} {'collapsed':>9} {'zh chars':>8}")
    for page in LESSON:
        en, zh = english[page], chinese[page]
        print(f"{page:12} {en.words:6} {en.code_lines:5} {en.collapsed_words:9} {zh.han:8}")
    en, zh = total(english), total(chinese)
    print(f"{'lesson':12} {en.words:6} {en.code_lines:5} {en.collapsed_words:9} {zh.han:8}")
    print(
        f"{'limit':12} {CHAPTER_WORDS:6} {int(1.2 * CHAPTER_CODE_LINES):5} {1000:9} "
        f"{TRANSLATION_CHARACTERS:8}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

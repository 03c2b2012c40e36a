"""The English and Chinese editions of the tutorial stay in step.

Every page ``docs/NAME.md`` has a translation ``docs/NAME.zh.md`` beside it
(mkdocs-static-i18n builds it under ``/zh/``).  The two must have the same
skeleton: the same headings with the same anchors, the same code blocks
and snippet includes in the same order, the same admonitions and tabs, the
same build-hook markers.  Only prose, diagram labels and titles differ.

Prose cannot be compared across languages, so each translation starts with
a line naming the version of the English page it translates, as the git
blob id of that file::

    <!-- translation of callbacks.md, blob 1a2b3c4d5e6f -->

When the English page changes, its blob id changes and the test fails,
saying how to see what changed (``git diff OLD NEW``) and which line to
write once the translation is updated.  So a chapter cannot change in one
language only.
"""

from __future__ import annotations

import hashlib
import html
import json
import re
from pathlib import Path

import pytest
import yaml
from markdown.extensions.toc import slugify

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
ENGLISH = sorted(page for page in DOCS.glob("*.md") if not page.name.endswith(".zh.md"))
CHINESE = sorted(DOCS.glob("*.zh.md"))
# The first line, after the page's front matter if it has one (mkdocs
# reads front matter only at the very top).
SOURCE_LINE = re.compile(
    r"\A(?:---\n(?:.*\n)*?---\n)?"
    r"<!-- translation of (?P<name>\S+\.md), blob (?P<blob>[0-9a-f]{12}) -->\n"
)
FENCE_OPEN = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,})(?P<info>.*)$")
HEADING = re.compile(r"^(?P<level>#{1,6})[ \t]+(?P<text>.+?)[ \t]*$")
EXPLICIT_ID = re.compile(r"[ \t]*\{[ \t]*#(?P<id>[\w-]+)[ \t]*\}$")
# Lines whose kind (and for most, whose exact text) both languages share.
ADMONITION = re.compile(r"^[ \t]*(?P<mark>!!!|\?\?\?\+?)[ \t]+(?P<kind>[\w-]+)")
TAB = re.compile(r"^[ \t]*===\+?[ \t]+\"")
MARKER = re.compile(r"<!-- (?P<what>output(?: \[[^\]]*\])?|include-if-present): (?P<arg>.+?) -->")
CJK = re.compile(r"[\u4e00-\u9fff]")
LATIN_WORD = re.compile(r"\b[A-Za-z]{2,}\b")


def translation(page: Path) -> Path:
    """Return the Chinese page that translates an English one."""
    return page.with_name(f"{page.stem}.zh.md")


def blob_id(path: Path) -> str:
    """Return the first 12 digits of the git blob id of a file (what git hash-object prints)."""
    data = path.read_bytes().replace(b"\r\n", b"\n")  # As git stores it, whatever the checkout.
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()[:12]


def skeleton(page: Path) -> list[str]:
    """Return the parts of a page that do not depend on its language, in order."""
    parts: list[str] = []
    lines = page.read_text(encoding="utf-8").splitlines()
    index = 0
    while index < len(lines):
        line = lines[index]
        fence = FENCE_OPEN.match(line)
        if fence:
            index = skip_fence(lines, index, fence, parts)
            continue
        if heading := HEADING.match(line):
            parts.append(f"heading {heading['level']} #{heading_id(heading['text'])}")
        elif admonition := ADMONITION.match(line):
            parts.append(f"admonition {admonition['mark']} {admonition['kind']}")
        elif TAB.match(line):
            parts.append("tab")
        parts.extend(f"{m['what']}: {m['arg']}" for m in MARKER.finditer(line))
        index += 1
    return parts


def skip_fence(lines: list[str], start: int, fence: re.Match[str], parts: list[str]) -> int:
    """Record a fenced block (a diagram only by its kind) and return the line after it."""
    closing = re.compile(rf"^{re.escape(fence['indent'])}{fence['fence']}[ \t]*$")
    end = start + 1
    while end < len(lines) and not closing.match(lines[end]):
        end += 1
    info = fence["info"].strip()
    if info == "mermaid":
        parts.append("diagram")  # Its labels are translated.
    else:
        body = "\n".join(lines[start + 1 : end])
        parts.append(f"code {info}\n{body}")
    return end + 1


def heading_id(text: str) -> str:
    """Return the anchor of a heading: its explicit ``{ #id }``, or the one made from its text."""
    explicit = EXPLICIT_ID.search(text)
    if explicit:
        return explicit["id"]
    return slugify(re.sub(r"[`*]", "", text), "-")


def prose_paragraphs(page: Path) -> list[str]:
    """Return the paragraphs of a page outside code blocks, without code, links and markers."""
    text = page.read_text(encoding="utf-8")
    text = re.sub(r"^([ \t]*)(`{3,}).*?^\1\2[ \t]*$", "", text, flags=re.MULTILINE | re.DOTALL)
    text = re.sub(r"<!--.*?-->", "", text, flags=re.DOTALL)
    text = re.sub(r"^</?div\b[^>\n]*>$", "", text, flags=re.MULTILINE)  # A layout's boxes.
    text = re.sub(r"`[^`\n]+`", "", text)  # Inline code: names stay in English.
    text = re.sub(r"\]\([^)]*\)|<https?://[^>]*>|\{[^}\n]*\}", "", text)
    return [block.strip() for block in re.split(r"\n[ \t]*\n", text) if block.strip()]


# --- The same pages ----------------------------------------------------------


def test_every_page_has_a_translation() -> None:
    """Each English page has a Chinese one, and no Chinese page is left without its original."""
    assert ENGLISH, "no pages found"
    missing = [translation(page).name for page in ENGLISH if not translation(page).exists()]
    assert not missing, f"pages with no Chinese translation: {missing}"
    originals = {page.name for page in ENGLISH}
    orphans = [page.name for page in CHINESE if page.name.replace(".zh", "") not in originals]
    assert not orphans, f"Chinese pages whose English page is gone: {orphans}"


TRANSLATED = [page for page in ENGLISH if translation(page).exists()]
IDS = [page.name for page in TRANSLATED]


@pytest.mark.parametrize("page", TRANSLATED, ids=IDS)
def test_translation_is_of_the_current_english_page(page: Path) -> None:
    """A change to an English page fails here until its translation is brought up to date."""
    chinese = translation(page)
    now = blob_id(page)
    wanted = f"<!-- translation of {page.name}, blob {now} -->"
    found = SOURCE_LINE.match(chinese.read_text(encoding="utf-8"))
    assert found, f"docs/{chinese.name} must start with the line\n{wanted}"
    assert found["name"] == page.name, f"docs/{chinese.name} names {found['name']}"
    assert found["blob"] == now, (
        f"docs/{page.name} changed since docs/{chinese.name} translated it. See what changed"
        f" with\n    git diff {found['blob']} {now}\nwrite the same change in"
        f" docs/{chinese.name}, then make its first line\n{wanted}"
    )


@pytest.mark.parametrize("page", TRANSLATED, ids=IDS)
def test_same_skeleton(page: Path) -> None:
    """Same headings and anchors, same code and includes, same admonitions, tabs and markers."""
    english, chinese = skeleton(page), skeleton(translation(page))
    for number, (left, right) in enumerate(zip(english, chinese, strict=False)):
        assert left == right, (
            f"docs/{page.name} and docs/{translation(page).name} differ at part {number + 1}:"
            f"\n  English: {left!r}\n  Chinese: {right!r}"
        )
    assert len(english) == len(chinese), (
        f"docs/{page.name} has {len(english)} parts (headings, code blocks, includes,"
        f" admonitions, tabs, markers), docs/{translation(page).name} has {len(chinese)}"
    )


@pytest.mark.parametrize("page", TRANSLATED, ids=IDS)
def test_no_english_left_in_the_translation(page: Path) -> None:
    """Every paragraph of running text in a Chinese page is written in Chinese."""
    chinese = translation(page)
    english = [
        block
        for block in prose_paragraphs(chinese)
        if len(LATIN_WORD.findall(block)) >= 6 and not CJK.search(block)
    ]
    assert not english, f"docs/{chinese.name} has paragraphs in English:\n\n" + "\n\n".join(english)


# Other translations of the glossary's terms, seen elsewhere, that the
# Chinese pages do not use (docs/glossary.zh.md says why each was chosen).
NOT_OUR_TERMS = {
    "协同程序": "协程",
    "协作程序": "协程",
    "产生器": "生成器",
    "事件轮询": "事件循环",
    "回呼": "回调",
    "期物": "Future",
    "未来对象": "Future",
    "堆栈撕裂": "栈撕裂",
    "暂停点": "让出点",
    "反压": "背压",
    "插座": "套接字",
    "非堵塞": "非阻塞",
}


# The glossary names the other translations, to explain its choice.
NOT_GLOSSARY = [page for page in TRANSLATED if page.name != "glossary.md"]


@pytest.mark.parametrize("page", NOT_GLOSSARY, ids=[page.name for page in NOT_GLOSSARY])
def test_the_glossary_terms_are_used(page: Path) -> None:
    """The Chinese pages say 协程, 事件循环, 回调... as the glossary does, not a synonym."""
    chinese = translation(page)
    text = "\n".join(prose_paragraphs(chinese))
    found = {term: ours for term, ours in NOT_OUR_TERMS.items() if term in text}
    assert not found, f"docs/{chinese.name}: write the glossary's term instead: {found}"


def test_an_english_paragraph_is_noticed() -> None:
    """The check above flags the running text of an English page."""
    english = [
        block
        for block in prose_paragraphs(DOCS / "index.md")
        if len(LATIN_WORD.findall(block)) >= 6 and not CJK.search(block)
    ]
    assert len(english) > 10


def nav_titles(config: dict) -> list[str]:
    """Return the title of every section and page of the site's nav."""
    titles = []
    stack = list(config["nav"])
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            for title, value in item.items():
                titles.append(title)
                if isinstance(value, list):
                    stack.extend(value)
    return titles


def test_every_nav_title_is_translated() -> None:
    """Each title of the nav has a Chinese one, so the Chinese nav is all in Chinese."""

    class Loader(yaml.SafeLoader):
        """A safe loader that reads mkdocs.yml's python/ tags as nothing."""

    Loader.add_multi_constructor("tag:yaml.org,2002:python/", lambda *args: None)
    config = yaml.load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"), Loader=Loader)
    i18n = next(plugin["i18n"] for plugin in config["plugins"] if "i18n" in plugin)
    chinese = next(language for language in i18n["languages"] if language["locale"] == "zh")
    missing = [t for t in nav_titles(config) if t not in chinese["nav_translations"]]
    assert not missing, f"nav titles with no Chinese in nav_translations: {missing}"


def test_the_skeleton_sees_what_it_compares() -> None:
    """The parts compared above are found in a page that has them all."""
    parts = skeleton(DOCS / "generators.md")
    assert parts[0] == "heading # #how-generators-work"
    assert "diagram" in parts
    assert "admonition !!! note" in parts
    assert any(part.startswith("code pycon\n>>> import inspect") for part in parts)
    assert "output: crawl --help" in skeleton(DOCS / "reference.md")


# --- The built site ----------------------------------------------------------


def built_page(site: Path, page: Path, language: str) -> Path:
    """Return the HTML file built from an English page, in one language."""
    folder = site / "zh" if language == "zh" else site
    return folder / "index.html" if page.stem == "index" else folder / page.stem / "index.html"


def code_blocks(path: Path) -> list[str]:
    """Return the text of every code block of a built page, diagrams left out."""
    text = path.read_text(encoding="utf-8")
    blocks = re.findall(r"<pre\b(?![^>]*class=\"mermaid\")[^>]*>(.*?)</pre>", text, flags=re.DOTALL)
    return [html.unescape(re.sub(r"<[^>]*>", "", block)) for block in blocks]


@pytest.mark.parametrize("page", TRANSLATED, ids=IDS)
def test_built_pages_show_the_same_code_and_output(built_site: Path, page: Path) -> None:
    """Snippets and command output come out identical in both languages."""
    english, chinese = built_page(built_site, page, "en"), built_page(built_site, page, "zh")
    assert re.search(r'<html lang="zh"', chinese.read_text(encoding="utf-8"))
    assert code_blocks(chinese) == code_blocks(english)


def search_runs(site: Path, term: str) -> dict[str, set[tuple[str, ...]]]:
    """Return, by built page, the runs of whole search words that spell ``term``.

    Material's search box cuts a Chinese query with the words of the index
    and looks each piece up as a prefix, so a term is found where the words
    of the index begin and end exactly at its edges: 协程 as one word,
    事件循环 as 事件 followed by 循环.
    """
    index = json.loads((site / "search" / "search_index.json").read_text(encoding="utf-8"))
    separator = re.compile(index["config"]["separator"])
    runs: dict[str, set[tuple[str, ...]]] = {}
    for entry in index["docs"]:
        words = [word for word in separator.split(f"{entry['title']} {entry['text']}") if word]
        for start in range(len(words)):
            end = start + 1
            while end <= len(words) and term.startswith("".join(words[start:end])):
                if "".join(words[start:end]) == term:
                    location = entry["location"].split("#")[0]
                    runs.setdefault(location, set()).add(tuple(words[start:end]))
                    break
                end += 1
    return runs


@pytest.mark.parametrize(
    ("term", "pages"),
    [
        ("协程", {"zh/glossary/", "zh/generators/", "zh/coroutines/", "zh/asyncio/"}),
        ("事件循环", {"zh/glossary/", "zh/callbacks/", "zh/coroutines/"}),
        ("回调", {"zh/glossary/", "zh/callbacks/"}),
        ("栈撕裂", {"zh/glossary/", "zh/callbacks/"}),
    ],
)
def test_chinese_terms_are_found_by_search(built_site: Path, term: str, pages: set[str]) -> None:
    """The search index cuts Chinese text into words, and a term's pages hold it as words."""
    runs = search_runs(built_site, term)
    assert pages <= set(runs), f"a search for {term} finds {sorted(runs)}"
    cuts = {run for page_runs in runs.values() for run in page_runs}
    assert not any(all(len(word) == 1 for word in run) for run in cuts), f"{term} cut up: {cuts}"

"""The chapters read at the pace of the chapter they follow (tests/prose.py measures it).

Every page of the reading path holds a floor on sentence length, in both
languages; the contract and the reference may be denser, with a looser
cap on the longest sentence.  The Chinese pages use the glossary's terms:
a glossary term left in English in Chinese prose is found here.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.prose import INLINE_CODE, pace, prose_blocks

DOCS = Path(__file__).resolve().parent.parent / "docs"
PATH_PAGES = [
    "index", "threads", "callbacks", "generators", "coroutines", "await", "server",
    "asyncio", "beyond", "simulation", "side-by-side", "build-your-own", "closing",
]  # fmt: skip
DENSE_PAGES = ["contract", "reference"]


def page_files(names: list[str]) -> list[Path]:
    """Return each page of ``names`` in both languages."""
    return [DOCS / f"{name}{suffix}" for name in names for suffix in (".md", ".zh.md")]


@pytest.mark.parametrize("page", page_files(PATH_PAGES), ids=lambda path: path.name)
def test_a_page_of_the_path_reads_at_the_chapters_pace(page: Path) -> None:
    measured = pace(page)
    if page.name.endswith(".zh.md"):
        median, over, share, longest = 35, 80, 0.08, 150
        unit = "characters"
    else:
        median, over, share, longest = 17, 35, 0.05, 60
        unit = "words"
    problems = []
    if measured.median > median:
        problems.append(f"median sentence {measured.median:g} {unit} (at most {median})")
    if measured.share_over(over) > share:
        problems.append(
            f"{measured.share_over(over):.0%} of sentences over {over} {unit} (at most {share:.0%})"
        )
    if measured.longest > longest:
        problems.append(
            f"longest sentence {measured.longest} {unit} (at most {longest}): "
            f"{measured.longest_sentence!r}"
        )
    assert not problems, f"{page.name} reads too densely: " + "; ".join(problems)


@pytest.mark.parametrize("page", page_files(DENSE_PAGES), ids=lambda path: path.name)
def test_a_reference_page_has_no_overlong_sentence(page: Path) -> None:
    measured = pace(page)
    cap, unit = (200, "characters") if page.name.endswith(".zh.md") else (80, "words")
    assert measured.longest <= cap, (
        f"{page.name}: a sentence of {measured.longest} {unit} (at most {cap}): "
        f"{measured.longest_sentence!r}"
    )


def glossary_terms() -> dict[str, str]:
    """Return each term of the glossary's table, English to its Chinese rendering."""
    terms = {}
    for line in (DOCS / "glossary.zh.md").read_text(encoding="utf-8").splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if (
            len(cells) == 3
            and cells[0] not in ("英文", "---")
            and re.fullmatch(r"[a-z -]+", cells[0])
        ):
            terms[cells[0]] = cells[2]
    return terms


def test_the_glossary_lists_its_terms() -> None:
    terms = glossary_terms()
    assert {"event loop", "coroutine", "worker", "future"} <= terms.keys()


CHINESE_PAGES = sorted(set(DOCS.glob("*.zh.md")) - {DOCS / "glossary.zh.md"})


@pytest.mark.parametrize("page", CHINESE_PAGES, ids=lambda path: path.name)
def test_chinese_prose_uses_the_glossarys_terms(page: Path) -> None:
    """An English glossary term in Chinese prose is a gloss in brackets, or kept by the glossary.

    The glossary keeps a few words as they are (``Future``); every other
    term is written in Chinese, and its English may follow it once in
    brackets, as a gloss: 工作任务（worker）.  A capitalised word is a name
    (the class ``Task``, a title), not the term.
    """
    found = []
    for term, rendering in glossary_terms().items():
        if rendering.lower().startswith(term):
            continue  # Kept in English on purpose, as the glossary says.
        word = re.compile(rf"(?<![\w`/.-]){re.escape(term)}s?(?![\w`/.-])")
        for block in prose_blocks(page.read_text(encoding="utf-8")):
            text = re.sub(r"<!--.*?-->", "", INLINE_CODE.sub("", block))
            text = re.sub(r"\]\([^)]*\)", "]", text)  # Link targets are addresses.
            for match in word.finditer(text):
                before = text[: match.start()].rstrip()
                if before.endswith(("（", "(", "“", '"', "、", "/")):
                    continue  # A gloss: 工作任务（worker）, or a term quoted.
                found.append(
                    f"{match.group(0)!r} in …{text[max(0, match.start() - 20) : match.end() + 10]}…"
                )
    assert not found, f"{page.name}: glossary terms left in English: " + "; ".join(found)

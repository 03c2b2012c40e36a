"""How long the sentences of a docs page are: the pace a reader meets.

The prose of a Markdown page is what is left when code, tables, headings,
HTML and snippet lines are taken out; a list item is a block of its own, so
a sentence never runs from one item into the next.  An English sentence
ends at ``.``, ``!`` or ``?`` followed by a space and a capital (or an
opening quote or bracket); a Chinese one ends at ``。``, ``！`` or ``？``.

English length is counted in words, a span of inline code as one word.
Chinese length is counted in characters: every character that is not a
space, Latin letters and the text of inline code included.

Run ``python -m tests.prose docs/*.md`` for a table of every page.
"""

from __future__ import annotations

import re
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path

FENCE = re.compile(r"^\s*(```|~~~)")
LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
# Lines that are not prose: headings, tables, HTML, snippets, admonition and
# tab titles, abbreviations, footnote definitions, images, attribute lists.
NOT_PROSE = re.compile(
    r"^\s*(?:#|\||<|-{2,}8<-{2,}|!!!|\?\?\?|===|\*\[|\[\^[^]]*\]:|!\[|\{[:#.]|"
    r"\[[^]]+\]:\s)"
)
INLINE_CODE = re.compile(r"(`+)(.+?)\1")
LINK = re.compile(r"!?\[([^]]*)\]\([^)]*\)|\[([^]]*)\]\[[^]]*\]")
EMPHASIS = re.compile(r"\*\*|__|(?<!\w)[*_](?=\S)|(?<=\S)[*_](?!\w)")
EN_END = re.compile(r"(?<=[.!?])[\"')\]”’]*\s+(?=[\"'(\[“‘]?[A-Z])")
ZH_END = re.compile(r"(?<=[。！？])[”’」』）)]*")
WORD = re.compile(r"[A-Za-z0-9]")


@dataclass(frozen=True)
class Pace:
    """The sentence lengths of one page, and the figures the floor is set in."""

    path: Path
    lengths: tuple[int, ...]
    longest_sentence: str

    @property
    def median(self) -> float:
        return statistics.median(self.lengths) if self.lengths else 0

    def share_over(self, limit: int) -> float:
        """Return the fraction of sentences longer than ``limit``."""
        if not self.lengths:
            return 0.0
        return sum(length > limit for length in self.lengths) / len(self.lengths)

    @property
    def longest(self) -> int:
        return max(self.lengths, default=0)


def prose_blocks(markdown: str) -> list[str]:
    """Return the page's prose, one string per paragraph or list item."""
    blocks: list[str] = []
    current: list[str] = []
    fenced = False
    front_matter = markdown.startswith("---\n")
    for number, line in enumerate(markdown.splitlines()):
        if front_matter:
            if number > 0 and line.strip() == "---":
                front_matter = False
            continue
        if FENCE.match(line):
            fenced = not fenced
            continue
        if fenced or not line.strip() or NOT_PROSE.match(line) or line.startswith("    " * 2):
            if current:
                blocks.append(" ".join(current))
                current = []
            continue
        if LIST_ITEM.match(line) and current:
            blocks.append(" ".join(current))
            current = []
        current.append(LIST_ITEM.sub("", line, count=1).strip())
    if current:
        blocks.append(" ".join(current))
    return blocks


def plain(block: str, chinese: bool) -> str:
    """Return a block's text with Markdown marks taken out.

    Inline code becomes one word in English; in Chinese its text stays.
    """
    text = INLINE_CODE.sub(lambda match: match.group(2) if chinese else "C", block)
    text = LINK.sub(lambda match: match.group(1) or match.group(2) or "", text)
    text = EMPHASIS.sub("", text)
    text = re.sub(r"\{[^}]*\}", "", text)  # Attribute lists: { #anchor }.
    return text.strip()


def sentences(block: str, chinese: bool) -> list[str]:
    """Split one block into its sentences."""
    parts = ZH_END.split(block) if chinese else EN_END.split(block)
    return [part.strip() for part in parts if part.strip()]


def length(sentence: str, chinese: bool) -> int:
    """Return a sentence's length: words in English, characters in Chinese."""
    if not chinese:
        return sum(1 for word in sentence.split() if WORD.search(word))
    return len(re.sub(r"\s", "", sentence))


def pace(path: Path) -> Pace:
    """Measure one page."""
    chinese = path.name.endswith(".zh.md")
    found = [
        sentence
        for block in prose_blocks(path.read_text(encoding="utf-8"))
        for sentence in sentences(plain(block, chinese), chinese)
    ]
    lengths = tuple(length(sentence, chinese) for sentence in found)
    longest = max(found, key=lambda sentence: length(sentence, chinese), default="")
    return Pace(path, lengths, longest)


def main(paths: list[str]) -> None:
    """Print a row of figures for each page named."""
    print(f"{'page':28} {'median':>6} {'>35/80':>7} {'longest':>7} {'sentences':>9}")
    for name in paths:
        measured = pace(Path(name))
        limit = 80 if name.endswith(".zh.md") else 35
        print(
            f"{Path(name).name:28} {measured.median:6.0f} "
            f"{measured.share_over(limit):7.0%} {measured.longest:7} {len(measured.lengths):9}"
        )


if __name__ == "__main__":
    main(sys.argv[1:])

"""Tests of the documentation site: it builds, and every example in it runs.

The pages hold no code of their own: Python code is included from real,
tested files by named sections (``--8<-- "path:section"``), interactive
examples (```` ```pycon ```` blocks) are run here with doctest on this
Python, and command output is produced by a build hook
(``docs/hooks/command_output.py``).  So a strict build plus these tests
mean that what a reader sees is what the code does today.
"""

from __future__ import annotations

import ast
import asyncio
import contextlib
import doctest
import html
import importlib.util
import inspect
import io
import json
import re
import textwrap
import types
from pathlib import Path
from types import ModuleType

import pytest

import stage1_callbacks.loop
import stage3_asyncio.crawler
from shared.testsite.server import ServerThread, make_app
from tests.test_trace import english_labels

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
PAGES = sorted(DOCS.glob("*.md"))
# A fenced block: its indent (content tabs indent by four), language, body.
FENCE = re.compile(
    r"^(?P<indent>[ \t]*)(?P<fence>`{3,})(?P<lang>[\w-]*)(?P<info>[^\n]*)\n"
    r"(?P<body>.*?)^(?P=indent)(?P=fence)[ \t]*$",
    re.MULTILINE | re.DOTALL,
)
SHELL_LANGUAGES = {"console", "bash", "sh", "shell"}
# A ```pycon block with this title is a session at the asyncio prompt.
ASYNCIO_PROMPT = 'title="python -m asyncio"'
MAX_SHELL_LINES = 12  # A few commands to type, not a script.


def fenced_blocks(page: Path) -> list[tuple[str, str, int]]:
    """Return ``(language, dedented body, line number)`` for each fenced block of a page.

    The language of an asyncio prompt session is ``asyncio-pycon``.
    """
    text = page.read_text(encoding="utf-8")
    blocks = []
    for match in FENCE.finditer(text):
        body = textwrap.dedent(match["body"])
        line = text.count("\n", 0, match.start("body")) + 1
        lang = match["lang"]
        if lang == "pycon" and ASYNCIO_PROMPT in match["info"]:
            lang = "asyncio-pycon"
        blocks.append((lang, body, line))
    return blocks


def load_example(name: str) -> ModuleType:
    """Import ``docs/examples/<name>.py``, which is not in a package."""
    path = DOCS / "examples" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"docs_example_{name}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# --- The site builds -------------------------------------------------------


@pytest.mark.slow
def test_site_builds_strictly(built_site: Path) -> None:
    """Every snippet resolves, every link and anchor checks, every hook command runs."""
    site = built_site  # The fixture fails on any warning of the strict build.
    # What the snippets and the hook put in is really there, not silently empty.
    assert "python -m shared.testsite --port 8000" in page_text(site / "index.html")
    callbacks = page_text(site / "callbacks" / "index.html")
    real_callbacks = page_text(site / "real-callbacks" / "index.html")
    assert first_line(stage1_callbacks.loop.EventLoop.run_once) in real_callbacks
    assert "Traceback (most recent call last):" in callbacks
    asyncio_page = page_text(site / "real-asyncio" / "index.html")
    assert first_line(stage3_asyncio.crawler.Crawler.work) in asyncio_page
    # The prose about forgotten tasks quotes what asyncio printed at build time.
    assert "Task was destroyed but it is pending!" in asyncio_page
    assert "Task exception was never retrieved" in asyncio_page
    # The steps ran against the hook's test site, shown at the reader's address.
    assert "HTTP/1.0 200 OK http://127.0.0.1:8000/pages/1/" in callbacks
    assert "usage: crawl" in page_text(site / "reference" / "index.html")
    assert_works_offline(site)


FIGURES = ["threads", "callbacks", "coroutines", "asyncio", "side-by-side"]
IMAGE = re.compile(r'<img src="(?P<src>[^"]+\.svg)" alt="(?P<alt>[^"]*)"')


@pytest.mark.slow
@pytest.mark.parametrize("language", ["", "zh"])
@pytest.mark.parametrize("page", FIGURES)
def test_timelines_are_drawn_into_the_site(built_site: Path, language: str, page: str) -> None:
    """Each chapter named in the issue shows a timeline, drawn at build time, with alt text."""
    folder = built_site / language / page if language else built_site / page
    images = IMAGE.findall((folder / "index.html").read_text(encoding="utf-8"))
    assert images, f"no timeline in {page}"
    for src, alt in images:
        assert alt.startswith("时间线" if language else "Timeline"), alt
        svg = (folder / src).resolve()
        assert svg.is_file() and svg.parent == built_site / "timelines"
        assert svg.read_text(encoding="utf-8").startswith("<svg ")
    text = page_text(folder / "index.html")
    assert "loop-share" not in text and "timeline:" not in text  # Every marker was replaced.


def load_hook(name: str) -> ModuleType:
    """Import ``docs/hooks/<name>.py``, which is not in a package."""
    path = DOCS / "hooks" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"docs_hook_{name}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_crawl_step_timeline_draws_each_fetch_on_its_worker(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Each lane of the stage 2 crawl step's figure holds the URLs its worker took.

    A future runs its callbacks at once, so one worker's ``put_nowait``
    resumes another inside it: a lane noted once per resume, not per
    task, goes to whichever worker resumed last.
    """
    from stage2_generators.steps import crawl
    from stage2_generators.steps.yield_from import Coroutine

    taken: list[list[str]] = []  # The URLs each worker took, in the order they started.

    def work(self: crawl.Crawler) -> Coroutine:
        mine: list[str] = []
        taken.append(mine)
        while True:
            url = yield from self.q.get()
            mine.append(url)
            yield from self.fetch(url)
            self.q.task_done()

    monkeypatch.setattr(crawl.Crawler, "work", work)
    timelines = load_hook("timelines")
    out = tmp_path / "crawl-step.json"
    printed = io.StringIO()
    with ServerThread(make_app(10, latency=0.02)) as server, contextlib.redirect_stdout(printed):
        timelines.crawl_step(server.url, str(out))
    events = json.loads(out.read_text(encoding="utf-8"))["traceEvents"]
    lanes = {e["tid"]: e["args"]["name"] for e in events if e["name"] == "thread_name"}
    drawn: dict[str, set[str]] = {}
    for event in events:
        if event.get("cat") == "fetch":
            drawn.setdefault(lanes[event["tid"]], set()).add(event["args"]["url"])
    made = {f"worker {n}": set(urls) for n, urls in enumerate(taken, start=1) if urls}
    assert sum(len(urls) for urls in made.values()) > timelines.MAX_TASKS  # Workers took turns.
    assert drawn == made


@pytest.mark.slow
@pytest.mark.parametrize("page", FIGURES)
def test_the_chinese_figures_are_labelled_in_chinese(built_site: Path, page: str) -> None:
    """A figure on a Chinese page has no English word, code aside (see english_labels)."""
    folder = built_site / "zh" / page
    images = IMAGE.findall((folder / "index.html").read_text(encoding="utf-8"))
    assert images
    for src, _ in images:
        svg = (folder / src).resolve().read_text(encoding="utf-8")
        assert english_labels(svg) == [], f"{page}: {src}"


# The chapters of the stages, and how many numbered lines of code each may
# show: every line of every code block (source, a session at the prompt,
# what a program printed), each of which the page numbers with an anchor
# of its own (``<span id="__span-BLOCK-LINE">``).  A chapter reaches its
# point sooner when it shows the part of a file that a step adds.  What a
# collapsed block holds (an exercise's solution, ``??? success``) is not
# counted: the reader scrolls past it closed, and opens it only at the end.
CHAPTER_LINES = {
    "threads": 700,
    "callbacks": 700,
    "coroutines": 600,
    "await": 700,
    "server": 700,
    "asyncio": 700,
    "beyond": 700,
}
CODE_LINE = re.compile(r'<span id="__span-\d+-\d+">')
COLLAPSED = re.compile(r"<details\b.*?</details>", re.S)


@pytest.mark.slow
@pytest.mark.parametrize("language", ["", "zh"])
@pytest.mark.parametrize(("page", "most"), CHAPTER_LINES.items())
def test_a_stage_chapter_shows_few_enough_lines_of_code(
    built_site: Path, language: str, page: str, most: int
) -> None:
    folder = built_site / language / page if language else built_site / page
    page_html = (folder / "index.html").read_text(encoding="utf-8")
    shown = len(CODE_LINE.findall(COLLAPSED.sub("", page_html)))
    assert 0 < shown <= most


# What a page makes the browser fetch: scripts, style sheets, fonts, icons.
ASSET_REFERENCE = re.compile(
    r"<script\b[^>]*\bsrc=\"(?P<script>[^\"]+)\"|<link\b[^>]*\bhref=\"(?P<link>[^\"]+)\"[^>]*>"
)
REMOTE = re.compile(r"^(?:[a-z][a-z0-9+.-]*:)?//", re.IGNORECASE)


def remote_assets(page: str) -> list[str]:
    """Return the scripts and style sheets (or fonts, icons) ``page`` loads from another host."""
    remote = []
    for match in ASSET_REFERENCE.finditer(page):
        url = match["script"] or match["link"]
        is_asset = match["script"] or re.search(r"\brel=\"(?:stylesheet|preload|icon)", match[0])
        if is_asset and REMOTE.match(url):
            remote.append(url)
    return remote


def test_remote_assets_are_found() -> None:
    page = (
        '<link rel="stylesheet" href="https://cdn.example/x.css">'
        '<link rel="canonical" href="https://example.org/">'
        '<script src="//unpkg.com/mermaid.js"></script><script src="../local.js"></script>'
    )
    assert remote_assets(page) == ["https://cdn.example/x.css", "//unpkg.com/mermaid.js"]


def assert_works_offline(site: Path) -> None:
    """No page loads a script or style from another host; diagrams have Mermaid at hand.

    Mermaid's 3.5 MB are loaded only where a diagram needs them
    (docs/hooks/mermaid_where_drawn.py), and the replay player only where
    a page holds one (docs/hooks/replay.py), with its journal in the site.
    """
    pages = sorted(site.rglob("*.html"))
    assert pages
    drawn = players = 0
    for path in pages:
        page = path.read_text(encoding="utf-8")
        assert remote_assets(page) == [], path.relative_to(site)
        # Material fetches Mermaid from a CDN only when no copy was loaded.
        has_diagram = 'class="mermaid"' in page
        drawn += has_diagram
        assert ('javascripts/mermaid.min.js"' in page) == has_diagram, path.relative_to(site)
        has_player = '<div class="replay"' in page
        players += has_player
        assert ('javascripts/replay.js"' in page) == has_player, path.relative_to(site)
        assert ('stylesheets/replay.css"' in page) == has_player, path.relative_to(site)
    assert 0 < drawn < len(pages)
    assert players == 2  # The real-coroutines page, in each language.
    assert (site / "replay" / "generators.json").is_file()


def page_text(path: Path) -> str:
    """Return the text of a built page, without its tags."""
    return html.unescape(re.sub(r"<[^>]*>", "", path.read_text(encoding="utf-8")))


def first_line(function: object) -> str:
    """Return the first line of a function's docstring."""
    return (inspect.getdoc(function) or "").splitlines()[0]


def test_pages_are_all_in_the_nav() -> None:
    """Each page under docs/ is listed in mkdocs.yml (strict also checks this).

    A Chinese page, ``NAME.zh.md``, takes the place of ``NAME.md`` in the nav.
    """
    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    for page in PAGES:
        name = page.name.replace(".zh.md", ".md")
        assert f" {name}" in config, f"{name} is not in the nav"


# --- The pages hold no untested code ----------------------------------------


@pytest.mark.parametrize("page", PAGES, ids=[page.name for page in PAGES])
def test_code_blocks_are_included_or_executed(page: Path) -> None:
    """Python in a page is either included from a source file or a doctest run here."""
    for lang, body, line in fenced_blocks(page):
        where = f"{page.name}:{line}"
        if lang == "mermaid":
            # Mermaid renders in the browser, so nothing here checks its syntax;
            # a ";" ends a statement in Mermaid, and one inside a label breaks it.
            assert ";" not in body, f"{where}: a ';' in a Mermaid diagram"
            continue
        if lang in ("pycon", "asyncio-pycon", "text"):
            continue
        if lang in SHELL_LANGUAGES:
            assert body.count("\n") <= MAX_SHELL_LINES, f"{where}: a long shell block"
            continue
        lines = [text for text in body.splitlines() if text.strip()]
        assert lines, f"{where}: an empty code block"
        assert all(text.lstrip().startswith("--8<--") for text in lines), (
            f"{where}: a ```{lang} block must only include code from a tested file"
        )


# Where code shown on a page lives: the lesson, the hooks, and the broken
# crawlers that the page "Build your own" shows.
SECTION_FOLDERS = [
    *("shared", "stage1_callbacks", "stage2_generators", "stage3_asyncio", "docs"),
    "tests/broken",
]
SECTION_START = re.compile(r"#\s*--8<--\s*\[start:(?P<name>[\w-]+)\]")
SECTION_INCLUDE = re.compile(r'--8<--\s*"(?P<path>[^":]+):(?P<name>[\w-]+)"')
# Sections whose code has landed before the page that shows it: each owner
# includes its section in a page, then removes it from here (the test fails
# for an entry that is included already, so the list only shrinks).
PENDING_SECTIONS: set[str] = set()


def test_every_snippet_section_is_included() -> None:
    """A section marked in the code is shown on some page, or its markers go."""
    sources = [path for folder in SECTION_FOLDERS for path in (ROOT / folder).rglob("*.py")]
    marked = {
        f"{path.relative_to(ROOT).as_posix()}:{match['name']}"
        for path in sources
        for match in SECTION_START.finditer(path.read_text(encoding="utf-8"))
    }
    included = {
        f"{match['path']}:{match['name']}"
        for page in DOCS.rglob("*.md")
        for match in SECTION_INCLUDE.finditer(page.read_text(encoding="utf-8"))
    }
    assert included <= marked, "a page includes a section that no file marks"
    assert sorted(marked - included - PENDING_SECTIONS) == [], "sections shown nowhere"
    assert sorted(PENDING_SECTIONS & included) == [], "included now: drop from PENDING_SECTIONS"
    assert marked >= PENDING_SECTIONS, "pending sections that no longer exist"


WHOLE_FILE = re.compile(r'^[ \t]*--8<--\s*"(?P<path>[^":]+)"\s*$', re.MULTILINE)
LINE_RANGE = re.compile(r'--8<--\s*"(?P<path>[^":]+):(?P<start>\d+):(?P<end>\d+)"')


def test_a_file_numbered_whole_marks_no_section() -> None:
    """Snippets drops a whole file's section markers: numbered lines would not match the file."""
    for page in PAGES:
        for block in FENCE.finditer(page.read_text(encoding="utf-8")):
            if "linenums" not in block["info"]:
                continue
            for path in WHOLE_FILE.findall(block["body"]):
                text = (ROOT / path).read_text(encoding="utf-8")
                assert not SECTION_START.search(text), f"{page.name} numbers {path} whole"


def test_a_range_of_lines_is_one_whole_definition() -> None:
    """A ``path:start:end`` include begins at a ``def`` and ends where its body does."""
    for page in PAGES:
        for match in LINE_RANGE.finditer(page.read_text(encoding="utf-8")):
            lines = (ROOT / match["path"]).read_text(encoding="utf-8").splitlines()
            start, end = int(match["start"]) - 1, int(match["end"])
            first, after = lines[start], lines[end] if end < len(lines) else ""
            where = f"{page.name}: {match[0]}"
            assert first.lstrip().startswith(("def ", "async def ", "class ")), where
            indent = len(first) - len(first.lstrip())
            assert len(lines[end - 1]) - len(lines[end - 1].lstrip()) > indent, where
            assert not after.strip() or len(after) - len(after.lstrip()) <= indent, where


# --- Interactive examples ---------------------------------------------------

PAGES_WITH_EXAMPLES = [page for page in PAGES if any(b[0] == "pycon" for b in fenced_blocks(page))]


@pytest.mark.parametrize("page", PAGES_WITH_EXAMPLES, ids=[p.name for p in PAGES_WITH_EXAMPLES])
def test_interactive_examples(page: Path) -> None:
    """Run the page's ```pycon blocks in order, in one namespace, as doctests."""
    parser = doctest.DocTestParser()
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS, verbose=False)
    globs: dict[str, object] = {"__name__": f"docs_{page.stem}"}
    report: list[str] = []
    for lang, body, line in fenced_blocks(page):
        if lang != "pycon":
            continue
        test = parser.get_doctest(body, globs, f"{page.name}:{line}", str(page), line - 1)
        runner.run(test, out=report.append, clear_globs=False)
        globs = test.globs  # DocTest copies its globals: hand them to the next block.
    failed, attempted = runner.summarize(verbose=False)
    assert attempted > 0
    assert failed == 0, "".join(report)


PAGES_WITH_ASYNCIO_PROMPT = [
    page for page in PAGES if any(block[0] == "asyncio-pycon" for block in fenced_blocks(page))
]


@pytest.mark.parametrize(
    "page", PAGES_WITH_ASYNCIO_PROMPT, ids=[p.name for p in PAGES_WITH_ASYNCIO_PROMPT]
)
def test_asyncio_prompt_examples(page: Path) -> None:
    """Run the page's ``python -m asyncio`` sessions the way that prompt does.

    Like the asyncio prompt, each input is compiled with top-level await
    allowed and run as a function on one event loop, whose tasks live on
    from one input to the next; what it prints must match the page.
    """
    parser = doctest.DocTestParser()
    checker = doctest.OutputChecker()
    namespace: dict[str, object] = {"__name__": "__main__", "asyncio": asyncio}
    loop = asyncio.new_event_loop()
    attempted, failures = 0, []
    try:
        for lang, body, line in fenced_blocks(page):
            if lang != "asyncio-pycon":
                continue
            for example in parser.get_examples(body):
                printed = run_at_asyncio_prompt(loop, example.source, namespace)
                attempted += 1
                if not checker.check_output(example.want, printed, doctest.ELLIPSIS):
                    where = f"{page.name}:{line + example.lineno}"
                    failures.append(f"{where}: {example.source!r} printed {printed!r}")
    finally:
        loop.close()
    assert attempted > 0
    assert not failures, "\n".join(failures)


def run_at_asyncio_prompt(loop: asyncio.AbstractEventLoop, source: str, namespace: dict) -> str:
    """Run one input of an asyncio prompt session on ``loop``; return what it printed."""
    code = compile(source, "<stdin>", "single", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)

    async def run() -> None:
        value = types.FunctionType(code, namespace)()
        if inspect.iscoroutine(value):
            await value

    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        loop.run_until_complete(run())
    return printed.getvalue()


def test_examples_exist_where_promised() -> None:
    """The chapter on generators is built from interactive examples; asyncio's has prompt ones."""
    assert DOCS / "generators.md" in PAGES_WITH_EXAMPLES
    assert DOCS / "asyncio.md" in PAGES_WITH_ASYNCIO_PROMPT


# --- The example programs ---------------------------------------------------


@pytest.mark.parametrize(
    ("stage", "on_the_stack"),
    [("callbacks", False), ("generators", True), ("asyncio", True)],
)
def test_stack_ripping_example(stage: str, on_the_stack: bool) -> None:
    """Only the coroutine stages keep ``work`` and ``fetch`` on the stack of a bug."""
    example = load_example("stack_ripping")
    names = [frame.name for frame in example.stack_of_a_bug(stage)]
    assert names[-2:] == ["handle_response", "parse_links"]
    assert ("work" in names and "fetch" in names) == on_the_stack


@pytest.mark.parametrize("stage", ["callbacks", "generators", "asyncio"])
def test_stack_ripping_example_shows_each_frame_once(stage: str) -> None:
    """The frame whose ``except`` caught the bug is printed once, not twice."""
    example = load_example("stack_ripping")
    stack = example.stack_of_a_bug(stage)
    ours = [(f.filename, f.name) for f in stack if example.short_name(f.filename)[0] != "<"]
    assert len(ours) == len(set(ours))  # The project's frames; asyncio has two runs.

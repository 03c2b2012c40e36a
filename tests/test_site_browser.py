"""The docs site in a real browser: every page of both languages, as a reader sees it.

The built site (the ``built_site`` fixture) is served from 127.0.0.1 and
opened in Chromium, driven by Playwright.  The browser is the system's
(Debian's ``chromium`` package, which ``.ci/run`` installs): Playwright
downloads nothing.  Every request to another address is blocked and
recorded, so a page that would reach out to the network fails here instead
of quietly working only when online.

Each page is opened once (``visit`` keeps what it saw, and opens a few
pages side by side, which the browser loads together) and then checked for
what a reader would notice: an error in the console, a request leaving the
machine, a Mermaid diagram left as text, a code block or a table that
scrolls sideways in a 1280 px wide window, a timeline narrower or wider
than the column of text.  The search box is tried in both languages.

Each chapter of the English site is also opened in the dark theme, which
checks that the theme is dark and that the figures drawn dark on light are
inverted.  For a person to look at, set ``SCREENSHOTS`` to a folder: each
English chapter is then photographed whole in both themes, into PNG files
there.  A full-page photograph costs seconds and asserts nothing, so
without ``SCREENSHOTS`` (as in CI) none is taken.

Where no browser can be started (no chromium, not Linux), these tests skip
with the reason; with ``CI=true`` in the environment they fail instead, so
CI cannot pass without them.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import http.server
import json
import os
import shutil
import sys
import threading
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from shared.record.journal import expand

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parent.parent
# Every page of the English site; each has its Chinese translation under /zh/.
PAGES = sorted(path.stem for path in (REPO / "docs").glob("*.md") if ".zh" not in path.suffixes)
LANGUAGES = {"en": "/", "zh": "/zh/"}
WIDTH = 1280  # A laptop's window: no code block may scroll sideways in it.
AT_ONCE = 3  # Pages the browser loads side by side.
SETTLE_TIMEOUT_MS = 120_000  # How long each page of a batch may take to settle.
# The chapters, photographed in both themes: the pages that teach, and the
# measurements (their charts).
CHAPTERS = ["threads", "callbacks", "generators", "coroutines", "await", "server", "asyncio",
            "beyond", "side-by-side", "measurements"]  # fmt: skip
# As root Chromium needs --no-sandbox; the others keep it from calling home.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-gpu",
]
# Material draws each diagram into a closed shadow root, which no script can
# look into; opened, the test can see the SVG inside.  Nothing else changes.
OPEN_SHADOW_ROOTS = """
const attachShadow = Element.prototype.attachShadow;
Element.prototype.attachShadow = function (init) {
    return attachShadow.call(this, { ...init, mode: "open" });
};
"""


def no_browser(reason: str) -> None:
    """Skip the test, saying why; fail it instead on CI, which must run it."""
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI must run the browser tests, but {reason}", pytrace=False)
    pytest.skip(reason)


def page_path(language: str, name: str) -> str:
    """Return the URL path of the page built from docs/NAME.md in ``language``."""
    return LANGUAGES[language] + ("" if name == "index" else f"{name}/")


EVERY_PATH = [page_path(language, name) for language in LANGUAGES for name in PAGES]


@dataclasses.dataclass
class Window:
    """A browser context, and the requests to other addresses that it blocked."""

    context: Any
    outside_requests: list[str] = dataclasses.field(default_factory=list)


@dataclasses.dataclass
class Visit:
    """What the browser saw while it loaded one page."""

    status: int | None
    console_errors: list[str]
    outside_requests: list[str]
    diagrams_in_html: int
    diagrams: list[str]  # Per diagram drawn: "svg", or what went wrong.
    scrolling_blocks: list[str]
    # Per timeline: the width of the column of text, the figure's width on
    # the page, and the width it was drawn at (its SVG's own), in px.
    figures: list[list[int]]


# --- The site's server and the browser ----------------------------------------------------------


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    """Serve files from a directory without a log line per request."""

    def log_message(self, format: str, *args: Any) -> None:
        pass


@contextlib.contextmanager
def served(folder: Path) -> Iterator[str]:
    """Serve the files of ``folder`` from 127.0.0.1, on a port the system picks."""
    handler = functools.partial(QuietHandler, directory=str(folder))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


@pytest.fixture(scope="module")
def site_url(built_site: Path) -> Iterator[str]:
    """The built site, served from 127.0.0.1."""
    with served(built_site) as url:
        yield url


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Chromium from the system's packages, headless, started by Playwright."""
    if not sys.platform.startswith("linux"):
        no_browser(f"the browser tests use Debian's chromium, and this is {sys.platform}")
    executable = shutil.which("chromium") or shutil.which("chromium-browser")
    if executable is None:
        no_browser("no chromium on PATH (apt-get install chromium)")
    try:
        from playwright.sync_api import Error, sync_playwright
    except ImportError:
        no_browser("playwright is not installed (pip install -e '.[test]')")
    playwright = sync_playwright().start()
    try:
        try:
            chromium = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        except Error as error:
            no_browser(f"chromium does not start: {str(error).splitlines()[0]}")
        yield chromium
        chromium.close()
    finally:
        playwright.stop()


@pytest.fixture(scope="module")
def window(browser: Any, site_url: str) -> Iterator[Window]:
    """A browser window 1280 px wide that may reach only the site's server."""
    context = browser.new_context(viewport={"width": WIDTH, "height": 900}, service_workers="block")
    context.add_init_script(OPEN_SHADOW_ROOTS)
    window = Window(context)
    block_all_but(context, site_url, window.outside_requests)
    yield window
    context.close()


def block_all_but(context: Any, site_url: str, blocked: list[str]) -> None:
    """Let ``context`` reach only the server of ``site_url``; note other URLs in ``blocked``."""
    site = urllib.parse.urlsplit(site_url).netloc

    def only_the_site(route: Any) -> None:
        if urllib.parse.urlsplit(route.request.url).netloc == site:
            route.continue_()
        else:
            blocked.append(route.request.url)
            route.abort("blockedbyclient")

    context.route("**/*", only_the_site)


@pytest.fixture(scope="module")
def screenshots() -> Path | None:
    """The folder of the chapters' screenshots, $SCREENSHOTS; None when unset: no screenshots."""
    if not os.environ.get("SCREENSHOTS"):
        return None
    folder = Path(os.environ["SCREENSHOTS"])
    folder.mkdir(parents=True, exist_ok=True)
    print(f"\nscreenshots of the chapters in {folder}")
    return folder


@pytest.fixture(scope="module")
def visit(window: Window, site_url: str, built_site: Path, screenshots: Path | None) -> Any:
    """Return a function that returns what the browser saw on a page.

    The first call loads every page of the site; later calls look up.
    """
    visits: dict[str, Visit] = {}

    def seen(path: str) -> Visit:
        if not visits:
            visits.update(load_all(window, site_url, built_site, screenshots, EVERY_PATH))
        return visits[path]

    return seen


def shot_name(path: str, scheme: str) -> str:
    """Return the file name of a page's screenshot: ``zh-coroutines-dark.png``."""
    return "-".join(filter(None, path.strip("/").split("/"))) + f"-{scheme}.png"


def chapter(path: str) -> bool:
    """Say whether ``path`` is one of the chapters that are photographed: English ones only.

    A full-page photograph costs seconds; the Chinese pages have the same
    figures and themes (their labels are checked in tests/test_docs.py).
    """
    return path in [page_path("en", name) for name in CHAPTERS]


def load_all(
    window: Window, site_url: str, built_site: Path, screenshots: Path | None, paths: list[str]
) -> dict[str, Visit]:
    """Load ``paths``, AT_ONCE at a time, and return what the browser saw on each.

    The browser loads the pages of a batch side by side while the test waits
    on one.  A request off the machine is blocked for the whole window, so
    it cannot be pinned on one page of the batch: it counts against each.
    """
    visits = {}
    for first in range(0, len(paths), AT_ONCE):
        before = len(window.outside_requests)
        batch = [Loading(window, site_url, path) for path in paths[first : first + AT_ONCE]]
        try:
            seen = [loading.settle(built_site, screenshots) for loading in batch]
        finally:
            for loading in batch:
                loading.page.close()
        blocked = window.outside_requests[before:]
        for loading, visit in zip(batch, seen, strict=True):
            visits[loading.path] = dataclasses.replace(visit, outside_requests=blocked)
    return visits


class Loading:
    """A page the browser has started to load, and the errors its console shows."""

    def __init__(self, window: Window, site_url: str, path: str) -> None:
        self.path = path
        self.page = window.context.new_page()
        # Its batch loads at once, so a busy machine makes each page wait
        # longer than Playwright's 30 s default for it to settle.
        self.page.set_default_timeout(SETTLE_TIMEOUT_MS)
        self.errors: list[str] = []
        self.page.on(
            "console",
            lambda message: self.errors.append(message.text) if message.type == "error" else None,
        )
        self.page.on("pageerror", lambda error: self.errors.append(f"uncaught: {error}"))
        # Back as soon as the page starts to arrive; settle() waits for the rest.
        self.response = self.page.goto(site_url + path, wait_until="commit")

    def settle(self, built_site: Path, screenshots: Path | None) -> Visit:
        """Let the page settle (loaded, diagrams drawn, network quiet) and note what happened.

        With a ``screenshots`` folder, a chapter is photographed first, as
        it stands, in the light theme.
        """
        page = self.page
        page.wait_for_load_state("load")
        html = (built_site / self.path.lstrip("/") / "index.html").read_text(encoding="utf-8")
        # Material replaces each <pre class="mermaid"> once Mermaid has drawn it.
        page.wait_for_function("() => !document.querySelector('pre.mermaid')")
        page.wait_for_load_state("networkidle")
        if screenshots and chapter(self.path):
            page.screenshot(path=screenshots / shot_name(self.path, "light"), full_page=True)
        return Visit(
            status=self.response.status if self.response else None,
            console_errors=self.errors,
            outside_requests=[],
            diagrams_in_html=html.count('<pre class="mermaid">'),
            diagrams=page.evaluate(DRAWN_DIAGRAMS),
            figures=page.evaluate(FIGURE_WIDTHS),
            scrolling_blocks=page.evaluate(SCROLLING_BLOCKS),
        )


# The width of the column of text, and of each timeline, shown and drawn.
FIGURE_WIDTHS = """() => [...document.querySelectorAll("figure.timeline img")].map(image => {
    const column = image.closest("article");
    const style = getComputedStyle(column);
    const inner = column.clientWidth - parseFloat(style.paddingLeft)
        - parseFloat(style.paddingRight);
    return [inner, image.getBoundingClientRect().width, image.naturalWidth].map(Math.round);
})"""


# What each diagram became: "svg" when Mermaid drew it.
DRAWN_DIAGRAMS = """() => [...document.querySelectorAll("div.mermaid")].map(host => {
    const svg = host.shadowRoot && host.shadowRoot.querySelector("svg");
    if (!svg) return "no svg";
    if (svg.textContent.includes("Syntax error")) return "Mermaid's syntax error picture";
    return "svg";
})"""

# Show every code block (closed details, other tabs), then list those whose
# content is wider than their box, and the tables wider than theirs
# (Material wraps each table in a box that scrolls): a reader would have to
# scroll them.
SCROLLING_BLOCKS = """() => {
    document.querySelectorAll("details").forEach(details => { details.open = true; });
    const style = document.createElement("style");
    style.textContent = ".tabbed-set > .tabbed-content > .tabbed-block { display: block }";
    document.head.append(style);
    return [...document.querySelectorAll("pre > code, .highlight, .md-typeset__scrollwrap")]
        .filter(block => block.scrollWidth > block.clientWidth)
        .map(block => {
            const title = block.closest(".highlight")?.querySelector(".filename")?.textContent
                || block.querySelector("th")?.textContent;
            const first = block.textContent.trim().split("\\n")[0].slice(0, 60);
            return `${title || first}: ${block.scrollWidth} px in ${block.clientWidth} px`;
        });
}"""


# --- Every page ---------------------------------------------------------------------------------

EVERY_PAGE = pytest.mark.parametrize("path", EVERY_PATH)


@EVERY_PAGE
def test_page_loads_without_console_errors(visit: Any, path: str) -> None:
    seen = visit(path)
    assert seen.status == 200
    assert seen.console_errors == []


@EVERY_PAGE
def test_page_makes_no_request_off_the_machine(visit: Any, path: str) -> None:
    assert visit(path).outside_requests == []


@EVERY_PAGE
def test_every_diagram_is_drawn(visit: Any, path: str) -> None:
    seen = visit(path)
    assert seen.diagrams == ["svg"] * seen.diagrams_in_html


@EVERY_PAGE
def test_no_code_block_scrolls_sideways(visit: Any, path: str) -> None:
    assert visit(path).scrolling_blocks == []


def test_the_pages_have_diagrams_to_check(visit: Any) -> None:
    """The diagram test would pass on a site without diagrams: make sure there are some."""
    assert sum(visit(page_path("en", name)).diagrams_in_html for name in PAGES) >= 3


@EVERY_PAGE
def test_every_timeline_is_drawn_as_wide_as_the_column(visit: Any, path: str) -> None:
    """At 1280 px a timeline fills the column, drawn one to one: its text at the body's size."""
    for column, shown, drawn in visit(path).figures:
        assert shown == column == drawn


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_pages_have_timelines_to_check(visit: Any, language: str) -> None:
    assert sum(len(visit(page_path(language, name)).figures) for name in PAGES) >= 6


# --- The dark theme -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def dark_window(browser: Any, site_url: str) -> Iterator[Any]:
    """A browser window like ``window``, whose system asks for dark pages."""
    context = browser.new_context(
        viewport={"width": WIDTH, "height": 900}, service_workers="block", color_scheme="dark"
    )
    site = urllib.parse.urlsplit(site_url).netloc
    context.route(
        "**/*",
        lambda route: (
            route.continue_()
            if urllib.parse.urlsplit(route.request.url).netloc == site
            else route.abort("blockedbyclient")
        ),
    )
    yield context
    context.close()


# The theme's name, the page's background, and the filter on each image
# that is drawn dark on light (timelines, the benchmark's charts).
DARK_LOOK = """() => [
    document.body.getAttribute("data-md-color-scheme"),
    getComputedStyle(document.body).backgroundColor,
    [...document.querySelectorAll("figure.timeline img, img.chart")]
        .map(image => getComputedStyle(image).filter),
]"""


@pytest.mark.parametrize("path", [page_path("en", name) for name in CHAPTERS])
def test_a_chapter_in_the_dark_theme(
    dark_window: Any, site_url: str, screenshots: Path | None, path: str
) -> None:
    """A reader who prefers dark pages gets the dark theme, figures inverted to match."""
    page = dark_window.new_page()
    try:
        page.goto(site_url + path, wait_until="load")
        page.wait_for_function("() => !document.querySelector('pre.mermaid')", timeout=30_000)
        page.wait_for_load_state("networkidle")
        if screenshots:
            page.screenshot(path=screenshots / shot_name(path, "dark"), full_page=True)
        scheme, background, filters = page.evaluate(DARK_LOOK)
    finally:
        page.close()
    assert scheme == "slate"
    red, green, blue = (int(n) for n in background[4:-1].split(", ")[:3])
    assert red + green + blue < 3 * 64, background
    assert all(f.startswith("invert(1)") for f in filters), filters


def test_the_light_theme_leaves_the_figures_as_drawn(window: Window, site_url: str) -> None:
    page = window.context.new_page()
    try:
        page.goto(site_url + page_path("en", "coroutines"), wait_until="load")
        scheme, _, filters = page.evaluate(DARK_LOOK)
    finally:
        page.close()
    assert scheme == "default" and filters and set(filters) == {"none"}


# --- The replay of stage 2's loop ---------------------------------------------------------------

# Which step the player shows, and each task's state in it (its row's class).
REPLAY_SHOWN = """root => [Number(root.dataset.step), [...root.querySelectorAll(".replay-task")]
    .map(row => [...row.classList].find(name => name !== "replay-task"
        && !["replay-current", "replay-chosen"].includes(name)).slice("replay-".length))]"""


@pytest.mark.parametrize("language", list(LANGUAGES))
def test_the_replay_steps_through_the_recorded_run(
    window: Window, site_url: str, built_site: Path, language: str
) -> None:
    """The real-coroutines page's player loads the build's journal and steps through it by key.

    Whether its page shows a console error or makes a request off the
    machine is checked with every page.
    """
    journal = json.loads((built_site / "replay" / "generators.json").read_text(encoding="utf-8"))
    page = window.context.new_page()
    try:
        page.goto(site_url + page_path(language, "real-coroutines"), wait_until="load")
        root = page.locator(".replay[data-ready=yes]")
        root.focus()
        for _ in range(5):
            page.keyboard.press("ArrowRight")
        shown = root.evaluate(REPLAY_SHOWN)
        page.keyboard.press("ArrowLeft")
        back = root.evaluate(REPLAY_SHOWN)
    finally:
        page.close()
    states = [[task["state"] for task in state["tasks"]] for state in expand(journal)]
    assert shown == [5, states[5]]
    assert back == [4, states[4]]
    assert len(journal["steps"]) > 40 and journal["tasks"][1:4] == [
        "worker 1",
        "worker 2",
        "worker 3",
    ]


# --- Search -------------------------------------------------------------------------------------


def search(window: Window, site_url: str, path: str, words: str) -> list[str]:
    """Type ``words`` into the search box of the page at ``path``; return the results' links."""
    page = window.context.new_page()
    try:
        page.goto(site_url + path, wait_until="load")
        box = page.locator("input[data-md-component=search-query]")
        box.click()
        box.press_sequentially(words)
        # Playwright enters Chinese as text, with no key event, as an input
        # method does until its last key; the box searches when a key goes up.
        box.press("End")
        results = page.locator(".md-search-result__item > a")
        results.first.wait_for(timeout=30_000)
        return [urllib.parse.urlsplit(link).path for link in results.evaluate_all(HREFS)]
    finally:
        page.close()


HREFS = "links => links.map(link => link.href)"


def test_search_finds_an_english_word_on_the_english_site(window: Window, site_url: str) -> None:
    # One index serves both languages (the i18n plugin builds one), and the
    # Chinese pages hold the same code: the English page must be among them.
    assert "/callbacks/" in search(window, site_url, "/", "selector")


def test_search_finds_a_chinese_word_on_the_chinese_site(window: Window, site_url: str) -> None:
    # The page that says 事件循环 most: stage 2's loop, on its real-site page.
    assert "/zh/real-coroutines/" in search(window, site_url, "/zh/", "事件循环")

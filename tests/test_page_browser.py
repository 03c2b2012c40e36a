"""The steps run in the page: every Run button of the built site, in headless Chromium.

The built site is served from 127.0.0.1 and every request to another
address is blocked: the page's Python (Pyodide, in a Web Worker) comes
from the site itself.  The runnable listings are found in the built
pages (``data-run="MODULE"``, docs/hooks/run_in_page.py puts it there),
not in a list kept here, and every step a lesson page includes (whole,
a line range or a named section) or shows the run of must be among them.  In each language,
each distinct step or ``>>>`` session runs once, on the first page (in
the order of the site's files) that shows it: what the page printed
must be what ``python -m shared.page MODULE`` printed on the command
line when the site was built (``pyodide/manifest.json``), and the page
must say so.  A page is opened only when it has something still to run,
and then once, so Python boots once per page; a listing of a step that
already ran on another page is checked for its controls only.

Then, on pages already open: an edited step (a listing that shows part
of it) runs the edit and shows its traceback as a terminal would, a run
of stage 2's loop opens in the replay player, and the page's own URL
parser (the browser's, through ``js.URL``) and the link parser pass the
URL and link tests (tests/test_urls.py, tests/test_links.py) under
pytest, in the worker.  Times are printed for the report (first run on a
page: the boot; later runs), never asserted.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests import test_site_browser

browser = test_site_browser.browser  # The system's Chromium, as the site's tests start it.

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parent.parent
RUN_TIMEOUT_MS = 300_000  # The first run boots Python: seconds, minutes on a loaded machine.
CLICK_TIMEOUT_MS = 60_000  # The buttons are enabled once the page's script has run.
# The text of a step's run, and the verdict the page gave.
RESULT = """box => ({
    text: box.querySelector(".run-output pre.run-text").textContent,
    verdict: box.dataset.verdict || "",
    about: box.querySelector(".run-output .run-about")?.textContent || "",
})"""


LISTING = re.compile(r'class="run-listing(?: run-session)?" data-run="([^"]+)"')
STEP_INCLUDE = re.compile(r'--8<-- "(stage[12]_\w+/steps/(?!__init__)\w+)\.py[^"]*"')
STEP_RUN = re.compile(r"<!-- output [^\n]*: python -m (stage[12]_\w+\.steps\.\w+) -->")


def runnable(built_site: Path) -> dict[str, list[str]]:
    """Return, for each built page with runnable listings, what they run, in order."""
    pages = {}
    for html in sorted(built_site.rglob("index.html")):
        modules = LISTING.findall(html.read_text("utf-8"))
        if modules:
            path = "/" + html.parent.relative_to(built_site).as_posix() + "/"
            pages[path.replace("//", "/")] = modules
    return pages


def language(path: str) -> str:
    return "zh" if path.startswith("/zh/") else "en"


@pytest.fixture(scope="module")
def site(built_site: Path) -> Iterator[str]:
    with test_site_browser.served(built_site) as url:
        yield url


@pytest.fixture(scope="module")
def manifest(built_site: Path) -> dict[str, Any]:
    return json.loads((built_site / "pyodide" / "manifest.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def context(browser: Any, site: str) -> Iterator[Any]:
    """A browser window that may reach only the site's server; it counts what it blocked."""
    context = browser.new_context(viewport={"width": 1280, "height": 900}, service_workers="block")
    context.outside = []
    test_site_browser.block_all_but(context, site, context.outside)
    yield context
    context.close()


# The pages the tests after the first one use: they stay open, their Python booted.
LATER = {"/callbacks/", "/zh/await/"}


class Pages:
    """Open pages of the site, each once; a page stays open until closed, or the module ends.

    So Python boots once per page for all the tests of the module: the
    edit, the player and the parsers are tried on pages whose steps ran.
    """

    def __init__(self, context: Any, site: str) -> None:
        self.context, self.site = context, site
        self.opened: dict[str, tuple[Any, list[str]]] = {}

    def __call__(self, path: str) -> tuple[Any, list[str]]:
        """Return the page at ``path`` and the list its console errors go to."""
        if path not in self.opened:
            page = self.context.new_page()
            page.set_default_timeout(RUN_TIMEOUT_MS)
            errors: list[str] = []
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            page.on("pageerror", lambda error: errors.append(f"uncaught: {error}"))
            page.goto(self.site + path, wait_until="load")
            self.opened[path] = page, errors
        return self.opened[path]

    def close(self, path: str) -> None:
        """Close the page at ``path``, and its Python with it (each holds its own)."""
        page, _ = self.opened.pop(path)
        page.close()


@pytest.fixture(scope="module")
def pages(context: Any, site: str) -> Iterator[Pages]:
    opened = Pages(context, site)
    yield opened
    for path in list(opened.opened):
        opened.close(path)


def run(box: Any) -> dict[str, Any]:
    """Press a listing's Run button; return what it printed once it is done."""
    box.locator(".run-button").click(timeout=CLICK_TIMEOUT_MS)
    box.page.wait_for_function(
        "box => !box.classList.contains('running')", arg=box.element_handle()
    )
    return box.evaluate(RESULT)


def test_every_step_a_lesson_page_shows_has_a_run_button(built_site: Path) -> None:
    """Each step a chapter includes (whole or in part) or shows the run of is runnable there.

    A step of another stage whose output a chapter shows for comparison is not.
    """
    pages = runnable(built_site)
    stages = {"callbacks": "stage1_callbacks", "coroutines": "stage2_generators",
              "await": "stage2_generators"}  # fmt: skip
    for chapter, stage in stages.items():
        for suffix, folder in ((".md", ""), (".zh.md", "zh/")):
            text = (REPO / "docs" / f"{chapter}{suffix}").read_text(encoding="utf-8")
            shown = {path.replace("/", ".") for path in STEP_INCLUDE.findall(text)}
            shown |= set(STEP_RUN.findall(text))
            assert {module.split(".")[0] for module in shown} == {stage}, chapter
            assert set(pages[f"/{folder}{chapter}/"]) == shown, (chapter, suffix)
    assert "stage1_callbacks.steps.nonblocking" in pages["/callbacks/"]  # Its output only.
    for folder in ("", "zh/"):
        page = "docs/generators" + (".zh.md" if folder else ".md")
        assert pages[f"/{folder}generators/"] == [f"{page}:{n}" for n in range(1, 11)]
        threads = (built_site / folder / "threads" / "index.html").read_text(encoding="utf-8")
        assert threads.count('class="run-note run-elsewhere"') == 1  # The thread step's note.
        assert "python -m stage1_callbacks.steps.threads</code>" in threads
        asyncio = pages.get(f"/{folder}asyncio/", [])
        assert "stage2_generators.steps.crawl" not in asyncio  # Shown for comparison.


def test_every_step_runs_in_the_page_as_in_a_terminal(
    context: Any, pages: Pages, built_site: Path, manifest: dict[str, Any]
) -> None:
    """Each distinct listing prints, once per language, what the command line printed.

    One page at a time: each holds a Python of its own, and it is closed
    once its runs are over, unless a later test uses it (LATER).
    """
    timings = []
    ran: dict[str, set[str]] = {"en": set(), "zh": set()}
    found = runnable(built_site)
    for path, modules in found.items():
        done = ran[language(path)]
        if set(modules) <= done:
            continue  # Its controls are checked where it runs; nothing new to run here.
        page, errors = pages(path)
        boxes = page.locator(".run-listing[data-run]")
        assert boxes.count() == len(modules)
        for index, module in enumerate(modules):
            box = boxes.nth(index)
            assert box.get_attribute("data-run") == module
            assert box.locator(".run-button").count() == 1
            assert box.locator(".run-output").count() == 1
            if module in done:
                continue
            started = time.perf_counter()
            result = run(box)
            timings.append((path, module, time.perf_counter() - started))
            assert result["text"] == manifest["outputs"][module], (path, module)
            assert result["verdict"] == "same", (path, module)
            done.add(module)
        assert errors == [], path
        if path not in LATER:
            pages.close(path)
    assert context.outside == []
    assert ran["en"] | ran["zh"] == {module for modules in found.values() for module in modules}
    for path, module, seconds in timings:  # For the report: a page's first run boots.
        print(f"{seconds:6.2f} s  {path} {module}")


def test_an_edited_step_runs_the_edit_and_shows_its_traceback(pages: Pages) -> None:
    """The page shows lines 27-66 of the fetcher step; Edit opens all of it, Run runs the edit."""
    page, errors = pages("/callbacks/")
    box = page.locator('.run-listing[data-run="stage1_callbacks.steps.fetcher"]')
    assert box.get_attribute("data-part") == "27:66"
    file = (REPO / "stage1_callbacks/steps/fetcher.py").read_text(encoding="utf-8")
    shown = box.locator(".highlight pre code").text_content() or ""
    assert shown.rstrip("\n") == "\n".join(file.splitlines()[26:66])  # As the page shows it.
    box.locator(".run-edit").click()
    editor = box.locator("textarea.run-editor")
    source = editor.input_value()
    assert source == file
    editor.fill(source.replace('one thread")', 'one thread, edited")'))
    edited = run(box)
    assert edited["text"].splitlines()[-2] == "10 pages in 0.050 s, one thread, edited"
    assert edited["verdict"] == "edited"
    broken = source.replace(
        "        self.todo.remove(self.url)\n", "        self.todo.remove(None)\n"
    )
    editor.fill(broken)
    failed = run(box)
    printed, _, traceback = failed["text"].partition("Traceback (most recent call last):\n")
    lines = traceback.splitlines()
    number = broken.splitlines().index("        self.todo.remove(None)") + 1
    assert printed == "HTTP/1.1 200 OK http://127.0.0.1:8000/\n"  # The first page, then.
    assert f'  File "stage1_callbacks/steps/fetcher.py", line {number}, in finish' in lines
    assert "    self.todo.remove(None)" in lines
    assert lines[-1] == "KeyError: None"
    assert "exit status 1" in failed["about"]
    box.locator(".run-reset").click()
    assert box.locator("textarea").count() == 0
    assert box.locator(".highlight pre code").text_content() == shown
    assert box.locator(".highlight pre").is_visible()
    assert run(box)["verdict"] == "same"
    assert errors == []


def test_a_page_run_of_stage_2_opens_in_the_player(pages: Pages) -> None:
    page, errors = pages("/zh/await/")
    box = page.locator('.run-listing[data-run="stage2_generators.steps.taskgroup"]')
    run(box)
    box.locator(".run-replay").click()
    player = box.locator(".replay[data-ready=yes]")
    player.focus()
    page.keyboard.press("ArrowRight")
    assert player.get_attribute("data-step") == "1"
    caption = player.locator(".replay-caption").text_content() or ""
    assert "第一次运行" in caption, caption  # Task-1 starts, in Chinese.
    assert player.locator(".replay-task").count() >= 11  # main and its ten fetches.
    assert errors == []


def test_the_pages_url_and_link_parsers_pass_their_tests(
    pages: Pages, manifest: dict[str, Any]
) -> None:
    """In the worker: ada_url and selectolax are missing, so the browser's parsers serve."""
    tests = {name: (REPO / "tests" / name).read_text(encoding="utf-8")
             for name in ("test_urls.py", "test_links.py")}  # fmt: skip
    code = (
        "import os, sys, pytest\n"
        "os.makedirs('/tmp/page_tests/tests', exist_ok=True)\n"
        f"for name, text in {tests!r}.items():\n"
        "    open(f'/tmp/page_tests/tests/{name}', 'w').write(text)\n"
        "open('/tmp/page_tests/tests/__init__.py', 'w').close()\n"
        "import shared.web.urls, shared.web.links\n"
        "print('backends', shared.web.urls.whatwg.__name__, shared.web.links.LexborHTMLParser)\n"
        "os.chdir('/tmp/page_tests')\n"
        "options = ['-q', '-p', 'no:cacheprovider', '--noconftest', '-k', 'not lexbor']\n"
        "status = pytest.main([*options, 'tests/test_urls.py', 'tests/test_links.py'])\n"
        "print('status', int(status))\n"
        "os.chdir('/home/pyodide/project')\n"
    )
    page, errors = pages("/callbacks/")
    answer = page.evaluate(
        "([code, wheels]) => window.crawlerPython.run(code, wheels)",
        [code, manifest["test_wheels"]],
    )
    text = answer["text"]
    print(text[-3000:])
    assert answer["error"] is None, answer["error"]
    assert "backends shared.web.jsurl None" in text
    assert "status 0" in text
    assert re.search(r"\d+ passed", text)
    assert errors == []

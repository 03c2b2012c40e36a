"""The replay player (docs/javascripts/replay.js) in a real browser, in both languages.

The page is the one ``python -m shared.record.journal`` writes, for the
journal of the scripted run of tests/test_journal.py, served from
127.0.0.1; every request to another address is blocked and recorded.
The test steps through the whole journal with the keys and the buttons
and checks at each step that the player shows what the journal holds
there.  The built site's player, on the real-coroutines page, is checked in
tests/test_site_browser.py.
"""

from __future__ import annotations

import urllib.parse
from collections.abc import Iterator
from typing import Any

import pytest

from shared.record.journal import expand, player_page
from tests import test_site_browser
from tests.test_journal import run_scripted

# The same fixture as the site's tests: Chromium from the system's packages.
browser = test_site_browser.browser

pytestmark = pytest.mark.slow  # A browser starts: a second or two.

# What the player writes for each task state, in each language.
STATES = {
    "en": {"new": "new", "ready": "ready", "waiting": "waiting", "done": "done"},
    "zh": {"new": "新建", "ready": "就绪", "waiting": "等待", "done": "完成"},
}
# What the page shows: the step's number, its caption, each task's state, the lists.
SHOWN = """(root) => ({
    step: Number(root.dataset.step),
    caption: root.querySelector(".replay-caption").textContent,
    states: [...root.querySelectorAll(".replay-task .replay-state")].map(cell => cell.textContent),
    ready: root.querySelectorAll(".replay-panel-ready li:not(.replay-empty)").length,
    sockets: [...root.querySelectorAll(".replay-panel-sockets li:not(.replay-empty)")]
        .map(item => item.textContent),
    current: [...root.querySelectorAll(".replay-current-line")]
        .map(row => Number(row.dataset.line)),
})"""


@pytest.fixture(scope="module")
def journal() -> dict[str, Any]:
    """The journal of the scripted run."""
    return run_scripted()[0]


@pytest.fixture(scope="module")
def site(journal: dict[str, Any], tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The player page in each language, served from 127.0.0.1."""
    folder = tmp_path_factory.mktemp("player")
    for language in STATES:
        page = player_page(journal, language)
        (folder / f"{language}.html").write_text(page, encoding="utf-8")
    with test_site_browser.served(folder) as url:
        yield url


def expected(journal: dict[str, Any], index: int, language: str) -> dict[str, Any]:
    """Return what the player must show at step ``index`` of ``journal``."""
    state = expand(journal)[index]
    return {
        "step": index,
        "states": [STATES[language][task["state"]] for task in state["tasks"]],
        "ready": len(state["ready"]),
        "sockets": [
            f"{'套接字' if language == 'zh' else 'socket'} {s['fd']}" for s in state["sockets"]
        ],
    }


def seen(shown: dict[str, Any]) -> dict[str, Any]:
    """Return the part of what the page shows that ``expected`` describes."""
    sockets = [text.split(":")[0] for text in shown["sockets"]]
    return {"step": shown["step"], "states": shown["states"], "ready": shown["ready"],
            "sockets": sockets}  # fmt: skip


@pytest.mark.parametrize("language", list(STATES))
def test_the_player_steps_through_the_journal(
    browser: Any,
    site: str,
    journal: dict[str, Any],
    language: str,
) -> None:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    outside: list[str] = []

    def only_the_site(route: Any) -> None:
        if urllib.parse.urlsplit(route.request.url).netloc == urllib.parse.urlsplit(site).netloc:
            route.continue_()
        else:
            outside.append(route.request.url)
            route.abort("blockedbyclient")

    context.route("**/*", only_the_site)
    page = context.new_page()
    errors: list[str] = []
    page.on(
        "console", lambda message: errors.append(message.text) if message.type == "error" else None
    )
    page.on("pageerror", lambda error: errors.append(f"uncaught: {error}"))
    try:
        page.goto(f"{site}/{language}.html")
        root = page.locator(".replay[data-ready=yes]")
        root.focus()
        steps = journal["steps"]
        captions = set()
        for index in range(len(steps)):  # Forward, one key press a step.
            shown = root.evaluate(SHOWN)
            assert seen(shown) == expected(journal, index, language)
            captions.add(shown["caption"])
            page.keyboard.press("ArrowRight")
        assert root.evaluate(SHOWN)["step"] == len(steps) - 1  # Stays at the end.
        assert len(captions) == len(steps)  # A sentence of its own for each step.
        if language == "zh":
            assert all("轮" in text or "套接字" in text or "任务" in text or "，" in text
                       for text in captions)  # fmt: skip
        for index in (len(steps) - 2, len(steps) - 3):  # Back returns to the state.
            page.keyboard.press("ArrowLeft")
            assert seen(root.evaluate(SHOWN)) == expected(journal, index, language)
        page.keyboard.press("Home")
        assert root.evaluate(SHOWN)["step"] == 0
        page.keyboard.press("n")  # The next turn: the next select().
        turn = next(i for i, step in enumerate(steps) if i > 0 and step["kind"] == "select")
        assert root.evaluate(SHOWN)["step"] == turn
        page.keyboard.press("t")  # The next step of the chosen task (the first: reader).
        reader = next(i for i, step in enumerate(steps) if i > turn and step.get("task") == 0)
        assert root.evaluate(SHOWN)["step"] == reader
        page.locator(".replay-button[aria-label]").nth(1).click()  # Back, by mouse.
        assert seen(root.evaluate(SHOWN)) == expected(journal, reader - 1, language)
        page.keyboard.press("End")
        assert root.evaluate(SHOWN)["step"] == len(steps) - 1
        page.keyboard.press("Home")
        page.keyboard.press(" ")  # Play: it moves on by itself.
        page.wait_for_function("() => document.querySelector('.replay').dataset.step !== '0'")
        page.keyboard.press(" ")
    finally:
        context.close()
    assert errors == []
    assert outside == []


def test_the_current_line_is_the_tasks(
    browser: Any,
    site: str,
    journal: dict[str, Any],
) -> None:
    """At a task's step, the source marks the line its deepest frame in that file is at."""
    page = browser.new_page(viewport={"width": 390, "height": 800})  # A phone.
    try:
        page.goto(f"{site}/en.html")
        root = page.locator(".replay[data-ready=yes]")
        index = next(i for i, step in enumerate(journal["steps"]) if step.get("task") == 0)
        root.evaluate("(root, index) => root.player.go(index)", index)
        shown_file = page.locator(".replay-file-select").input_value()
        step = journal["steps"][index]
        lines = [journal["frames"][n][1] for n in step["suspended"]
                 if journal["frames"][n][0] == shown_file]  # fmt: skip
        assert root.evaluate(SHOWN)["current"] == lines[-1:]
        width = page.evaluate("() => document.documentElement.scrollWidth")
        assert width <= 390  # Nothing wider than the phone's screen.
    finally:
        page.close()

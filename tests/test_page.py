"""The page's runner on CPython: a step in the simulated world, as the Run buttons run it.

tests/test_page_browser.py runs every step in the browser and compares
with the command line; these tests check, quickly and without a
browser, what the runner itself promises: the world's modules, the same
lines on every run, the sorted links, an edit and its traceback, the
journal of stage 2's loop, and which listings the docs hook marks.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

import pytest

from shared.page.run import SortedLinks, run_step
from shared.page.session import run_blocks, run_session, sessions
from shared.page.world import CALL_COST, LATENCY, PageWorld

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "docs" / "hooks"))
import run_in_page  # type: ignore[import-not-found]  # noqa: E402  The docs hook.

pytestmark = pytest.mark.slow  # Each run imports the project afresh: about a second.


def test_a_run_gives_the_process_back_the_modules_it_had() -> None:
    import shared.web.links

    printed("stage1_callbacks.steps.callback")
    assert sys.modules["shared.web.links"] is shared.web.links


def printed(module: str, **options: Any) -> tuple[str, Any]:
    lines: list[str] = []
    outcome = run_step(module, lines.append, **options)
    return "".join(lines), outcome


def test_a_step_prints_the_same_lines_in_a_fresh_world_each_time() -> None:
    first, outcome = printed("stage1_callbacks.steps.fetcher")
    again, _ = printed("stage1_callbacks.steps.fetcher")
    assert first == again
    assert first.splitlines()[-2:] == [
        "10 pages in 0.050 s, one thread",
        "the loop woke up 21 times",
    ]
    assert outcome.status == 0 and outcome.seconds == pytest.approx(LATENCY, abs=1e-4)


def test_the_busy_loop_asks_a_fixed_number_of_times() -> None:
    """Each call into a socket costs CALL_COST of the clock: 50 ms is 49,999 calls in vain."""
    text, _ = printed("stage1_callbacks.steps.nonblocking")
    assert text.splitlines()[1:] == [
        "1 page in 0.050 s, 0.050 s of it busy on the CPU",
        f"asked the socket {round(LATENCY / CALL_COST) - 1} times in vain",
    ]


def test_a_blocking_socket_waits_on_the_worlds_clock() -> None:
    text, outcome = printed("stage1_callbacks.steps.blocking")
    assert text.splitlines()[-1] == "10 pages in 0.500 s, one after another"


def test_the_world_modules_leave_the_standard_library_in_place() -> None:
    import selectors
    import socket
    import time

    printed("stage1_callbacks.steps.callback")
    assert sys.modules["socket"] is socket and sys.modules["selectors"] is selectors
    assert sys.modules["time"] is time
    world = PageWorld()
    modules = world.modules()
    assert modules["time"].perf_counter() == 0.0
    assert modules["socket"].AF_INET == socket.AF_INET  # The rest is the real module's.


def test_an_edit_runs_and_its_error_is_shown_as_a_terminal_shows_it() -> None:
    source = (REPO / "stage1_callbacks/steps/callback.py").read_text(encoding="utf-8")
    broken = source.replace("todo.remove(url)", "todo.remove(None)")
    text, outcome = printed("stage1_callbacks.steps.callback", source=broken)
    number = broken.splitlines().index("        todo.remove(None)") + 1
    lines = text.splitlines()
    assert outcome.status == 1
    assert lines[1] == "Traceback (most recent call last):"
    assert f'  File "stage1_callbacks/steps/callback.py", line {number}, in read_response' in lines
    assert "        todo.remove(None)" not in lines and "    todo.remove(None)" in lines
    assert lines[-1] == "KeyError: None"
    assert "shared/page/run.py" not in text  # The runner's own frames are left out.


def test_system_exit_ends_the_step_with_its_status() -> None:
    text, outcome = printed("stage1_callbacks.steps.callback", source="raise SystemExit('bye')")
    assert (text, outcome.status) == ("bye\n", 1)


def test_the_links_of_a_page_come_in_sorted_order() -> None:
    links = SortedLinks({"http://b/", "http://c/", "http://a/"})
    assert list(links) == ["http://a/", "http://b/", "http://c/"]
    assert list(links - {"http://b/"}) == ["http://a/", "http://c/"]


def test_a_run_of_stage_2s_loop_keeps_a_journal() -> None:
    _, outcome = printed("stage2_generators.steps.taskgroup", journal=True)
    journal = outcome.journal
    assert journal is not None and journal["simulated"] is True
    assert len(journal["tasks"]) == 11  # main, and a task per page.
    _, step_loop = printed("stage2_generators.steps.future", journal=True)
    assert step_loop.journal is None  # Stage 1's loop keeps none.


def test_the_replays_workers_are_cancelled_and_the_journal_says_so() -> None:
    import replay  # type: ignore[import-not-found]  # The docs hook, as run_in_page.

    journal = replay.journal_of("generators", {})
    woken = [step for step in journal["steps"] if step.get("cancelled")]
    workers = {journal["tasks"][step["task"]] for step in woken}
    assert workers == {"worker 1", "worker 2", "worker 3"}
    assert any(name.startswith("robots.txt") for name in journal["tasks"])


# --- The generators chapter's sessions --------------------------------------------


GENERATORS = REPO / "docs" / "generators.md"


def session_text(number: int) -> tuple[str, Any]:
    lines: list[str] = []
    outcome = run_session(f"docs/generators.md:{number}", lines.append)
    return "".join(lines), outcome


def test_a_session_prints_what_the_page_shows_with_the_prompts_traceback() -> None:
    """Each block, run after those above it, prints itself; a traceback shows its frames."""
    blocks = sessions(GENERATORS.read_text(encoding="utf-8"))
    assert len(blocks) == 10
    for number, block in enumerate(blocks, 1):
        text, outcome = session_text(number)
        assert outcome.differs == [], number
        frames = re.compile(r'^  File "<stdin>", line \d+, in \S+\n', re.MULTILINE)
        shown = text.replace(
            "Traceback (most recent call last):\n", "Traceback (most recent call last):\n  ...\n", 1
        )
        assert frames.sub("", shown) == block.rstrip("\n") + "\n", number
    text, _ = session_text(9)  # caller.throw(KeyError(...)): three frames, as the prompt shows.
    assert text.splitlines()[-4:] == [
        '  File "<stdin>", line 1, in <module>',
        '  File "<stdin>", line 2, in caller_fn',
        '  File "<stdin>", line 2, in failing_fn',
        "KeyError: 'stop now'",
    ]


def test_a_session_that_prints_other_than_the_page_says_which_input() -> None:
    blocks = [
        ">>> x = 2\n",
        ">>> x + 1\n3\n>>> x * 10\n21\n"
        ">>> 1 / 0\nTraceback (most recent call last):\n  ...\nKeyError: 0\n",
    ]
    lines: list[str] = []
    outcome = run_blocks(blocks, 1, lines.append)
    assert outcome.differs == [2, 3] and outcome.status == 1
    assert "".join(lines).startswith(">>> x + 1\n3\n>>> x * 10\n20\n>>> 1 / 0\nTraceback")
    assert "".join(lines).endswith("ZeroDivisionError: division by zero\n")


def test_a_reference_to_no_session_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="has 10 sessions, not 11"):
        run_session("docs/generators.md:11", print)
    with pytest.raises(ValueError, match="no page of the project"):
        run_session("docs/nothing.md:1", print)


# --- The hook that marks the listings ----------------------------------------------

MARKDOWN = dict(
    extensions=["attr_list", "admonition", "pymdownx.highlight", "pymdownx.superfences",
                "pymdownx.snippets"],
    extension_configs={
        "pymdownx.highlight": {"anchor_linenums": True, "linenums_style": "pymdownx-inline",
                               "line_spans": "__span", "pygments_lang_class": True},
        "pymdownx.snippets": {"base_path": [str(REPO)], "check_paths": True,
                              "dedent_subsections": True},
    },
)  # fmt: skip
LISTINGS = """
```python title="stage1_callbacks/steps/callback.py" linenums="26" hl_lines="2 3"
--8<-- "stage1_callbacks/steps/callback.py:26:47"
```

!!! note

    ```python title="stage1_callbacks/steps/callback.py" linenums="50"
    --8<-- "stage1_callbacks/steps/callback.py:50:61"
    ```

```python title="stage2_generators/steps/future.py"
--8<-- "stage2_generators/steps/future.py:fetch"
```

```python
--8<-- "stage1_callbacks/loop.py"
```

```python title="stage2_generators/steps/taskgroup.py" linenums="1"
--8<-- "stage2_generators/steps/taskgroup.py"
```

```python title="stage2_generators/steps/taskgroup.py"
--8<-- "stage2_generators/steps/taskgroup.py:12:20"
```
"""


def render(text: str) -> str:
    import markdown

    return markdown.markdown(text, **MARKDOWN)


def test_the_hook_tags_each_include_of_a_step_and_the_listing_renders_the_same() -> None:
    tagged = run_in_page.tag_listings(LISTINGS)
    attributes = re.findall(r'data-step="([\w.]+)"(?: data-step-part="([^"]+)")?', tagged)
    assert attributes == [
        ("stage1_callbacks.steps.callback", "26:47"),
        ("stage1_callbacks.steps.callback", "50:61"),
        ("stage2_generators.steps.future", "fetch"),
        ("stage2_generators.steps.taskgroup", ""),
        ("stage2_generators.steps.taskgroup", "12:20"),
    ]
    before, after = render(LISTINGS), render(tagged)
    assert re.sub(r' data-step(?:-part)?="[^"]*"', "", after) == before
    assert "hl_lines" not in after and after.count('class="hll"') == 2  # Lines 27 and 28.
    assert 'data-linenos="50 "' in after


def test_the_hook_gives_one_listing_per_step_its_run_control() -> None:
    """The whole step's listing if the page has one, else its last part; Edit opens the file."""
    outputs = {f"{stage}.steps.{name}": "x" for stage, name in [
        ("stage1_callbacks", "callback"), ("stage2_generators", "future"),
        ("stage2_generators", "taskgroup")]}  # fmt: skip
    config: dict[str, Any] = {"run_in_page_outputs": outputs}
    marked = run_in_page.mark_listings(render(run_in_page.tag_listings(LISTINGS)), "en", config)
    runs = re.findall(r'class="run-listing" data-run="([\w.]+)"(?: data-part="([^"]+)")?', marked)
    assert runs == [
        ("stage1_callbacks.steps.callback", "50:61"),
        ("stage2_generators.steps.future", "fetch"),
        ("stage2_generators.steps.taskgroup", ""),
    ]
    assert marked.count('class="run-button') == 3
    assert marked.count("The page shows part of this step's file") == 2
    assert config["run_in_page_found"] == set(outputs)


def test_a_step_the_page_shows_only_by_its_output_runs_from_that_block() -> None:
    """The console block of its run, when the page lists steps of that stage; not otherwise."""
    page = (
        LISTINGS
        + """
```console
$ python -m stage1_callbacks.steps.nonblocking
1 page in 0.050 s
```

```console
$ python -m stage1_callbacks.steps.callback
the loop woke up 3 times
```

```console
$ python -m stage1_callbacks.steps.threads
10 pages in 0.050 s
```
"""
    )
    outputs = {
        "stage1_callbacks.steps.nonblocking": "x",
        "stage1_callbacks.steps.callback": "x",
        "stage2_generators.steps.future": "x",
        "stage2_generators.steps.taskgroup": "x",
    }
    config: dict[str, Any] = {"run_in_page_outputs": outputs}
    marked = run_in_page.mark_listings(render(run_in_page.tag_listings(page)), "en", config)
    runs = re.findall(r'class="run-listing" data-run="([\w.]+)"(?: data-part="([^"]+)")?', marked)
    assert ("stage1_callbacks.steps.nonblocking", "output") in runs
    assert ("stage1_callbacks.steps.callback", "50:61") in runs  # Its listing, not its output.
    assert marked.count("The page shows what this step prints, not its code") == 1
    assert marked.count("has none: run it in a terminal") == 1  # threads
    alone = run_in_page.mark_listings(
        render(run_in_page.tag_listings(page[len(LISTINGS) :])), "en", config
    )
    assert "data-run" not in alone  # No listing of stage 1 on that page: a comparison.


def test_the_hook_says_why_a_thread_step_and_stage_3_run_elsewhere() -> None:
    page = """
```python title="stage1_callbacks/steps/threads.py"
--8<-- "stage1_callbacks/steps/threads.py"
```

```python title="stage3_asyncio/steps/crawl.py"
--8<-- "stage3_asyncio/steps/crawl.py"
```
"""
    marked = run_in_page.mark_listings(render(run_in_page.tag_listings(page)), "zh", {})
    assert "data-run" not in marked
    assert "请在终端里运行" in marked and "第三阶段不能在页面里运行" in marked


def test_the_hook_gives_each_session_of_the_generators_page_a_run_button() -> None:
    text = GENERATORS.read_text(encoding="utf-8")
    tagged = run_in_page.tag_sessions(text, "docs/generators.md")
    assert re.findall(r'data-session="([^"]+)"', tagged) == [
        f"docs/generators.md:{n}" for n in range(1, 11)
    ]
    config: dict[str, Any] = {
        "run_in_page_outputs": {f"docs/generators.md:{n}": "x" for n in range(1, 11)}
    }
    marked = run_in_page.mark_listings(render(tagged), "en", config)
    assert marked.count('class="run-listing run-session" data-run="docs/generators.md:') == 10
    assert marked.count('class="run-button') == 10 and 'class="run-edit' not in marked
    assert marked.count("Run a session here") == 1  # The note, under the first.


def test_a_page_whose_only_runs_are_sessions_gets_the_script() -> None:
    page = type("Page", (), {"url": "generators/"})()
    body = '<div class="run-listing run-session" data-run="docs/generators.md:1"></div>'
    output = run_in_page.on_post_page(f"<html><head></head><body>{body}</body></html>", page, {})
    assert '<script src="../javascripts/run.js" data-root="../">' in output
    assert 'href="../stylesheets/run.css"' in output

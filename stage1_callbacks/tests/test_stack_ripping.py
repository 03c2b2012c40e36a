"""Stack ripping: with callbacks, a traceback loses the code that asked for the work.

In blocking code, an exception's traceback tells the whole story: which
function asked for the page, and which one choked on it.  With callbacks,
the function that started the fetch returned long before the response came,
so its frame is gone.  When the callback fails, the traceback starts at the
event loop, and the code that asked for the page is nowhere in it.  Stage 2's
coroutines bring the story back.
"""

from __future__ import annotations

import traceback
import types

import pytest

from shared.web.resolver import Resolver
from stage1_callbacks.fetcher import Fetcher
from stage1_callbacks.loop import EventLoop
from tests.servers import ScriptedServer, answer, http_response


def start_fetch(loop: EventLoop, url: str) -> None:
    """Ask for a page; on_page will handle it.  Returns at once."""
    fetcher = Fetcher(
        url,
        loop,
        on_page,
        timeout=5,
        max_size=2**20,
        resolver=Resolver(),
    )
    fetcher.start()


def on_page(fetcher: Fetcher) -> None:
    """Handle the page; here, fail."""
    raise ValueError(f"cannot handle {fetcher.url}")


def test_traceback_does_not_name_the_code_that_started_the_fetch() -> None:
    loop = EventLoop()
    with ScriptedServer(answer(http_response(b"<p>hello</p>"))) as server:
        start_fetch(loop, server.url)
        with pytest.raises(ValueError) as caught:
            loop.run()
    loop.close()
    tb = caught.value.__traceback__
    frames = [frame.name for frame in traceback.extract_tb(tb)]
    # From the loop to on_page; start_fetch is nowhere.
    assert frames[1:] == ["run", "run_once", "on_page"]


def fetch_and_handle(url: str) -> None:
    """The blocking way: the page is handled inside the function that asked for it."""
    page = types.SimpleNamespace(url=url)  # As if fetched, without the network.
    on_page(page)  # type: ignore[arg-type]


def test_a_direct_call_keeps_the_caller_in_the_traceback() -> None:
    with pytest.raises(ValueError) as caught:
        fetch_and_handle("http://example.com/")
    frames = [frame.name for frame in traceback.extract_tb(caught.value.__traceback__)]
    assert frames[1:] == ["fetch_and_handle", "on_page"]

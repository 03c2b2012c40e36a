"""What the loops of stages 1 and 2 share: callbacks run in order, one turn at a time.

Stage 1's loop is the chapter's own; stage 2's follows asyncio's API.  A
turn is ``run_once`` in stage 1 and one iteration of ``run_forever`` in
stage 2; everything else asked of them here is the same.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from stage1_callbacks.loop import EventLoop as CallbackLoop
from stage2_generators.loop import EventLoop as GeneratorLoop
from stage2_generators.tests.support import run_briefly


def one_turn(loop: Any) -> None:
    """Run one turn of either loop: the callbacks ready when it starts."""
    if isinstance(loop, CallbackLoop):
        loop.run_once()
    else:
        run_briefly(loop)


@pytest.fixture(params=[CallbackLoop, GeneratorLoop], ids=["stage1", "stage2"])
def loop(request: pytest.FixtureRequest) -> Iterator[Any]:
    """A new loop of each stage, closed after the test."""
    make: Callable[[], Any] = request.param
    loop = make()
    yield loop
    loop.close()


def test_call_soon_runs_callbacks_first_in_first_out(loop: Any) -> None:
    calls: list[int] = []
    for n in range(5):
        loop.call_soon(calls.append, n)
    one_turn(loop)
    assert calls == [0, 1, 2, 3, 4]


def test_a_turn_runs_only_what_was_ready_when_it_started(loop: Any) -> None:
    calls: list[str] = []

    def first() -> None:
        calls.append("first")
        loop.call_soon(calls.append, "scheduled by first")

    loop.call_soon(first)
    loop.call_soon(calls.append, "second")
    one_turn(loop)
    assert calls == ["first", "second"]
    one_turn(loop)
    assert calls == ["first", "second", "scheduled by first"]


def test_a_cancelled_callback_does_not_run(loop: Any) -> None:
    calls: list[str] = []
    handle = loop.call_soon(calls.append, "cancelled")
    loop.call_soon(calls.append, "kept")
    handle.cancel()
    handle.cancel()  # Twice is harmless.
    one_turn(loop)
    assert calls == ["kept"]


def test_a_callback_can_cancel_one_later_in_the_same_turn(loop: Any) -> None:
    calls: list[str] = []
    handles: list[Any] = []
    loop.call_soon(lambda: handles[0].cancel())
    handles.append(loop.call_soon(calls.append, "cancelled before its turn came"))
    one_turn(loop)
    assert calls == []

"""Helpers for stage 2's tests, after asyncio's ``test_utils``."""

from __future__ import annotations

from stage2_generators.loop import EventLoop


def run_briefly(loop: EventLoop) -> None:
    """Run exactly one iteration: the callbacks that are ready now, and no more."""
    loop.call_soon(loop.stop)
    loop.run_forever()

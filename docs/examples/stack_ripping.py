"""Plant a bug in a stage's crawler and print the call stack where it strikes.

The stack of an exception is the record of how the program got to the
failing line.  With callbacks (stage 1) that record starts at the event
loop: the loop called a callback, and nothing says which earlier step
started this fetch.  With coroutines (stages 2 and 3) the worker and its
``fetch`` are still on the stack, because a paused generator keeps its
frame.  The docs show this script's output for each stage; the build runs
it again every time, so the stacks on the page are today's.

Usage::

    python docs/examples/stack_ripping.py [callbacks|generators|asyncio]

The stage defaults to callbacks.
"""

from __future__ import annotations

import importlib
import logging
import sys
import sysconfig
import traceback
from pathlib import Path
from typing import Any

from shared.cli.main import STAGES
from shared.testsite.server import ServerThread, make_app
from shared.testsite.site import MIN_PAGES

ROOT = Path(__file__).resolve().parents[2]
STDLIB = Path(sysconfig.get_paths()["stdlib"])


def short_name(filename: str) -> str:
    """Return a file name relative to the repository, or to the standard library."""
    path = Path(filename)
    for base, prefix in ((ROOT, ""), (STDLIB, "<stdlib>/")):
        if path.is_relative_to(base):
            return prefix + path.relative_to(base).as_posix()
    return path.name  # An installed package, such as aiohttp.


def whole_stack(error: BaseException) -> list[traceback.FrameSummary]:
    """Return the stack a traceback would show had nothing caught ``error``.

    A caught exception's traceback starts at the frame whose ``except``
    caught it.  The callers of that frame come first, then the traceback:
    each frame once, innermost last.
    """
    tb = error.__traceback__
    assert tb is not None  # It was raised.
    callers = traceback.extract_stack(tb.tb_frame.f_back)
    return [*callers, *traceback.extract_tb(tb)]


def stack_of_a_bug(stage: str) -> list[traceback.FrameSummary]:
    """Crawl one page with a bug in parse_links; return the stack of that bug.

    Each crawler catches a bug in its response handling, records the URL as
    crashed and goes on.  The stack returned is the one a traceback would
    show had nothing caught the error (see ``whole_stack``).
    """
    module = importlib.import_module(STAGES[stage])
    stacks: list[list[traceback.FrameSummary]] = []

    class BuggyCrawler(module.Crawler):
        def parse_links(self, url: str, response: Any) -> Any:
            raise ValueError("a bug in parse_links")

        def record_crash(self, url: str, error: Exception) -> None:
            stacks.append(whole_stack(error))
            super().record_crash(url, error)

    logger = logging.getLogger(module.__name__)
    was_disabled, logger.disabled = logger.disabled, True  # It would log the crash too.
    try:
        with ServerThread(make_app(MIN_PAGES)) as server:
            module.run(BuggyCrawler([server.url]))  # The bug strikes on the home page.
    finally:
        logger.disabled = was_disabled
    stack = stacks[0]
    # Start at the call into the stage; the frames of this script above it are noise.
    first = max(i for i, frame in enumerate(stack) if frame.name == "stack_of_a_bug")
    return stack[first:]


def main(stage: str) -> None:
    """Print the stack, innermost call last, as a traceback prints it."""
    print("Traceback (most recent call last):")
    for frame in stack_of_a_bug(stage):
        frame.filename = short_name(frame.filename)
        print("".join(traceback.format_list([frame])), end="")
    print("ValueError: a bug in parse_links")


if __name__ == "__main__":
    if len(sys.argv) > 2 or sys.argv[1:2] and sys.argv[1] not in STAGES:
        sys.exit(f"usage: python docs/examples/stack_ripping.py [{'|'.join(STAGES)}]")
    main(sys.argv[1] if len(sys.argv) > 1 else "callbacks")

"""Ignores robots.txt: stage 1 taking obey_robots and never reading robots.txt."""

from typing import Any

import stage1_callbacks
from tests.acceptance import AcceptanceTests
from tests.broken import broken_stage

LEVEL = 5
HINT = (
    "test_robots_txt_disallowed_urls_are_skipped: rule docs/contract.md#politeness;"
    " read docs/callbacks.md#being-polite-a-waiting-line-and-a-timer"
)


class IgnoresRobotsCrawler(stage1_callbacks.Crawler):
    def __init__(self, roots: Any, **options: Any) -> None:
        options.pop("obey_robots", None)  # The bug: the option is taken and dropped.
        super().__init__(roots, **options)


class TestAcceptance(AcceptanceTests):
    stage = broken_stage(stage1_callbacks, IgnoresRobotsCrawler)
    shape = "callbacks"

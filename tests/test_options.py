"""Examples for shared.crawl.options: one definition of the options for the command
line, each stage's Crawler and crawl()."""

from __future__ import annotations

import dataclasses
import importlib
import re
import subprocess
import sys

import pytest

from shared.cli import main as cli
from shared.crawl.options import CrawlOptions, from_arguments

FIELDS = dataclasses.fields(CrawlOptions)
STAGES = list(cli.STAGES.values())


def test_defaults_are_the_contract_s() -> None:
    assert CrawlOptions().keywords() == {
        "exclude": None,
        "strict": True,
        "max_redirect": 10,
        "max_tries": 4,
        "max_tasks": 10,
        "timeout": 10.0,
        "max_size": 10 * 2**20,
        "obey_robots": False,
        "delay": 0.0,
        "max_per_host": None,
        "max_retry_after": 120.0,
        "sitemaps": False,
        "since": None,
        "max_pages": None,
        "max_depth": None,
        "user_agent": "crawler-tutorial/1.0",
        "trace": None,
    }


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"strict": 1}, "strict must be True or False, not 1"),
        ({"exclude": 3}, "exclude must be a regular expression, not 3"),
        ({"timeout": "1"}, "timeout must be more than 0 seconds, not '1'"),
        ({"timeout": True}, "timeout must be more than 0 seconds, not True"),
        ({"max_tasks": None}, "max_tasks must be a whole number of at least 1, not None"),
    ],
)
def test_wrong_types_are_refused(options: dict, message: str) -> None:
    with pytest.raises(ValueError, match="^" + re.escape(message)):
        CrawlOptions(**options)


def test_options_cannot_change_once_made() -> None:
    options = CrawlOptions()
    with pytest.raises(dataclasses.FrozenInstanceError):
        options.max_tasks = 0  # type: ignore[misc]


@pytest.mark.parametrize("package", STAGES)
def test_a_crawler_keeps_its_options_frozen_and_its_records_free(package: str) -> None:
    crawler = importlib.import_module(package).Crawler(["http://127.0.0.1:9/"])
    with pytest.raises(dataclasses.FrozenInstanceError, match="max_tasks"):
        crawler.max_tasks = 0
    crawler.in_flight = 3  # A record of the crawl, not an option.
    assert (crawler.max_tasks, crawler.in_flight) == (10, 3)


@pytest.mark.parametrize("package", STAGES)
def test_every_stage_takes_every_option_by_keyword(package: str) -> None:
    module = importlib.import_module(package)
    given = {field.name: getattr(CrawlOptions(), field.name) for field in FIELDS}
    given |= {"max_tasks": 3, "timeout": 2.5, "exclude": "never"}
    crawler = module.Crawler(["http://127.0.0.1:9/"], **given)
    assert {name: getattr(crawler, name) for name in given} == given
    with pytest.raises(ValueError, match="max_tasks must be"):
        module.Crawler([], max_tasks=0)
    with pytest.raises(TypeError, match="max_taks"):
        module.Crawler([], max_taks=3)
    with pytest.raises(TypeError):
        module.Crawler([], 3)  # Options are keywords only.
    with pytest.raises(ValueError, match="max_tries must be"):
        module.crawl([], max_tries=0)  # crawl() checks before it starts.


def test_every_option_is_on_the_command_line() -> None:
    parser = cli.build_parser()
    dests = {action.dest for action in parser._actions}
    assert {field.name for field in FIELDS} <= dests
    for field in FIELDS:
        for spelled in ["--" + field.name.replace("_", "-"), "--" + field.name]:
            assert spelled in parser._option_string_actions, spelled


def test_command_line_defaults_are_the_crawler_s_unless_help_says_why() -> None:
    args = cli.build_parser().parse_args([])
    help_text = " ".join(cli.build_parser().format_help().split())
    for field in FIELDS:
        if getattr(args, field.name) != field.default:
            why = field.metadata["cli"]["why"]
            assert why, f"--{field.name} differs from Crawler() without a reason"
            assert " ".join(why.split()) in help_text
    assert args.max_tasks == 100 and CrawlOptions().max_tasks == 10  # The chapter's two.


def test_command_line_values_are_checked_by_the_same_definition() -> None:
    parser = cli.build_parser()
    with pytest.raises(ValueError, match="max_redirect must be"):
        from_arguments(parser.parse_args(["--max-redirect", "-1"]))
    assert from_arguments(parser.parse_args(["--lenient"])).strict is False


@pytest.mark.slow
def test_help_shows_the_reason_in_a_real_run() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "shared.cli", "--help"], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0
    assert "default: 100; Crawler() keeps 10" in " ".join(result.stdout.split())

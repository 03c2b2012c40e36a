"""``crawl --simulate``: the bundled site crawled in a simulated world, from the command line.

Each crawl runs in this process on a small site: no socket, no real wait.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from shared.cli import main as cli

STAGES = ["callbacks", "generators", "asyncio"]
SMALL = ["--pages", "10", "-q"]


@pytest.mark.parametrize("stage", STAGES)
def test_simulate_crawls_the_bundled_site_and_matches_the_oracle(
    stage: str, capsys: pytest.CaptureFixture[str]
) -> None:
    status = cli.main(["--stage", stage, "--simulate", "--latency", "200", *SMALL])
    out = capsys.readouterr().out
    assert status == cli.EXIT_OK
    assert "Oracle: all" in out and "127.0.0.1:8000" in out


@pytest.mark.parametrize("stage", STAGES)
def test_the_same_seed_writes_the_same_files(
    stage: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    files = []
    for run in ("one", "two"):
        json_file, trace = tmp_path / f"{run}.jsonl", tmp_path / f"{run}.json"
        options = ["--seed", "7", "--latency", "50", "--loss", "0.1", "--timeout", "2"]
        argv = ["--stage", stage, "--simulate", *options, *SMALL]
        cli.main([*argv, "--json", str(json_file), "--trace", str(trace)])
        files.append((json_file.read_bytes(), trace.read_bytes()))
    capsys.readouterr()
    assert files[0] == files[1]
    assert files[0][0].count(b"\n") > 10  # A whole crawl, not an empty file.


def test_a_lost_answer_is_waited_for_in_virtual_time(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["--stage", "generators", "--simulate", "--loss", "1", "--timeout", "60", *SMALL]
    argv.remove("-q")
    assert cli.main(argv) == cli.EXIT_MISMATCH  # Nothing fetched: not the site it expects.
    err = capsys.readouterr().err
    # robots.txt: four tries of 60 s each; a host whose robots.txt cannot
    # be fetched is not crawled further.
    assert "Simulated: 240.000 s of virtual time." in err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--seed", "3"], "--seed goes with --simulate"),
        (["--latency", "10"], "--latency goes with --simulate"),
        (["--simulate", "http://example.com/"], "crawls the bundled test site"),
        (["--simulate", "--loss", "1.5"], "loss must be between 0 and 1"),
        (["--simulate", "--latency", "-1"], "--latency must be at least 0 ms"),
        (["--simulate", "--seed", "-2"], "seed must be a whole number"),
        (["--simulate", "--stream"], "--stream goes with --json FILE"),
        (["--frontier", "redis://127.0.0.1:1/0", "--stream", "--json", "x", "http://h/"],
         "--stream cannot be used with --frontier"),
    ],
)  # fmt: skip
def test_simulation_options_are_checked_before_anything_starts(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        cli.main(argv)
    assert exit_info.value.code == cli.EXIT_USAGE
    assert message in capsys.readouterr().err


# --- --stream: records written as they come, none kept -------------------------------


@pytest.mark.parametrize("stage", STAGES)
def test_streamed_records_are_the_records_of_a_crawl_that_keeps_them(
    stage: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    kept, streamed = tmp_path / "kept.jsonl", tmp_path / "streamed.jsonl"
    argv = ["--stage", stage, "--simulate", "--latency", "20", *SMALL]
    assert cli.main([*argv, "--json", str(kept)]) == cli.EXIT_OK
    report = capsys.readouterr().out
    assert cli.main([*argv, "--json", str(streamed), "--stream"]) == cli.EXIT_OK
    out = capsys.readouterr().out
    # The same records in the same order, each page's links with its record.
    assert streamed.read_bytes() == kept.read_bytes()
    count = kept.read_text().count("\n")
    assert f"Oracle: all {count} urls match" in out
    # The report counts what it no longer lists: the same counters and totals.
    assert f"(one record per URL in {streamed}, written as each came)" in out
    listed = [line for line in report.splitlines() if line.startswith("http://")]
    assert len(listed) == count and not any(line.startswith("http://") for line in out.split())
    tail = report.split("Finished ")[1].splitlines()[1:-2]  # The counters, Todo and Done.
    assert out.split("Finished ")[1].splitlines()[1:-2] == tail


def test_streamed_records_are_checked_against_the_oracle_as_they_come(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A lost answer is a record the oracle did not expect, and its page goes missing."""
    records = tmp_path / "records.jsonl"
    argv = ["--stage", "callbacks", "--simulate", "--loss", "0.3", "--max-tries", "1"]
    argv += ["--timeout", "1", "--json", str(records), "--stream", *SMALL]
    assert cli.main(argv) == cli.EXIT_MISMATCH
    out = capsys.readouterr().out
    failed = records.read_text().count('"status": null')
    assert failed > 0, "no answer was lost: the test proves nothing"
    # Each lost answer is a failure the site did not expect, but for the URLs
    # it expects to fail anyway (a redirect cycle): those match the oracle.
    unexpected = re.search(r"expected results missing, (\d+) unexpected,", out)
    assert unexpected and 0 < int(unexpected[1]) <= failed, out
    assert "  missing: ('http://127.0.0.1:8000/" in out and "  unexpected: (" in out

"""Examples for shared.cli: the ``crawl`` command, run as a user runs it.

Commands run in a subprocess (the installed ``crawl`` script, or
``python -m``) so that exit statuses, stderr and stray tracebacks are seen
exactly as a user sees them.
"""

from __future__ import annotations

import importlib
import io
import json
import os
import re
import socket
import subprocess
import sys
import threading
import time
import types
from collections.abc import Iterator
from contextlib import nullcontext
from pathlib import Path

import pytest

from shared.cli import main as cli
from shared.cli import progress as progress_module
from shared.cli.progress import progress, progress_line
from shared.crawl.options import from_arguments
from shared.record.stats import FetchStatistic
from tests.servers import PageServer, refused_port

CRAWL = Path(sys.executable).with_name("crawl")  # Installed by pip install -e .
REPO = Path(__file__).resolve().parent.parent
# Import the packages of this working tree, as pytest does, whatever an older
# editable install recorded about them (a stage that had no __init__.py yet).
ENV = {
    **os.environ,
    "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
}


def stage_is_ready(package: str) -> bool:
    """Tell whether a stage package can be imported and has its entry points."""
    try:
        module = importlib.import_module(package)
    except ImportError:
        return False
    return all(hasattr(module, name) for name in ["Crawler", "crawl", "run"])


STAGE_PARAMS = [
    pytest.param(
        name,
        marks=pytest.mark.skipif(not stage_is_ready(package), reason=f"{package} is not ready"),
    )
    for name, package in cli.STAGES.items()
]


def run(
    *args: str, command: list[str] | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """Run the crawl command with ``args`` and return the finished process."""
    command = [str(CRAWL)] if command is None else command
    return subprocess.run(
        [*command, *args], capture_output=True, text=True, timeout=120, cwd=cwd, env=ENV
    )


# --- Roots ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("root", "url"),
    [
        ("example.com", "http://example.com/"),
        ("example.com/path?q=1", "http://example.com/path?q=1"),
        ("127.0.0.1:8080/", "http://127.0.0.1:8080/"),
        ("localhost:8000", "http://localhost:8000/"),
        ("HTTP://Example.COM:80", "http://example.com/"),
        ("https://example.com/a#part", "https://example.com/a"),
        ("http://[::1]:8080/", "http://[::1]:8080/"),
        (" example.com ", "http://example.com/"),
        ("[::1]:8080/x", "http://[::1]:8080/x"),
        ("http:/example.com", "http://example.com/"),  # As a browser reads it.
    ],
)
def test_root_url(root: str, url: str) -> None:
    assert cli.root_url(root) == url


BAD_ROOTS = {
    "not a url at all": "is not a valid URL",
    "javascript:alert(1)": "is not an http or https URL",
    "mailto:someone@example.com": "is not an http or https URL",
    "ftp://example.com/": "is not an http or https URL",
    "file:///etc/passwd": "is not an http or https URL",
    "http://": "is not a valid URL",
    "http://exa mple.com/": "is not a valid URL",
    "http://example.com:99999/": "is not a valid URL",
    "http://[::1/": "is not a valid URL",
    "": "is not a valid URL",
}


@pytest.mark.parametrize("root", list(BAD_ROOTS))
def test_bad_roots_are_refused_without_a_lookup(
    root: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def no_lookup(*args: object, **kwargs: object) -> None:
        raise AssertionError("a name was looked up")

    monkeypatch.setattr(socket, "getaddrinfo", no_lookup)
    monkeypatch.setattr(socket, "gethostbyname", no_lookup)
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["--stage", "callbacks", "http://127.0.0.1:9/", root])
    assert exit_info.value.code == cli.EXIT_USAGE
    assert capsys.readouterr().err == (
        f"crawl: error: root {root!r} {BAD_ROOTS[root]} (see --help)\n"
    )


# --- The parser ----------------------------------------------------------------------------


def test_parser_defaults() -> None:
    args = cli.build_parser().parse_args([])
    assert args.roots == [] and args.stage == "asyncio"
    assert from_arguments(args).keywords() == {
        "exclude": None,
        "strict": True,
        "max_redirect": 10,
        "max_tries": 4,
        "max_tasks": 100,
        "timeout": 10.0,
        "max_size": 10 * 2**20,
        "obey_robots": True,
        "delay": 0.0,
        "max_per_host": 8,
        "max_retry_after": 120.0,
        "sitemaps": False,
        "since": None,
        "max_pages": None,
        "max_depth": None,
        "user_agent": "crawler-tutorial/1.0",
        "trace": None,
    }


def test_parser_accepts_both_spellings_and_lenient() -> None:
    args = cli.build_parser().parse_args(
        ["--max_tasks", "3", "--max-redirect", "2", "--max_tries=5", "--max_size", "99"]
        + ["--lenient", "--exclude", "x", "--timeout", "1.5", "--stage", "generators", "a.com"]
        + ["--ignore-robots", "--delay", "0.5", "--max_per_host", "2", "--max-pages", "7"]
        + ["--max-depth", "0", "--user-agent", "test-bot/2.0", "--trace", "t.json"]
        + ["--max-retry-after", "30", "--sitemaps", "--since", "s.jsonl"]
    )
    assert from_arguments(args).keywords() == {
        "exclude": "x",
        "strict": False,
        "max_redirect": 2,
        "max_tries": 5,
        "max_tasks": 3,
        "timeout": 1.5,
        "max_size": 99,
        "obey_robots": False,
        "delay": 0.5,
        "max_per_host": 2,
        "max_retry_after": 30.0,
        "sitemaps": True,
        "since": "s.jsonl",
        "max_pages": 7,
        "max_depth": 0,
        "user_agent": "test-bot/2.0",
        "trace": "t.json",
    }
    assert (args.stage, args.roots) == ("generators", ["a.com"])


@pytest.mark.parametrize(("flags", "level"), [([], 1), (["-q"], 0), (["-v"], 2), (["-vv"], 3)])
def test_parser_log_level(flags: list[str], level: int) -> None:
    assert cli.build_parser().parse_args(flags).level == level


def test_stage_default_follows_the_stage_package() -> None:
    parser = cli.build_parser("python -m stage1_callbacks", "callbacks")
    assert parser.parse_args([]).stage == "callbacks"


# --- Usage errors: one line, exit status 2, no traceback ------------------------------------

# Each usage error (the arguments, then a piece of its message).  "{tmp}" is
# a fresh directory holding a file named "a-file"; ROOT is a root that is
# never fetched.
USAGE_ERRORS = {
    "--bogus ROOT": "unrecognized arguments: --bogus",
    "--max_tasks 0 ROOT": "max_tasks must be a whole number of at least 1, not 0",
    "--max-tasks many ROOT": "invalid int value: 'many'",
    "--max_tries 0 ROOT": "max_tries must be a whole number of at least 1, not 0",
    "--max_redirect -1 ROOT": "max_redirect must be a whole number of at least 0, not -1",
    "--timeout 0 ROOT": "timeout must be more than 0 seconds",
    "--max-retry-after -1 ROOT": "max_retry_after must be at least 0 seconds",
    "--since {tmp}/none.jsonl ROOT": "cannot read {tmp}/none.jsonl: No such file or directory",
    "--since {tmp} ROOT": "cannot read {tmp}: Is a directory",
    "--max-retry-after inf ROOT": "max_retry_after must be a finite number of seconds",
    "--max-size -1 ROOT": "max_size must be a whole number of at least 0, not -1",
    "--exclude ( ROOT": "invalid exclude pattern '('",
    "--json {tmp}/a-file/out.jsonl ROOT": "cannot write {tmp}/a-file/out.jsonl: Not a directory",
    "--json {tmp} ROOT": "cannot write",  # A directory.
    "--save {tmp}/a-file/mirror ROOT": "cannot save pages in {tmp}/a-file/mirror: Not a directory",
    "--save {tmp}/a-file ROOT": "cannot save pages in",  # A file.
    "--stage nope ROOT": "invalid choice: 'nope'",
    "--pages 5": "10 pages",  # Without a root, so the bundled site would be served.
    "javascript:alert(1)": "root 'javascript:alert(1)' is not an http or https URL",
    "ftp://example.com/": "root 'ftp://example.com/' is not an http or https URL",
    "http://": "root 'http://' is not a valid URL",
    "ROOT http://a<b/": "root 'http://a<b/' is not a valid URL",
}
NEVER_FETCHED = "http://127.0.0.1:9/never-fetched"


@pytest.fixture(scope="module")
def usage_runs(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[Path, dict[str, subprocess.Popen[str]]]]:
    """Start every usage-error command at once; yield their directory and processes."""
    tmp = tmp_path_factory.mktemp("usage")
    (tmp / "a-file").write_text("")
    processes = {}
    for case in USAGE_ERRORS:
        argv = [NEVER_FETCHED if arg == "ROOT" else arg for arg in case.format(tmp=tmp).split()]
        processes[case] = subprocess.Popen(
            [str(CRAWL), *argv],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=tmp,
            env=ENV,
        )
    yield tmp, processes
    for process in processes.values():
        process.kill()
        process.communicate()  # Closes the pipes.


@pytest.mark.parametrize("case", list(USAGE_ERRORS))
@pytest.mark.slow  # A subprocess.
def test_usage_error_is_one_line_and_exit_status_2(
    usage_runs: tuple[Path, dict[str, subprocess.Popen[str]]], case: str
) -> None:
    tmp, processes = usage_runs
    stdout, stderr = processes[case].communicate(timeout=120)
    assert processes[case].returncode == 2, stderr
    assert len(stderr.splitlines()) == 1, stderr
    assert stderr.startswith("crawl: error: ") and stderr.endswith(" (see --help)\n")
    assert USAGE_ERRORS[case].format(tmp=tmp) in stderr
    assert stdout == ""  # Nothing was crawled or reported.


@pytest.mark.slow  # A subprocess.
def test_usage_error_through_python_m_shared_cli() -> None:
    result = run("--max_tasks", "0", "x.org", command=[sys.executable, "-m", "shared.cli"])
    assert result.returncode == 2
    assert len(result.stderr.splitlines()) == 1
    assert "max_tasks must be" in result.stderr


@pytest.mark.slow  # A subprocess.
def test_usage_error_through_python_m_stage() -> None:
    result = run("--bogus", command=[sys.executable, "-m", "stage3_asyncio"])
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        "python -m stage3_asyncio: error: unrecognized arguments: --bogus (see --help)"
    ]


@pytest.mark.slow  # A subprocess.
def test_help() -> None:
    result = run("--help")
    assert result.returncode == 0
    assert result.stdout.startswith("usage: crawl ")
    for option in ["--stage", "--max_tasks", "--exclude", "--lenient", "--json", "--pages"]:
        assert option in result.stdout


# --- Crawls ---------------------------------------------------------------------------------


def finished_count(report: str) -> int:
    """Return N from the report's 'Finished N urls in ...' line."""
    match = re.search(
        r"^Finished (\d+) urls in [\d.]+ secs \(max_tasks=\d+\) \([\d.]+ urls/sec/task\)$",
        report,
        re.M,
    )
    assert match, report
    return int(match.group(1))


@pytest.mark.parametrize("stage", STAGE_PARAMS)
@pytest.mark.slow  # A subprocess.
def test_crawl_the_bundled_site_quietly(stage: str, tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    args = ["--stage", stage, "--pages", "20", "--max_redirect", "0", "-q", "--json", str(out)]
    result = run(*args, cwd=tmp_path)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "*** Report ***"
    count = finished_count(result.stdout)
    assert count == 84  # The oracle's size for 20 pages and max_redirect 0, robots.txt obeyed.
    assert lines[-1] == f"Oracle: all {count} urls match the test site's expected results."
    assert "Todo: 0" in lines and f"Done: {count}" in lines
    url_lines = lines[1 : 1 + count]
    assert url_lines == sorted(url_lines)
    # The JSON Lines file has one object per URL of the report.
    records = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert len(records) == count
    assert sorted(record["url"] for record in records) == [line.split()[0] for line in url_lines]
    # What the site's robots.txt disallows is skipped, and said so.
    skipped = [line for line in url_lines if " skipped " in line]
    assert [line.split(" ", 1)[1] for line in skipped] == ["skipped disallowed by robots.txt"] * 2
    paths = {line.split()[0].split("/", 3)[3] for line in skipped}
    assert paths == {"archive/?print=1", "private/"}
    assert sum(record["skipped"] for record in records) == 2
    # -q: errors only on stderr, no notice.  The redirect chain's limit is
    # an error; following a redirect is INFO.
    assert "redirect limit reached" in result.stderr
    assert all(line.startswith("ERROR ") for line in result.stderr.splitlines())


@pytest.mark.slow  # A subprocess.
def test_crawl_with_limits_reports_the_rest_as_not_fetched() -> None:
    result = run("--pages", "20", "--max-pages", "5", "--max-per-host", "2", "-q")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    url_lines = lines[1 : 1 + finished_count(result.stdout)]
    not_fetched = [line for line in url_lines if line.endswith(" skipped max_pages=5 reached")]
    fetched = [line for line in url_lines if " skipped " not in line]
    assert len(fetched) == 5 and not_fetched
    assert lines[-1].startswith("Oracle: not checked: --max-pages and --max-depth")


@pytest.mark.slow  # A subprocess.
def test_crawl_the_bundled_site_verbosely() -> None:
    result = run("--pages", "20", "-v")
    assert result.returncode == 0, result.stderr
    assert result.stderr.startswith("No root given: crawling the bundled test site at http://")
    assert ", served by aiohttp\n" in result.stderr  # The site's server, not the crawler's.
    assert result.stdout.splitlines()[-1] == (
        "Oracle: all 90 urls match the test site's expected results."
    )
    assert re.search(r"^INFO stage3_asyncio: redirect to http://", result.stderr, re.M)
    assert "redirect limit reached" not in result.stderr


@pytest.mark.slow  # A subprocess.
def test_exit_status_1_when_no_root_could_be_fetched() -> None:
    with refused_port() as refused, refused_port() as other:
        result = run(refused, other, "--max_tries", "2", "--stage", "callbacks")
    assert result.returncode == cli.EXIT_NOTHING_FETCHED == 1, result.stderr
    assert finished_count(result.stdout) == 2  # The report is printed all the same.
    assert result.stderr.splitlines()[-1] == "No root could be fetched (see the report)."


@pytest.mark.slow  # A subprocess.
def test_exit_status_0_when_a_root_answers_even_with_an_error(pages: PageServer) -> None:
    with refused_port() as refused:
        result = run(refused, pages.url + "missing", "--max_tries", "1", "-q")
    assert result.returncode == 0, result.stderr
    assert f"{pages.url}missing 404 " in result.stdout


def test_check_roots_counts_only_the_roots() -> None:
    crawler = types.SimpleNamespace(
        done=[
            FetchStatistic(
                url="http://a/",
                next_url=None,
                status=None,
                exception=OSError(),
                size=0,
                content_type=None,
                encoding=None,
                num_urls=0,
                num_new_urls=0,
            ),
            FetchStatistic(
                url="http://a/x",
                next_url=None,
                status=200,
                exception=None,
                size=0,
                content_type=None,
                encoding=None,
                num_urls=0,
                num_new_urls=0,
            ),
        ]
    )
    assert cli.check_roots(crawler, ["http://a/"]) == cli.EXIT_NOTHING_FETCHED
    assert cli.check_roots(crawler, ["http://a/", "http://a/x"]) == cli.EXIT_OK


@pytest.mark.slow  # A subprocess.
def test_json_and_save_both_create_missing_parents(pages: PageServer, tmp_path: Path) -> None:
    pages.add_page("/", [])
    out, mirror = tmp_path / "new" / "deeper" / "out.jsonl", tmp_path / "other" / "mirror"
    result = run(pages.url, "--json", str(out), "--save", str(mirror), "-q")
    assert result.returncode == 0, result.stderr
    assert len(out.read_text(encoding="utf-8").splitlines()) == 1
    assert [path.name for path in mirror.rglob("*") if path.is_file()] == ["index.html"]


def test_quiet_shows_no_progress_line(monkeypatch: pytest.MonkeyPatch) -> None:
    shown = []

    def progress(crawler: object) -> nullcontext[None]:
        shown.append(crawler)
        return nullcontext()

    monkeypatch.setattr(cli, "progress", progress)
    module = types.SimpleNamespace(run=lambda crawler: None)
    crawler = types.SimpleNamespace(done=[], seen_urls=set(), max_tasks=1, t0=0.0, t1=1.0)
    cli.run_and_report(module, crawler, None, quiet=True)
    assert shown == []
    cli.run_and_report(module, crawler, None, quiet=False)
    assert shown == [crawler]


# Runs ``python -m PACKAGE ROOT -q`` in this interpreter, then prints the exit
# status and which of asyncio, aiohttp and redis were imported.
RUN_AND_LIST_MODULES = """
import runpy, sys
sys.argv = [sys.argv[1], *sys.argv[2:]]
try:
    runpy.run_module(sys.argv[0], run_name="__main__", alter_sys=True)
except SystemExit as exit:
    print(exit.code, sorted({"asyncio", "aiohttp", "redis"} & sys.modules.keys()))
"""


@pytest.mark.slow  # A subprocess.
@pytest.mark.parametrize("package", ["stage1_callbacks", "stage2_generators"])
def test_python_m_stage_1_and_2_never_import_asyncio(package: str, pages: PageServer) -> None:
    root = pages.add_page("/", ["/a"])
    pages.add_page("/a", [])
    command = [sys.executable, "-c", RUN_AND_LIST_MODULES, package]
    result = run(root, "-q", command=command)
    assert result.stdout.splitlines()[-1] == "0 []", result.stdout[-500:] + result.stderr
    assert (pages.requests["/"], pages.requests["/a"]) == (1, 1)  # It did crawl.


@pytest.mark.slow  # A subprocess.
def test_help_gives_the_exit_statuses() -> None:
    text = " ".join(run("--help").stdout.split())
    for status in ["0 when at least one root", "1 when no root", "2 for a usage", "3 when", "130"]:
        assert status in text


@pytest.mark.slow  # A subprocess.
def test_crawl_given_roots_does_not_check_the_oracle(pages: PageServer) -> None:
    root = pages.add_page("/", ["/a", "/b"])
    pages.add_page("/a", [])
    host = pages.url.removeprefix("http://").rstrip("/")
    with refused_port() as refused:
        # --ignore-robots: else the refused host's robots.txt, unreachable, skips its root.
        result = run(host + "/", refused, "-q", "--max_tries", "1", "--ignore-robots")
    assert result.returncode == 0, result.stderr  # Failed URLs are not a failed command.
    assert finished_count(result.stdout) == 4
    assert "Oracle" not in result.stdout
    assert f"{root} 200 text/html utf-8 " in result.stdout
    assert f"{pages.url}b 404 " in result.stdout
    assert f"{refused} error " in result.stdout
    assert f"{refused} failed after 1 tries" in result.stderr
    assert pages.requests == {"/": 1, "/a": 1, "/b": 1}


# --- In-process helpers ---------------------------------------------------------------------


def fake_crawler(done: int, seen: int, in_flight: int, t0: float) -> types.SimpleNamespace:
    """Return an object with what progress_line reads."""
    return types.SimpleNamespace(
        done=[None] * done, seen_urls=set(range(seen)), in_flight=in_flight, t0=t0
    )


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> types.SimpleNamespace:
    """Freeze the progress line's clock at 1000.0 seconds."""
    frozen = types.SimpleNamespace(time=lambda: 1000.0)
    monkeypatch.setattr(progress_module, "time", frozen)
    return frozen


@pytest.mark.parametrize(
    ("done", "seen", "in_flight", "t0", "line"),
    [
        (30, 50, 5, 990.0, "done 30 | queued 15 | in flight 5 | 3.0 urls/s"),
        (0, 1, 1, 1000.0, "done 0 | queued 0 | in flight 1 | 0.0 urls/s"),
        (7, 7, 0, 998.0, "done 7 | queued 0 | in flight 0 | 3.5 urls/s"),
        (5, 3, 2, 999.0, "done 5 | queued 0 | in flight 2 | 5.0 urls/s"),  # Never negative.
        (1000, 1500, 10, 996.0, "done 1000 | queued 490 | in flight 10 | 250.0 urls/s"),
    ],
)
def test_progress_line(
    clock: types.SimpleNamespace, done: int, seen: int, in_flight: int, t0: float, line: str
) -> None:
    assert progress_line(fake_crawler(done, seen, in_flight, t0)) == line


class Terminal(io.StringIO):
    """A stderr that says it is a terminal and signals each write."""

    def __init__(self) -> None:
        super().__init__()
        self.wrote = threading.Event()

    def isatty(self) -> bool:
        return True

    def write(self, text: str) -> int:
        self.wrote.set()
        return super().write(text)


def test_progress_shows_a_live_line_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    crawler = fake_crawler(3, 10, 2, time.time())
    with progress(crawler, interval=0.01):
        assert terminal.wrote.wait(30), "no progress line within 30 seconds"
    text = terminal.getvalue()
    assert "\rdone 3 | queued 5 | in flight 2 | " in text
    assert text.endswith("\r\033[K")  # The line is erased at the end.


def test_progress_is_silent_when_stderr_is_not_a_terminal(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    stream = io.StringIO()
    monkeypatch.setattr(sys, "stderr", stream)
    with progress(fake_crawler(1, 1, 0, time.time()), interval=0.001):
        pass
    assert stream.getvalue() == ""


def test_check_oracle_reports_a_mismatch(capsys: pytest.CaptureFixture[str]) -> None:
    root = "http://127.0.0.1:8000/"
    options = {"max_redirect": 10, "obey_robots": True, "max_pages": None, "max_depth": None}
    options["sitemaps"] = False
    crawler = types.SimpleNamespace(done=[], **options)
    assert cli.check_oracle(crawler, root, 10) == cli.EXIT_MISMATCH
    out = capsys.readouterr().out
    assert out.startswith("Oracle: MISMATCH: 70 expected results missing, 0 unexpected")
    assert len([line for line in out.splitlines() if line.startswith("  missing:")]) == 10


def test_check_oracle_is_skipped_when_a_limit_leaves_pages_out(
    capsys: pytest.CaptureFixture[str],
) -> None:
    options = {"max_redirect": 10, "obey_robots": True, "max_pages": 5, "max_depth": None}
    options["sitemaps"] = False
    crawler = types.SimpleNamespace(done=[], **options)
    assert cli.check_oracle(crawler, "http://127.0.0.1:8000/", 10) == cli.EXIT_OK
    assert capsys.readouterr().out.startswith("Oracle: not checked: --max-pages and --max-depth")

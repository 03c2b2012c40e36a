"""An mkdocs hook that puts generated text into pages at build time.

A line ``<!-- output: crawl --help -->`` in a page is replaced by a console
block that shows the command and what it printed.  The output is never
pasted by hand, so it cannot drift from the code: every build (and
tests/test_docs.py builds the site) runs the command again.

A line ``<!-- include-if-present: docs/bench/summary.md -->`` is replaced by
that file's Markdown when the file exists (relative links in it are made
relative to the page), and by a note saying how to generate it when it does
not: the benchmark writes that file, and a fresh clone has not run it yet.
On a Chinese page (``NAME.zh.md``) the marker includes the file's Chinese
version, ``summary.zh.md`` beside ``summary.md``, which the benchmark
writes too; both pages hold the same marker.

The command runs from the repository root with this Python: ``python`` is
``sys.executable`` and ``crawl`` is ``python -m shared.cli``.  Output is
80 columns wide, so argparse wraps help text the same way everywhere, and
paths under the repository are shown relative to it.  A
command that fails, or a marker that names nothing, fails the build.

Options in brackets run a command against the local test site, which the
hook starts for the build: ``<!-- output [site]: python -m
stage1_callbacks.steps.crawl -->`` runs the step with the site's URL added
at the end, and shows the command as written, the way a reader types it
with ``python -m shared.testsite`` serving on port 8000.  So the output says
``http://127.0.0.1:8000/`` where the hook's site has a port of its own.
``latency=100`` serves the site with ``--latency-ms 100``; ``lines=8``
shows the first 8 lines of a long output, then how many were left out,
then the last line.

``serve=MODULE`` starts a server step first, ``python -m MODULE --port 0``
(it binds a free port and prints ``serving on 127.0.0.1:PORT``), runs the
marker's commands against it (``curl`` is a program too; several commands
are joined with `` && ``), then stops the server with Ctrl-C (SIGINT) and
shows two blocks: the server's terminal, as a reader who ran it with
``--port 8001`` would see it, then the commands and what they printed.
Port 8001, because the reader's test site holds port 8000 (Following
along), so a marker's commands name ``127.0.0.1:8001``.
``status=N`` is the exit status the last command must have (``curl``
exits 28 when it gives up waiting), 0 when not given.

A code fence with ``hl_lines="diff STEP"`` whose body includes a whole
file (``--8<-- "FILE"``) gets the numbers of the lines of FILE that are not
in STEP (the previous step), the module docstring left aside: the reader
sees at a glance what a step adds.

A line ``<!-- timeline: callbacks, asyncio | ALT | CAPTION -->`` is replaced
by a figure: the timeline (``shared.record.timeline``) of real traced crawls of a
small test site (10 pages, 20 ms per answer), one panel per name, with
ALT as the image's text and CAPTION under it; a Chinese page's figure is
drawn with Chinese labels, into a file of its own (``NAME.zh.svg``).
``docs/hooks/timelines.py`` runs each crawl in a process of its own; its
names are listed there.  The SVG files are written into the built site
(``timelines/``) after the build, so nothing the build makes is kept in
the repository.  Inline, ``<!--
loop-share: callbacks asleep -->`` (or ``running``) becomes the share of
that crawl's loop time spent asleep in ``select`` (or running code), as a
percentage, from the same trace as the figure.

The site is built once per language (mkdocs-static-i18n builds the Chinese
pages with the same configuration object after the English ones), and a
page and its translation hold the same markers.  Each command runs once
per build and its output is kept on that configuration object, so both
languages show the very same output (a crawl prints ports and timings that
differ from run to run) and the commands do not run twice.
"""

from __future__ import annotations

import difflib
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import IO, Any

from mkdocs.exceptions import PluginError

from shared.record.timeline import loop_share, timeline
from shared.testsite.server import ServerThread, make_app
from shared.testsite.site import DEFAULT_PAGES

ROOT = Path(__file__).resolve().parents[2]
MARKER = re.compile(
    r"^(?P<indent>[ \t]*)<!-- output(?: \[(?P<options>[^\]]*)\])?: (?P<command>.+?) -->[ \t]*$",
    re.MULTILINE,
)
# A fence whose highlighted lines are those a whole-file include adds over a file.
DIFF_FENCE = re.compile(
    r'^(?P<head>[ \t]*`{3,}.*?)hl_lines="diff (?P<old>[^"]+)"(?P<tail>.*\n[ \t]*)'
    r'--8<-- "(?P<new>[^":]+)"',
    re.MULTILINE,
)
FIGURE = re.compile(
    r"^<!-- timeline: (?P<names>[\w, -]+?) \| (?P<alt>[^|]+?) \| (?P<caption>.+?) -->[ \t]*$",
    re.MULTILINE,
)
SHARE = re.compile(r"<!-- loop-share: (?P<name>[\w-]+) (?P<part>asleep|running) -->")
PANELS = {  # The title of each crawl's panel in a figure, in English and in Chinese.
    "threads": (
        "the thread crawler: a thread per request in flight",
        "线程爬虫：每个在途请求一个线程",
    ),
    "callbacks": ("stage 1: callbacks", "第一阶段：回调"),
    "generators": ("stage 2: generators", "第二阶段：生成器"),
    "asyncio": ("stage 3: `asyncio`", "第三阶段：`asyncio`"),
    "fetcher-step": (
        "stage 1, step `fetcher`: ten `Fetcher`s",
        "第一阶段 `fetcher` 这一步：十个 `Fetcher`",
    ),
    "crawl-step": ("stage 2, step `crawl`", "第二阶段 `crawl` 这一步"),
    "blocking": ("`get()` called in the coroutines", "在协程里直接调用 `get()`"),
    "to-thread": ("`asyncio.to_thread(get)`", "`asyncio.to_thread(get)`"),
    "race-passing": ("seed 0: one robots.txt", "种子 0：一次 robots.txt"),
    "race-failing": ("the first failing seed: two", "第一个失败的种子：两次"),
}
TIMELINE_SITE = (10, 20)  # Pages, and milliseconds per answer.
TRACES = "timeline_traces"  # Config keys: the traces, and the SVG files to write.
FIGURES = "timeline_figures"
OPTIONAL = re.compile(r"^<!-- include-if-present: (?P<path>\S+) -->[ \t]*$", re.MULTILINE)
# A Markdown link or image target that is a relative path: not a URL, not
# absolute, not an anchor on the same page.
RELATIVE_TARGET = re.compile(r"\]\((?![a-z][a-z0-9+.-]*:|/|#)(?P<target>[^)\s]+)")
PROGRAMS = {
    "python": [sys.executable],
    "crawl": [sys.executable, "-m", "shared.cli"],
    "curl": ["curl"],
}
# The keys under which a build's configuration keeps the outputs of its
# commands and the test sites it started.
OUTPUTS = "command_outputs"
SITES = "command_sites"
READER_URL = "http://127.0.0.1:8000/"  # Where the reader's python -m shared.testsite serves.
READER_ADDRESS = "127.0.0.1:8001"  # Where a reader's server step serves: --port 8001.
SERVING = re.compile(r"^serving on 127\.0\.0\.1:(?P<port>\d+)$")  # A server step's first line.
SERVER_DEADLINE = 30  # Seconds for a server step to start, and to stop after Ctrl-C.


def run(command: str, extra_args: tuple[str, ...] = (), status: int = 0) -> str:
    """Run ``command`` from the repository root and return what it printed.

    Raises PluginError when it cannot run or exits with another status
    than ``status``.
    """
    words = shlex.split(command) + list(extra_args)
    if not words or words[0] not in PROGRAMS:
        raise PluginError(f"<!-- output: {command} -->: only {sorted(PROGRAMS)} can run")
    env = {**os.environ, "COLUMNS": "80", "PYTHONPATH": str(ROOT), "NO_COLOR": "1"}
    try:
        done = subprocess.run(
            PROGRAMS[words[0]] + words[1:],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        raise PluginError(f"<!-- output: {command} -->: {error}") from error
    if done.returncode != status:
        raise PluginError(f"<!-- output: {command} --> exited {done.returncode}:\n{done.stderr}")
    # Paths in tracebacks, relative to the repository root as a reader's are.
    return (done.stdout + done.stderr).replace(f"{ROOT}{os.sep}", "")


def include_if_present(path: str, page_src: str) -> str:
    """Return the Markdown of ``path`` in the page's language, or a note on how to generate it."""
    chinese = page_src.endswith(".zh.md")
    if chinese:
        path = re.sub(r"\.md$", ".zh.md", path)
    file = ROOT / path
    if not file.is_file() and chinese:
        return (
            '!!! info "尚未测量"\n\n'
            f"    这份代码里还没有 `{path}`。在仓库根目录运行 `python -m shared.bench`\n"
            "    进行测量，然后重新构建本站。\n"
        )
    if not file.is_file():
        return (
            '!!! info "Not measured yet"\n\n'
            f"    `{path}` does not exist in this checkout. Run `python -m shared.bench`\n"
            "    from the repository root to measure, then build the site again.\n"
        )
    page_dir = (ROOT / "docs" / page_src).parent
    prefix = os.path.relpath(file.parent, page_dir).replace(os.sep, "/")

    def rebase(match: re.Match[str]) -> str:
        target = match["target"]
        if prefix == "." or not (file.parent / target.split("#")[0]).exists():
            return match[0]  # Already relative to the page, or not a file of ours.
        return f"]({prefix}/{target}"

    return RELATIVE_TARGET.sub(rebase, file.read_text(encoding="utf-8"))


def parse_options(text: str | None) -> dict[str, str]:
    """Return the options of a marker: ``site, lines=8`` is {"site": "", "lines": "8"}."""
    options = {}
    for option in filter(None, (part.strip() for part in (text or "").split(","))):
        name, _, value = option.partition("=")
        if name not in ("site", "latency", "lines", "serve", "status"):
            raise PluginError(f"unknown option {option!r} in an output marker")
        options[name] = value
    return options


def site_url(config: dict, latency_ms: int, pages: int = DEFAULT_PAGES) -> str:
    """Return the URL of this build's test site with ``latency_ms``, starting it once."""
    sites: dict[tuple[int, int], ServerThread] = config.setdefault(SITES, {})
    key = (latency_ms, pages)
    if key not in sites:
        server = ServerThread(make_app(pages, latency=latency_ms / 1000))
        server.__enter__()
        sites[key] = server
    return sites[key].url


def trace_of(name: str, config: dict) -> dict[str, Any]:
    """Return the trace of the named crawl of the timeline site, running it once per build."""
    traces: dict[str, dict[str, Any]] = config.setdefault(TRACES, {})
    if name not in PANELS:
        raise PluginError(f"<!-- timeline -->: unknown crawl {name!r}, not one of {sorted(PANELS)}")
    if name not in traces:
        pages, latency_ms = TIMELINE_SITE
        with tempfile.TemporaryDirectory() as scratch:
            out = Path(scratch) / "trace.json"
            url = site_url(config, latency_ms, pages)
            run(f"python docs/hooks/timelines.py {name} {out}", (url,))
            traces[name] = json.loads(out.read_text(encoding="utf-8"))
    return traces[name]


def figure(match: re.Match[str], page: Any, config: dict) -> str:
    """Return the HTML of a timeline figure, drawing its SVG once per build and language.

    A Chinese page gets a figure of its own, labelled in Chinese.
    """
    names = [name.strip() for name in match["names"].split(",")]
    lang = "zh" if page.file.src_uri.endswith(".zh.md") else "en"
    file = "-".join(names) + ("" if lang == "en" else f".{lang}") + ".svg"
    figures: dict[str, str] = config.setdefault(FIGURES, {})
    if file not in figures:
        titles = [PANELS[name][lang == "zh"] for name in names]
        panels = [
            (title, trace_of(name, config)) for title, name in zip(titles, names, strict=True)
        ]
        heading = "时间线：" if lang == "zh" else "Timeline: "
        figures[file] = timeline(
            panels, heading + ("；" if lang == "zh" else "; ").join(titles), lang
        )
    src = "../" * page.url.count("/") + "timelines/" + file
    return (
        f'<figure class="timeline" markdown>\n<img src="{src}" alt="{match["alt"].strip()}">\n'
        f'<figcaption markdown="span">{match["caption"].strip()}</figcaption>\n</figure>'
    )


def share(match: re.Match[str], config: dict) -> str:
    """Return a loop's share of time asleep or running, as a whole percentage."""
    try:
        asleep, running = loop_share(trace_of(match["name"], config))
    except ValueError as error:
        raise PluginError(f"<!-- loop-share: {match['name']} -->: {error}") from None
    return f"{round(100 * (asleep if match['part'] == 'asleep' else running))}%"


def output_key(command: str, options: dict[str, str]) -> str:
    """Return the key of a marker's output: its command and options, ``lines`` left out.

    ``lines`` only shortens what is shown, so markers that differ in it
    show the same run.
    """
    shown = sorted((name, value) for name, value in options.items() if name != "lines")
    return f"{command} {shown}"


def run_marker(command: str, options: dict[str, str], config: dict) -> str:
    """Run a marker's command, on the test site if it asks for one."""
    status = int(options.get("status") or 0)  # A grader's run that fails exits 1.
    if "site" not in options:
        return run(command, status=status)
    url = site_url(config, int(options.get("latency") or 0))
    return run(command, (url,), status).replace(url, READER_URL)


def serve_and_run(module: str, commands: str, status: int) -> str:
    """Start the server step ``module``, run ``commands`` on it, stop it; return both blocks.

    Raises PluginError when the server does not start or stop cleanly, or
    a command fails.
    """
    server = subprocess.Popen(
        [sys.executable, "-m", module, "--port", "0"],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # Ctrl-C must reach it even when this build runs with SIGINT
        # ignored (a background job), which a child would inherit.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    lines: list[str] = []
    errors: list[str] = []
    started = threading.Event()

    def read(stream: IO[str], into: list[str]) -> None:
        for line in stream:
            into.append(line.rstrip("\n"))
            started.set()
        started.set()  # The server ended: no more lines will come.

    readers = [
        threading.Thread(target=read, args=(server.stdout, lines)),
        threading.Thread(target=read, args=(server.stderr, errors)),
    ]
    for reader in readers:
        reader.start()
    try:
        started.wait(SERVER_DEADLINE)
        serving = SERVING.match(lines[0]) if lines else None
        if serving is None:
            raise PluginError(f"{module} --port 0 did not say where it serves: {lines}")
        address = f"127.0.0.1:{serving['port']}"
        client = []
        for command in commands.split(" && "):
            last = command == commands.split(" && ")[-1]
            output = run(command.replace(READER_ADDRESS, address), status=status if last else 0)
            client += [f"$ {command}", *output.replace(address, READER_ADDRESS).splitlines()]
        server.send_signal(signal.SIGINT)
        server.wait(timeout=SERVER_DEADLINE)
    except subprocess.TimeoutExpired as error:
        raise PluginError(f"{module} did not stop on Ctrl-C") from error
    finally:
        server.kill()
        server.wait()
        for reader in readers:
            reader.join()
    if server.returncode != 0 or errors:
        raise PluginError(f"{module} stopped with {server.returncode}:\n" + "\n".join(errors))
    shown = [line.replace(address, READER_ADDRESS) for line in lines]
    if shown[-1] == "stopped":  # Where the reader pressed Ctrl-C, as a terminal echoes it.
        shown.insert(-1, "^C")
    fence = "```"
    return "\n".join(
        [f"{fence}console", f"$ python -m {module} --port 8001", *shown, fence, ""]
        + [f"{fence}console", *client, fence]
    )


def shorten(output: str, lines: str | None) -> str:
    """Keep the first ``lines`` lines of ``output`` and its last line."""
    kept = output.rstrip("\n").splitlines()
    if not lines or len(kept) <= int(lines) + 2:
        return "\n".join(kept)
    left_out = len(kept) - int(lines) - 1
    return "\n".join([*kept[: int(lines)], f"... ({left_out} lines left out)", kept[-1]])


def changed_lines(old: str, new: str) -> str:
    """Return the hl_lines value for the lines of ``new`` that ``old`` does not have."""
    new_lines = (ROOT / new).read_text(encoding="utf-8").splitlines()
    old_lines = (ROOT / old).read_text(encoding="utf-8").splitlines()
    docstring_end = next(
        (n for n, line in enumerate(new_lines) if n > 0 and line.endswith('"""')), -1
    )
    matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    changed = [
        number + 1
        for tag, _, _, start, end in matcher.get_opcodes()
        if tag in ("replace", "insert")
        for number in range(start, end)
        if number > docstring_end and new_lines[number].strip()
    ]
    return " ".join(map(str, changed))


def on_post_build(config: dict, **kwargs: object) -> None:
    """Write the timelines into the built site; stop the test sites this build started."""
    for server in config.get(SITES, {}).values():
        server.__exit__(None, None, None)
    config[SITES] = {}
    folder = Path(config["site_dir"]) / "timelines"
    for file, svg in config.get(FIGURES, {}).items():
        folder.mkdir(parents=True, exist_ok=True)
        (folder / file).write_text(svg, encoding="utf-8")


def on_page_markdown(markdown: str, page: object, config: dict, **kwargs: object) -> str:
    """Replace each marker with a command's output or an optional file."""
    src = page.file.src_uri  # type: ignore[attr-defined]
    markdown = OPTIONAL.sub(lambda match: include_if_present(match["path"], src), markdown)
    outputs: dict[str, str] = config.setdefault(OUTPUTS, {})

    def block(match: re.Match[str]) -> str:
        indent, command = match["indent"], match["command"]
        options = parse_options(match["options"])
        key = output_key(command, options)
        if "serve" in options:  # Two whole blocks: the server's, then the commands'.
            if key not in outputs:
                status = int(options.get("status") or 0)
                outputs[key] = serve_and_run(options["serve"], command, status)
            return "\n".join(indent + line if line else line for line in outputs[key].split("\n"))
        if key not in outputs:
            outputs[key] = run_marker(command, options, config)
        text = shorten(outputs[key], options.get("lines"))
        lines = ["```console", f"$ {command}", *text.splitlines(), "```"]
        return "\n".join(indent + line if line else line for line in lines)

    def highlight(match: re.Match[str]) -> str:
        lines = changed_lines(match["old"], match["new"])
        return f'{match["head"]}hl_lines="{lines}"{match["tail"]}--8<-- "{match["new"]}"'

    markdown = DIFF_FENCE.sub(highlight, markdown)
    markdown = FIGURE.sub(lambda match: figure(match, page, config), markdown)
    markdown = SHARE.sub(lambda match: share(match, config), markdown)
    return MARKER.sub(block, markdown)

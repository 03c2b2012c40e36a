"""An mkdocs hook that puts generated text into pages at build time.

A line ``<!-- output: crawl --help -->`` in a page is replaced by a console
block that shows the command and what it printed.  The output is never
pasted by hand, so it cannot drift from the code: every build (and
tests/test_docs.py builds the site) runs the command again.

A line ``<!-- include-if-present: docs/bench/summary.md -->`` is replaced by
that file's Markdown when the file exists (relative links in it are made
relative to the page), and by a note saying how to generate it when it does
not: the benchmark writes that file, and a fresh clone has not run it yet.

The command runs from the repository root with this Python: ``python`` is
``sys.executable`` and ``crawl`` is ``python -m shared.cli``.  Output is
80 columns wide, so argparse wraps help text the same way everywhere.  A
command that fails, or a marker that names nothing, fails the build.

The site is built once per language (mkdocs-static-i18n builds the Chinese
pages with the same configuration object after the English ones), and a
page and its translation hold the same markers.  Each command runs once
per build and its output is kept on that configuration object, so both
languages show the very same output (a crawl prints ports and timings that
differ from run to run) and the commands do not run twice.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

from mkdocs.exceptions import PluginError

ROOT = Path(__file__).resolve().parents[2]
MARKER = re.compile(r"^(?P<indent>[ \t]*)<!-- output: (?P<command>.+?) -->[ \t]*$", re.MULTILINE)
OPTIONAL = re.compile(r"^<!-- include-if-present: (?P<path>\S+) -->[ \t]*$", re.MULTILINE)
# A Markdown link or image target that is a relative path: not a URL, not
# absolute, not an anchor on the same page.
RELATIVE_TARGET = re.compile(r"\]\((?![a-z][a-z0-9+.-]*:|/|#)(?P<target>[^)\s]+)")
PROGRAMS = {"python": [sys.executable], "crawl": [sys.executable, "-m", "shared.cli"]}
# The key under which a build's configuration keeps the outputs of its commands.
OUTPUTS = "command_outputs"


def run(command: str) -> str:
    """Run ``command`` from the repository root and return what it printed.

    Raises PluginError when it cannot run or exits with an error.
    """
    words = shlex.split(command)
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
    if done.returncode != 0:
        raise PluginError(f"<!-- output: {command} --> exited {done.returncode}:\n{done.stderr}")
    return done.stdout + done.stderr


def include_if_present(path: str, page_src: str) -> str:
    """Return the Markdown of ``path``, or a note on how to generate it."""
    file = ROOT / path
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


def on_page_markdown(markdown: str, page: object, config: dict, **kwargs: object) -> str:
    """Replace each marker with a command's output or an optional file."""
    src = page.file.src_uri  # type: ignore[attr-defined]
    markdown = OPTIONAL.sub(lambda match: include_if_present(match["path"], src), markdown)
    outputs: dict[str, str] = config.setdefault(OUTPUTS, {})

    def block(match: re.Match[str]) -> str:
        indent, command = match["indent"], match["command"]
        if command not in outputs:
            outputs[command] = run(command)
        lines = ["```console", f"$ {command}", *outputs[command].rstrip("\n").splitlines(), "```"]
        return "\n".join(indent + line if line else line for line in lines)

    return MARKER.sub(block, markdown)

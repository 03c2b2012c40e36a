"""Replay a page's ``>>>`` sessions as the tests run them, and print what the prompt prints.

A chapter's ```` ```pycon ```` blocks are one session at the prompt, cut
into pieces by the prose: tests/test_docs.py runs them with doctest, in
order, in one namespace, so a block may use what an earlier one defined.
``run_session(page, number, write)`` runs block ``number`` (1 for the
first) the same way: the blocks before it first, silently, then this one,
each input compiled as the prompt compiles it (``"single"``: an
expression's value is shown with ``repr``).  It writes the block as the
prompt shows it: each input as the page writes it, then what it printed,
or the traceback the prompt prints for an error ("``  ...``" on the page,
which doctest passes over).  The frames are named ``<stdin>``, as in
the prompt, with no source lines under them: the same on every Python.

It also checks each output as doctest does (``ELLIPSIS``, an error by its
last line), and says which inputs printed something other than the page
shows.  ``python -m shared.page docs/generators.md:3`` prints the third
block of that page in a terminal; the docs' Run buttons do the same in
the page.
"""

from __future__ import annotations

import contextlib
import dataclasses
import doctest
import io
import re
import sys
import textwrap
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
# A fenced block of Markdown: its indent, fence, language, the rest of its line, its body.
FENCE = re.compile(
    r"^(?P<indent>[ \t]*)(?P<fence>`{3,})(?P<lang>[\w-]*)(?P<info>[^\n]*)\n"
    r"(?P<body>.*?)^(?P=indent)(?P=fence)[ \t]*$",
    re.MULTILINE | re.DOTALL,
)
ASYNCIO_PROMPT = 'title="python -m asyncio"'  # Another prompt: its sessions are not these.
REFERENCE = re.compile(r"^(?P<page>[\w/.-]+\.md):(?P<number>[1-9]\d*)$")
PROMPT_FILE = "<stdin>"  # What the prompt calls the code typed at it.


@dataclasses.dataclass
class SessionOutcome:
    """How a block went: the numbers (from 1) of its inputs that printed other than the page."""

    differs: list[int]

    @property
    def status(self) -> int:
        """Return 0 if every input printed what the page shows, else 1."""
        return 1 if self.differs else 0


def is_session(reference: str) -> bool:
    """Tell whether ``reference`` names a page's block (``docs/PAGE.md:N``), not a module."""
    return REFERENCE.match(reference) is not None


def sessions(markdown: str) -> list[str]:
    """Return the bodies of the ```pycon blocks of a page's Markdown, dedented, in order."""
    return [
        textwrap.dedent(match["body"])
        for match in FENCE.finditer(markdown)
        if match["lang"] == "pycon" and ASYNCIO_PROMPT not in match["info"]
    ]


def page_blocks(reference: str) -> tuple[list[str], int]:
    """Return the sessions of the page ``reference`` names, and the block's index in them.

    Raises ValueError for a reference to no page, or to a block it does not have.
    """
    match = REFERENCE.match(reference)
    path = ROOT / match["page"] if match else None
    if match is None or path is None or not path.is_file():
        raise ValueError(f"no page of the project at {reference!r} (docs/PAGE.md:N)")
    blocks = sessions(path.read_text(encoding="utf-8"))
    number = int(match["number"])
    if number > len(blocks):
        raise ValueError(f"{match['page']} has {len(blocks)} sessions, not {number}")
    return blocks, number - 1


def run_session(reference: str, write: Callable[[str], object]) -> SessionOutcome:
    """Run the blocks of a page up to the one ``reference`` names; write that one's session.

    Raises ValueError for a reference to no page, or to a block it does not have.
    """
    return run_blocks(*page_blocks(reference), write)


def run_blocks(blocks: list[str], index: int, write: Callable[[str], object]) -> SessionOutcome:
    """Run ``blocks`` up to ``blocks[index]`` in one namespace; write that one's session."""
    namespace: dict[str, Any] = {"__name__": "__main__"}
    for body in blocks[:index]:  # What the earlier blocks define, as doctest runs them.
        for example in doctest.DocTestParser().get_examples(body):
            run_input(example.source, namespace)
    differs = []
    for number, (typed, example) in enumerate(inputs(blocks[index]), 1):
        write(typed)
        printed, error = run_input(example.source, namespace)
        write(printed)
        if not matches(example, printed, error):
            differs.append(number)
    return SessionOutcome(differs)


def inputs(body: str) -> list[tuple[str, doctest.Example]]:
    """Return each input of a block as the page writes it (``>>>`` and ``...`` lines), parsed."""
    lines = body.splitlines(keepends=True)
    found = []
    for example in doctest.DocTestParser().get_examples(body):
        end = example.lineno + 1  # After the >>> line, the ... lines (doctest's PS2 lines).
        while end < len(lines) and lines[end].lstrip().startswith("..."):
            end += 1
        found.append(("".join(lines[example.lineno : end]), example))
    return found


def run_input(source: str, namespace: dict[str, Any]) -> tuple[str, BaseException | None]:
    """Run one input as the prompt does; return what it printed and the error that ended it."""
    printed = io.StringIO()
    error = None
    saved_hook = sys.displayhook
    sys.displayhook = sys.__displayhook__  # Shows a value's repr on stdout, as the prompt does.
    try:
        with contextlib.redirect_stdout(printed), contextlib.redirect_stderr(printed):
            try:
                exec(compile(source, PROMPT_FILE, "single"), namespace)
            except BaseException as caught:  # The prompt shows any error, and goes on.
                error = caught
                printed.write(prompt_traceback(caught))
    finally:
        sys.displayhook = saved_hook
    return printed.getvalue(), error


def prompt_traceback(error: BaseException) -> str:
    """Return the traceback the prompt prints, from the typed input's frame on."""
    tb = error.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename == __file__:
        tb = tb.tb_next  # This runner's own frames.
    return "".join(traceback.format_exception(type(error), error, tb))


def matches(example: doctest.Example, printed: str, error: BaseException | None) -> bool:
    """Tell whether an input printed what the page shows, as doctest compares them."""
    checker = doctest.OutputChecker()
    if error is None:
        return example.exc_msg is None and checker.check_output(
            example.want, printed, doctest.ELLIPSIS
        )
    last = traceback.format_exception_only(type(error), error)[-1]
    return example.exc_msg is not None and checker.check_output(
        example.exc_msg, last, doctest.ELLIPSIS
    )

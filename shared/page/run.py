"""Run a step in a fresh simulated world, as ``python -m MODULE`` runs it, and say what it printed.

``run_step`` gives the step a new ``PageWorld`` (seed 0 unless told),
puts the world's ``socket``, ``selectors`` and ``time`` in ``sys.modules``,
imports the project's modules afresh (a step imported before, or the
finished stage, must not keep another world's clock), and runs the step's
file as ``__main__``: its own source, or the text a reader edited in the
page.  What it writes to stdout and stderr goes, in the order written, to
``write``: one stream, as a terminal shows both.

An error that ends the step is printed as a terminal prints it, with the
frames of this runner left out: ``Traceback (most recent call last):``,
the step's frames, the error.  Paths under the project's root are shown
relative to it, in the page and in a terminal alike.  ``SystemExit`` ends
the step with its status, as it would end the program.

Afterwards the standard library's modules are back in ``sys.modules``: the
runner's own machinery, and the page's, never meets the world's.

One thing would still tell the page's run from a terminal's: the crawling
steps start a fetch for each new link of a page in the order of a set,
``links - self.seen_urls``, and a set of strings is ordered by their
hashes.  The page's Python (Pyodide, 32-bit WebAssembly) hashes strings
with FNV, a 64-bit CPython with SipHash, so the two would fetch in two
orders.  In the world, ``links_to_follow`` returns a ``SortedLinks``: a
set whose iteration, and that of what is taken away from it, goes in
sorted order.  The step's code is the same; its links come in one order
on every Python.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import gc
import importlib.util
import io
import json
import linecache
import signal
import sys
import traceback
import types
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from shared.page.session import is_session, run_session
from shared.page.world import PageWorld

ROOT = Path(__file__).resolve().parents[2]
# The project's packages, imported afresh for each run; the world's own
# modules (shared.sim, shared.testsite, this package) stay as they are.
FRESH = ("stage1_callbacks", "stage2_generators", "stage3_asyncio", "shared.")
KEPT = ("shared.page", "shared.sim", "shared.testsite")


@dataclasses.dataclass
class Outcome:
    """How a run ended: its exit status, the virtual seconds it took, its journal if kept."""

    status: int
    seconds: float
    journal: dict[str, Any] | None = None


class Terminal(io.TextIOBase):
    """stdout and stderr of a run, in one stream: each write goes to ``write`` at once."""

    def __init__(self, write: Callable[[str], object]) -> None:
        self._write = write

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        self._write(text)
        return len(text)

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return "utf-8"


def module_file(module: str) -> Path:
    """Return the file of the project's ``module``, without importing it.

    Raises ValueError if there is none.
    """
    path = ROOT.joinpath(*module.split(".")).with_suffix(".py")
    if not module.startswith(FRESH) or not path.is_file():
        raise ValueError(f"no module {module!r} of the project with a source file")
    return path


def shown(path: str) -> str:
    """Return ``path`` relative to the project's root when it is under it."""
    try:
        return Path(path).relative_to(ROOT).as_posix()
    except ValueError:
        return path


def run_step(
    module: str,
    write: Callable[[str], object],
    source: str | None = None,
    seed: int = 0,
    journal: bool = False,
) -> Outcome:
    """Run step ``module`` (or ``source`` in its place) in a new world; return how it ended.

    With ``journal``, a run of stage 2's finished loop keeps a journal of
    it, for the replay player.  Raises ValueError for a module that has no
    source file.
    """
    path = module_file(module)
    code_text = path.read_text(encoding="utf-8") if source is None else source
    world = PageWorld(seed)
    terminal = Terminal(write)
    kept: list[Any] = []
    with in_world(world), redirected(terminal), no_ctrl_c():
        if journal:
            kept.append(keep_journal())
        status = execute(module, str(path), code_text, terminal)
        gc.collect()  # What the program's end would report (a task never awaited...).
    data = kept[0].data() if kept and kept[0].steps else None
    return Outcome(status, world.now(), data)


def execute(module: str, path: str, source: str, terminal: Terminal) -> int:
    """Run ``source`` as the ``__main__`` of ``module``; return the exit status."""
    main = types.ModuleType("__main__")
    main.__file__ = path
    main.__package__ = module.rpartition(".")[0]
    saved_main, saved_argv = sys.modules.get("__main__"), sys.argv
    sys.modules["__main__"], sys.argv = main, [path]
    name = shown(path)
    # Tracebacks (and a journal) read the lines of the code that ran: the edit, if any.
    linecache.cache[name] = (len(source), None, source.splitlines(keepends=True), name)
    try:
        code = compile(source, name, "exec")
        exec(code, main.__dict__)
    except SystemExit as stop:
        return exit_status(stop, terminal)
    except BaseException as error:  # As the interpreter would, at the program's end.
        terminal.write(traceback_text(error))
        return 1
    finally:
        linecache.cache.pop(name, None)
        sys.argv = saved_argv
        if saved_main is not None:
            sys.modules["__main__"] = saved_main
    return 0


def exit_status(stop: SystemExit, terminal: Terminal) -> int:
    """Return the status ``SystemExit`` asks for, printing its message as Python does."""
    if stop.code is None or isinstance(stop.code, int):
        return stop.code or 0
    terminal.write(f"{stop.code}\n")
    return 1


def traceback_text(error: BaseException) -> str:
    """Return the traceback a terminal would show, from the step's first frame on."""
    tb = error.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename == __file__:
        tb = tb.tb_next  # This runner's own frames.
    lines = traceback.format_exception(type(error), error, tb)
    return "".join(lines).replace(f"{ROOT}/", "")


@contextlib.contextmanager
def in_world(world: PageWorld) -> Iterator[None]:
    """Put the world's modules in ``sys.modules``, and import the project's afresh."""
    real = {name: sys.modules.get(name) for name in ("socket", "selectors", "time")}
    before = {name: module for name, module in sys.modules.items() if is_fresh(name)}
    drop_project_modules()
    sys.modules.update(world.modules())
    sort_the_links()
    try:
        yield
    finally:
        # The process gets back the very modules it had: a caller (a test, the
        # page's worker) that imported one before holds no stale copy.
        drop_project_modules()
        sys.modules.update(before)
        for name, module in before.items():  # And each package its submodules.
            parent, _, child = name.rpartition(".")
            if parent in sys.modules:
                setattr(sys.modules[parent], child, module)
        for name, stdlib in real.items():
            if stdlib is not None:
                sys.modules[name] = stdlib


class SortedLinks(set[str]):
    """A set of links that iterates in sorted order, as do the sets taken from it."""

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(set.__iter__(self)))

    def __sub__(self, other: Any) -> SortedLinks:
        return SortedLinks(set.__sub__(self, other))

    def difference(self, *others: Any) -> SortedLinks:
        return SortedLinks(set.difference(self, *others))


def sort_the_links() -> None:
    """Make ``shared.steps.links_to_follow`` return SortedLinks, before any step imports it."""
    steps = importlib.import_module("shared.steps")
    found = steps.links_to_follow

    @functools.wraps(found)
    def links_to_follow(*args: Any) -> SortedLinks:
        return SortedLinks(found(*args))

    setattr(steps, "links_to_follow", links_to_follow)  # noqa: B010  A module's attribute.


def is_fresh(name: str) -> bool:
    """Tell whether the module ``name`` is imported afresh for each run."""
    return name.startswith(FRESH) and not name.startswith(KEPT)


def drop_project_modules() -> None:
    """Forget the project's modules but the world's own: the next import runs them again."""
    for name in [name for name in sys.modules if is_fresh(name)]:
        del sys.modules[name]


@contextlib.contextmanager
def redirected(terminal: Terminal) -> Iterator[None]:
    """Send stdout and stderr to ``terminal`` within the block."""
    with contextlib.redirect_stdout(terminal), contextlib.redirect_stderr(terminal):
        yield


@contextlib.contextmanager
def no_ctrl_c() -> Iterator[None]:
    """Leave SIGINT ignored within the block, as in a background job.

    Stage 2's ``run`` then watches no socket pair of its own for Ctrl+C:
    the world holds only its own sockets, in the page (which has no
    signals) and in a terminal alike.
    """
    try:
        before = signal.signal(signal.SIGINT, signal.SIG_IGN)
    except (ValueError, OSError, AttributeError):  # Not the main thread, or no signals.
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, before)


def keep_journal() -> Any:
    """Make stage 2's finished loop keep a journal of its run; return the journal."""
    from shared.record.journal import NO_JOURNAL, Journal  # Imported afresh, in the world.

    loop_module = importlib.import_module("stage2_generators.loop")
    journal = Journal("stage2_generators (run in the page)")
    made = loop_module.EventLoop.__init__

    def with_journal(loop: Any, *args: Any, **kwargs: Any) -> None:
        made(loop, *args, **kwargs)
        if loop._journal is NO_JOURNAL:
            loop._journal = journal

    loop_module.EventLoop.__init__ = with_journal
    return journal


def page_run(
    module: str, source: str | None, write: Callable[[str], object], journal: bool
) -> tuple[int, float, str | None]:
    """Run a step for the page's worker: (exit status, virtual seconds, journal as JSON or None).

    ``module`` may name a page's ``>>>`` session instead (``docs/PAGE.md:N``,
    see ``session.py``): its status is 1 when an input printed other than
    the page shows.
    """
    if is_session(module):
        return run_session(module, write).status, 0.0, None
    edit = source if isinstance(source, str) else None  # JavaScript's null is not None.
    outcome = run_step(module, write, edit, journal=journal)
    kept = None if outcome.journal is None else json.dumps(outcome.journal, ensure_ascii=False)
    return outcome.status, outcome.seconds, kept

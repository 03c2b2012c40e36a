"""A journal of stage 2's event loop: every turn, every callback, every task's place.

The trace (``trace.py``) says when each worker waited; the journal says
how.  Stage 2's loop calls it at two natural points of ``_run_once``:
``woke`` once ``select()`` has returned and the due timers are in the
ready queue, and ``ran`` after each callback.  Each call adds one step,
with a copy of what the loop holds at that moment: the ready queue, the
timers, the sockets in the selector and who waits on each, the crawl's
queue, and every task with its state and its frames, from the generator
the task drives down through each ``yield from`` to the line that yielded.
A task's step is a callback that resumes it: the journal keeps where the
task was before (``resumed``) and where it stopped (``suspended``).

A loop without a journal gets ``NO_JOURNAL``, whose methods return at
once, as ``NO_TRACE`` does: the lesson code has no ``if`` for it.  A
journal stops adding steps after ``limit`` of them (a long crawl would
fill memory with copies) and says so in the file.

The file is JSON (``write``), opened by the replay player of the docs
(``docs/javascripts/replay.js``).  ``python -m shared.record.journal
FILE`` writes FILE's player as one HTML page that works offline.

The journal only looks: it reads the loop's, the tasks' and the queue's
attributes by their names in stage 2 (``_ready``, ``_coro``,
``_fut_waiter``...), and holds tasks weakly, so that a task nothing else
refers to is freed as it would be without it.
"""

from __future__ import annotations

import argparse
import inspect
import json
import linecache
import sys
import weakref
from pathlib import Path
from typing import Any

from shared.record.trace import in_order

ROOT = Path(__file__).resolve().parents[2]  # Frames in files under it are shown.
FORMAT = "stage2-journal"
VERSION = 1
MAX_STEPS = 5000  # 5 to 10 MB of JSON: a crawl of a few hundred pages.
EVENT_NAMES = {1: "read", 2: "write", 3: "read+write"}  # selectors.EVENT_READ, EVENT_WRITE.
# The player's script and style sheet, which the docs site loads too.
PLAYER_SCRIPT = ROOT / "docs" / "javascripts" / "replay.js"
PLAYER_STYLE = ROOT / "docs" / "stylesheets" / "replay.css"


class Journal:
    """Record each turn of stage 2's loop and each callback it runs; ``write`` saves them."""

    def __init__(self, name: str = "stage2_generators", *, limit: int = MAX_STEPS) -> None:
        self.name = name
        self.limit = limit
        self.steps: list[dict[str, Any]] = []
        self.turns = 0
        self.t0: float | None = None  # The loop's time at the first turn.
        self.queue: Any = None  # The crawl's queue, shown if set (watch_queue).
        self.frames: dict[tuple[str, int, str], int] = {}  # Each frame's number.
        self.files: dict[str, str] = {}  # Shown file -> its source.
        self.paths: dict[str, str] = {}  # A code object's file name -> as shown.
        self.names: dict[int, int] = {}  # id(task) -> its number in task_names.
        self.task_names: list[str] = []
        self.tasks: list[weakref.ref[Any]] = []  # By number; dead once freed.
        self.places: dict[int, list[int]] = {}  # Task number -> frames at its last step.
        self.waits: dict[int, dict[str, Any]] = {}  # Task number -> the future it waits on.
        self.truncated = False
        self.simulated = False  # Its sockets are a simulated network's (numbered from 1000000).
        self.upcoming: dict[int, dict[str, Any]] = {}  # id(handle) -> its callback.
        self.timed: set[int] = set()  # Ids of the futures the timers will set, now.
        self.previous: dict[str, Any] = {}  # The state of the last step.

    def watch_queue(self, queue: Any) -> None:
        """Show the items of ``queue`` (stage 2's ``Queue``) at every step."""
        self.queue = queue

    # --- Called by the loop ---------------------------------------------------

    def woke(self, loop: Any, events: list[tuple[Any, int]]) -> None:
        """Note a new turn: what ``select()`` returned; the due timers are ready now."""
        if self.full():
            return
        now = loop.time()
        if self.t0 is None:
            self.t0 = now
            # A simulated world's selector (shared/sim) has a network of its own.
            self.simulated = hasattr(loop._selector, "network")
        self.turns += 1
        step: dict[str, Any] = {
            "turn": self.turns,
            "t": round((now - self.t0) * 1000, 3),
            "kind": "select",
            "events": [[key.fd, EVENT_NAMES.get(mask, str(mask))] for key, mask in events],
            "timers_due": sum(1 for handle in loop._ready if hasattr(handle, "_when")),
        }
        step["state"] = self.changes(self.state(loop))
        self.steps.append(step)
        # What this turn will run, read now: a callback may cancel its own
        # handle (_wake does), which forgets the function and its arguments.
        self.upcoming = {id(handle): handle_of(handle) for handle in loop._ready}

    def ran(self, loop: Any, handle: Any) -> None:
        """Note that the loop ran ``handle``: what it was, and what it changed."""
        if self.full() or self.t0 is None:
            return
        callback = self.upcoming.pop(id(handle), None) or handle_of(handle)
        step: dict[str, Any] = {
            "turn": self.turns,
            "t": round((loop.time() - self.t0) * 1000, 3),
            "kind": "callback",
            "callback": self.describe(callback, self.waiting(loop)),
        }
        task = getattr(callback["callback"], "__self__", None)
        if is_task(task):
            number = self.number(task)
            step["task"] = number
            if any(cancelled(arg) for arg in callback["args"]):
                step["cancelled"] = True  # Woken by cancel(), not by what it waited for.
            step["resumed"] = self.places.get(number, [])
            if number in self.waits:  # What it waited on, before this step.
                step["waited"] = {k: v for k, v in self.waits[number].items() if k != "id"}
        state = self.state(loop)
        if "task" in step:
            step["suspended"] = state["tasks"][step["task"]]["frames"]
        step["state"] = self.changes(state)
        self.steps.append(step)

    def full(self) -> bool:
        """Tell whether the journal holds ``limit`` steps already (and note it)."""
        if len(self.steps) >= self.limit:
            self.truncated = True
        return self.truncated

    def changes(self, state: dict[str, Any]) -> dict[str, Any]:
        """Return what differs in ``state`` from the last step's (``expand`` undoes it).

        A step changes one task or two: with a hundred workers waiting, a
        step holding them all would be a hundred times larger.
        """
        before = self.previous
        delta = {key: value for key, value in state.items() if key != "tasks"}
        delta = {key: value for key, value in delta.items() if before.get(key) != value}
        old = before.get("tasks", [])
        tasks = {
            str(number): task
            for number, task in enumerate(state["tasks"])
            if number >= len(old) or old[number] != task
        }
        if tasks:
            delta["tasks"] = tasks
        self.previous = state
        return delta

    # --- What a step shows ----------------------------------------------------

    def state(self, loop: Any) -> dict[str, Any]:
        """Return what the loop holds now: ready queue, timers, sockets, queue, tasks."""
        waiting = self.waiting(loop)
        # The futures a timer will set (a sleep's), its time come or not.
        timers = [*loop._scheduled, *(h for h in loop._ready if hasattr(h, "_when"))]
        self.timed = {id(arg) for timer in timers for arg in timer._args}
        ready = [self.describe(handle_of(h), waiting) for h in loop._ready if not h._cancelled]
        timers = sorted(
            (
                round((timer._when - (self.t0 or 0)) * 1000, 3),
                self.describe(handle_of(timer), waiting),
            )
            for timer in loop._scheduled
            if not timer._cancelled
        )
        sockets = []
        for key in loop._selector.get_map().values():
            for handle in key.data or ():
                if handle is not None and not handle._cancelled:
                    sockets.append(self.describe(handle_of(handle), waiting) | {"fd": key.fd})
        return {
            "ready": ready,
            "timers": [[when, what] for when, what in timers],
            "sockets": sorted(sockets, key=lambda socket: socket["fd"]),
            "queue": [queue_item(item) for item in self.queue._queue] if self.queue else [],
            "tasks": [self.task_state(number, loop) for number in range(len(self.tasks))],
        }

    def waiting(self, loop: Any) -> dict[int, int]:
        """Return who waits on what: id(future) -> number of the task parked on it."""
        tasks = list(loop._tasks)
        new = [task for task in tasks if not self.known(task)]
        # New tasks are numbered as a reader counts: Task-1, worker 1, worker 2...
        for task in sorted(new, key=lambda task: in_order(task.get_name())):
            self.number(task)
        return {
            id(task._fut_waiter): self.names[id(task)]
            for task in tasks
            if task._fut_waiter is not None
        }

    def known(self, task: Any) -> bool:
        """Tell whether ``task`` has its number in the journal."""
        number = self.names.get(id(task))
        return number is not None and self.tasks[number]() is task

    def task_state(self, number: int, loop: Any) -> dict[str, Any]:
        """Return one task's state, the future it waits on, and its frames."""
        task = self.tasks[number]()
        if task is None or task.done():  # Freed once done: nothing refers to it.
            return {"state": ending(task), "frames": []}
        frames = self.chain(task._coro)
        self.places[number] = frames
        state: dict[str, Any] = {"state": "waiting", "frames": frames}
        if any(ready_for(handle, task) for handle in loop._ready):
            state["state"] = "ready" if has_started(task._coro) else "new"
        future = task._fut_waiter
        if future is None:
            self.waits.pop(number, None)
            return state
        # Described once: a sleep's future is still a timer's once its timer ran.
        if self.waits.get(number, {}).get("id") != id(future):
            self.waits[number] = {**self.future(future), "id": id(future)}
        state["waits"] = {k: v for k, v in self.waits[number].items() if k != "id"}
        return state

    def future(self, future: Any) -> dict[str, Any]:
        """Describe the future a task waits on: a socket, a timer, a task or another."""
        if hasattr(future, "_fd"):  # Stage 2's _SocketWait.
            return {"kind": "socket", "fd": future._fd, "event": EVENT_NAMES[future._event]}
        if is_task(future):
            return {"kind": "task", "task": self.number(future)}
        if id(future) in self.timed:
            return {"kind": "timer"}
        return {"kind": "future"}  # The task's frames say what for: Queue.get, say.

    def describe(self, handle: dict[str, Any], waiting: dict[int, int]) -> dict[str, Any]:
        """Describe a callback: its function, and the task it runs or will wake."""
        callback = handle["callback"]
        name = getattr(callback, "__qualname__", type(callback).__name__)
        what: dict[str, Any] = {"fn": name}
        owner = getattr(callback, "__self__", None)
        if is_task(owner):
            what["task"] = self.number(owner)
        else:
            for arg in handle["args"]:
                if id(arg) in waiting:
                    what["wakes"] = waiting[id(arg)]
        for arg in handle["args"]:
            if hasattr(arg, "_fd"):
                what["fd"] = arg._fd
        return what

    def number(self, task: Any) -> int:
        """Return the number of ``task`` in the journal, giving it one when first seen."""
        if not self.known(task):
            number = len(self.tasks)
            self.names[id(task)] = number
            self.tasks.append(weakref.ref(task))
            self.task_names.append(task.get_name())
        return self.names[id(task)]

    def chain(self, coro: Any) -> list[int]:
        """Return the frames of ``coro`` and of each coroutine it waits in, outermost first."""
        frames = []
        while coro is not None:
            frame = getattr(coro, "gi_frame", None) or getattr(coro, "cr_frame", None)
            if frame is None:  # Finished, or an iterator such as a future's.
                break
            frames.append(
                self.frame(frame.f_code.co_filename, frame.f_lineno, frame.f_code.co_qualname)
            )
            coro = getattr(coro, "gi_yieldfrom", None) or getattr(coro, "cr_await", None)
        return frames

    def frame(self, filename: str, line: int, function: str) -> int:
        """Return the number of a frame (file, line, function), keeping its file's source."""
        path = self.paths.get(filename)
        if path is None:
            path = self.paths[filename] = shown_path(filename)
        key = (path, line, function)
        if key not in self.frames:
            self.frames[key] = len(self.frames)
            if path not in self.files and not Path(path).is_absolute():
                self.files[path] = "".join(linecache.getlines(filename))
        return self.frames[key]

    # --- The file -------------------------------------------------------------

    def data(self) -> dict[str, Any]:
        """Return the journal as the player reads it."""
        frames = sorted(self.frames.items(), key=lambda item: item[1])
        return {
            "format": FORMAT,
            "version": VERSION,
            "name": self.name,
            "truncated": self.truncated,
            "simulated": self.simulated,
            "tasks": self.task_names,
            "frames": [list(key) for key, _ in frames],
            "files": self.files,
            "steps": self.steps,
        }

    def write(self, path: str | Path) -> None:
        """Write the journal to ``path`` as JSON.  Raises OSError."""
        save(self.data(), path)


class NoJournal(Journal):
    """The journal of a loop that keeps none: every method returns at once."""

    def woke(self, loop: Any, events: list[tuple[Any, int]]) -> None:
        """Record nothing."""

    def ran(self, loop: Any, handle: Any) -> None:
        """Record nothing."""

    def write(self, path: str | Path) -> None:
        """Write nothing."""


NO_JOURNAL = NoJournal()  # Keeps nothing, so one serves every loop.


def expand(data: dict[str, Any]) -> list[dict[str, Any]]:
    """Return the whole state at each step of a journal's ``data``.

    Each step of the file holds what changed since the step before: the
    lists that did (ready, timers, sockets, queue), and the tasks that did,
    by number.  The player does the same when it loads a journal.
    """
    state: dict[str, Any] = {"ready": [], "timers": [], "sockets": [], "queue": [], "tasks": []}
    states = []
    for step in data["steps"]:
        changed = step["state"]
        state = {**state, **{key: value for key, value in changed.items() if key != "tasks"}}
        tasks = list(state["tasks"])
        for number, task in sorted(changed.get("tasks", {}).items(), key=lambda item: int(item[0])):
            if int(number) == len(tasks):
                tasks.append(task)
            else:
                tasks[int(number)] = task
        state["tasks"] = tasks
        states.append(state)
    return states


def save(data: dict[str, Any], path: str | Path) -> None:
    """Write a journal's ``data`` to ``path`` as JSON.  Raises OSError."""
    with open(path, "w", encoding="utf-8") as file:
        json.dump(data, file, ensure_ascii=False, separators=(",", ":"))


def handle_of(handle: Any) -> dict[str, Any]:
    """Return a handle's callback and arguments, read before it is cancelled or run."""
    return {"callback": handle._callback, "args": handle._args}


def ending(task: Any) -> str:
    """Return how a task that is done ended: done, failed or cancelled (None: freed, done).

    Reads the exception without ``exception()``, which would count it as
    retrieved and silence the report of an error that nobody awaited.
    """
    if task is not None and task.cancelled():
        return "cancelled"
    return "failed" if task is not None and task._exception is not None else "done"


def cancelled(value: object) -> bool:
    """Tell whether ``value`` is a cancelled future, or the CancelledError thrown into a task."""
    if type(value).__name__ == "CancelledError":
        return True
    check = getattr(value, "cancelled", None)
    return callable(check) and hasattr(value, "add_done_callback") and bool(check())


def is_task(value: object) -> bool:
    """Tell whether ``value`` is a task: a future with a coroutine and a name."""
    return hasattr(value, "_coro") and hasattr(value, "get_name")


def ready_for(handle: Any, task: Any) -> bool:
    """Tell whether ``handle`` is a step of ``task`` waiting in the ready queue."""
    return not handle._cancelled and getattr(handle._callback, "__self__", None) is task


def has_started(coro: Any) -> bool:
    """Tell whether a generator or coroutine has taken its first step."""
    if inspect.iscoroutine(coro):
        return inspect.getcoroutinestate(coro) != inspect.CORO_CREATED
    return inspect.getgeneratorstate(coro) != inspect.GEN_CREATED


def shown_path(filename: str) -> str:
    """Return ``filename`` relative to the repository, or as it is outside it."""
    try:
        return Path(filename).resolve().relative_to(ROOT).as_posix()
    except ValueError:
        return filename


def queue_item(item: Any) -> str:
    """Return how the crawl's queue shows an item: its URL."""
    return str(item[0] if isinstance(item, tuple) else item)


# --- The player, as one page ------------------------------------------------

PAGE = """<!doctype html>
<html lang="{lang}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title>
<style>
html {{ font-size: 125%; }}
body {{ font-family: system-ui, sans-serif; margin: 1rem; }}
.replay code, .replay pre, .replay-list {{ font-family: ui-monospace, monospace; }}
{style}
</style>
</head>
<body class="replay-standalone">
<h1 style="font-size: 1rem">{title}</h1>
<div class="replay"><script type="application/json" class="replay-data">{data}</script></div>
<script>
{script}
</script>
</body>
</html>
"""


def player_page(data: dict[str, Any], lang: str = "en") -> str:
    """Return one HTML page that replays the journal ``data``, with no request made.

    Raises ValueError if ``data`` is not a journal.  Raises OSError if the
    player's files (under docs/) cannot be read.
    """
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ValueError("not a journal of stage 2's loop (crawl --journal writes one)")
    if data.get("version") != VERSION:
        raise ValueError(f"a journal of version {data.get('version')}, not {VERSION}")
    if not data.get("steps"):
        raise ValueError("the journal holds no step: the loop never turned")
    # "</" would end the script element early: JSON allows "<\/" for it.
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":")).replace("</", "<\\/")
    title = ("回放：" if lang == "zh" else "Replay: ") + str(data.get("name", ""))
    return PAGE.format(
        lang=lang,
        title=title,
        style=PLAYER_STYLE.read_text(encoding="utf-8"),
        script=PLAYER_SCRIPT.read_text(encoding="utf-8"),
        data=text,
    )


def main(argv: list[str] | None = None) -> int:
    """Write the player page of a journal file; return the exit status."""
    parser = argparse.ArgumentParser(
        prog="python -m shared.record.journal",
        description="Write a page that replays a journal of stage 2's loop "
        "(crawl --stage generators --journal FILE), to open in a browser.",
    )
    parser.add_argument("journal", metavar="FILE", help="the journal, as crawl --journal wrote it")
    parser.add_argument(
        "-o", "--output", metavar="HTML", help="the page to write (default: FILE.html)"
    )
    parser.add_argument("--lang", choices=["en", "zh"], default="en", help="the captions' language")
    args = parser.parse_args(argv)
    output = args.output or args.journal + ".html"
    try:
        with open(args.journal, encoding="utf-8") as file:
            data = json.load(file)
        page = player_page(data, args.lang)
        Path(output).write_text(page, encoding="utf-8")
    except (OSError, ValueError) as error:  # json.JSONDecodeError is a ValueError.
        print(f"{parser.prog}: error: {args.journal}: {error}", file=sys.stderr)
        return 1
    print(f"open {output} in a browser")
    return 0


if __name__ == "__main__":
    sys.exit(main())

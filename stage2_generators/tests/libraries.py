"""The two libraries the differential tests run on: asyncio and stage 2.

Each is a namespace with the same attribute names, so that one test body
runs on both: ``lib.Future``, ``lib.gather``, ``lib.Queue``...  A test
states asyncio's documented behaviour; passing on ``[asyncio]`` proves the
expectation right, passing on ``[stage2]`` proves stage 2 keeps it.
"""

from __future__ import annotations

import asyncio
import types
from collections.abc import Callable, Coroutine, Generator
from typing import Any

from stage2_generators import events, futures, locks, loop, queues, taskgroups, tasks, timeouts

# The names a differential test may use, and where stage 2 keeps each one.
STAGE2_NAMES: dict[str, object] = {
    "new_event_loop": loop.EventLoop,
    "run": loop.run,
    "get_running_loop": events.get_running_loop,
    "Handle": events.Handle,
    "TimerHandle": events.TimerHandle,
    "Future": futures.Future,
    "CancelledError": futures.CancelledError,
    "InvalidStateError": futures.InvalidStateError,
    "Task": tasks.Task,
    "create_task": tasks.create_task,
    "ensure_future": tasks.ensure_future,
    "current_task": tasks.current_task,
    "all_tasks": tasks.all_tasks,
    "sleep": tasks.sleep,
    "gather": tasks.gather,
    "wait_for": tasks.wait_for,
    "shield": tasks.shield,
    "TaskGroup": taskgroups.TaskGroup,
    "timeout": timeouts.timeout,
    "timeout_at": timeouts.timeout_at,
    "Timeout": timeouts.Timeout,
    "Queue": queues.Queue,
    "QueueEmpty": queues.QueueEmpty,
    "QueueFull": queues.QueueFull,
    "QueueShutDown": queues.QueueShutDown,
    "Event": locks.Event,
    "Lock": locks.Lock,
    "Semaphore": locks.Semaphore,
}

# Names that asyncio has only on newer Pythons: None on older ones, where a
# test of them checks stage 2 against asyncio's documentation alone.
NEWER_NAMES = {"QueueShutDown"}  # Python 3.13, with Queue.shutdown().


def _asyncio_name(name: str) -> object:
    """Return asyncio's ``name``; None for one of NEWER_NAMES this Python lacks."""
    if name in NEWER_NAMES:
        return getattr(asyncio, name, None)
    return getattr(asyncio, name)


ASYNCIO = types.SimpleNamespace(
    name="asyncio",
    logger="asyncio",
    **{name: _asyncio_name(name) for name in STAGE2_NAMES},
)
STAGE2 = types.SimpleNamespace(name="stage2", logger="stage2_generators", **STAGE2_NAMES)
LIBRARIES = {"asyncio": ASYNCIO, "stage2": STAGE2}


def generator_coroutine(
    lib: types.SimpleNamespace, gen_fn: Callable[..., Generator], *args: Any
) -> Generator | Coroutine:
    """Return ``gen_fn(*args)`` in a form ``lib`` runs as a coroutine.

    Stage 2 runs the generator itself, which is its lesson.  asyncio runs
    no plain generators (Python 3.12 dropped them), so there the generator
    is marked with ``types.coroutine`` and awaited by a native coroutine:
    its ``yield from`` reaches asyncio's futures and coroutines unchanged.
    """
    if lib is STAGE2:
        return gen_fn(*args)
    marked = types.coroutine(gen_fn)

    async def awaiting() -> Any:
        return await marked(*args)

    return awaiting()


class Awaitable:
    """An object awaitable only through ``__await__``: no coroutine, no future."""

    def __init__(self, lib: types.SimpleNamespace, value: Any) -> None:
        self.lib = lib
        self.value = value

    def __await__(self) -> Generator[Any, None, Any]:
        pause = self.lib.sleep(0)  # asyncio's is a coroutine, stage 2's a generator.
        yield from (pause.__await__() if hasattr(pause, "__await__") else pause)
        return self.value

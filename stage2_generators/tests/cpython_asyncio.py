"""The adapter that runs CPython's own asyncio tests against stage 2.

CPython's ``test.test_asyncio`` writes its tests as mixins run against two
implementations: ``BaseFutureTests`` with a ``cls`` attribute,
``BaseTaskTests`` with ``Task`` and ``Future``.  ``adapt()`` makes a
subclass of such a test class that, while each test runs:

- gives the CPython test module stage 2 in place of ``asyncio`` (and of
  ``asyncio.futures``, ``asyncio.tasks``...): ``STAGE2_ASYNCIO`` below,
  the differential suite's names (``new_event_loop`` is ``EventLoop``);
- gives ``new_test_loop()`` stage 2's loop on a clock the test moves
  (``TestLoop``, what CPython's ``test_utils.TestLoop`` does for asyncio),
  and ``IsolatedAsyncioTestCase`` a runner on stage 2's loop;
- sends stage 2's log to the logger CPython's tests patch.

A test that needs a name stage 2 does not have (an attribute missing from
stage 2's asyncio, loop, futures or tasks, or a keyword argument its
functions do not take) is skipped as not applicable, with that name as
the reason: decided by running the test, not by a hand-made list.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import re
import sys
import types
import unittest
from collections.abc import Callable, Generator, Iterator
from typing import Any
from unittest import mock

from stage2_generators import events, futures, locks, loop, queues, taskgroups, tasks, timeouts
from stage2_generators.tests.libraries import STAGE2_NAMES

SKIP_PREFIX = "not applicable: "  # How the skip reason of such a test starts.


class Stage2Asyncio(types.ModuleType):
    """Stage 2's names under asyncio's; a name it lacks raises NotInStage2."""

    def __getattr__(self, name: str) -> Any:
        raise NotInStage2(f"{self.__name__}.{name}", name=name, obj=self)


class NotInStage2(AttributeError):
    """A name asyncio has and stage 2 does not."""


def _namespace(name: str, **names: Any) -> Stage2Asyncio:
    """Return a Stage2Asyncio called ``name`` holding ``names``."""
    module = Stage2Asyncio(name)
    module.__dict__.update(names)
    return module


STAGE2_ASYNCIO = _namespace(
    "asyncio",
    **STAGE2_NAMES,
    TimeoutError=TimeoutError,
    iscoroutine=tasks.iscoroutine,
    iscoroutinefunction=tasks.iscoroutinefunction,
    isfuture=futures.isfuture,
    events=events,
    futures=futures,
    tasks=tasks,
    locks=locks,
    queues=queues,
    taskgroups=taskgroups,
    timeouts=timeouts,
)
# The submodules a CPython test module imports by name, and stage 2's stand-ins.
SUBMODULES = {
    "futures": futures,
    "tasks": tasks,
    "taskgroups": taskgroups,
    "timeouts": timeouts,
    "coroutines": _namespace("asyncio.coroutines"),
}


def _no_timers() -> Generator[None, float, None]:
    """The clock of a TestLoop made without one: it may never be asked."""
    yield


class TestLoop(loop.EventLoop):
    """Stage 2's loop on a clock that only the test's generator moves.

    As CPython's test_utils.TestLoop: after each iteration, every timer
    set during it is sent to ``gen``, which answers how far to move the
    clock.  The selector never waits.
    """

    _default_executor = None  # test_utils.TestCase.close_loop() reads it.

    def __init__(self, gen: Callable[[], Generator[Any, float, Any]] | None = None) -> None:
        super().__init__()
        self._check_on_close = gen is not None
        self._gen: Generator[Any, float, Any] = (gen or _no_timers)()
        next(self._gen)
        self._time = 0.0
        self._clock_resolution = 1e-9
        self._timers: list[float] = []
        self._selector.close()
        self._selector = _NoWaitSelector()  # type: ignore[assignment]

    def time(self) -> float:
        return self._time

    def advance_time(self, advance: float) -> None:
        """Move the clock forward by ``advance`` seconds."""
        self._time += advance

    def call_at(self, when: float, callback: Callable[..., object], *args: Any) -> Any:
        self._timers.append(when)
        return super().call_at(when, callback, *args)

    def _run_once(self) -> None:
        super()._run_once()
        for when in self._timers:
            self.advance_time(self._gen.send(when))
        self._timers = []

    def close(self) -> None:
        super().close()
        if self._check_on_close:
            try:
                self._gen.send(0)
            except StopIteration:
                return
            raise AssertionError("Time generator is not finished")


class _NoWaitSelector:
    """A selector that watches nothing and never waits."""

    def select(self, timeout: float | None) -> list[Any]:
        return []

    def get_map(self) -> dict[Any, Any]:
        return {}

    def close(self) -> None:
        pass


class Runner:
    """What IsolatedAsyncioTestCase needs of asyncio.Runner, on stage 2's loop."""

    def __init__(self) -> None:
        self._loop = loop.EventLoop()

    def get_loop(self) -> loop.EventLoop:
        return self._loop

    def run(self, coro: Any, *, context: object = None) -> Any:
        return self._loop.run_until_complete(coro)

    def close(self) -> None:
        if not self._loop.is_closed():
            try:
                loop._cancel_all_tasks(self._loop)
            finally:
                self._loop.close()


def run_briefly(test_loop: loop.EventLoop) -> None:
    """Run one iteration, as test_utils.run_briefly (without asyncio's private flag)."""

    async def once() -> None:
        pass

    test_loop.run_until_complete(test_loop.create_task(once()))


class _AsyncioLogger:
    """Stage 2's logger while a test runs: whatever asyncio's logger is now.

    CPython's tests patch ``asyncio.base_events.logger`` or
    ``asyncio.log.logger`` to see what is logged.
    """

    def __getattr__(self, name: str) -> Any:
        logger = sys.modules["asyncio.log"].logger
        if sys.modules["asyncio.base_events"].logger is not logger:
            logger = sys.modules["asyncio.base_events"].logger
        return getattr(logger, name)


@contextlib.contextmanager
def stage2_in_place_of_asyncio(module: types.ModuleType) -> Iterator[None]:
    """Give ``module`` stage 2 wherever it names asyncio, for the ``with`` block."""
    with contextlib.ExitStack() as stack:
        stack.enter_context(mock.patch.object(module, "asyncio", STAGE2_ASYNCIO))
        for name, stand_in in SUBMODULES.items():
            if hasattr(module, name):
                stack.enter_context(mock.patch.object(module, name, stand_in))
        utils = sys.modules["test.test_asyncio.utils"]
        stack.enter_context(mock.patch.object(utils, "asyncio", STAGE2_ASYNCIO))
        stack.enter_context(mock.patch.object(utils, "run_briefly", run_briefly))
        stack.enter_context(mock.patch.object(events, "LOGGER", _AsyncioLogger()))
        yield


UNEXPECTED_ARGUMENT = re.compile(r"unexpected keyword argument '(\w+)'")


def missing_name(error: BaseException) -> str | None:
    """Return the name stage 2 lacks that ``error`` reports, or None."""
    if isinstance(error, NotInStage2):
        return str(error)
    obj = getattr(error, "obj", None)
    if isinstance(error, AttributeError) and _is_stage2(obj):
        if isinstance(obj, types.ModuleType):
            return f"{obj.__name__}.{error.name}"
        owner = loop.EventLoop if isinstance(obj, TestLoop) else type(obj)
        return f"{owner.__name__}.{error.name}"
    if isinstance(error, TypeError) and error.__traceback__ is not None:
        match = UNEXPECTED_ARGUMENT.search(str(error))
        if match and _raised_by_stage2_call(error):
            return f"the argument {match[1]}="
    return None


def _is_stage2(obj: object) -> bool:
    """Tell whether ``obj`` belongs to stage 2 (or its stand-in for asyncio)."""
    if isinstance(obj, (Stage2Asyncio, TestLoop, Runner)):
        return True
    if isinstance(obj, types.ModuleType):
        return obj.__name__.startswith("stage2_generators.")
    owner = obj if isinstance(obj, type) else type(obj)
    return owner.__module__.startswith("stage2_generators.") and not owner.__module__.startswith(
        "stage2_generators.tests."
    )


def _raised_by_stage2_call(error: TypeError) -> bool:
    """Tell whether ``error`` came from calling a stage 2 function or class."""
    tb = error.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    filename = tb.tb_frame.f_code.co_filename if tb is not None else ""
    return "test_asyncio" in filename or filename.endswith("test_cpython_asyncio.py")


class Stage2Adapter(unittest.TestCase):
    """What adapt() adds to a CPython test class."""

    cpython_module: types.ModuleType

    def run(self, result: Any = None) -> Any:
        with stage2_in_place_of_asyncio(self.cpython_module):
            return super().run(result)

    @staticmethod
    def close_loop(test_loop: loop.EventLoop) -> None:
        test_loop.close()  # Stage 2 has no executor and no child watcher to stop.

    def new_test_loop(self, gen: Any = None) -> TestLoop:
        test_loop = TestLoop(gen)
        self.set_event_loop(test_loop)  # type: ignore[attr-defined]
        self.__dict__.setdefault("_test_loops", []).append(test_loop)
        return test_loop

    def _setupAsyncioRunner(self) -> None:
        self._asyncioRunner = Runner()

    def _callSetUp(self) -> None:
        with self._not_applicable_if_missing():
            super()._callSetUp()  # type: ignore[misc]

    def _callTestMethod(self, method: Callable[[], object]) -> None:
        with self._not_applicable_if_missing():
            super()._callTestMethod(method)  # type: ignore[misc]

    def _stopped_half_way(self) -> None:
        """Close what a test skipped half-way left: its clock, its tasks' coroutines.

        A coroutine that never started would warn "never awaited" when
        collected, and the warning, kept for pytest's summary, would keep
        its task alive: a pending future for a later test to find.
        """
        loops = list(self.__dict__.get("_test_loops", ()))
        if self.__dict__.get("_asyncioRunner") is not None:
            loops.append(self._asyncioRunner.get_loop())
        for test_loop in loops:
            test_loop._check_on_close = False
            for task in test_loop._tasks:
                task.get_coro().close()

    @contextlib.contextmanager
    def subTest(self, msg: Any = None, **params: Any) -> Iterator[None]:
        """Run a subtest; one that needs a name stage 2 lacks skips the whole test."""
        missing: BaseException | None = None
        with super().subTest(msg, **params):
            try:
                yield
            except (AttributeError, TypeError) as error:
                if missing_name(error) is None:
                    raise
                missing = error
        if missing is not None:
            with self._not_applicable_if_missing():
                raise missing

    @contextlib.contextmanager
    def _not_applicable_if_missing(self) -> Iterator[None]:
        """Turn an error that names something stage 2 lacks into a skip."""
        try:
            yield
            return
        except (AttributeError, TypeError) as error:
            name = missing_name(error)
            if name is None:
                raise
        # Raised out here, the skip keeps no reference to the error, its
        # frames and the tasks they hold (a later test counts pending ones).
        self._stopped_half_way()
        raise unittest.SkipTest(f"{SKIP_PREFIX}uses {name}, which stage 2 does not have")


def adapt(cpython_class: type, **attributes: Any) -> type:
    """Return ``cpython_class`` run against stage 2, with ``attributes`` set on it.

    A class attribute that holds one of asyncio's classes or functions (a
    queue test's ``q_class = asyncio.Queue``) becomes stage 2's namesake.
    """
    module = sys.modules[cpython_class.__module__]
    namespace = {"cpython_module": module, "__qualname__": cpython_class.__name__}
    for owner in reversed(cpython_class.__mro__):
        for name, value in vars(owner).items():
            if _is_asyncio(value) and not name.startswith("__"):
                namespace[name] = _stage2_namesake(value)
    namespace.update(attributes)
    return type(cpython_class.__name__, (Stage2Adapter, cpython_class), namespace)


def _is_asyncio(value: object) -> bool:
    """Tell whether ``value`` is a class or function of asyncio."""
    value = value.__func__ if isinstance(value, staticmethod) else value
    return callable(value) and (getattr(value, "__module__", None) or "").startswith("asyncio")


def _stage2_namesake(value: Any) -> property:
    """Return a property that gives stage 2's class or function of the same name."""
    value = value.__func__ if isinstance(value, staticmethod) else value
    return property(lambda self: getattr(STAGE2_ASYNCIO, value.__name__))


def replace_test(test_class: type, name: str, decorate: Callable[[Any], Any]) -> None:
    """Replace the test ``name`` of ``test_class`` by ``decorate`` applied to a copy.

    A copy, so that the decorator does not mark CPython's own function.
    """
    original = getattr(test_class, name)

    @functools.wraps(original)
    def test(self: Any) -> Any:
        return original(self)

    @functools.wraps(original)
    async def async_test(self: Any) -> Any:
        return await original(self)

    copy = async_test if inspect.iscoroutinefunction(original) else test
    setattr(test_class, name, decorate(copy))

"""CPython's own asyncio tests, run against stage 2.

The tests come from the running interpreter's ``test.test_asyncio`` (they
differ from one Python to the next); ``cpython_asyncio.adapt`` runs each
class listed in RUN with stage 2 in place of asyncio.  Every test CPython
collects is accounted for (``test_every_cpython_test_is_accounted_for``):

- it runs here, and passes, or is skipped as not applicable because it
  uses a name stage 2 does not have (decided while it runs), or is an
  expected failure listed in DIFFERENCES, a difference that stage 2 keeps
  on purpose (docs/reference.md lists each with its reason);
- or it is one of CPython's other variants of a test that runs here
  (VARIANTS: the same mixin on the C implementation or on a subclass);
- or NOT_APPLICABLE gives the reason next to it.
"""

from __future__ import annotations

import gc
import importlib
import sys
import unittest
from typing import Any

import pytest

try:
    import test.test_asyncio.utils  # type: ignore[import-not-found]
except ImportError:  # pragma: no cover - CI's Pythons have it.
    pytest.skip("CPython's test package is not installed", allow_module_level=True)

from stage2_generators import futures, tasks
from stage2_generators.tests.cpython_asyncio import SKIP_PREFIX, adapt, replace_test

# Most tests collect garbage as they start (_test_loop): quick with the
# heap that was alive before the module set aside.
pytestmark = pytest.mark.usefixtures("heap_set_aside")

MODULES = (
    "test_futures",
    "test_tasks",
    "test_waitfor",
    "test_locks",
    "test_queues",
    "test_taskgroups",
    "test_timeouts",
    "test_runners",
    "test_pep492",
)


def _cpython(module: str) -> Any:
    """Return CPython's test module ``test.test_asyncio.<module>``."""
    return importlib.import_module(f"test.test_asyncio.{module}")


def _test_loop(self: Any) -> None:
    """A setUp that gives the test stage 2's loop, as self.loop.

    BaseTaskTests' own also installs a task factory (the loop is stage 2's
    already); test_pep492's makes an asyncio.BaseEventLoop with mocks.
    Garbage that earlier tests in this process left is freed first: its
    finalizers log, and test_error_in_call_soon checks the last thing logged
    (it saw "Future exception was never retrieved" of another test's future).
    """
    gc.collect()
    test.test_asyncio.utils.TestCase.setUp(self)
    self.loop = self.new_test_loop()


class _TaskTests:
    """BaseTaskTests with stage 2's loop, and a Task without ``context``."""

    setUp = _test_loop

    def new_task(self, loop: Any, coro: Any, name: str = "TestTask", context: Any = None) -> Any:
        if context is not None:  # Stage 2's Task takes none: not applicable.
            return tasks.Task(coro, loop=loop, name=name, context=context)  # type: ignore[call-arg]
        return tasks.Task(coro, loop=loop, name=name)


def _no_policy(self: Any) -> None:
    """Replace test_runners' setUp and tearDown: stage 2 has no event loop policy."""


# The CPython classes that run here, per module, with the attributes that
# point them at stage 2.
RUN: dict[str, dict[str, dict[str, Any]]] = {
    "test_futures": {
        "DuckTests": {},
        "PyFutureTests": {"cls": futures.Future},
        "PyFutureDoneCallbackTests": {"_new_future": lambda self: futures.Future(loop=self.loop)},
        "PyFutureInheritanceTests": {"_get_future_cls": lambda self: futures.Future},
    },
    "test_tasks": {
        "PyTask_PyFuture_Tests": {"Task": tasks.Task, "Future": futures.Future},
        "PyCurrentLoopTests": {"new_task": lambda self, coro: tasks.Task(coro, loop=self.loop)},
        "GenericTaskTests": {},
        "FutureGatherTests": {},
        "CoroutineGatherTests": {},
        "SleepTests": {},
        "RunCoroutineThreadsafeTests": {},
        "PyIntrospectionTests": {},
        "CompatibilityTests": {},
    },
    "test_waitfor": {"AsyncioWaitForTest": {}, "WaitForShieldTests": {}},
    "test_locks": {
        "LockTests": {},
        "EventTests": {},
        "ConditionTests": {},
        "SemaphoreTests": {},
        "BarrierTests": {},
    },
    "test_queues": {
        "QueueBasicTests": {},
        "QueueGetTests": {},
        "QueuePutTests": {},
        "QueueJoinTests": {},
        "QueueShutdownTests": {},
        "LifoQueueShutdownTests": {},
        "PriorityQueueShutdownTests": {},
        "LifoQueueTests": {},
        "PriorityQueueTests": {},
        "LifoQueueJoinTests": {},
        "PriorityQueueJoinTests": {},
    },
    "test_taskgroups": {"TestTaskGroup": {}, "TestTaskGroupEager": {}},
    "test_timeouts": {"TimeoutTests": {}},
    "test_runners": {"RunTests": {"setUp": _no_policy, "tearDown": _no_policy}, "RunnerTests": {}},
    "test_pep492": {
        "LockTests": {"setUp": _test_loop},
        "StreamReaderTests": {"setUp": _test_loop},
        "CoroutineTests": {"setUp": _test_loop},
    },
}
MIXINS = {"PyTask_PyFuture_Tests": _TaskTests}

# CPython's other variants of the mixins above: the same tests, on the C
# implementation, or on a subclass of the implementation.
VARIANTS = {
    "test_futures": {
        "CFutureTests": "PyFutureTests",
        "CSubFutureTests": "PyFutureTests",
        "CFutureDoneCallbackTests": "PyFutureDoneCallbackTests",
        "CSubFutureDoneCallbackTests": "PyFutureDoneCallbackTests",
        "CFutureInheritanceTests": "PyFutureInheritanceTests",
    },
    "test_tasks": {
        "CTask_CFuture_Tests": "PyTask_PyFuture_Tests",
        "CTask_CFuture_SubclassTests": "PyTask_PyFuture_Tests",
        "CTaskSubclass_PyFuture_Tests": "PyTask_PyFuture_Tests",
        "PyTask_CFutureSubclass_Tests": "PyTask_PyFuture_Tests",
        "CTask_PyFuture_Tests": "PyTask_PyFuture_Tests",
        "PyTask_CFuture_Tests": "PyTask_PyFuture_Tests",
        "PyTask_PyFuture_SubclassTests": "PyTask_PyFuture_Tests",
        "CIntrospectionTests": "PyIntrospectionTests",
        "CCurrentLoopTests": "PyCurrentLoopTests",
    },
}

# Tests that do not apply, with the reason: by "module.Class" or "module.Class.test".
CONTEXTS = "runs callbacks in contextvars contexts, which stage 2 leaves out"
SUBCLASS = "counts the calls a subclass of asyncio's Task and Future gets from their C code"
NOT_APPLICABLE = {
    "test_futures.PyFutureTests.test_future_del_collect": (
        "a crash test of the C Future: 100 full garbage collections, seconds of CPU"
    ),
    "test_tasks.PyTask_PyFuture_Tests.test_task_del_collect": (
        "a crash test of the C Task: 100 full garbage collections, seconds of CPU"
    ),
    "test_tasks.FutureGatherTests.test_env_var_debug": (
        "runs asyncio's debug switch in subprocesses; stage 2 has no debug mode"
    ),
    "test_tasks.CoroutineGatherTests.test_env_var_debug": (
        "runs asyncio's debug switch in subprocesses; stage 2 has no debug mode"
    ),
    "test_futures.CFutureTests.test_future_del_segfault": "a crash test of the C Future",
    "test_futures.CFutureTests.test_future_iter_get_referents_segfault": (
        "a crash test of the C Future"
    ),
    "test_tasks.CTask_CFuture_Tests.test_refleaks_in_task___init__": (
        "a reference-leak test of the C Task, on debug builds of CPython"
    ),
    "test_tasks.CTask_CFuture_Tests.test_del__log_destroy_pending_segfault": (
        "a crash test of the C Task"
    ),
    "test_tasks.CTask_Future_Tests": "a test of the C Task",
    "test_tasks.PyIntrospectionTests": (
        "tests asyncio's private task registry (_register_task, _enter_task...) with mocks"
    ),
    "test_tasks.PyTask_PyFuture_SubclassTests.test_subclasses_ctask_cfuture": SUBCLASS,
    "test_tasks.PyTask_CFutureSubclass_Tests.test_subclasses_ctask_cfuture": SUBCLASS,
    "test_tasks.CTask_CFuture_SubclassTests.test_subclasses_ctask_cfuture": SUBCLASS,
    "test_tasks.CTaskSubclass_PyFuture_Tests.test_subclasses_ctask_cfuture": SUBCLASS,
    "test_tasks.CoroutineGatherTests.test_issue46672": (
        "patches asyncio's BaseEventLoop.call_exception_handler; stage 2's loop is not one"
    ),
    "test_tasks.PyTask_PyFuture_Tests.test_context_1": CONTEXTS,
    "test_tasks.PyTask_PyFuture_Tests.test_context_2": CONTEXTS,
    "test_tasks.PyTask_PyFuture_Tests.test_context_3": CONTEXTS,
    "test_taskgroups.TestTaskGroup.test_taskgroup_task_context": CONTEXTS,
}

# Differences stage 2 keeps on purpose, as docs/reference.md lists them:
# reason, then the Pythons whose test shows it ("" for all).
NO_GET_EVENT_LOOP = (
    "outside a running loop, stage 2 says 'no running event loop': it has no "
    "get_event_loop() and no current loop to fall back on",
    "",
)
PRIVATE_FLAG = (
    "_log_traceback is a plain private attribute in stage 2; asyncio guards it "
    "with a property that refuses True",
    "",
)
STOP_ITERATION = (
    "set_exception(StopIteration()) raises TypeError on every Python, as asyncio does "
    "up to 3.12; asyncio 3.13 stores a RuntimeError instead",
    "3.13",
)
TIMEOUT_CONTEXT = (
    "an error other than CancelledError leaving an expired timeout() block goes on "
    "unchanged; asyncio 3.13 also attaches a TimeoutError to its context",
    "3.13",
)
DIFFERENCES: dict[str, tuple[str, str]] = {
    "test_futures.PyFutureTests.test_constructor_without_loop": NO_GET_EVENT_LOOP,
    "test_tasks.PyTask_PyFuture_Tests.test_ensure_future_coroutine": NO_GET_EVENT_LOOP,
    "test_tasks.PyTask_PyFuture_Tests.test_shield_coroutine_without_loop": NO_GET_EVENT_LOOP,
    "test_tasks.FutureGatherTests.test_constructor_empty_sequence_without_loop": (
        NO_GET_EVENT_LOOP
    ),
    "test_tasks.CoroutineGatherTests.test_constructor_without_loop": NO_GET_EVENT_LOOP,
    "test_futures.PyFutureTests.test_log_traceback": PRIVATE_FLAG,
    "test_tasks.PyTask_PyFuture_Tests.test_log_traceback": PRIVATE_FLAG,
    "test_waitfor.AsyncioWaitForTest.test_wait_for_self_cancellation": (
        "wait_for() as in Python 3.12 on every Python: 3.11's wait_for waits for "
        "the awaited task's cancellation and can then be cancelled itself",
        "3.11",
    ),
    "test_runners.RunTests.test_asyncio_run_reports_hanging_tasks_errors": (
        "stage 2's shutdown message names the function that runs, run(), where "
        "asyncio's says asyncio.run()",
        "",
    ),
    "test_tasks.PyTask_PyFuture_Tests.test_ensure_future_task_awaitable": (
        "stage 2's sleep() and the other coroutines it offers are generators, the "
        "stage's lesson: they have no __await__ method and are no CoroutineType",
        "3.12 3.13",
    ),
    "test_pep492.CoroutineTests.test_iscoroutine_generator": (
        "iscoroutine() says yes to a generator, as asyncio 3.11 does: stage 2 runs "
        "generators as tasks (asyncio says no since 3.12)",
        "3.12 3.13",
    ),
    "test_futures.PyFutureTests.test_stop_iteration_exception": STOP_ITERATION,
    "test_futures.PyFutureTests.test_stop_iteration_subclass_exception": STOP_ITERATION,
    "test_timeouts.TimeoutTests.test_foreign_exception_on_timeout": TIMEOUT_CONTEXT,
    "test_timeouts.TimeoutTests.test_foreign_exception_on_timeout_2": TIMEOUT_CONTEXT,
    "test_timeouts.TimeoutTests.test_timeout_taskgroup": TIMEOUT_CONTEXT,
    "test_taskgroups.TestTaskGroup.test_taskgroup_no_create_task_after_failure": (
        "create_task() closes a coroutine it refuses, as asyncio does since Python 3.13; "
        "the test of 3.11 and 3.12 awaits that coroutine afterwards",
        "3.11 3.12",
    ),
}


def _adapted(module: str) -> dict[str, type]:
    """Return the stage 2 versions of ``module``'s classes in RUN."""
    cpython = _cpython(module)
    classes = {}
    for name, attributes in RUN[module].items():
        original = getattr(cpython, name, None)
        if original is None:
            continue  # Not in this Python's version of the module.
        mixin = MIXINS.get(name)
        if mixin is not None:
            original = type(name, (mixin, original), {})
            original.__module__ = cpython.__name__
        adapted = adapt(original, **attributes)
        _mark(module, name, adapted)
        adapted.__module__ = __name__
        adapted.__qualname__ = adapted.__name__ = f"{module}__{name}"
        classes[adapted.__name__] = adapted
    return classes


def _mark(module: str, name: str, adapted: type) -> None:
    """Skip what NOT_APPLICABLE lists, expect DIFFERENCES to fail."""
    if f"{module}.{name}" in NOT_APPLICABLE:
        unittest.skip(SKIP_PREFIX + NOT_APPLICABLE[f"{module}.{name}"])(adapted)
    for test in unittest.defaultTestLoader.getTestCaseNames(adapted):
        key = f"{module}.{name}.{test}"
        if key in NOT_APPLICABLE:
            replace_test(adapted, test, unittest.skip(SKIP_PREFIX + NOT_APPLICABLE[key]))
        reason, pythons = DIFFERENCES.get(key, ("", ""))
        if reason and (not pythons or _python() in pythons.split()):
            replace_test(adapted, test, pytest.mark.xfail(strict=True, reason=reason))


def _python() -> str:
    """Return this Python's version as DIFFERENCES writes it: "3.11"."""
    return "{}.{}".format(*sys.version_info)


def _cpython_tests(module: str) -> dict[str, list[str]]:
    """Return the test names of each class CPython's ``module`` collects."""
    suite = unittest.defaultTestLoader.loadTestsFromModule(_cpython(module))
    names: dict[str, list[str]] = {}
    stack: list[Any] = [suite]
    while stack:
        item = stack.pop()
        if isinstance(item, unittest.TestSuite):
            stack.extend(item)
        else:
            names.setdefault(type(item).__name__, []).append(item._testMethodName)
    return names


@pytest.mark.parametrize("module", MODULES)
def test_every_cpython_test_is_accounted_for(module: str) -> None:
    """Each test CPython collects runs here, or is a variant of one that does."""
    adapted = {
        cls.__name__.split("__", 1)[1]: set(unittest.defaultTestLoader.getTestCaseNames(cls))
        for key, cls in globals().items()
        if key.startswith(f"{module}__")
    }
    unaccounted = []
    for cpython_class, tests in _cpython_tests(module).items():
        runs_as = VARIANTS.get(module, {}).get(cpython_class, cpython_class)
        unaccounted += [
            f"{cpython_class}.{test}"
            for test in tests
            if test not in adapted.get(runs_as, ())
            and f"{module}.{cpython_class}" not in NOT_APPLICABLE
            and f"{module}.{cpython_class}.{test}" not in NOT_APPLICABLE
        ]
    assert not unaccounted, f"CPython tests neither run nor listed: {unaccounted}"


for _module in MODULES:
    globals().update(_adapted(_module))
